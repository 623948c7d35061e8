/* rfc3339.h: the timestamps of the Kubernetes API (metav1.Time, ExecCredential expiry) and of Zoekt's
 * index metadata: "2026-11-30T03:41:10Z", optionally with a fraction (ignored) or a numeric offset. */
#ifndef ZK_RFC3339_H
#define ZK_RFC3339_H

#include <stddef.h>
#include <time.h>

/* Parses s into seconds since the epoch. Returns 1 on success, 0 (with *out untouched) for anything
 * else: a missing part, a field out of range, trailing text. */
int rfc3339_parse(const char *s, time_t *out);

/* Writes t as "YYYY-MM-DDTHH:MM:SSZ" into dst (21 bytes suffice), the year in four digits (0985); an
 * empty string if it cannot: dst is too small, or the year is before 0 or after 9999, which RFC 3339
 * cannot write. Whatever it writes, rfc3339_parse reads back as t. */
void rfc3339_format(time_t t, char *dst, size_t len);

#endif

/* flag.h: the values command-line flags take, parsed the same way in both programs.
 *
 * Each function returns ZK_OK and sets *out, or ZK_EINVAL and leaves *out alone. None prints: the
 * caller words the message, since it knows the flag's name and what it is for. Pure. */
#ifndef ZK_FLAG_H
#define ZK_FLAG_H

/* A whole decimal number in [lo, hi]. */
int flag_long(const char *s, long lo, long hi, long *out);

/* "true" or "1", "false" or "0". NULL, a flag given without "=value" (--leader-elect), means true. */
int flag_bool(const char *s, int *out);

/* A positive number, fractions allowed ("15", "2.5"). */
int flag_positive(const char *s, double *out);

/* A positive duration of at most max_ms milliseconds, in milliseconds: a bare number of seconds ("30"),
 * or numbers with units ms, s, m, h or d, one after another ("1500ms", "30s", "1h30m", "2d"). */
int flag_duration_ms(const char *s, long max_ms, long *out);

#endif

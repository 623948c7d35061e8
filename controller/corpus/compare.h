/* compare.h: is the desired object already what the server holds? Pure: no I/O.
 *
 * Reconcile applies a child only when this says no, which is what makes a steady-state resync issue no
 * write at all while drift (a deleted or edited child) is still repaired. The question is a subset
 * test, not equality, because the server adds defaulted fields (terminationMessagePath, clusterIP,
 * revisionHistoryLimit, ...) and metadata of its own that the desired object never mentions:
 * - objects: every member of desired is present in observed with a matching value; extra observed
 *   members are ignored;
 * - arrays: the same length, and element i of desired matches element i of observed (order matters
 *   for containers, ports and env alike, and a removed element must count as a difference);
 * - scalars: equal type and value; numbers by value;
 * - a desired "zero" value (false, 0, "", [], {} or null) matches an absent member, because the API
 *   server drops such fields (omitempty) and would otherwise look drifted forever;
 * - members of "requests" and "limits" maps are resource quantities and compare by amount, since the
 *   server canonicalises them ("1000m" is stored as "1", "0.5Gi" as "512Mi"). Anywhere else a string
 *   such as "1Gi" is just a string;
 * - an observed string that is the digest of a desired long string matches it (below). */
#ifndef ZK_CORPUS_COMPARE_H
#define ZK_CORPUS_COMPARE_H

#include <cjson/cJSON.h>
#include <stddef.h>

/* Long strings: an operator that only asks whether a child still holds what it applied need not keep
 * a copy of every long text it applied. compare_digest_strings replaces every string value of obj of at
 * least COMPARE_DIGEST_MIN bytes with a digest of it (COMPARE_DIGEST_MARK, then the SHA-256 in hex), and
 * compare_subset takes such an observed digest to match the desired string it is the digest of. A
 * corpus's ConfigMap holds the indexer script and nginx.conf, about 40 KB that deflate cannot shrink
 * much past its 32 KB window: kept whole, 1,000 corpora cached 12.8 MB of them; as digests, 0.1 MB.
 * The mark starts with a control character no text the operator renders holds. */
#define COMPARE_DIGEST_MIN 512
#define COMPARE_DIGEST_MARK "\001sha256:"
void compare_digest_strings(cJSON *obj);

/* Returns 1 when desired is a subset of observed as described above, else 0. When diff is not NULL
 * and the answer is 0, the dotted path of the first difference ("spec.template.spec.containers[1].image")
 * is written there (at most len bytes with the terminator), for logs. observed may be NULL (absent). */
int compare_subset(const cJSON *desired, const cJSON *observed, char *diff, size_t len);

/* Parses a Kubernetes resource quantity ("250m", "1Gi", "1.5", "1e3", "2k") into its amount. Returns 1
 * on success, 0 when s is not a quantity. */
int compare_quantity_parse(const char *s, long double *out);

#endif

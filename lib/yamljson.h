/* yamljson.h: the first document of a YAML (or JSON) text as a cJSON tree.
 *
 * For reading Kubernetes objects from files (`zoekt-operator render -f`): plain scalars resolve the way
 * Kubernetes' YAML decoder resolves them for the cases such objects use (null, booleans, numbers;
 * everything else, "1Gi" and "0 3 * * *" included, is a string), and quoted scalars are always strings.
 * Pure: no I/O; the text may come from anywhere, so nesting is bounded. */
#ifndef ZK_YAMLJSON_H
#define ZK_YAMLJSON_H

#include "err.h"

#include <cjson/cJSON.h>
#include <stddef.h>

/* How deeply collections may nest before the text is refused. */
#define YAMLJSON_MAX_DEPTH 64

/* Parses the first document of the n bytes at text (need not be NUL-terminated) into *out, a tree the
 * caller owns (cJSON_Delete). Returns ZK_OK; ZK_EINVAL when the text is not YAML, holds no document,
 * nests too deeply or has a mapping key that is not a scalar (err says which and, where it can, on
 * which line). *out is NULL on failure. */
int yamljson_parse(const char *text, size_t n, cJSON **out, struct zk_err *err);

#endif

/* prom.h: the Prometheus text exposition format (version 0.0.4), as both programs write their /metrics.
 *
 * Each program keeps its own fixed set of metrics (controller/runtime/metrics, controller/corpus/gauges,
 * connector/metrics); what they share is how a family and its samples are spelled: the HELP and TYPE
 * lines, label values escaped, and a histogram's cumulative buckets, sum and count. Keeping that here
 * means a label value holding a quote or a backslash is escaped the same way everywhere, and a histogram
 * is always consistent (its _count equals its +Inf bucket) whoever renders it.
 *
 * Pure: no state, safe from any thread. Every function appends to a bounded buffer and returns ZK_OK,
 * or the buffer's ZK_ETOOBIG (the buffer is then emptied, per buf.h): a caller that ignored it would
 * serve a truncated exposition, so the compiler refuses code that does. */
#ifndef ZK_PROM_H
#define ZK_PROM_H

#include "buf.h"

#include <stddef.h>

#define PROM_MUST_USE __attribute__((warn_unused_result))

/* The Content-Type of the exposition. */
#define PROM_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* One label of a sample: name is the caller's constant (a valid label name, written as is); value is
 * escaped here, so it may hold any bytes but NUL. */
struct prom_label {
    const char *name;
    const char *value;
};

/* "# HELP name help" and "# TYPE name type", once per family, before its samples. type is "counter",
 * "gauge" or "histogram"; help is escaped as the format asks (backslash and line feed). */
int prom_family(struct buf *b, const char *name, const char *type, const char *help) PROM_MUST_USE;

/* One sample of a counter: name{labels} v, the value written exactly as an integer. nlabels may be 0
 * (labels may then be NULL). */
int prom_counter(struct buf *b, const char *name, const struct prom_label *labels, size_t nlabels,
                 unsigned long long v) PROM_MUST_USE;

/* One sample of a gauge: name{labels} v, with 17 significant digits (a double read back unchanged);
 * NaN and infinities as the format spells them (NaN, +Inf, -Inf). */
int prom_gauge(struct buf *b, const char *name, const struct prom_label *labels, size_t nlabels, double v)
    PROM_MUST_USE;

/* The index of the bucket an observation v falls in: the first i with v <= bounds[i], or nbounds (the
 * +Inf bucket) when v is above them all. bounds are ascending. */
size_t prom_bucket(const double *bounds, size_t nbounds, double v);

/* The samples of one histogram: name_bucket{labels,le="..."} for each of the nbounds ascending upper
 * bounds and +Inf, then name_sum and name_count. counts holds nbounds + 1 entries, each the number of
 * observations that fell in that bucket alone (prom_bucket), the last one those above every bound; they
 * are summed here into the cumulative counts the format wants, so the +Inf bucket and _count are the
 * same number by construction. sum is written to the microsecond, the resolution both programs time
 * things at. */
int prom_histogram(struct buf *b, const char *name, const struct prom_label *labels, size_t nlabels,
                   const double *bounds, size_t nbounds, const unsigned long long *counts, double sum) PROM_MUST_USE;

#endif

/* prom.c: see prom.h. */
#include "prom.h"

#include "err.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Appends s with the escapes the format asks for: backslash and line feed always, the double quote too
 * inside a label value (quote 1), not in HELP text, where a quote stands for itself. */
static int prom_escaped(struct buf *b, const char *s, int quote)
{
    int rc = ZK_OK;
    const char *run = s;

    for (; rc == ZK_OK && *s; s++) {
        const char *esc = *s == '\\' ? "\\\\" : *s == '\n' ? "\\n" : quote && *s == '"' ? "\\\"" : NULL;

        if (!esc)
            continue;
        rc = buf_append(b, run, (size_t)(s - run));
        if (rc == ZK_OK)
            rc = buf_puts(b, esc);
        run = s + 1;
    }
    if (rc == ZK_OK)
        rc = buf_puts(b, run);
    return rc;
}

/* Appends name, suffix (may be "") and the label set, with le="le" last when le is not NULL, then a
 * space: everything of a sample line but its value. */
static int prom_series(struct buf *b, const char *name, const char *suffix, const struct prom_label *labels,
                       size_t nlabels, const char *le)
{
    int rc = buf_puts(b, name);

    if (rc == ZK_OK)
        rc = buf_puts(b, suffix);
    if (rc == ZK_OK && (nlabels > 0 || le))
        rc = buf_putc(b, '{');
    for (size_t i = 0; rc == ZK_OK && i < nlabels; i++) {
        rc = buf_printf(b, "%s%s=\"", i ? "," : "", labels[i].name);
        if (rc == ZK_OK)
            rc = prom_escaped(b, labels[i].value, 1);
        if (rc == ZK_OK)
            rc = buf_putc(b, '"');
    }
    if (rc == ZK_OK && le)
        rc = buf_printf(b, "%sle=\"%s\"", nlabels ? "," : "", le);
    if (rc == ZK_OK && (nlabels > 0 || le))
        rc = buf_putc(b, '}');
    if (rc == ZK_OK)
        rc = buf_putc(b, ' ');
    return rc;
}

int prom_family(struct buf *b, const char *name, const char *type, const char *help)
{
    int rc = buf_printf(b, "# HELP %s ", name);

    if (rc == ZK_OK)
        rc = prom_escaped(b, help, 0);
    if (rc == ZK_OK)
        rc = buf_printf(b, "\n# TYPE %s %s\n", name, type);
    return rc;
}

int prom_counter(struct buf *b, const char *name, const struct prom_label *labels, size_t nlabels,
                 unsigned long long v)
{
    int rc = prom_series(b, name, "", labels, nlabels, NULL);

    if (rc == ZK_OK)
        rc = buf_printf(b, "%llu\n", v);
    return rc;
}

int prom_gauge(struct buf *b, const char *name, const struct prom_label *labels, size_t nlabels, double v)
{
    int rc = prom_series(b, name, "", labels, nlabels, NULL);

    /* printf spells these "nan" and "inf", which Prometheus does not read. */
    if (rc == ZK_OK && isnan(v))
        rc = buf_puts(b, "NaN\n");
    else if (rc == ZK_OK && isinf(v))
        rc = buf_puts(b, v > 0 ? "+Inf\n" : "-Inf\n");
    else if (rc == ZK_OK)
        rc = buf_printf(b, "%.17g\n", v);
    return rc;
}

size_t prom_bucket(const double *bounds, size_t nbounds, double v)
{
    size_t i = 0;

    while (i < nbounds && !(v <= bounds[i]))
        i++;
    return i;
}

int prom_histogram(struct buf *b, const char *name, const struct prom_label *labels, size_t nlabels,
                   const double *bounds, size_t nbounds, const unsigned long long *counts, double sum)
{
    unsigned long long cumulative = 0;
    char le[32];
    int rc = ZK_OK;

    for (size_t i = 0; rc == ZK_OK && i <= nbounds; i++) {
        cumulative += counts[i];
        if (i < nbounds)
            snprintf(le, sizeof(le), "%g", bounds[i]);
        rc = prom_series(b, name, "_bucket", labels, nlabels, i < nbounds ? le : "+Inf");
        if (rc == ZK_OK)
            rc = buf_printf(b, "%llu\n", cumulative);
    }
    if (rc == ZK_OK)
        rc = prom_series(b, name, "_sum", labels, nlabels, NULL);
    if (rc == ZK_OK)
        rc = buf_printf(b, "%.6f\n", sum);
    if (rc == ZK_OK)
        rc = prom_series(b, name, "_count", labels, nlabels, NULL);
    if (rc == ZK_OK)
        rc = buf_printf(b, "%llu\n", cumulative);
    return rc;
}

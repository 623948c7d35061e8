/* bench_sources: the operator's discovery (controller/sources/discover.h) listing one organisation of a
 * real Gitea (tests/bench/sources.sh starts it with thousands of repositories), as reconcile runs it.
 *
 * It lists the organisation --runs times in a row through disc_list, the first listing as a new
 * operator's (no set, no ETags) and the others as the interval's, and reports for the first and the
 * median of the others: the wall time, the requests and how many answered 304, and the repositories
 * kept; then the process's resident memory before the first listing, after the last, and at its peak
 * (VmRSS, VmHWM), which is what discovery adds to the operator for one such corpus.
 *
 * Usage: bench_sources API_URL ORG TOKEN CA_FILE [RUNS]
 * Prints one line of key=value pairs; tests/bench/sources.sh turns it into docs/benchmarks.md. */
#include "controller/sources/discover.h"
#include "http.h"
#include "monotime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_RUNS 50

/* A line of /proc/self/status in kB (VmRSS, VmHWM), or -1. */
static long status_kb(const char *key)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    size_t n = strlen(key);

    if (!f)
        return -1;
    while (fgets(line, sizeof(line), f))
        if (strncmp(line, key, n) == 0 && line[n] == ':')
            kb = strtol(line + n + 1, NULL, 10);
    fclose(f);
    return kb;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    struct corpus_source src = {0};
    struct corpus_spec spec = {0};
    struct http_tls tls = {0};
    struct disc_http h = {&tls, NULL};
    struct disc_report first = {0}, r = {0};
    double ms[MAX_RUNS];
    long rss_before, runs = argc > 5 ? strtol(argv[5], NULL, 10) : 5;
    struct disc_corpus *d;
    struct zk_err err = {0};
    unsigned later_requests = 0, later_not_modified = 0;

    if (argc < 5 || runs < 2 || runs > MAX_RUNS) {
        fprintf(stderr, "usage: bench_sources API_URL ORG TOKEN CA_FILE [RUNS 2..%d]\n", MAX_RUNS);
        return 2;
    }
    if (http_global_init() != ZK_OK)
        return 1;
    src = (struct corpus_source){.host = SPEC_HOST_GITEA, .api_url = argv[1], .owner = argv[2]};
    spec.sources = &src;
    spec.nsources = 1;
    spec.discovery_interval_seconds = 600;
    spec.discovery_grace_seconds = 86400;
    tls.ca_file = argv[4];
    d = disc_corpus_new();
    disc_sync(d, &spec);
    h.pool = http_pool_new(1);
    rss_before = status_kb("VmRSS");
    for (long i = 0; i < runs; i++) {
        double t0 = monotime_s();

        if (disc_list(d, &spec, 0, argv[3], &h, time(NULL) + i * 600, &err) != ZK_OK) {
            fprintf(stderr, "bench_sources: listing %ld: %s\n", i + 1, err.msg);
            return 1;
        }
        ms[i] = (monotime_s() - t0) * 1000;
        disc_report(d, 0, &r);
        if (i == 0)
            first = r;
        else
            later_requests = r.requests, later_not_modified = r.not_modified;
    }
    qsort(ms + 1, (size_t)runs - 1, sizeof(ms[0]), cmp_double);
    printf("repositories=%zu first_ms=%.0f first_requests=%u later_ms=%.0f later_requests=%u later_not_modified=%u "
           "runs=%ld rss_before_kb=%ld rss_after_kb=%ld hwm_kb=%ld\n",
           first.repositories, ms[0], first.requests, ms[1 + (runs - 1) / 2], later_requests, later_not_modified,
           runs, rss_before, status_kb("VmRSS"), status_kb("VmHWM"));
    http_pool_free(h.pool);
    disc_corpus_free(d);
    http_global_cleanup();
    return 0;
}

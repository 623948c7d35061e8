/* gauges.c: see gauges.h. */
#include "controller/corpus/gauges.h"
#include "controller/corpus/spec.h"
#include "controller/corpus/status.h"
#include "err.h"
#include "json.h"
#include "prom.h"
#include "rfc3339.h"

#include <stdio.h>
#include <string.h>

static const struct {
    const char *name;
    const char *help;
} gauges_family[GAUGE_COUNT] = {
    [GAUGE_READY] = {"zoekt_corpus_ready", "Whether the corpus's Ready condition is True."},
    [GAUGE_FRESH] = {"zoekt_corpus_fresh", "Whether the corpus's Fresh condition is True (every index within maxAge)."},
    [GAUGE_REPOSITORIES] = {"zoekt_corpus_repositories", "Repositories the search pod serves (status.repositoryCount)."},
    [GAUGE_REPOSITORIES_FAILED] = {"zoekt_corpus_repositories_failed",
                                   "Repositories the last indexer run failed (status.indexer.failedRepositories, "
                                   "at most 20 listed)."},
    [GAUGE_REPOSITORIES_STALE] = {"zoekt_corpus_repositories_stale",
                                  "Repositories indexed longer than maxAge ago (status.freshness.stale)."},
    [GAUGE_INDEX_NEWEST] = {"zoekt_corpus_index_newest_timestamp_seconds",
                            "When the newest served shard was indexed (status.lastIndexTime)."},
    [GAUGE_INDEX_OLDEST] = {"zoekt_corpus_index_oldest_timestamp_seconds",
                            "When the oldest served shard was indexed (status.oldestIndexTime)."},
    [GAUGE_MAX_AGE] = {"zoekt_corpus_max_age_seconds", "The corpus's spec.freshness.maxAge."},
    [GAUGE_INDEXER_LAST_SUCCESS] = {"zoekt_corpus_indexer_last_success_timestamp_seconds",
                                    "When an indexer Job of the corpus last succeeded."},
    [GAUGE_INDEXER_LAST_FAILURE] = {"zoekt_corpus_indexer_last_failure_timestamp_seconds",
                                    "When an indexer Job of the corpus last failed."},
};

static void gauge_set(struct corpus_gauges *g, enum gauge which, double v)
{
    g->value[which] = v;
    g->present |= 1u << which;
}

static void gauge_time(struct corpus_gauges *g, enum gauge which, const cJSON *obj, const char *member)
{
    time_t t;
    const char *s = json_str(obj, member, NULL);

    if (s && rfc3339_parse(s, &t))
        gauge_set(g, which, (double)t);
}

static void gauge_condition(struct corpus_gauges *g, enum gauge which, const cJSON *status, const char *type)
{
    const cJSON *c = status_condition(status, type);

    if (c)
        gauge_set(g, which, strcmp(json_str(c, "status", ""), "True") == 0);
}

void gauges_observe(const cJSON *corpus, struct corpus_gauges *out)
{
    const cJSON *st = json_obj(corpus, "status"), *count, *ix = json_obj(st, "indexer");
    const char *max_age = json_path_str(corpus, "spec.freshness.maxAge", NULL);
    long seconds = SPEC_DEFAULT_MAX_AGE_SECONDS;

    memset(out, 0, sizeof(*out));
    snprintf(out->ns, sizeof(out->ns), "%s", json_path_str(corpus, "metadata.namespace", ""));
    snprintf(out->name, sizeof(out->name), "%s", json_path_str(corpus, "metadata.name", ""));
    gauge_condition(out, GAUGE_READY, st, STATUS_READY);
    gauge_condition(out, GAUGE_FRESH, st, STATUS_FRESH);
    if (cJSON_IsNumber(count = cJSON_GetObjectItemCaseSensitive(st, "repositoryCount")))
        gauge_set(out, GAUGE_REPOSITORIES, count->valuedouble);
    if (cJSON_IsArray(count = cJSON_GetObjectItemCaseSensitive(ix, "failedRepositories")))
        gauge_set(out, GAUGE_REPOSITORIES_FAILED, cJSON_GetArraySize(count));
    if (cJSON_IsNumber(count = json_path(st, "freshness.stale")))
        gauge_set(out, GAUGE_REPOSITORIES_STALE, count->valuedouble);
    gauge_time(out, GAUGE_INDEX_NEWEST, st, "lastIndexTime");
    gauge_time(out, GAUGE_INDEX_OLDEST, st, "oldestIndexTime");
    gauge_time(out, GAUGE_INDEXER_LAST_SUCCESS, ix, "lastSuccessfulTime");
    gauge_time(out, GAUGE_INDEXER_LAST_FAILURE, ix, "lastFailedTime");
    /* An invalid maxAge (the status says so) exports none rather than a default it does not have. */
    if (!max_age || spec_duration_parse(max_age, &seconds))
        gauge_set(out, GAUGE_MAX_AGE, (double)seconds);
}

int gauges_render(const struct corpus_gauges *g, size_t n, struct buf *out)
{
    int rc = ZK_OK;

    for (int f = 0; f < GAUGE_COUNT && rc == ZK_OK; f++) {
        rc = prom_family(out, gauges_family[f].name, "gauge", gauges_family[f].help);
        for (size_t i = 0; i < n && rc == ZK_OK; i++) {
            const struct prom_label labels[] = {{"namespace", g[i].ns}, {"name", g[i].name}};

            if (g[i].present & (1u << f))
                rc = prom_gauge(out, gauges_family[f].name, labels, 2, g[i].value[f]);
        }
    }
    return rc;
}

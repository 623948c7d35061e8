/* spec.h: a CodeSearchCorpus spec, parsed, defaulted and validated. Pure: no I/O.
 *
 * The CRD's schema already rejects most bad input at admission, but the controller validates again
 * (cron syntax, duplicate repository names, URLs) because schemas differ across Kubernetes versions and
 * because objects may predate a schema change. Validation never stops at the first problem: every
 * field error is collected so one status condition can name them all. */
#ifndef ZK_CORPUS_SPEC_H
#define ZK_CORPUS_SPEC_H

#include "err.h"

#include <cjson/cJSON.h>

#define SPEC_MAX_FIELD_ERRORS 16

struct spec_field_error {
    char field[160];   /* JSON path, e.g. "spec.repositories[3].url" */
    char message[256]; /* what is wrong and what is expected */
};

struct spec_errors {
    struct spec_field_error items[SPEC_MAX_FIELD_ERRORS];
    int count;   /* errors stored */
    int dropped; /* errors beyond SPEC_MAX_FIELD_ERRORS, counted only */
};

struct corpus_repo {
    char *url;
    char *name;      /* given, or derived from the URL ("github.com/org/repo") */
    char **branches; /* NULL-terminated; empty means the remote HEAD */
};

enum pvc_policy { PVC_RETAIN = 0, PVC_DELETE = 1 };

struct corpus_spec {
    struct corpus_repo *repos;
    int nrepos;
    char *credentials_secret; /* gitCredentialsSecretRef.name, or NULL */
    char *schedule;           /* cron, default "0 3 * * *" */
    char *time_zone;          /* or NULL */
    int suspend;
    struct {
        char *storage_class;  /* default "efs-sc" */
        char *size;           /* default "100Gi" */
        char *existing_claim; /* or NULL: then no PVC is rendered */
        enum pvc_policy on_delete;
    } storage;
    struct {
        char *image;
        cJSON *resources;     /* owned copy, or NULL for defaults */
        long deadline_seconds;
        char **extra_flags;   /* NULL-terminated */
    } indexer;
    struct {
        char *image;
        int replicas;
        cJSON *resources;
        char *architecture;   /* default "arm64" */
        cJSON *node_selector; /* owned copy or NULL */
        cJSON *tolerations;   /* owned copy or NULL */
    } webserver;
    struct {
        char *image;
        int port;             /* default 8080 */
        char *tokens_secret;  /* Secret with accepted bearer tokens, or NULL */
    } gateway;
    struct {
        char *image;
        int max_files, context_lines, search_timeout_seconds, list_timeout_seconds;
        char *mirror_prefix;
    } connector;
    long freshness_max_age_seconds; /* default 36h */
};

/* Parses corpus (the whole CodeSearchCorpus object) into *out, owned by the caller (spec_free).
 * Returns ZK_OK, or ZK_EINVAL with errs filled (then *out is NULL), or ZK_ENOMEM. */
int spec_parse(const cJSON *corpus, struct corpus_spec **out, struct spec_errors *errs);

void spec_free(struct corpus_spec *spec);

/* "field: message; field: message" (with "and N more" when dropped), for conditions and Events.
 * Writes at most len bytes including the terminator. */
void spec_errors_format(const struct spec_errors *errs, char *dst, size_t len);

#endif

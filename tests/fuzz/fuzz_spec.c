/* fuzz_spec.c: CodeSearchCorpus spec parsing and validation (controller/corpus/spec.h) on arbitrary
 * objects: anyone allowed to create a corpus controls this input, and objects may predate the CRD's
 * schema.
 *
 * Input: byte 0 chooses what is checked (0: a whole corpus as JSON, 1: a cron schedule, 2: a duration,
 * 3: a clone URL), the rest is the text. Asserted:
 * - spec_parse returns ZK_OK with a spec and no field error, or ZK_EINVAL with no spec and 1 to
 *   SPEC_MAX_FIELD_ERRORS errors (each a non-empty, NUL-terminated field and message);
 * - an accepted spec keeps every promise of spec.h: 1..SPEC_MAX_REPOS repositories with a URL and a
 *   unique non-empty name, NULL-terminated branch and flag lists, a code host address only with its
 *   kind and always https:// without whitespace, a schedule spec_cron_valid accepts,
 *   defaults filled in, and every number within its documented bounds;
 * - spec_errors_format NUL-terminates within any buffer size;
 * - spec_cron_valid explains every rejection; spec_duration_parse only succeeds with a positive
 *   total; spec_name_from_url writes a non-empty NUL-terminated name within its buffer. */
#include "tests/fuzz/fuzz.h"

#include "controller/corpus/spec.h"
#include "json.h"

#include <string.h>

static int nonempty(const char *s, size_t size)
{
    return memchr(s, '\0', size) != NULL && s[0] != '\0';
}

static void check_strv(char **v, int flags)
{
    FUZZ_CHECK(v != NULL);
    for (; *v; v++)
        FUZZ_CHECK((*v)[0] != '\0' && (!flags || (*v)[0] == '-'));
}

static void check_spec(const struct corpus_spec *s)
{
    char why[200];
    int i, j;

    /* Without repositories a spec has sources; each source has an owner and an https API address
     * without white space (it becomes part of a request), and its discovery bounds. */
    FUZZ_CHECK((s->nrepos >= 1 || s->nsources >= 1) && s->nrepos <= SPEC_MAX_REPOS &&
               (s->nrepos == 0 || s->repos != NULL));
    FUZZ_CHECK(s->nsources >= 0 && s->nsources <= SPEC_MAX_SOURCES);
    for (i = 0; i < s->nsources; i++) {
        const struct corpus_source *src = &s->sources[i];

        FUZZ_CHECK(src->api_url != NULL && strncmp(src->api_url, "https://", 8) == 0 &&
                   strpbrk(src->api_url, " \t\r\n") == NULL);
        FUZZ_CHECK(src->owner != NULL && src->owner[0] != '\0' && strpbrk(src->owner, " \t\r\n") == NULL);
        FUZZ_CHECK((src->token_secret == NULL) == (src->token_key == NULL));
        FUZZ_CHECK((src->visibility & ~7u) == 0);
    }
    FUZZ_CHECK(s->discovery_interval_seconds >= 60 && s->discovery_interval_seconds <= 86400);
    FUZZ_CHECK(s->discovery_grace_seconds >= 0 && s->discovery_grace_seconds <= 30L * 86400);
    for (i = 0; i < s->nrepos; i++) {
        const struct corpus_repo *r = &s->repos[i];

        FUZZ_CHECK(r->url != NULL && r->url[0] != '\0' && strlen(r->url) <= SPEC_MAX_URL);
        FUZZ_CHECK(r->name != NULL && r->name[0] != '\0' && strlen(r->name) <= SPEC_MAX_REPO_NAME);
        FUZZ_CHECK(strpbrk(r->name, " \t\r\n") == NULL);
        for (j = 0; j < i; j++)
            FUZZ_CHECK(strcmp(s->repos[j].name, r->name) != 0);
        check_strv(r->branches, 0);
        /* The address is a field of the indexer's space-separated list, and always has its kind. */
        FUZZ_CHECK((r->web_url == NULL) == (r->code_host == NULL));
        FUZZ_CHECK(r->web_url == NULL ||
                   (strncmp(r->web_url, "https://", 8) == 0 && strpbrk(r->web_url, " \t\r\n") == NULL));
    }
    FUZZ_CHECK(s->schedule != NULL && spec_cron_valid(s->schedule, why, sizeof(why)));
    FUZZ_CHECK(s->storage.storage_class != NULL && s->storage.size != NULL);
    FUZZ_CHECK(s->storage.on_delete == PVC_RETAIN || s->storage.on_delete == PVC_DELETE);
    FUZZ_CHECK(s->indexer.image != NULL && s->webserver.image != NULL && s->gateway.image != NULL &&
               s->connector.image != NULL);
    FUZZ_CHECK(s->indexer.deadline_seconds >= 60 && s->indexer.deadline_seconds <= 7 * 86400);
    check_strv(s->indexer.extra_flags, 1);
    FUZZ_CHECK(s->webserver.replicas >= 0 && s->webserver.replicas <= 20);
    FUZZ_CHECK(s->webserver.architecture != NULL && (strcmp(s->webserver.architecture, "arm64") == 0 ||
                                                      strcmp(s->webserver.architecture, "amd64") == 0));
    FUZZ_CHECK(s->webserver.node_selector == NULL || cJSON_IsObject(s->webserver.node_selector));
    FUZZ_CHECK(s->webserver.tolerations == NULL || cJSON_IsArray(s->webserver.tolerations));
    FUZZ_CHECK(s->gateway.port >= 1024 && s->gateway.port <= 65535 && s->gateway.port != 6070 &&
               s->gateway.port != 8081);
    FUZZ_CHECK(s->connector.max_files >= 1 && s->connector.max_files <= 200);
    FUZZ_CHECK(s->connector.context_lines >= 0 && s->connector.context_lines <= 10);
    FUZZ_CHECK(s->connector.search_timeout_seconds >= 1 && s->connector.search_timeout_seconds <= 300);
    FUZZ_CHECK(s->connector.list_timeout_seconds >= 1 && s->connector.list_timeout_seconds <= 300);
    FUZZ_CHECK(s->connector.mirror_prefix == NULL || s->connector.mirror_prefix[0] != '\0');
    FUZZ_CHECK(s->freshness_max_age_seconds >= 60);
    FUZZ_CHECK(s->suspend == 0 || s->suspend == 1);
}

static void check_corpus(const char *text, size_t len)
{
    cJSON *corpus = json_parse(text, len);
    struct corpus_spec *s = NULL;
    struct spec_errors errs;
    char msg[300];
    int rc, i;

    if (corpus == NULL)
        return;
    rc = spec_parse(corpus, NULL, &s, &errs);
    if (rc == ZK_OK) {
        FUZZ_CHECK(s != NULL && errs.count == 0 && errs.dropped == 0);
        check_spec(s);
        spec_free(s);
    } else {
        FUZZ_CHECK(rc == ZK_EINVAL && s == NULL);
        FUZZ_CHECK(errs.count >= 1 && errs.count <= SPEC_MAX_FIELD_ERRORS && errs.dropped >= 0);
        for (i = 0; i < errs.count; i++)
            FUZZ_CHECK(nonempty(errs.items[i].field, sizeof(errs.items[i].field)) &&
                       nonempty(errs.items[i].message, sizeof(errs.items[i].message)));
        for (size_t n = 1; n <= sizeof(msg); n += 37) {
            memset(msg, 'x', sizeof(msg));
            spec_errors_format(&errs, msg, n);
            FUZZ_CHECK(memchr(msg, '\0', n) != NULL);
        }
    }
    cJSON_Delete(corpus);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text, why[120], name[40];
    long seconds = 0;

    if (size < 1)
        return 0;
    if (data[0] % 4 == 0) {
        check_corpus((const char *)data + 1, size - 1);
        return 0;
    }
    text = strndup((const char *)data + 1, size - 1);
    FUZZ_CHECK(text != NULL);
    switch (data[0] % 4) {
    case 1:
        memset(why, 'x', sizeof(why));
        if (!spec_cron_valid(text, why, sizeof(why)))
            FUZZ_CHECK(nonempty(why, sizeof(why)));
        break;
    case 2:
        if (spec_duration_parse(text, &seconds))
            FUZZ_CHECK(seconds > 0);
        break;
    default:
        memset(name, 'x', sizeof(name));
        if (spec_name_from_url(text, name, sizeof(name)))
            FUZZ_CHECK(nonempty(name, sizeof(name)));
    }
    free(text);
    return 0;
}

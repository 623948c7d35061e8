/* fuzz_kube_status.c: kube_parse_status (lib/kube/client.h) on arbitrary error bodies, which come from
 * the API server or from whatever proxy stands in front of it.
 *
 * Input: byte 0 picks the HTTP status from a table (including 2xx, as an ERROR event has), byte 1 the
 * Retry-After header value (-1 meaning none), the rest is the body. Asserted:
 * - the result is always ZK_EAPI, and err.base.code says so;
 * - every text field is NUL-terminated within its array; the one-line message is never empty;
 * - a body that is not a Status keeps the given HTTP status and Retry-After, and its message is the
 *   printable start of the body (at most 200 bytes, single spaces, no leading or trailing space) or
 *   says that the body was empty;
 * - the reason is one of the enum's values;
 * - parsing the body first and calling kube_parse_status_json gives the same answer. */
#include "tests/fuzz/fuzz.h"

#include "err.h"
#include "json.h"
#include "kube/client.h"

#include <string.h>

static int terminated(const char *s, size_t size)
{
    return memchr(s, '\0', size) != NULL;
}

static void check_common(const struct kube_err *e)
{
    FUZZ_CHECK(e->base.code == ZK_EAPI);
    FUZZ_CHECK(terminated(e->base.msg, sizeof(e->base.msg)) && e->base.msg[0] != '\0');
    FUZZ_CHECK(terminated(e->message, sizeof(e->message)));
    FUZZ_CHECK(terminated(e->reason_text, sizeof(e->reason_text)));
    FUZZ_CHECK(terminated(e->causes, sizeof(e->causes)));
    FUZZ_CHECK(e->reason >= KUBE_REASON_NONE && e->reason <= KUBE_REASON_OTHER);
}

static void check_same(const struct kube_err *a, const struct kube_err *b)
{
    FUZZ_CHECK(a->base.code == b->base.code && strcmp(a->base.msg, b->base.msg) == 0);
    FUZZ_CHECK(a->http_status == b->http_status && a->reason == b->reason && a->retry_after == b->retry_after);
    FUZZ_CHECK(strcmp(a->reason_text, b->reason_text) == 0 && strcmp(a->message, b->message) == 0);
    FUZZ_CHECK(strcmp(a->causes, b->causes) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const long statuses[] = {400, 401, 403, 404, 405, 409, 410, 415, 422, 429, 500, 503, 504, 200, 0, 302};
    struct kube_err e, j;
    const char *body;
    long status, retry;
    size_t len, i;
    cJSON *tree;
    int is_status;

    if (size < 2)
        return 0;
    status = statuses[data[0] % (sizeof(statuses) / sizeof(statuses[0]))];
    retry = (long)data[1] - 1;
    body = (const char *)data + 2;
    len = size - 2;

    FUZZ_CHECK(kube_parse_status(status, body, len, retry, "GET /api/v1/namespaces/x", &e) == ZK_EAPI);
    check_common(&e);

    tree = len ? json_parse(body, len) : NULL;
    is_status = tree != NULL && strcmp(json_str(tree, "kind", ""), "Status") == 0;
    if (is_status) {
        FUZZ_CHECK(kube_parse_status_json(status, tree, retry, "GET /api/v1/namespaces/x", &j) == ZK_EAPI);
        check_common(&j);
        check_same(&e, &j);
        if (status >= 300)
            FUZZ_CHECK(e.http_status == status);
    } else {
        size_t n = strlen(e.message);

        FUZZ_CHECK(e.http_status == status && e.retry_after == retry);
        FUZZ_CHECK(e.reason_text[0] == '\0' && e.causes[0] == '\0');
        FUZZ_CHECK(n > 0 && n <= 200 && e.message[0] != ' ' && e.message[n - 1] != ' ');
        for (i = 0; i < n; i++) {
            FUZZ_CHECK(e.message[i] >= 0x20 && e.message[i] < 0x7f);
            FUZZ_CHECK(!(e.message[i] == ' ' && i + 1 < n && e.message[i + 1] == ' '));
        }
    }
    cJSON_Delete(tree);
    return 0;
}

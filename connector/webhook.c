/* webhook.c: see webhook.h. */
#include "connector/webhook.h"

#include "buf.h"
#include "json.h"
#include "log.h"
#include "mem.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NAME_MAX_LEN 256

struct webhook {
    char *secret_file, *repos_file, *queue_dir;
    struct cmetrics *metrics;
};

int webhook_new(const struct webhook_opts *opts, struct webhook **out, struct zk_err *err)
{
    struct webhook *w;

    *out = NULL;
    if (!opts->secret_file || !opts->repos_file || !opts->queue_dir)
        return zk_err_set(err, ZK_EINVAL, "a webhook needs a secret file, a repository list and a queue folder");
    w = mem_calloc(1, sizeof(*w));
    w->secret_file = mem_strdup(opts->secret_file);
    w->repos_file = mem_strdup(opts->repos_file);
    w->queue_dir = mem_strdup(opts->queue_dir);
    w->metrics = opts->metrics;
    *out = w;
    return ZK_OK;
}

void webhook_free(struct webhook *w)
{
    if (!w)
        return;
    free(w->secret_file);
    free(w->repos_file);
    free(w->queue_dir);
    free(w);
}

static void answer(struct webhook_answer *a, unsigned status, enum cmetrics_outcome outcome, const char *key,
                   const char *value)
{
    cJSON *o = cJSON_CreateObject();
    char *text;

    cJSON_AddStringToObject(o, key, value);
    text = cJSON_PrintUnformatted(o);
    a->status = status;
    a->outcome = outcome;
    snprintf(a->body, sizeof(a->body), "%s", text);
    free(text);
    cJSON_Delete(o);
}

/* Reads path into b (bounded by b's limit). Logs why it could not. */
static int read_small(struct buf *b, const char *path, const char *what)
{
    struct zk_err err = {0};

    if (buf_read_file(b, path, &err) == ZK_OK)
        return 1;
    log_error("Cannot read the webhook's file", "file", what, "error", err.msg, NULL);
    return 0;
}

/* The listed name of the repository one of push's URLs names, from the list text, into name. */
static int find_listed(const char *list, const struct hook_event *push, char *name, size_t len)
{
    char keys[HOOK_MAX_URLS][HOOK_KEY_MAX], key[HOOK_KEY_MAX], n[NAME_MAX_LEN], url[2048];
    int nkeys = 0;
    const char *line = list;

    for (int i = 0; i < push->nurls; i++)
        if (hook_url_key(push->urls[i], keys[nkeys], sizeof(keys[0])))
            nkeys++;
    while (line && *line) {
        const char *eol = strchr(line, '\n');
        size_t l = eol ? (size_t)(eol - line) : strlen(line);
        char buf[sizeof(n) + sizeof(url) + 4];

        /* Only the name and the URL are read, and they always fit; what follows them (up to 64
         * branches, the code host's address) may not, and is cut. */
        if (l >= sizeof(buf))
            l = sizeof(buf) - 1;
        if (line[0] != '#') {
            memcpy(buf, line, l);
            buf[l] = '\0';
            if (sscanf(buf, "%255s %2047s", n, url) == 2 && hook_url_key(url, key, sizeof(key)))
                for (int i = 0; i < nkeys; i++)
                    if (strcmp(keys[i], key) == 0) {
                        snprintf(name, len, "%s", n);
                        return 1;
                    }
        }
        line = eol ? eol + 1 : NULL;
    }
    return 0;
}

/* Writes the request file of repository name: its shard prefix, '/' escaped as zoekt and indexer.sh
 * escape it. Names are [A-Za-z0-9._/-] (the operator validates them), so no other byte needs care. */
static int enqueue(const struct webhook *w, const char *name)
{
    char path[4096];
    size_t n = (size_t)snprintf(path, sizeof(path), "%s/", w->queue_dir);
    int fd;

    for (const char *p = name; *p && n + 4 < sizeof(path); p++) {
        if (*p == '/') {
            memcpy(path + n, "%2F", 3);
            n += 3;
        } else {
            path[n++] = *p;
        }
    }
    path[n] = '\0';
    fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        log_error("Cannot write the webhook's request", "file", path, "error", strerror(errno), NULL);
        return 0;
    }
    close(fd);
    return 1;
}

void webhook_handle(struct webhook *w, const struct hook_proof *proof, const struct hook_event_headers *events,
                    const char *body, size_t len, int too_big, struct webhook_answer *a)
{
    struct buf secret, list;
    struct hook_event push = {0};
    struct zk_err err = {0};
    char name[NAME_MAX_LEN];
    size_t slen;

    if (too_big) {
        answer(a, 413, CMETRICS_TOO_LARGE, "error",
               "the body is larger than the connector accepts; the next poll finds the push");
        return;
    }
    buf_init(&secret, WEBHOOK_SECRET_MAX);
    buf_init(&list, WEBHOOK_LIST_MAX);
    if (!read_small(&secret, w->secret_file, "secret")) {
        answer(a, 503, CMETRICS_FAILED, "error", "the webhook secret cannot be read");
        goto out;
    }
    /* A Secret written with a trailing newline (echo secret > file) means the secret without it. */
    slen = secret.len;
    while (slen > 0 && (secret.data[slen - 1] == '\n' || secret.data[slen - 1] == '\r'))
        slen--;
    if (!hook_verify(proof, secret.data, slen, body, len)) {
        answer(a, 401, CMETRICS_REFUSED_SIGNATURE, "error", "missing or wrong signature");
        goto out;
    }
    if (hook_parse_event(events, body, len, &push, &err) != ZK_OK) {
        answer(a, 400, CMETRICS_BAD_REQUEST, "error", err.msg);
        goto out;
    }
    if (push.kind != HOOK_PUSH) {
        answer(a, 202, CMETRICS_IGNORED, "ignored", "not a push");
        goto out;
    }
    if (push.ref && strncmp(push.ref, "refs/heads/", 11) != 0) {
        answer(a, 202, CMETRICS_IGNORED, "ignored", "not a branch");
        goto out;
    }
    if (!read_small(&list, w->repos_file, "repository list")) {
        answer(a, 503, CMETRICS_FAILED, "error", "the repository list cannot be read");
        goto out;
    }
    if (!find_listed(list.data ? list.data : "", &push, name, sizeof(name))) {
        answer(a, 202, CMETRICS_IGNORED, "ignored", "the corpus does not list this repository");
        goto out;
    }
    if (!enqueue(w, name)) {
        answer(a, 503, CMETRICS_FAILED, "error", "the request cannot be written");
        goto out;
    }
    log_info("Webhook push queued", "repository", name, NULL);
    answer(a, 202, CMETRICS_ACCEPTED, "queued", name);
out:
    hook_event_free(&push);
    buf_free(&secret);
    buf_free(&list);
}

/* The host whose proof a delivery carries, for the metrics: Gitea and Forgejo send GitHub's header
 * beside their own, so their own header decides. */
static enum cmetrics_scheme webhook_scheme(const struct hook_proof *p)
{
    if (p->gitlab_token)
        return CMETRICS_GITLAB;
    if (p->gitea_signature)
        return CMETRICS_GITEA;
    if (p->hub_signature_256)
        return CMETRICS_GITHUB;
    return CMETRICS_NO_PROOF;
}

static enum MHD_Result webhook_serve(void *ctx, struct MHD_Connection *c, const char *method,
                                     const struct front_body *body)
{
    struct webhook *w = ctx;
    struct hook_proof proof;
    struct hook_event_headers events;
    struct webhook_answer a;
    const char *gitea_signature = front_header(c, "X-Gitea-Signature");
    const char *gitea_event = front_header(c, "X-Gitea-Event");

    proof.hub_signature_256 = front_header(c, "X-Hub-Signature-256");
    proof.gitea_signature = gitea_signature ? gitea_signature : front_header(c, "X-Forgejo-Signature");
    proof.gitlab_token = front_header(c, "X-Gitlab-Token");
    events.github = front_header(c, "X-GitHub-Event");
    events.gitea = gitea_event ? gitea_event : front_header(c, "X-Forgejo-Event");
    events.gitlab = front_header(c, "X-Gitlab-Event");
    if (strcmp(method, "POST") != 0) {
        cmetrics_webhook(w->metrics, webhook_scheme(&proof), CMETRICS_BAD_REQUEST);
        return front_respond(c, MHD_HTTP_METHOD_NOT_ALLOWED, "application/json",
                             "{\"error\":\"POST a webhook delivery\"}", MHD_HTTP_HEADER_ALLOW, "POST", NULL);
    }
    webhook_handle(w, &proof, &events, body->data, body->len, body->too_big, &a);
    cmetrics_webhook(w->metrics, webhook_scheme(&proof), a.outcome);
    return front_respond(c, a.status, "application/json", a.body, NULL);
}

struct front_route webhook_route(struct webhook *w)
{
    struct front_route r = {.path = WEBHOOK_PATH, .ctx = w, .serve = webhook_serve};

    return r;
}

/* webhook.c: see webhook.h. */
#include "connector/webhook.h"

#include "buf.h"
#include "connector/owncorpus.h"
#include "json.h"
#include "log.h"
#include "mem.h"
#include "monotime.h"
#include "rfc3339.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NAME_MAX_LEN 256
/* The low bit of webhook.discovery: the request that opened the interval has failed. */
#define DISCOVERY_FAILED_BIT 1LL

struct webhook {
    char *secret_file, *repos_file, *queue_dir;
    char *corpus_namespace, *corpus_name, *kubeconfig; /* no corpus_namespace: no discovery */
    struct cmetrics *metrics;
    long long (*now_ms)(void);
    /* The discovery interval in one word, so that the connection threads agree on it without a lock: 0
     * before the first request, then ((ms + 1) << 1) | failed, ms the monotonic time at which the last
     * request started (+ 1, so that a request at time 0 does not read as none) and the failed bit set
     * once that request has failed. */
    atomic_llong discovery;
};

/* Whose the discovery interval is, for a delivery that would request one. */
enum discovery_turn {
    DISCOVERY_MINE,    /* no request in the last interval: this delivery makes one, and opens the next */
    DISCOVERY_PENDING, /* an earlier request of this interval is in flight or has succeeded */
    DISCOVERY_FAILED,  /* an earlier request of this interval has failed */
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
    if (opts->corpus_namespace && opts->corpus_name) {
        w->corpus_namespace = mem_strdup(opts->corpus_namespace);
        w->corpus_name = mem_strdup(opts->corpus_name);
        w->kubeconfig = opts->kubeconfig ? mem_strdup(opts->kubeconfig) : NULL;
    }
    w->metrics = opts->metrics;
    w->now_ms = opts->now_ms ? opts->now_ms : monotime_ms;
    atomic_init(&w->discovery, 0);
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
    free(w->corpus_namespace);
    free(w->corpus_name);
    free(w->kubeconfig);
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

/* Takes the discovery interval for a delivery at now when it is free, making *mine the word that says
 * so; otherwise says whose it is. */
static enum discovery_turn discovery_claim(struct webhook *w, long long now, long long *mine)
{
    long long seen = atomic_load(&w->discovery);

    *mine = (now + 1) << 1;
    for (;;) {
        if (seen != 0 && now - ((seen >> 1) - 1) < WEBHOOK_DISCOVERY_INTERVAL_MS)
            return (seen & DISCOVERY_FAILED_BIT) ? DISCOVERY_FAILED : DISCOVERY_PENDING;
        if (atomic_compare_exchange_weak(&w->discovery, &seen, *mine))
            return DISCOVERY_MINE;
    }
}

/* Asks the operator to discover the corpus's repositories now (webhook.h), at most once an interval.
 * what and repository name the delivery in the log (repository may be NULL). */
static void request_discovery(struct webhook *w, const char *what, const char *repository,
                              struct webhook_answer *a)
{
    static const char failed[] = "the corpus cannot be annotated to request a discovery now; the connector's log "
                                 "says why";
    const struct owncorpus corpus = {w->kubeconfig, w->corpus_namespace, w->corpus_name};
    struct kube_err kerr;
    char at[32];
    long long mine;
    enum discovery_turn turn = discovery_claim(w, w->now_ms(), &mine);

    if (turn == DISCOVERY_PENDING) {
        answer(a, 202, CMETRICS_ACCEPTED, "discovery", "already requested");
        return;
    }
    if (turn == DISCOVERY_FAILED) {
        answer(a, 503, CMETRICS_DISCOVERY_FAILED, "error", failed);
        return;
    }
    rfc3339_format(time(NULL), at, sizeof(at));
    if (owncorpus_annotate(&corpus, WEBHOOK_DISCOVER_ANNOTATION, at, &kerr) != ZK_OK) {
        /* Marks the interval this request opened, and no later one. */
        atomic_compare_exchange_strong(&w->discovery, &mine, mine | DISCOVERY_FAILED_BIT);
        log_error("Cannot request a discovery", "namespace", w->corpus_namespace, "corpus", w->corpus_name, "error",
                  kerr.base.msg, NULL);
        answer(a, 503, CMETRICS_DISCOVERY_FAILED, "error", failed);
        return;
    }
    log_info("Webhook requested a discovery", "event", what, "repository", repository, "value", at, NULL);
    answer(a, 202, CMETRICS_ACCEPTED, "discovery", "requested");
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

/* A proven push: the request file of its repository when the corpus lists it, else a discovery. */
static void handle_push(struct webhook *w, const struct hook_event *push, struct webhook_answer *a)
{
    struct buf list;
    char name[NAME_MAX_LEN];

    buf_init(&list, WEBHOOK_LIST_MAX);
    if (push->ref && strncmp(push->ref, "refs/heads/", 11) != 0) {
        answer(a, 202, CMETRICS_IGNORED, "ignored", "not a branch");
        goto out;
    }
    if (!read_small(&list, w->repos_file, "repository list")) {
        answer(a, 503, CMETRICS_FAILED, "error", "the repository list cannot be read");
        goto out;
    }
    if (!find_listed(list.data ? list.data : "", push, name, sizeof(name))) {
        if (w->corpus_namespace)
            request_discovery(w, "push of an unlisted repository", push->urls[0], a);
        else
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
    buf_free(&list);
}

void webhook_handle(struct webhook *w, const struct hook_proof *proof, const struct hook_event_headers *events,
                    const char *body, size_t len, int too_big, struct webhook_answer *a)
{
    struct buf secret;
    struct hook_event event = {0};
    struct zk_err err = {0};
    size_t slen;

    if (too_big) {
        answer(a, 413, CMETRICS_TOO_LARGE, "error",
               "the body is larger than the connector accepts; the next poll finds the push");
        return;
    }
    buf_init(&secret, WEBHOOK_SECRET_MAX);
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
    if (hook_parse_event(events, body, len, &event, &err) != ZK_OK) {
        answer(a, 400, CMETRICS_BAD_REQUEST, "error", err.msg);
        goto out;
    }
    if (event.kind == HOOK_PUSH)
        handle_push(w, &event, a);
    else if (event.kind == HOOK_OTHER)
        answer(a, 202, CMETRICS_IGNORED, "ignored", "neither a push nor a repository event");
    else if (!w->corpus_namespace)
        answer(a, 202, CMETRICS_IGNORED, "ignored",
               "the corpus discovers no repositories (no --webhook-discovery and --corpus)");
    else
        request_discovery(w, event.action, event.repository, a);
out:
    hook_event_free(&event);
    buf_free(&secret);
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

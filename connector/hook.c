/* hook.c: see hook.h. */
#include "connector/hook.h"

#include "json.h"
#include "mem.h"

#include <ctype.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DIGEST_LEN 32 /* SHA-256 */

/* Decodes exactly DIGEST_LEN bytes of hexadecimal (either case) from hex into out. */
static int hex_digest(const char *hex, unsigned char out[DIGEST_LEN])
{
    if (strlen(hex) != 2 * DIGEST_LEN)
        return 0;
    for (size_t i = 0; i < DIGEST_LEN; i++) {
        int hi = isxdigit((unsigned char)hex[2 * i]), lo = isxdigit((unsigned char)hex[2 * i + 1]);
        char pair[3] = {hex[2 * i], hex[2 * i + 1], '\0'};

        if (!hi || !lo)
            return 0;
        out[i] = (unsigned char)strtoul(pair, NULL, 16);
    }
    return 1;
}

/* Whether hex is the HMAC-SHA256 of body under secret. */
static int hmac_matches(const char *hex, const char *secret, size_t secret_len, const char *body, size_t len)
{
    unsigned char want[EVP_MAX_MD_SIZE], got[DIGEST_LEN];
    unsigned int want_len = 0;

    if (!hex_digest(hex, got))
        return 0;
    if (!HMAC(EVP_sha256(), secret, (int)secret_len, (const unsigned char *)body, len, want, &want_len) ||
        want_len != DIGEST_LEN)
        return 0;
    return CRYPTO_memcmp(want, got, DIGEST_LEN) == 0;
}

/* Whether token equals secret, in a time that depends on neither: their digests are compared. */
static int token_matches(const char *token, const char *secret, size_t secret_len)
{
    unsigned char a[EVP_MAX_MD_SIZE], b[EVP_MAX_MD_SIZE];
    unsigned int alen = 0, blen = 0;

    if (!EVP_Digest(token, strlen(token), a, &alen, EVP_sha256(), NULL) ||
        !EVP_Digest(secret, secret_len, b, &blen, EVP_sha256(), NULL))
        return 0;
    return alen == DIGEST_LEN && blen == DIGEST_LEN && CRYPTO_memcmp(a, b, DIGEST_LEN) == 0;
}

int hook_verify(const struct hook_proof *proof, const char *secret, size_t secret_len, const char *body,
                size_t len)
{
    int proofs = 0;

    if (!secret || secret_len == 0)
        return 0;
    if (!body)
        len = 0, body = "";
    if (proof->hub_signature_256) {
        if (strncmp(proof->hub_signature_256, "sha256=", 7) != 0 ||
            !hmac_matches(proof->hub_signature_256 + 7, secret, secret_len, body, len))
            return 0;
        proofs++;
    }
    if (proof->gitea_signature) {
        if (!hmac_matches(proof->gitea_signature, secret, secret_len, body, len))
            return 0;
        proofs++;
    }
    if (proof->gitlab_token) {
        if (!token_matches(proof->gitlab_token, secret, secret_len))
            return 0;
        proofs++;
    }
    return proofs > 0;
}

/* Whether s is one of the NULL-terminated words. */
static int hook_one_of(const char *s, const char *const *words)
{
    for (; s && *words; words++)
        if (strcmp(s, *words) == 0)
            return 1;
    return 0;
}

/* The kind of a delivery, from its event headers and payload (the table in hook.h). *action gets the
 * payload's word that made it a repository event. */
static enum hook_kind hook_kind_of(const struct hook_event_headers *h, const cJSON *root, const char **action)
{
    /* GitHub's actions that add a repository to an organisation's listing, take one out of it, change
     * its address, or change what a source's archived and visibility filters decide; Gitea and Forgejo
     * send the first two. "edited" (a description, a homepage) changes nothing discovery reads. */
    static const char *const actions[] = {"created",   "deleted",    "renamed",    "transferred",
                                          "archived",  "unarchived", "publicized", "privatized", NULL};
    static const char *const gitlab_pushes[] = {"push", "tag_push", "repository_update", NULL};
    static const char *const gitlab_projects[] = {"project_create", "project_destroy", "project_rename",
                                                  "project_transfer", NULL};
    const char *event = h->gitea ? h->gitea : h->github, *name;

    *action = NULL;
    if (h->gitlab) {
        /* A system hook sends every event under "System Hook", so the payload decides; project and
         * group hooks name the event in the payload too. */
        name = json_str(root, "event_name", json_str(root, "object_kind", NULL));
        if (hook_one_of(name, gitlab_pushes))
            return HOOK_PUSH;
        if (!hook_one_of(name, gitlab_projects))
            return HOOK_OTHER;
        *action = name;
        return HOOK_REPOSITORY;
    }
    if (!event || strcmp(event, "push") == 0)
        return HOOK_PUSH;
    name = json_str(root, "action", NULL);
    if (strcmp(event, "repository") != 0 || !hook_one_of(name, actions))
        return HOOK_OTHER;
    *action = name;
    return HOOK_REPOSITORY;
}

/* Fills e's URLs and ref from a push payload. Returns ZK_OK, or ZK_EINVAL when it names no URL. */
static int hook_read_push(const cJSON *root, struct hook_event *e, struct zk_err *err)
{
    /* Where each host puts the repository's URLs: GitHub and Gitea under repository, GitLab under
     * project (its repository object repeats some of them). */
    static const char *const fields[][2] = {
        {"repository", "clone_url"}, {"repository", "ssh_url"},      {"repository", "html_url"},
        {"project", "git_http_url"}, {"project", "git_ssh_url"},     {"project", "web_url"},
    };
    const char *ref = json_str(root, "ref", NULL);

    for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]) && e->nurls < HOOK_MAX_URLS; i++) {
        const char *url = json_str(json_obj(root, fields[i][0]), fields[i][1], NULL);

        if (url && *url)
            e->urls[e->nurls++] = mem_strdup(url);
    }
    e->ref = ref ? mem_strdup(ref) : NULL;
    if (e->nurls == 0)
        return zk_err_set(err, ZK_EINVAL, "the push payload names no repository URL");
    return ZK_OK;
}

int hook_parse_event(const struct hook_event_headers *headers, const char *body, size_t len, struct hook_event *out,
                     struct zk_err *err)
{
    cJSON *root;
    const char *action, *name;
    int rc = ZK_OK;

    memset(out, 0, sizeof(*out));
    root = body ? json_parse(body, len) : NULL;
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return zk_err_set(err, ZK_EINVAL, "the payload is not a JSON object");
    }
    out->kind = hook_kind_of(headers, root, &action);
    if (out->kind == HOOK_PUSH) {
        rc = hook_read_push(root, out, err);
    } else if (out->kind == HOOK_REPOSITORY) {
        /* Every word hook_kind_of accepts is shorter than the buffer. */
        snprintf(out->action, sizeof(out->action), "%s", action);
        name = json_str(json_obj(root, "repository"), "full_name", json_str(root, "path_with_namespace", NULL));
        out->repository = name ? mem_strdup(name) : NULL;
    }
    cJSON_Delete(root);
    if (rc != ZK_OK)
        hook_event_free(out);
    return rc;
}

void hook_event_free(struct hook_event *e)
{
    for (int i = 0; i < e->nurls; i++)
        free(e->urls[i]);
    free(e->ref);
    free(e->repository);
    memset(e, 0, sizeof(*e));
}

int hook_url_key(const char *url, char *dst, size_t len)
{
    const char *p = url, *scheme = strstr(url, "://"), *host, *path, *at, *end;
    size_t hostlen, n = 0;

    if (scheme) {
        p = scheme + 3;
        path = strchr(p, '/');
        if (!path)
            return 0;
        at = memchr(p, '@', (size_t)(path - p));
        host = at ? at + 1 : p;
        hostlen = (size_t)(path - host);
        if (memchr(host, ':', hostlen)) /* a port */
            hostlen = (size_t)((const char *)memchr(host, ':', hostlen) - host);
    } else {
        /* scp-like: [user@]host:path */
        const char *colon = strchr(p, ':');

        if (!colon)
            return 0;
        at = memchr(p, '@', (size_t)(colon - p));
        host = at ? at + 1 : p;
        hostlen = (size_t)(colon - host);
        path = colon + 1;
    }
    while (*path == '/')
        path++;
    end = path + strlen(path);
    while (end > path && end[-1] == '/')
        end--;
    if (end - path >= 4 && strncmp(end - 4, ".git", 4) == 0)
        end -= 4;
    if (hostlen == 0 || end == path || hostlen + 1 + (size_t)(end - path) + 1 > len)
        return 0;
    for (size_t i = 0; i < hostlen; i++)
        dst[n++] = (char)tolower((unsigned char)host[i]);
    dst[n++] = '/';
    for (const char *q = path; q < end; q++)
        dst[n++] = (char)tolower((unsigned char)*q);
    dst[n] = '\0';
    return 1;
}

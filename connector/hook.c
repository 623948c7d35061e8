/* hook.c: see hook.h. */
#include "connector/hook.h"

#include "json.h"
#include "mem.h"

#include <ctype.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
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

int hook_parse_push(const char *body, size_t len, struct hook_push *out, struct zk_err *err)
{
    /* Where each host puts the repository's URLs: GitHub and Gitea under repository, GitLab under
     * project (its repository object repeats some of them). */
    static const char *const fields[][2] = {
        {"repository", "clone_url"}, {"repository", "ssh_url"},      {"repository", "html_url"},
        {"project", "git_http_url"}, {"project", "git_ssh_url"},     {"project", "web_url"},
    };
    cJSON *root;
    const char *ref;

    memset(out, 0, sizeof(*out));
    root = body ? json_parse(body, len) : NULL;
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return zk_err_set(err, ZK_EINVAL, "the push payload is not a JSON object");
    }
    for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]) && out->nurls < HOOK_MAX_URLS; i++) {
        const char *url = json_str(json_obj(root, fields[i][0]), fields[i][1], NULL);

        if (url && *url)
            out->urls[out->nurls++] = mem_strdup(url);
    }
    ref = json_str(root, "ref", NULL);
    out->ref = ref ? mem_strdup(ref) : NULL;
    cJSON_Delete(root);
    if (out->nurls == 0) {
        hook_push_free(out);
        return zk_err_set(err, ZK_EINVAL, "the push payload names no repository URL");
    }
    return ZK_OK;
}

void hook_push_free(struct hook_push *p)
{
    for (int i = 0; i < p->nurls; i++)
        free(p->urls[i]);
    free(p->ref);
    memset(p, 0, sizeof(*p));
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

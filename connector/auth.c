/* auth.c: see auth.h. */
#include "connector/auth.h"

#include "buf.h"
#include "log.h"
#include "mem.h"
#include "monotime.h"
#include "textfile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define DIGEST_LEN 32

struct auth {
    pthread_mutex_t mu;
    char *file;
    char *dir;
    double reload_s;
    double checked_at;
    unsigned char stamp[DIGEST_LEN]; /* digest of the sources' names, sizes and times at the last load */
    unsigned char (*digests)[DIGEST_LEN];
    size_t n;
    int keep_first; /* auth_keep_gateway_token was called */
    char *first;    /* with keep_first: the first token, in plaintext */
};

/* The token set being built by a load. */
struct tokens {
    unsigned char (*digests)[DIGEST_LEN];
    size_t n;
    int want_first; /* keep the first token's text in first */
    char *first;
};

/* Frees a token's text, overwritten first: it is a credential. */
static void first_free(char *first)
{
    if (first)
        OPENSSL_cleanse(first, strlen(first));
    free(first);
}

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

static int tokens_add(struct tokens *t, const char *tok, size_t len, struct zk_err *err)
{
    if (t->n >= AUTH_TOKENS_MAX)
        return zk_err_set(err, ZK_ETOOBIG, "more than %d tokens configured", AUTH_TOKENS_MAX);
    t->digests = mem_realloc(t->digests, (t->n + 1) * sizeof(*t->digests));
    /* OpenSSL allocates through lib/mem.h; what is left is a provider without SHA-256. */
    if (!EVP_Digest(tok, len, t->digests[t->n], NULL, EVP_sha256(), NULL))
        return zk_err_set(err, ZK_EIO, "SHA-256 of a token failed");
    if (t->want_first && t->n == 0)
        t->first = mem_strndup(tok, len);
    t->n++;
    return ZK_OK;
}

/* Reads path whole into b (bounded by AUTH_FILE_MAX). */
static int read_file(const char *path, struct buf *b, struct zk_err *err)
{
    buf_init(b, AUTH_FILE_MAX);
    return buf_read_file(b, path, err);
}

/* Adds every token line of a token file's text: one per line, trimmed, blank and '#' lines skipped. */
static int parse_lines(struct tokens *t, const char *text, size_t len, struct zk_err *err)
{
    const char *line;
    size_t pos = 0, n;
    int rc;

    while (textfile_next_line(text, len, &pos, &line, &n))
        if ((rc = tokens_add(t, line, n, err)) != ZK_OK)
            return rc;
    return ZK_OK;
}

/* Calls fn for each visible entry of dir, in name order. Entries starting with '.' are the bookkeeping
 * of a Secret volume (..data, ..2026_11_29...) and are skipped. */
typedef int dir_fn(void *ud, const char *path, const struct stat *st, struct zk_err *err);

static int each_dir_file(const char *dir, dir_fn *fn, void *ud, struct zk_err *err)
{
    struct dirent **names = NULL;
    struct stat st;
    char path[4096];
    int n, i, rc = ZK_OK;

    n = scandir(dir, &names, NULL, alphasort);
    if (n < 0)
        return zk_err_set(err, ZK_EIO, "read directory %s: %s", dir, strerror(errno));
    for (i = 0; i < n; i++) {
        if (rc == ZK_OK && names[i]->d_name[0] != '.') {
            snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
            /* stat follows the symbolic links a Secret volume consists of. */
            if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
                rc = fn(ud, path, &st, err);
        }
        free(names[i]);
    }
    free(names);
    return rc;
}

static int load_dir_file(void *ud, const char *path, const struct stat *st, struct zk_err *err)
{
    struct tokens *t = ud;
    char *tok;
    int rc;

    (void)st;
    if ((rc = textfile_first_line(path, AUTH_FILE_MAX, &tok, err)) != ZK_OK)
        return rc;
    rc = *tok ? tokens_add(t, tok, strlen(tok), err) : ZK_OK;
    free(tok);
    return rc;
}

/* Reads every configured source into a new token set. */
static int load(const struct auth *a, struct tokens *t, struct zk_err *err)
{
    struct buf b;
    int rc;

    t->digests = NULL;
    t->n = 0;
    t->want_first = a->keep_first;
    t->first = NULL;
    if (a->file != NULL) {
        if ((rc = read_file(a->file, &b, err)) != ZK_OK)
            goto fail;
        rc = parse_lines(t, b.data != NULL ? b.data : "", b.len, err);
        buf_free(&b);
        if (rc != ZK_OK)
            goto fail;
    }
    if (a->dir != NULL && (rc = each_dir_file(a->dir, load_dir_file, t, err)) != ZK_OK)
        goto fail;
    if (t->n == 0) {
        rc = zk_err_set(err, ZK_EINVAL, "no token found in %s%s%s", a->file ? a->file : "",
                        a->file && a->dir ? " or " : "", a->dir ? a->dir : "");
        goto fail;
    }
    return ZK_OK;
fail:
    free(t->digests);
    first_free(t->first);
    t->digests = NULL;
    t->first = NULL;
    t->n = 0;
    return rc;
}

/* Replaces the tokens of a with the set t a load made (a->mu held, or a not shared yet). */
static void install(struct auth *a, struct tokens *t)
{
    free(a->digests);
    first_free(a->first);
    a->digests = t->digests;
    a->n = t->n;
    a->first = t->first;
}

static void stamp_stat(EVP_MD_CTX *ctx, const char *path, const struct stat *st)
{
    char line[4200];
    int n;

    if (st != NULL)
        n = snprintf(line, sizeof(line), "%s %lld.%09ld %lld %llu\n", path, (long long)st->st_mtim.tv_sec,
                     st->st_mtim.tv_nsec, (long long)st->st_size, (unsigned long long)st->st_ino);
    else
        n = snprintf(line, sizeof(line), "%s missing\n", path);
    EVP_DigestUpdate(ctx, line, n > 0 && (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
}

static int stamp_dir_file(void *ud, const char *path, const struct stat *st, struct zk_err *err)
{
    (void)err;
    stamp_stat(ud, path, st);
    return ZK_OK;
}

/* A digest of what the sources look like on disk now: any change of a name, size, inode or
 * modification time changes it. A source that cannot be read is part of the picture too. */
static void stamp(const struct auth *a, unsigned char out[DIGEST_LEN])
{
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    struct stat st;

    memset(out, 0, DIGEST_LEN);
    if (ctx == NULL || !EVP_DigestInit_ex(ctx, EVP_sha256(), NULL)) {
        EVP_MD_CTX_free(ctx);
        return; /* an all-zero stamp simply forces the next comparison to reload */
    }
    if (a->file != NULL)
        stamp_stat(ctx, a->file, stat(a->file, &st) == 0 ? &st : NULL);
    if (a->dir != NULL && each_dir_file(a->dir, stamp_dir_file, ctx, NULL) != ZK_OK)
        stamp_stat(ctx, a->dir, NULL);
    EVP_DigestFinal_ex(ctx, out, NULL);
    EVP_MD_CTX_free(ctx);
}

int auth_new(const char *token_file, const char *token_dir, double reload_s, struct auth **out,
             struct zk_err *err)
{
    struct auth *a;
    struct tokens t;
    int rc;

    *out = NULL;
    if (token_file == NULL && token_dir == NULL)
        return ZK_OK; /* disabled: a NULL checker accepts everything */
    a = mem_calloc(1, sizeof(*a));
    mem_mutex_init(&a->mu);
    a->reload_s = reload_s;
    a->file = token_file != NULL ? mem_strdup(token_file) : NULL;
    a->dir = token_dir != NULL ? mem_strdup(token_dir) : NULL;
    stamp(a, a->stamp);
    if ((rc = load(a, &t, err)) != ZK_OK) {
        auth_free(a);
        return rc;
    }
    install(a, &t);
    a->checked_at = monotime_s();
    *out = a;
    return ZK_OK;
}

void auth_free(struct auth *a)
{
    if (a == NULL)
        return;
    pthread_mutex_destroy(&a->mu);
    free(a->file);
    free(a->dir);
    free(a->digests);
    first_free(a->first);
    free(a);
}

int auth_enabled(const struct auth *a)
{
    return a != NULL;
}

const char *auth_bearer_token(const char *header, size_t *len)
{
    size_t n;

    if (header == NULL)
        return NULL;
    while (*header == ' ' || *header == '\t')
        header++;
    if (strncasecmp(header, "Bearer", 6) != 0 || (header[6] != ' ' && header[6] != '\t'))
        return NULL;
    header += 6;
    while (*header == ' ' || *header == '\t')
        header++;
    n = strlen(header);
    while (n > 0 && is_space(header[n - 1]))
        n--;
    if (n == 0)
        return NULL;
    *len = n;
    return header;
}

/* Reloads the tokens when the sources changed since the last check; called with a->mu held. */
static void maybe_reload(struct auth *a)
{
    unsigned char now_stamp[DIGEST_LEN];
    struct tokens t;
    struct zk_err err;
    double now = monotime_s();

    if (now - a->checked_at < a->reload_s)
        return;
    a->checked_at = now;
    stamp(a, now_stamp);
    if (memcmp(now_stamp, a->stamp, DIGEST_LEN) == 0)
        return;
    if (load(a, &t, &err) != ZK_OK) {
        /* The stamp is left as it was, so the next check tries again. */
        log_warn("Keeping the previous bearer tokens: reloading failed", "error", err.msg, NULL);
        return;
    }
    install(a, &t);
    memcpy(a->stamp, now_stamp, DIGEST_LEN);
    log_info("Reloaded bearer tokens", NULL);
}

int auth_check_header(struct auth *a, const char *authorization)
{
    unsigned char d[DIGEST_LEN];
    const char *tok;
    size_t len = 0, i;
    int ok = 0;

    if (a == NULL)
        return 1;
    tok = auth_bearer_token(authorization, &len);
    if (tok == NULL || !EVP_Digest(tok, len, d, NULL, EVP_sha256(), NULL))
        return 0;
    pthread_mutex_lock(&a->mu);
    maybe_reload(a);
    /* No early exit: every token is compared, whichever matches. */
    for (i = 0; i < a->n; i++)
        ok |= CRYPTO_memcmp(d, a->digests[i], DIGEST_LEN) == 0;
    pthread_mutex_unlock(&a->mu);
    return ok;
}

int auth_keep_gateway_token(struct auth *a, struct zk_err *err)
{
    struct tokens t;
    int rc;

    pthread_mutex_lock(&a->mu);
    a->keep_first = 1;
    if ((rc = load(a, &t, err)) == ZK_OK)
        install(a, &t);
    pthread_mutex_unlock(&a->mu);
    return rc;
}

int auth_gateway_token(void *arg, char *out, size_t size)
{
    struct auth *a = arg;
    int ok = 0;

    if (a == NULL)
        return 0;
    pthread_mutex_lock(&a->mu);
    maybe_reload(a);
    if (a->first && strlen(a->first) < size) {
        strcpy(out, a->first);
        ok = 1;
    }
    pthread_mutex_unlock(&a->mu);
    return ok;
}

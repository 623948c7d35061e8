/* repolist.c: see repolist.h. */
#include "controller/sources/repolist.h"

#include "mem.h"

#include <ctype.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

/* ---- filter ------------------------------------------------------------------------------------- */

/* Whether name matches any of globs (NULL-terminated; NULL holds none). */
static int matches_any(const char *const *globs, const char *name)
{
    for (size_t i = 0; globs && globs[i]; i++)
        if (fnmatch(globs[i], name, FNM_CASEFOLD) == 0)
            return 1;
    return 0;
}

int rlist_keep(const struct rlist_filter *f, const struct hapi_repo *r)
{
    if (r->archived && !f->archived)
        return 0;
    if (r->fork && !f->forks)
        return 0;
    if (f->visibility && !(f->visibility & r->visibility))
        return 0;
    if (f->include && f->include[0] && !matches_any(f->include, r->full_name))
        return 0;
    return !matches_any(f->exclude, r->full_name);
}

void rlist_filter(const struct rlist_filter *f, struct hapi_repos *repos)
{
    size_t kept = 0;

    for (size_t i = 0; i < repos->n; i++) {
        if (rlist_keep(f, &repos->items[i]))
            repos->items[kept++] = repos->items[i];
        else
            hapi_repo_free(&repos->items[i]);
    }
    repos->n = kept;
}

int rlist_key(const char *url, char *dst, size_t size)
{
    if (!spec_name_from_url(url, dst, size))
        return 0;
    for (char *p = dst; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    return 1;
}

/* A repository under its key, while sets and lists are sorted and merged. */
struct keyed {
    char *key;
    int first;   /* sorts first among equal keys: the fresh sighting, or the explicit entry */
    size_t from; /* where it came from: an index into the input it was taken from */
    const void *item;
};

static int keyed_cmp(const void *a, const void *b)
{
    const struct keyed *x = a, *y = b;
    int c = strcmp(x->key, y->key);

    if (c)
        return c;
    if (x->first != y->first)
        return y->first - x->first;
    /* Equal keys from the same side keep their input order, so the result does not depend on qsort's. */
    return x->from < y->from ? -1 : x->from > y->from;
}

/* Appends item under key to *v, which has room. */
static void keyed_add(struct keyed *v, size_t *n, const char *key, int first, size_t from, const void *item)
{
    v[(*n)++] = (struct keyed){.key = mem_strdup(key), .first = first, .from = from, .item = item};
}

static void keyed_free(struct keyed *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i].key);
    free(v);
}

/* ---- grace -------------------------------------------------------------------------------------- */

void rlist_grace(const struct rlist_set *prev, const struct hapi_repos *fresh, time_t now, long grace_seconds,
                 struct rlist_set *out)
{
    size_t nfresh = fresh ? fresh->n : 0, nprev = prev ? prev->n : 0, n = 0;
    struct keyed *v = mem_calloc(nfresh + nprev + 1, sizeof(*v));
    char key[SPEC_MAX_URL + 1];

    out->items = mem_calloc(nfresh + nprev + 1, sizeof(*out->items));
    out->n = 0;
    for (size_t i = 0; i < nfresh; i++)
        if (rlist_key(fresh->items[i].clone_url, key, sizeof(key)))
            keyed_add(v, &n, key, 1, i, &fresh->items[i]);
    for (size_t i = 0; i < nprev; i++)
        if (rlist_key(prev->items[i].repo.clone_url, key, sizeof(key)))
            keyed_add(v, &n, key, 0, i, &prev->items[i]);
    qsort(v, n, sizeof(*v), keyed_cmp);
    for (size_t i = 0; i < n; i++) {
        struct rlist_entry *e = &out->items[out->n];

        if (i > 0 && strcmp(v[i].key, v[i - 1].key) == 0)
            continue;
        if (v[i].first) {
            hapi_repo_copy(&e->repo, v[i].item);
            e->last_seen = now;
        } else {
            const struct rlist_entry *old = v[i].item;

            /* A failed listing expires nothing; a listing that no longer names a repository lets it
             * stay until its last sighting is grace_seconds old. */
            if (fresh && now - old->last_seen >= grace_seconds)
                continue;
            hapi_repo_copy(&e->repo, &old->repo);
            e->last_seen = old->last_seen;
        }
        out->n++;
    }
    keyed_free(v, n);
}

void rlist_set_free(struct rlist_set *s)
{
    for (size_t i = 0; i < s->n; i++)
        hapi_repo_free(&s->items[i].repo);
    free(s->items);
    memset(s, 0, sizeof(*s));
}

/* ---- merge -------------------------------------------------------------------------------------- */

/* One repository of the merged list before it is copied out: borrowed strings. */
struct merged {
    const char *url;
    const char *name;
    const struct corpus_repo *explicit_repo; /* the explicit entry, or NULL for a discovered one */
    const struct hapi_repo *found;           /* the discovered one, or NULL */
    size_t from;
};

/* The code host kinds of spec.repositories[].codeHost that each listing API's repositories are on;
 * Forgejo serves Gitea's API and addresses. */
static const char *const code_hosts[] = {[HAPI_GITHUB] = "github", [HAPI_GITLAB] = "gitlab", [HAPI_GITEA] = "gitea"};

static int merged_by_name(const void *a, const void *b)
{
    const struct merged *x = a, *y = b;
    int c = strcmp(x->name, y->name);

    if (c)
        return c;
    if (!x->explicit_repo != !y->explicit_repo)
        return x->explicit_repo ? -1 : 1;
    return x->from < y->from ? -1 : x->from > y->from;
}

static char **copy_branches(char *const *branches)
{
    size_t n = 0;
    char **copy;

    while (branches && branches[n])
        n++;
    copy = mem_calloc(n + 1, sizeof(*copy));
    for (size_t i = 0; i < n; i++)
        copy[i] = mem_strdup(branches[i]);
    return copy;
}

int rlist_merge(const struct corpus_repo *explicit_repos, int nexplicit, const struct rlist_set *const *sets,
                size_t nsets, struct corpus_repo **out, int *n, size_t *dropped, struct zk_err *err)
{
    size_t total = (size_t)nexplicit, nk = 0, nm = 0, from = 0;
    struct keyed *v;
    struct merged *m;
    char (*names)[SPEC_MAX_REPO_NAME + 1];
    char key[SPEC_MAX_URL + 1];
    int rc = ZK_OK, count = 0;

    *out = NULL;
    *n = 0;
    *dropped = 0;
    for (size_t s = 0; s < nsets; s++)
        total += sets[s]->n;
    v = mem_calloc(total + 1, sizeof(*v));
    m = mem_calloc(total + 1, sizeof(*m));
    names = mem_calloc(total + 1, sizeof(*names));
    /* An explicit URL always has a name (spec_parse derived one or was given one), but not always a
     * key (a name given for a URL with no path to derive one from): then its own URL is its key, which
     * no discovered https URL of a repository can equal once lowercased. */
    for (int i = 0; i < nexplicit; i++) {
        const char *url = explicit_repos[i].url;

        keyed_add(v, &nk, rlist_key(url, key, sizeof(key)) ? key : url, 1, from++, &explicit_repos[i]);
    }
    for (size_t s = 0; s < nsets; s++)
        for (size_t i = 0; i < sets[s]->n; i++, from++)
            if (rlist_key(sets[s]->items[i].repo.clone_url, key, sizeof(key)))
                keyed_add(v, &nk, key, 0, from, &sets[s]->items[i].repo);
    qsort(v, nk, sizeof(*v), keyed_cmp);
    for (size_t i = 0; i < nk; i++) {
        struct merged *e = &m[nm];

        if (i > 0 && strcmp(v[i].key, v[i - 1].key) == 0)
            continue;
        e->from = v[i].from;
        if (v[i].first) {
            const struct corpus_repo *r = v[i].item;

            e->url = r->url;
            e->name = r->name;
            e->explicit_repo = r;
        } else {
            const struct hapi_repo *r = v[i].item;

            if (!spec_name_from_url(r->clone_url, names[nm], sizeof(names[nm])) || !spec_repo_name_ok(names[nm])) {
                (*dropped)++;
                continue;
            }
            e->url = r->clone_url;
            e->name = names[nm];
            e->found = r;
        }
        nm++;
    }
    /* Names are unique in a corpus. A discovered name can only meet an explicit one given by hand (two
     * discovered names with one key were merged above), and the explicit entry wins. */
    qsort(m, nm, sizeof(*m), merged_by_name);
    for (size_t i = 0; i < nm; i++)
        if (i == 0 || strcmp(m[i].name, m[i - 1].name) != 0)
            m[count++] = m[i];
    if (count > SPEC_MAX_REPOS) {
        rc = zk_err_set(err, ZK_ETOOBIG,
                        "%d repositories after merging spec.repositories with spec.sources, more than the %d a "
                        "corpus holds; narrow the sources with include and exclude",
                        count, SPEC_MAX_REPOS);
        goto out;
    }
    *out = mem_calloc((size_t)count + 1, sizeof(**out));
    for (int i = 0; i < count; i++) {
        struct corpus_repo *r = &(*out)[i];

        r->url = mem_strdup(m[i].url);
        r->name = mem_strdup(m[i].name);
        if (m[i].explicit_repo) {
            r->branches = copy_branches(m[i].explicit_repo->branches);
            r->web_url = m[i].explicit_repo->web_url ? mem_strdup(m[i].explicit_repo->web_url) : NULL;
            r->code_host = m[i].explicit_repo->code_host;
        } else {
            /* The address a listed repository with this clone URL and its host's codeHost would get:
             * the host's own web URL is the same for every host listed here, and deriving it keeps one
             * rule for both. */
            char web[SPEC_MAX_URL + 16];

            r->branches = copy_branches(NULL);
            if (spec_web_url(r->url, web, sizeof(web))) {
                r->web_url = mem_strdup(web);
                r->code_host = code_hosts[m[i].found->kind];
            }
        }
    }
    *n = count;
out:
    keyed_free(v, nk);
    free(m);
    free(names);
    return rc;
}

void rlist_repos_free(struct corpus_repo *repos, int n)
{
    for (int i = 0; repos && i < n; i++) {
        for (size_t b = 0; repos[i].branches && repos[i].branches[b]; b++)
            free(repos[i].branches[b]);
        free(repos[i].branches);
        free(repos[i].web_url);
        free(repos[i].url);
        free(repos[i].name);
    }
    free(repos);
}

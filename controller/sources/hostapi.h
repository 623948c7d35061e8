/* hostapi.h: the repository-listing APIs of GitHub, GitLab and Gitea (and Forgejo, which serves
 * Gitea's), as requests to make and answers to read. Pure: no I/O.
 *
 * spec.sources (issue 31) names an organisation, a user or a GitLab group on a host; the operator
 * lists its repositories page by page. This module says what to ask (the first page's URL, the
 * headers, the bound on the body) and what an answer means (the repositories of one page, the next
 * page's URL, "unchanged" for a 304, and how long the host asks us to wait), so that the loop that does
 * the HTTP requests holds no host's particulars and every rule here is unit-tested without a server.
 *
 * Everything an answer carries is bounded, because the host (or whatever answers in its name) may be
 * hostile or broken: a page holds at most HAPI_MAX_PAGE_REPOS repositories, a listing at most
 * HAPI_MAX_REPOS, every kept string at most the bound below, and a header is read within the fixed
 * buffers of struct hapi_meta. A next-page request goes to the API's own origin whatever origin the
 * link names (only its path and query are taken), since the request carries the source's token: a
 * link cannot send it elsewhere. That also serves a Gitea whose configured ROOT_URL is not the address
 * the operator reaches it at, as Gitea writes its links from ROOT_URL. */
#ifndef ZK_SOURCES_HOSTAPI_H
#define ZK_SOURCES_HOSTAPI_H

#include "err.h"

#include <stddef.h>
#include <time.h>

#define HAPI_MUST_USE __attribute__((warn_unused_result))

enum hapi_kind { HAPI_GITHUB, HAPI_GITLAB, HAPI_GITEA };

/* Visibility as a bit, so that a filter can hold a set of them. */
enum hapi_visibility { HAPI_PUBLIC = 1, HAPI_PRIVATE = 2, HAPI_INTERNAL = 4 };

/* GitHub and GitLab serve at most 100 items a page; Gitea serves at most its MAX_RESPONSE_ITEMS (50 by
 * default) whatever limit is asked, so a page of more than 100 comes from no host we asked. */
#define HAPI_MAX_PAGE_REPOS 100
/* One listing (all pages of one source). Five times what a corpus holds (SPEC_MAX_REPOS), so that
 * include and exclude filters can narrow a large organisation; the loop stops asking past it. */
#define HAPI_MAX_REPOS 10000
/* A page's body: GitHub's repository objects are the largest, about 6 KB each with their URL
 * templates, so a full page is about 600 KB; four times that leaves room for longer descriptions. */
#define HAPI_MAX_BODY (4u << 20)
/* A repository's full name: GitLab nests up to 20 groups deep, each path up to 255 bytes in theory,
 * but a name that long could not become a corpus repository name (SPEC_MAX_REPO_NAME) anyway. */
#define HAPI_MAX_NAME 255
#define HAPI_MAX_URL 2048 /* SPEC_MAX_URL */
#define HAPI_MAX_BRANCH 255
/* An ETag is a quoted opaque string; GitHub's are 70 bytes, GitLab's and Gitea's shorter. */
#define HAPI_MAX_ETAG 256
/* A token goes into a header line: personal access tokens are 40 to 100 bytes, a GitHub App's
 * installation token about 40, an OAuth token for GitLab 64. */
#define HAPI_MAX_TOKEN 1024
/* The longest wait any rate-limit header may impose: GitHub's and GitLab's windows reset within an
 * hour, so a header asking for more is broken or hostile and must not stall a source for days. */
#define HAPI_MAX_WAIT_SECONDS 3600L
/* A 429 that says nothing of when to come back: GitHub's advice for its secondary limits is to wait
 * at least a minute. */
#define HAPI_DEFAULT_WAIT_SECONDS 60L

/* One source of spec.sources. Strings are borrowed. */
struct hapi_source {
    enum hapi_kind kind;
    /* The API's base URL without a trailing slash: https://api.github.com (the default for GitHub,
     * used when NULL), https://HOST/api/v3 for GitHub Enterprise Server, https://HOST/api/v4 for GitLab,
     * https://HOST/api/v1 for Gitea and Forgejo. Required for GitLab and Gitea. */
    const char *base_url;
    const char *owner; /* an organisation or user name, or a GitLab group's full path ("acme/platform") */
    int user;          /* owner is a user, not an organisation or group */
    /* Whether archived repositories are wanted. GitLab can leave them out of its answer (archived=false),
     * which saves pages; the other hosts cannot, and the filter (controller/sources/repolist) drops
     * them there. */
    int archived;
};

/* One request to make. Owned by the caller: hapi_request_free. */
#define HAPI_MAX_HEADERS 4
struct hapi_request {
    char *url;
    const char *accept; /* the Accept header's value (static), for struct http_request's accept */
    /* The other "Name: value" lines, NULL-terminated, for struct http_request's headers. */
    char *headers[HAPI_MAX_HEADERS + 1];
    size_t max_body; /* HAPI_MAX_BODY: for struct http_request's max_body */
};

/* The request for one page of src's repositories: url NULL for the first page, else the next-page
 * URL hapi_page_read gave, which must be on the API's origin. token (NULL or "" for none) is
 * sent as each host wants it: "Authorization: Bearer" for GitHub, "PRIVATE-TOKEN" for GitLab (which
 * takes personal, group and project access tokens there, and OAuth tokens only as Bearer; the spec
 * asks for an access token), "Authorization: token" for Gitea. etag (NULL or "" for none), the ETag the
 * same page answered with last time, becomes If-None-Match, so that an unchanged page costs a 304 and,
 * on GitHub, none of the rate limit. Returns ZK_OK, or ZK_EINVAL (a missing base URL or owner, a base
 * URL that is not http(s), a token or ETag with control characters or longer than its bound: each
 * would break the header it goes into, or a url on another origin). */
int hapi_request_page(const struct hapi_source *src, const char *url, const char *token, const char *etag,
                      struct hapi_request *out, struct zk_err *err) HAPI_MUST_USE;
void hapi_request_free(struct hapi_request *r);

/* What an answer's headers say, kept within fixed buffers while the headers arrive. Zero it before the
 * first header. */
struct hapi_meta {
    char next[HAPI_MAX_URL + 1]; /* Link rel="next" as sent, or "" when this is the last page */
    int link_bad;                /* a Link header could not be read, or named two different next pages */
    char etag[HAPI_MAX_ETAG + 1];
    char retry_after[64];        /* as sent: seconds or an HTTP date */
    /* x-ratelimit-remaining and x-ratelimit-reset (GitHub), RateLimit-Remaining and RateLimit-Reset
     * (GitLab; Gitea and Forgejo send neither and rely on Retry-After): -1 when not sent or not a
     * number. The reset is in seconds since the epoch on both. */
    long long remaining, reset;
};

/* Initialises m for a new answer. */
void hapi_meta_init(struct hapi_meta *m);

/* Reads one header line as libcurl's header callback hands it ("Name: value\r\n", len bytes, not
 * NUL-terminated) into m, keeping what the headers above need and ignoring the rest, including any
 * line that is not a header (the status line, the blank line). Names compare without case. */
void hapi_meta_header(struct hapi_meta *m, const char *line, size_t len);

/* The rel="next" target of one Link header value (RFC 8288: `<url>; rel="next", <url>; rel="last"`;
 * several links, parameters in any order, rel quoted or not and possibly several relation types).
 * Returns ZK_OK with out holding the target or "" when no link is rel="next", or ZK_EPARSE when the
 * value does not parse or the target does not fit in size bytes. Exposed for unit tests. */
int hapi_link_next(const char *value, size_t len, char *out, size_t size) HAPI_MUST_USE;

/* One repository as a host lists it. Strings are heap copies (hapi_repos_free). */
struct hapi_repo {
    char *full_name;      /* "acme/payments", or "acme/platform/payments" on GitLab */
    char *clone_url;      /* https */
    char *web_url;        /* "" when the host sent none */
    char *default_branch; /* "" when the host sent none (an empty GitLab project) */
    int archived, fork;
    enum hapi_visibility visibility;
    enum hapi_kind kind;  /* the kind of host that listed it */
};

/* A growing list of repositories, zeroed before use. */
struct hapi_repos {
    struct hapi_repo *items;
    size_t n, cap;
    size_t skipped; /* entries left out: a field missing, too long, or a clone URL off the host */
};

enum hapi_outcome {
    HAPI_MORE,      /* the page was read, and *next is the next one's URL */
    HAPI_LAST,      /* the page was read and was the last */
    HAPI_UNCHANGED, /* 304: the page is what it was when it sent this ETag; reuse what was read then */
};

/* Reads one answer for a page of src: status, meta (its headers) and body. On a 2xx appends the page's
 * repositories to acc and sets *outcome to HAPI_LAST, or to HAPI_MORE with *next the next page's URL
 * (a heap string the caller frees: the API's base origin with the link's path and query, the path
 * under the base URL's); on 304 sets HAPI_UNCHANGED and reads nothing. *next is NULL but for
 * HAPI_MORE. An entry that lacks a name or an https clone URL, has one longer than its bound, or
 * names a clone host other than the API's (the host itself, or without its "api." label, as
 * api.github.com clones from github.com) is skipped and counted, not an error, so that one odd
 * repository does not hide the others. Returns:
 *   ZK_EBUSY     the host's rate limit (429, or 403 with the limit spent): hapi_wait_until says how long
 *   ZK_EHTTP     any other 4xx (a bad token, an owner that does not exist): the message names it
 *   ZK_ESERVER   a 5xx
 *   ZK_EPARSE    a body that is not a JSON array, a page of more than HAPI_MAX_PAGE_REPOS, an
 *                unreadable Link header, or a next link whose path is not under the base URL's
 *   ZK_ETOOBIG   acc would hold more than HAPI_MAX_REPOS
 * and acc keeps what it held before the call on every error. */
int hapi_page_read(const struct hapi_source *src, long status, const struct hapi_meta *meta, const char *body,
                   size_t len, struct hapi_repos *acc, enum hapi_outcome *outcome, char **next,
                   struct zk_err *err) HAPI_MUST_USE;

void hapi_repos_free(struct hapi_repos *r);

/* Deep-copies one repository into dst (hapi_repo_free). */
void hapi_repo_copy(struct hapi_repo *dst, const struct hapi_repo *src);
void hapi_repo_free(struct hapi_repo *r);

/* Appends a deep copy of r to acc. */
void hapi_repos_add_copy(struct hapi_repos *acc, const struct hapi_repo *r);

/* When the host may be asked again, from an answer's status and headers, at now: 0 when at once, else
 * an absolute time. The latest of: Retry-After (seconds, or an HTTP date) on any answer; the reset time
 * when the remaining count is 0 (the next request would be refused); HAPI_DEFAULT_WAIT_SECONDS for a
 * 429 that says neither. Never later than now + HAPI_MAX_WAIT_SECONDS. */
time_t hapi_wait_until(const struct hapi_meta *meta, long status, time_t now);

#endif

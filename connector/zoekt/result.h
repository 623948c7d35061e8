/* result.h: Zoekt's /api/search and /api/list answers, parsed into plain structs.
 *
 * Pure: no I/O. Zoekt's JSON changed over time (see docs/connector.md): results come as LineMatches
 * (each with base64 Before/After context) or ChunkMatches (base64 Content with byte Ranges); optional
 * fields may be present, null or omitted; the file list may be "Files" or "FileMatches", an array or
 * null; the repository list may be "Repos" entries or a "ReposMap" keyed by repository ID. This module
 * turns all of them into one shape: per file, a sorted list of unique lines, each marked as a matching
 * line or a context line, with text decoded from base64 and made safe to print (valid UTF-8, no control
 * characters). Text that cannot be decoded is flagged, never printed as garbage. */
#ifndef ZK_ZOEKT_RESULT_H
#define ZK_ZOEKT_RESULT_H

#include "err.h"
#include "shard.h"

#include <stddef.h>
#include <time.h>

struct zr_opts {
    const char *mirror_prefix; /* stripped from the front of repository names; NULL: none */
    int context_lines;         /* NumContextLines the request asked for; -1 when unknown */
    int match_lines;           /* matching lines per file worth decoding, in Zoekt's order (its ranking);
                                * the matches after them are counted, not decoded. 0: all */
};

struct zr_line {
    int number;      /* 1-based line number in the file */
    char *text;      /* decoded and sanitised, without the newline; NUL-terminated; never NULL; points
                      * into its file's texts */
    int is_match;    /* 1: a matching line; 0: context */
    int undecodable; /* 1: Zoekt's base64 could not be decoded; text is "" */
    size_t match_start, match_end; /* a matching line's first match, as bytes [start, end) of text (a
                                    * match that goes on past the line ends at its end); both 0 when
                                    * Zoekt did not say where (then it is taken to be at the start) */
};

/* The SymbolInfo Zoekt sends with a match range of a sym: query in an index built with ctags. */
struct zr_symbol {
    int line;          /* 1-based line of the range's start */
    char *sym;         /* the symbol's name; these four are sanitised, "" when absent */
    char *kind;        /* as ctags names it: "function", "func", "struct", "method", ... */
    char *parent;      /* the enclosing scope ("pkg.Type"), or "" */
    char *parent_kind;
};

struct zr_file {
    char *repo;     /* repository name, mirror prefix stripped */
    char *path;     /* path within the repository */
    char *version;  /* the indexed commit, or "" */
    char *language; /* or "" */
    char **branches;
    size_t n_branches;
    struct zr_line *lines; /* sorted by number, each number once; NULL when n_lines is 0 */
    size_t n_lines;
    char *texts;           /* one block holding the text of every line, one after the other (one
                            * allocation per file, not per line); NULL when n_lines is 0 */
    size_t n_match_lines;  /* matching lines: those in lines, plus those counted but not decoded */
    size_t n_matches;      /* match ranges (ChunkMatches) or fragments (LineMatches), name matches included */
    int name_match;        /* the file's name matched the query */
    int undecodable;       /* some of its text could not be decoded */
    unsigned char *content; /* the whole file as indexed (Whole: true), decoded but not sanitised,
                             * NUL-terminated; NULL when Zoekt sent none or it did not decode */
    size_t content_len;
    int has_content;        /* Zoekt sent Content (even when it did not decode) */
    struct zr_symbol *symbols; /* the SymbolInfo of its match ranges that carry one (ChunkMatches
                                * only), in Zoekt's order; NULL when n_symbols is 0 */
    size_t n_symbols;
    double score;           /* Zoekt's ranking score (higher first); 0 when it sent none */
    char *url;              /* the file on the code host, set by the tool from the repository's
                             * templates (weburl.h); NULL when none is known. Freed with the file. */
};

/* The Stats Zoekt embeds in every search result: they tell why a search stopped. */
struct zr_stats {
    long long file_count;     /* files that matched (before display truncation) */
    long long match_count;    /* matches found */
    long long files_skipped;  /* files not searched because a match limit was reached */
    long long shards_skipped; /* shards not searched because a limit was reached */
    long long crashes;        /* shards that failed, or were still loading */
    long long flush_reason;   /* 1 timer_expired, 2 final_flush, 4 max_size_reached; 0 on /api/search */
    long long duration_ns;
};

/* Which shards of a corpus served by several webservers (shards.h) did not answer a call, and why: an
 * answer merged from the others is partial. All zero for one webserver, and for every shard answering. */
struct zr_shards {
    int n;                 /* the corpus's shards; 0: one webserver */
    unsigned failed;       /* bit k: shard k did not answer */
    char *why[SHARD_MAX];  /* for each failed shard, its error message (heap), else NULL */
};

struct zr_search {
    struct zr_file *files;
    size_t n_files;
    struct zr_stats stats;
    int chunk_matches; /* 1 when at least one file came as ChunkMatches */
    struct zr_shards shards;
};

struct zr_branch {
    char *name;
    char *version;
};

struct zr_repo {
    char *name;      /* mirror prefix stripped; "#<id>" for ReposMap entries, which carry no name */
    char *full_name; /* the name as Zoekt serves it, which repo: regexes are matched against */
    struct zr_branch *branches;
    size_t n_branches;
    time_t index_time;     /* seconds since the epoch; 0 when unknown */
    char *latest_commit;   /* LatestCommitDate as Zoekt sent it, or "" */
    char *zoekt_version;   /* IndexMetadata.ZoektVersion, or "" */
    long long shards;
    long long documents;
    long long content_bytes;
    long long index_bytes; /* Stats.IndexBytes: the size of its index shards */
    int shard;             /* the search shard that serves it (shards.h); 0 for one webserver */
    int has_symbols;       /* HasSymbols: indexed with ctags (the shard holds symbol data) */
    /* The code host's templates zoekt-git-index recorded (from a github.com origin, or the mirror's
     * zoekt.web-url and zoekt.web-url-type): Go templates weburl.h renders; NULL when none. */
    char *file_url_template;
    char *line_fragment_template;
};

struct zr_list {
    struct zr_repo *repos; /* sorted by name */
    size_t n_repos;
    long long shards;      /* List.Stats.Shards, or the sum over the repositories */
    long long crashes;
    struct zr_shards search_shards; /* the search shards that did not answer the list */
};

/* Parses a /api/search body ({"Result":{...}}, or a bare SearchResult as /healthz sends). Returns ZK_OK
 * with *out filled (caller frees with zr_search_free, also after a failure), or ZK_EPARSE when the body
 * is not JSON or not a search result (the message quotes the start of the body), or ZK_ETOOBIG when it
 * is longer than lib/jscan.h takes (JSCAN_TEXT_MAX).
 *
 * The body is walked with lib/jscan.h: only the members read reach cJSON, and the matches of a file
 * past o->match_lines, which are only counted, never do. */
int zr_parse_search(const char *body, size_t len, const struct zr_opts *o, struct zr_search *out,
                    struct zk_err *err);

/* The same, through one cJSON tree of the whole body: the reference zr_parse_search must agree with
 * on every input (tests/fuzz/fuzz_zoekt_result.c compares them; make bench measures both). */
int zr_parse_search_tree(const char *body, size_t len, const struct zr_opts *o, struct zr_search *out,
                         struct zk_err *err);
void zr_search_free(struct zr_search *s);

/* Sorts the files of s by score, highest first, then by repository, path and first branch
 * (zr_file_branch): a total order over the files of an answer. Zoekt answers in score order, but files
 * of equal score come in whatever order its shards finished, which differs from one request to the
 * next; pages of a ranked list need one order that does not. */
void zr_rank(struct zr_search *s);

/* Whether the first n files of s, ranked (zr_rank) from an answer to a request for asked files, are
 * the first n of every match in that order: true when Zoekt sent fewer than asked (it had no more), or
 * when the n-th file scores above the last one sent (Zoekt sorts by score, then cuts: every file
 * scoring above what it cut was sent). Otherwise files of the n-th file's score may have been cut in
 * favour of others, and which ones differs between requests. */
int zr_rank_is_prefix(const struct zr_search *s, size_t n, size_t asked);

/* Frees the files of s after its first n (none when it has no more). */
void zr_search_truncate(struct zr_search *s, size_t n);

/* The first branch f was found on (the one a branch list names first), or "" when Zoekt named none. A
 * path whose contents differ between branches comes as one file per content, each with other
 * branches, so a repository, a path and this tell the files of an answer apart. */
const char *zr_file_branch(const struct zr_file *f);

/* Keeps the symbols for which keep(symbol, arg) is true, and the files left with at least one symbol
 * (their order unchanged); frees the rest. */
void zr_search_keep_symbols(struct zr_search *s, int (*keep)(const struct zr_symbol *, void *), void *arg);

/* Parses a /api/list body ({"List":{...}}). Same contract as zr_parse_search; free with zr_list_free. */
int zr_parse_list(const char *body, size_t len, const struct zr_opts *o, struct zr_list *out, struct zk_err *err);
void zr_list_free(struct zr_list *l);

/* Frees what r holds (a repository taken out of a list; zr_list_free frees those left in it). */
void zr_repo_free(struct zr_repo *r);

/* Frees the messages of s and zeroes it (zr_search_free and zr_list_free call it). */
void zr_shards_free(struct zr_shards *s);

/* The repository of l named name (as zr_repo.name: the mirror prefix stripped), or NULL: a binary
 * search, since l is sorted by name as zr_parse_list sorts it. */
const struct zr_repo *zr_list_find(const struct zr_list *l, const char *name);

/* Copies Zoekt's {"Error":"..."} text into out (size n, always NUL-terminated), made printable as
 * zr_sanitize does (control bytes, line breaks and invalid UTF-8 become U+FFFD) and cut at the end of a
 * character. When the body is not such an object, copies its first bytes instead, printable ASCII. */
void zr_error_text(const char *body, size_t len, char *out, size_t n);

/* Decodes standard base64 (with padding, no whitespace) into a heap buffer of *out_len bytes plus a
 * NUL. Returns NULL for invalid input. */
unsigned char *zr_base64_decode(const char *in, size_t len, size_t *out_len);

/* Makes bytes safe to print: invalid UTF-8 and control characters other than tab become U+FFFD, a
 * trailing carriage return is dropped. Returns a heap string the caller frees; never NULL. */
char *zr_sanitize(const unsigned char *in, size_t len);


/* Returns name without the mirror prefix when it starts with it (and has more after it). */
const char *zr_strip_prefix(const char *name, const char *mirror_prefix);

#endif

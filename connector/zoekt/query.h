/* query.h: turns the search tool's structured arguments into one Zoekt query string.
 *
 * Pure: no I/O. The agent gives a query in Zoekt syntax (or plain text) plus optional filters; this
 * module adds the filters as Zoekt atoms and returns the final string, which is sent to Zoekt and echoed
 * back to the agent so it can see exactly what ran. Rules (docs/connector.md has the full table):
 *
 *   file globs     -> file:<anchored regex>   several are OR-ed into one regex: file:(a|b)
 *   exclude globs  -> -file:<anchored regex>  one atom per glob (each one excludes)
 *   repositories   -> repo:<anchored regex>   several are OR-ed into one regex: repo:(a|b)
 *                     (names, globs and URLs as reponame.h reads them)
 *   case_sensitive -> case:yes                (default: no atom, i.e. Zoekt's case:auto)
 *
 * A query in Zoekt's syntax is kept intact; when it has several tokens and filters follow, it is wrapped
 * in parentheses so that a top-level `or` in it cannot swallow the filters. Its own parentheses must
 * balance as Zoekt reads them (zq_check_parens), so that it cannot close the wrapper and leave the
 * filters outside its terms. A pattern (ZQ_SYNTAX_REGEX,
 * ZQ_SYNTAX_LITERAL) becomes one quoted content: atom, so that its spaces, parentheses and the words
 * "or" and "and" in it are searched as they are written, blanks at its ends included. Case is ripgrep's
 * smart case: case-sensitive only when the pattern has an upper-case letter of its own (not one of an
 * escape such as \W); a regex without one that Zoekt's case:auto could read otherwise (an escape, a
 * (? group, a POSIX class) gets case:no. */
#ifndef ZK_ZOEKT_QUERY_H
#define ZK_ZOEKT_QUERY_H

#include "err.h"

#include <stddef.h>

/* How a glob is anchored. */
enum zq_anchor {
    ZQ_ANCHOR_PATH, /* file paths: with a slash, anchored at the start; without, matches a basename */
    ZQ_ANCHOR_FULL  /* repository names: always anchored at both ends */
};

/* Converts a glob to an RE2 regex that Zoekt's query lexer keeps as one token:
 *   *  -> [^/]*          any run within one path segment
 *   ** -> .*             across segments; "**" followed by "/" becomes an optional run of whole
 *                        directories, so "a/" + "**" + "/b" also matches "a/b"
 *   ?  -> [^/]           one character other than a slash
 *   [abc] [a-z] [!x]     character classes ([!x] and [^x] negate)
 *   {a,b}                alternatives -> (a|b)
 *   \x                   the character x literally
 * Every other regex metacharacter is escaped; a space, a quote and control characters are written as
 * \xHH so that Zoekt's lexer does not split or unquote the token. A trailing "/" means "everything
 * below this directory". With ZQ_ANCHOR_PATH, a glob without "/" matches the last path segment anywhere
 * ("*.yaml" -> "(^|/)[^/]*\.yaml$"), a glob with "/" matches from the start of the path (a leading "/"
 * is dropped). Returns ZK_OK with *out a heap string the caller frees, ZK_EINVAL with a message for an
 * empty glob, an unclosed "[" or "{", a stray "}" or a trailing "\", or ZK_ETOOBIG when the pattern
 * would be longer than a query may be (64 KiB). */
int zq_glob_to_regex(const char *glob, enum zq_anchor anchor, char **out, struct zk_err *err);

/* Escapes s so that it matches itself literally in RE2 (and stays one Zoekt token). Heap string the
 * caller frees, or NULL when the escaped text would be longer than a query may be (64 KiB). */
char *zq_regex_quote(const char *s);

/* Whether s (NULL: no) has a character RE2 reads as more than itself, one zq_regex_quote escapes:
 * only then can a pattern's regex and literal readings differ. */
int zq_has_metachar(const char *s);

/* Whether a repository or file argument is a glob (has *, ?, [ or {) rather than a plain name. */
int zq_is_glob(const char *s);

/* The regex for one repository argument, by reponame.h's rules: the argument is normalised (a clone URL
 * becomes host/path), then a plain name becomes "(^|/)<name>$" (escaped) and a glob "(^|/)<glob regex>"
 * (ZQ_ANCHOR_FULL without its "^"), so that either matches the whole name or its trailing segments.
 * Heap string in *out; ZK_EINVAL for an empty name or a bad glob. */
int zq_repo_regex(const char *repo, char **out, struct zk_err *err);

/* The query that selects one file by its exact path in the repositories a repository argument selects:
 * "repo:<zq_repo_regex> file:^<path, escaped>$" (a leading "/" of path is dropped), and with a branch
 * (NULL: none) " branch:<branch>". Heap string in *out; ZK_EINVAL with a message for an empty path, a
 * bad repository argument or a bad branch (zq_check_branch). */
int zq_file_query(const char *repo, const char *path, const char *branch, char **out, struct zk_err *err);

/* How zq_spec.query is read. */
enum zq_syntax {
    ZQ_SYNTAX_ZOEKT,   /* Zoekt's query language, kept intact: terms ANDed, or, -, lang:, sym:, case: */
    ZQ_SYNTAX_REGEX,   /* one RE2 pattern as ripgrep reads it, spaces included, over file contents:
                        * content:"<pattern>" with backslashes and quotes escaped for Zoekt's quoting */
    ZQ_SYNTAX_LITERAL  /* one literal string over file contents: the pattern with every metacharacter
                        * escaped, then quoted as for ZQ_SYNTAX_REGEX */
};

struct zq_spec {
    const char *query;                 /* read as syntax says; may be NULL or empty */
    const char *const *repos;          /* plain names or globs */
    size_t n_repos;
    const char *const *files;          /* include globs */
    size_t n_files;
    const char *const *exclude_files;  /* exclude globs */
    size_t n_exclude_files;
    int case_sensitive;
    enum zq_syntax syntax;             /* 0: ZQ_SYNTAX_ZOEKT */
    const char *branch;                /* NULL: every indexed branch; else branch:<name> (zq_check_branch) */
};

/* Checks a branch argument: non-empty, at most 256 bytes, and one Zoekt token (no blank, quote,
 * parenthesis or control character), which Zoekt's branch: matches as a substring of branch names.
 * ZK_OK, or ZK_EINVAL with a message. */
int zq_check_branch(const char *branch, struct zk_err *err);

/* Builds the final Zoekt query. At least a query or a file glob is required. A case: atom the user
 * wrote inside a parenthesised query is repeated at the top level, because Zoekt applies the outermost
 * case: setting to everything inside parentheses. Returns ZK_OK with *out (heap, caller frees), or
 * ZK_EINVAL with a message naming the argument at fault, or ZK_ETOOBIG when the query would be longer
 * than a query may be (64 KiB). */
int zq_build(const struct zq_spec *spec, char **out, struct zk_err *err);

/* What zq_check_parens found in a query in Zoekt's syntax. */
struct zq_parens {
    size_t tokens;          /* tokens Zoekt reads: terms, "or", '-' and parentheses */
    size_t first_group_end; /* when the first token opens a group: the offset just past the ')' that
                             * closes it; otherwise 0 */
    size_t last_start;      /* the offset of the last token */
    int last_open;          /* the '(' that the last token, a term, leaves open inside itself, as "[(]"
                             * does: a ')' right after it would be read as part of it */
    int last_starts_open;   /* whether the last token, a term, begins with '(' */
};

/* Reads q (n bytes) as Zoekt's lexer does (query.c says how) and checks that its parentheses balance:
 * every ')' that Zoekt reads as closing a group closes one the query opened, and every group is closed.
 * Quoted strings, backslash escapes and parentheses inside a term (foo\(, [(], content:"a)") are read
 * as Zoekt reads them. Returns ZK_OK with *p filled, or ZK_EINVAL with a message naming the position
 * (1-based) at fault: an unbalanced parenthesis, a quote without its closing quote, a trailing lone
 * backslash, or a place where Zoekt stops reading (a line break between terms, an empty ""). */
int zq_check_parens(const char *q, size_t n, struct zq_parens *p, struct zk_err *err);

/* Whether a query in Zoekt's syntax has a sym: atom (outside quotes). */
int zq_uses_symbols(const char *query);

/* Looks for common misreadings of Zoekt syntax in a user query: upper-case AND/OR/NOT and lower-case
 * "and" (Zoekt has no such operators; they are searched as text), "&&" and "||". Returns a constant
 * hint for the first one found, or NULL when the query looks fine. */
const char *zq_lint(const char *query);

#endif

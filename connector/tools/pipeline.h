/* pipeline.h: the one shape of a tool, and the steps the driver (tools.c) owns between the tool's own.
 *
 * A tool is its declaration (schema/<name>.json) and a struct tool_def of three steps:
 *   parse   reads the arguments into the tool's state (no I/O);
 *   plan    turns the state into the Zoekt query to run, or none (no I/O);
 *   render  writes the answer from what the query found.
 * Between plan and render the driver runs the query (tpipe_query): the Zoekt call, whose failure is
 * the call's answer in one form for every tool ("<tool> failed: <why>\nQuery sent: <query>"); the
 * literal reading of a pattern Zoekt refuses or that matches nothing; the sentence that explains an
 * empty answer when a repository argument selects nothing; the "Indexed:" line and the code host
 * addresses of the files shown; the repository catalogue when the tool asks for it; and freeing all of
 * it. A step that fails the call fills r (targ_fail) and returns non-zero; the driver then ends the
 * call with r as the answer. Adding a tool is a file with its def and its declaration, and a line in
 * tools.c's table. */
#ifndef ZK_CONNECTOR_TOOLS_PIPELINE_H
#define ZK_CONNECTOR_TOOLS_PIPELINE_H

#include "buf.h"
#include "connector/tools/tools.h"
#include "connector/zoekt/client.h"

#include <cjson/cJSON.h>

/* How plan reads the pattern: as the caller gave it, or, when the driver retries it, as literal text. */
enum tool_reading { TOOL_READ_AS_GIVEN, TOOL_READ_LITERALLY };

/* What plan asks the driver to run. plan fills it from zero. */
struct tool_query {
    char *zq;                  /* the Zoekt query (heap; the driver frees it); NULL: no search */
    struct zc_search_opts so;  /* so.max_files is ignored when ranked */
    struct zr_opts ro;
    int literal_fallback;      /* a pattern with regex metacharacters that Zoekt refuses, or that matches
                                * nothing, is planned again with TOOL_READ_LITERALLY and searched once
                                * more; the note says which reading found what */
    int ranked;                /* rank the files (zr_rank), asking for more until the first skip + page
                                * are the same on every request (files of equal score straddle Zoekt's cut
                                * in any order); else Zoekt's order, so.max_files of them */
    size_t skip, page;         /* with ranked: the files earlier pages showed, and this page's size */
    size_t linked;             /* the first files of the answer (after skip) that get code host
                                * addresses; 0: none */
    int indexed;               /* and the "Indexed:" line of those files */
    const char *const *repos;  /* the repository arguments: when nothing matches, the note tells "no
                                * match there" from "no such repository" and names the closest */
    size_t n_repos;
    long long catalogue_ms;    /* also hand render the repository list, a copy at most this old
                                * (listcache.h: ZLC_FRESH_MS to show it, ZLC_TTL_MS to look names up); 0:
                                * none */
};

/* What the driver hands render. Everything in it is the driver's, freed after render. */
struct tool_answer {
    const char *zq;               /* the query that answered (the literal one after a retry) */
    struct zr_search res;         /* every file Zoekt sent, in the order asked for */
    struct zr_search page;        /* res without the skip files before the page: a view into res */
    int ties;                     /* ranked: equal scores still straddle the page's end (past the bound) */
    int no_repo;                  /* the answer is empty and a repository argument selects nothing */
    struct buf note;              /* the driver's sentences (the reading, an empty answer); render may add */
    struct buf indexed;           /* with indexed: the "Indexed:" line of the linked files, or empty */
    const struct zr_list *list;   /* with catalogue_ms: the repositories, or NULL when they could not be
                                   * had (list_err, with its code, says why) */
    struct zk_err list_err;
};

struct tool_def {
    size_t state_size; /* the driver hands each step a zeroed state of this size */
    int (*parse)(const struct tool_ctx *ctx, const cJSON *args, void *state, struct tool_result *r);
    int (*plan)(const struct tool_ctx *ctx, void *state, enum tool_reading reading, struct tool_query *q,
                struct tool_result *r);
    /* Returns ZK_OK (r filled, is_error for a failure the agent should read) or the connector's fault
     * (the answer does not fit its buffer) with err set, as tools_call. */
    int (*render)(const struct tool_ctx *ctx, void *state, struct tool_answer *a, struct tool_result *r,
                  struct zk_err *err);
    void (*release)(void *state); /* frees what parse and plan kept in the state; may be NULL */
};

/* Each tool's def, which tools.c's table names. */
extern const struct tool_def tool_search_code_def, tool_list_repositories_def, tool_read_file_def,
    tool_list_files_def, tool_find_references_def, tool_find_symbol_def, tool_find_dependents_def,
    tool_corpus_status_def;

/* Runs tool (its name, for messages) through plan, query and render with state, as tools_call does
 * after parse. Returns as render does. */
int tpipe_run(const struct tool_ctx *ctx, const char *tool, const struct tool_def *def, void *state,
              struct tool_result *r, struct zk_err *err);

/* The Zoekt connection for a tool call, from the configuration (timeout_ms: search or list). */
struct zc_conn tpipe_conn(const struct tool_ctx *ctx, long timeout_ms);

#endif

/* bench_connector: what the connector costs per search, and how much smaller its answer is than Zoekt's.
 *
 * For each recorded search fixture and for a synthetic large answer (30 files with many ChunkMatches,
 * about 600 KB of JSON, the size of a broad query over a few hundred repositories), it measures the
 * time to parse the answer (result.c) and to format it (format/search.c), and compares the bytes Zoekt sent
 * with the bytes the agent receives (text, and the structuredContent JSON). With --url it also times
 * whole searches through the client against a server (tests/tools/zoekt-replay in `make bench`).
 *
 * Usage: bench_connector --fixtures DIR [--url URL]
 * Prints Markdown table rows on stdout; tests/bench/run.sh puts them into docs/benchmarks.md. */
#include "buf.h"
#include "connector/config.h"
#include "connector/format/search.h"
#include "mem.h"
#include "connector/zoekt/client.h"
#include "connector/zoekt/result.h"
#include "http.h"

#include <dirent.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BENCH_MIN_SECONDS 0.3
#define BENCH_MAX_ITERATIONS 2000

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static char *read_all(const char *path, size_t *len)
{
    struct buf b;

    buf_init(&b, 64u << 20);
    if (buf_read_file(&b, path, NULL) != ZK_OK)
        return NULL;
    *len = b.len;
    return buf_steal(&b);
}

/* Appends s base64-encoded. */
static int put_b64(struct buf *b, const char *s)
{
    size_t n = strlen(s);
    unsigned char *out = mem_alloc(4 * ((n + 2) / 3) + 1);
    int rc;

    EVP_EncodeBlock(out, (const unsigned char *)s, (int)n);
    rc = buf_puts(b, (const char *)out);
    free(out);
    return rc;
}

/* A ChunkMatches answer of files x chunks, each chunk five lines of code around one match. */
static char *synthetic(size_t files, size_t chunks, size_t *len)
{
    struct buf b;
    int rc;

    buf_init(&b, 64u << 20);
    rc = buf_printf(&b, "{\"Result\":{\"Crashes\":0,\"Duration\":850000000,\"FileCount\":%zu,\"FilesSkipped\":0,"
                        "\"ShardsSkipped\":0,\"MatchCount\":%zu,\"FlushReason\":0,\"Files\":[",
                    files * 8, files * chunks);
    for (size_t f = 0; !rc && f < files; f++) {
        rc = buf_printf(&b, "%s{\"FileName\":\"services/component%02zu/internal/handlers/request_handler.go\","
                            "\"Repository\":\"github.com/example-org/service-%03zu\",\"Branches\":[\"HEAD\"],"
                            "\"Version\":\"4f9c2e7d1a8b3c6e5d0f9a2b7c4e1d8f3a6b9c0e\",\"Language\":\"Go\","
                            "\"Checksum\":\"AQIDBAUGBwg=\",\"Score\":7526.5,\"ChunkMatches\":[",
                        f ? "," : "", f, f * 7);
        for (size_t c = 0; !rc && c < chunks; c++) {
            char content[1024];
            size_t line = 20 + c * 40;

            snprintf(content, sizeof(content),
                     "\t// validate the incoming request before it reaches the storage layer (%zu)\n"
                     "\tif err := validateRequest(ctx, req); err != nil {\n"
                     "\t\treturn nil, status.Errorf(codes.InvalidArgument, \"invalid request: %%v\", err)\n"
                     "\t}\n"
                     "\tresp, err := h.store.Lookup(ctx, req.GetName(), req.GetRevision())\n",
                     c);
            rc = buf_puts(&b, c ? ",{\"Content\":\"" : "{\"Content\":\"");
            if (!rc)
                rc = put_b64(&b, content);
            if (!rc)
                rc = buf_printf(&b, "\",\"ContentStart\":{\"ByteOffset\":%zu,\"LineNumber\":%zu,\"Column\":1},"
                                    "\"FileName\":false,\"Ranges\":[{\"Start\":{\"ByteOffset\":%zu,\"LineNumber\":%zu,"
                                    "\"Column\":12},\"End\":{\"ByteOffset\":%zu,\"LineNumber\":%zu,\"Column\":27}}],"
                                    "\"SymbolInfo\":null,\"Score\":501,\"BestLineMatch\":%zu,\"DebugScore\":\"\"}",
                                line * 60, line, line * 60 + 90, line + 1, line * 60 + 105, line + 1, line + 1);
        }
        if (!rc)
            rc = buf_puts(&b, "]}");
    }
    if (!rc)
        rc = buf_puts(&b, "],\"RepoURLs\":{},\"LineFragments\":{}}}\n");
    if (rc)
        return NULL;
    *len = b.len;
    return buf_steal(&b);
}

struct measure {
    double parse_us, format_us; /* medians: the machine may be shared, and a median shrugs off stalls */
    size_t text_bytes, json_bytes, files;
};

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(*v), cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Parses and formats body repeatedly; returns median times and the sizes of the last output. */
static int measure(const char *body, size_t len, int ctx, struct measure *m)
{
    struct zr_opts ro = {NULL, ctx, FMT_FILE_MATCH_LINES}; /* as search_code parses */
    struct fmt_search_opts fo = {"needle", CONNECTOR_MAX_FILES_DEFAULT, CONNECTOR_OUTPUT_BUDGET_DEFAULT,
                                 zc_wall_time_ns(CONNECTOR_SEARCH_TIMEOUT_MS), NULL, NULL, 0, NULL};
    static double parse[BENCH_MAX_ITERATIONS], format[BENCH_MAX_ITERATIONS];
    double start = now_s();
    int n = 0;

    memset(m, 0, sizeof(*m));
    while (n < BENCH_MAX_ITERATIONS && (n < 5 || now_s() - start < BENCH_MIN_SECONDS)) {
        struct zk_err err = {0};
        struct zr_search s;
        struct buf text;
        cJSON *json = NULL;
        char *printed;
        double t0 = now_s(), t1, t2;

        if (zr_parse_search(body, len, &ro, &s, &err)) {
            fprintf(stderr, "bench: %s\n", err.msg);
            zr_search_free(&s);
            return -1;
        }
        t1 = now_s();
        buf_init(&text, CONNECTOR_OUTPUT_BUDGET_LIMIT + 1);
        if (fmt_search(&s, &fo, &text, &json, &err)) {
            fprintf(stderr, "bench: %s\n", err.msg);
            zr_search_free(&s);
            return -1;
        }
        t2 = now_s();
        printed = cJSON_PrintUnformatted(json);
        m->text_bytes = text.len;
        m->json_bytes = printed ? strlen(printed) : 0;
        m->files = s.n_files;
        free(printed);
        cJSON_Delete(json);
        buf_free(&text);
        zr_search_free(&s);
        parse[n] = t1 - t0;
        format[n] = t2 - t1;
        n++;
    }
    m->parse_us = median(parse, n) * 1e6;
    m->format_us = median(format, n) * 1e6;
    return 0;
}

static void row(const char *name, size_t raw, const struct measure *m)
{
    printf("| %s | %zu | %zu | %.1f | %.1f | %zu | %zu | %.1f%% |\n", name, m->files, raw, m->parse_us, m->format_us,
           m->text_bytes, m->json_bytes, raw ? 100.0 * (double)m->text_bytes / (double)raw : 0.0);
}

/* Times whole searches (request, HTTP, parse, format) against url, over kept connections as the
 * connector makes them. */
static int end_to_end(const char *url)
{
    struct zc_conn c = {url, NULL, CONNECTOR_SEARCH_TIMEOUT_MS, NULL, NULL, NULL};
    struct zc_search_opts so = {.max_files = CONNECTOR_MAX_FILES_DEFAULT, .context_lines = CONNECTOR_CONTEXT_LINES_DEFAULT, .chunk_matches = 1, .all_matches = 1};
    struct zr_opts ro = {NULL, CONNECTOR_CONTEXT_LINES_DEFAULT, FMT_FILE_MATCH_LINES};
    struct fmt_search_opts fo = {"needle", CONNECTOR_MAX_FILES_DEFAULT, CONNECTOR_OUTPUT_BUDGET_DEFAULT, 0, NULL, NULL, 0, NULL};
    double start = now_s(), total;
    int n = 0;

    if (http_global_init())
        return -1;
    c.pool = http_pool_new(1);
    while (n < 200 && (n < 5 || now_s() - start < 1.0)) {
        struct zk_err err = {0};
        struct zr_search s;
        struct buf text;
        cJSON *json = NULL;

        if (zc_search(&c, "needle", &so, &ro, &s, &err)) {
            fprintf(stderr, "bench: %s\n", err.msg);
            zr_search_free(&s);
            http_pool_free(c.pool);
            http_global_cleanup();
            return -1;
        }
        buf_init(&text, CONNECTOR_OUTPUT_BUDGET_LIMIT + 1);
        if (fmt_search(&s, &fo, &text, &json, &err) == ZK_OK)
            cJSON_Delete(json);
        buf_free(&text);
        zr_search_free(&s);
        n++;
    }
    total = now_s() - start;
    printf("\nEND_TO_END %d searches, %.0f us each (HTTP round trip to %s, parse and format)\n", n,
           total / n * 1e6, url);
    http_pool_free(c.pool);
    http_global_cleanup();
    return 0;
}

int main(int argc, char **argv)
{
    const char *dir = NULL, *url = NULL;
    struct dirent **names = NULL;
    struct measure m;
    int n, rc = 0;

    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--fixtures") == 0)
            dir = argv[i + 1];
        else if (strcmp(argv[i], "--url") == 0)
            url = argv[i + 1];
    }
    if (!dir) {
        fprintf(stderr, "usage: bench_connector --fixtures DIR [--url URL]\n");
        return 2;
    }
    printf("| answer | files | Zoekt JSON bytes | parse us | format us | text bytes | structured bytes | "
           "text / JSON |\n|---|---|---|---|---|---|---|---|\n");
    n = scandir(dir, &names, NULL, alphasort);
    for (int i = 0; i < n; i++) {
        char path[4096];
        size_t len;
        char *body;

        if (!strstr(names[i]->d_name, ".json") || strstr(names[i]->d_name, "request") ||
            strstr(names[i]->d_name, "list") || strstr(names[i]->d_name, "options")) {
            free(names[i]);
            continue;
        }
        snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
        body = read_all(path, &len);
        if (body && strstr(body, "\"Result\"") && measure(body, len, 2, &m) == 0)
            row(names[i]->d_name, len, &m);
        free(body);
        free(names[i]);
    }
    free(names);
    {
        size_t len;
        char *body = synthetic(30, 30, &len);

        if (!body || measure(body, len, 2, &m)) {
            rc = 1;
        } else {
            row("synthetic: 30 files x 30 chunks", len, &m);
        }
        free(body);
    }
    if (url && end_to_end(url))
        rc = 1;
    return rc;
}

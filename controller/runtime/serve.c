/* serve.c: see serve.h. */
#include "controller/runtime/serve.h"

#include "log.h"
#include "mem.h"
#include "prom.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The metrics text is a few kilobytes; the bound only stops a runaway. */
/* The bound on one /metrics answer: the per-corpus gauges are about 1 KB a corpus. */
#define SERVE_METRICS_MAX (4 * 1024 * 1024)

struct serve {
    struct MHD_Daemon *daemon;
    struct serve_opts o;
    int port;
};

int serve_parse_addr(const char *addr, struct sockaddr_in *out, struct zk_err *err)
{
    const char *colon = addr ? strrchr(addr, ':') : NULL;
    char host[64];
    char *end;
    long port;

    memset(out, 0, sizeof(*out));
    out->sin_family = AF_INET;
    if (!colon || (size_t)(colon - addr) >= sizeof(host))
        return zk_err_set(err, ZK_EINVAL, "listen address \"%s\": expected host:port or :port", addr ? addr : "");
    port = strtol(colon + 1, &end, 10);
    if (colon[1] == '\0' || *end != '\0' || port < 0 || port > 65535)
        return zk_err_set(err, ZK_EINVAL, "listen address \"%s\": bad port", addr);
    out->sin_port = htons((uint16_t)port);
    memcpy(host, addr, (size_t)(colon - addr));
    host[colon - addr] = '\0';
    if (host[0] == '\0' || strcmp(host, "0.0.0.0") == 0)
        out->sin_addr.s_addr = htonl(INADDR_ANY);
    else if (strcmp(host, "localhost") == 0)
        out->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    else if (inet_pton(AF_INET, host, &out->sin_addr) != 1)
        return zk_err_set(err, ZK_EINVAL, "listen address \"%s\": \"%s\" is not an IPv4 address", addr, host);
    return ZK_OK;
}

static enum MHD_Result serve_reply(struct MHD_Connection *conn, unsigned int status, const char *type, char *body,
                                   size_t len)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
    enum MHD_Result ret;

    /* libmicrohttpd cannot be given an allocator: it reports a failed allocation by returning NULL. */
    if (!r)
        mem_oom(len);
    MHD_add_response_header(r, "Content-Type", type);
    ret = MHD_queue_response(conn, status, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result serve_text(struct MHD_Connection *conn, unsigned int status, const char *text)
{
    char *body = mem_strdup(text);

    return serve_reply(conn, status, "text/plain; charset=utf-8", body, strlen(body));
}

static enum MHD_Result serve_handle(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                                    const char *version, const char *upload_data, size_t *upload_data_size,
                                    void **con_cls)
{
    struct serve *s = cls;

    (void)version;
    (void)upload_data;
    (void)con_cls;
    /* Requests have no bodies; anything uploaded is ignored. */
    *upload_data_size = 0;
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
        return serve_text(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed\n");
    if (strcmp(url, "/healthz") == 0)
        return serve_text(conn, MHD_HTTP_OK, "ok\n");
    if (strcmp(url, "/readyz") == 0) {
        if (s->o.ready && !s->o.ready(s->o.ud))
            return serve_text(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "caches not synced\n");
        return serve_text(conn, MHD_HTTP_OK, "ok\n");
    }
    if (strcmp(url, "/metrics") == 0 && s->o.metrics) {
        struct buf b;
        char *body;
        size_t len;

        buf_init(&b, SERVE_METRICS_MAX);
        if (s->o.metrics(s->o.ud, &b) != ZK_OK) {
            buf_free(&b);
            return serve_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "metrics unavailable\n");
        }
        len = b.len;
        body = buf_steal(&b);
        return serve_reply(conn, MHD_HTTP_OK, PROM_CONTENT_TYPE, body, len);
    }
    return serve_text(conn, MHD_HTTP_NOT_FOUND, "not found\n");
}

int serve_start(const struct serve_opts *o, struct serve **out, struct zk_err *err)
{
    struct sockaddr_in sa;
    struct serve *s;
    const union MHD_DaemonInfo *info;
    int rc;

    *out = NULL;
    rc = serve_parse_addr(o->addr, &sa, err);
    if (rc != ZK_OK)
        return rc;
    s = mem_calloc(1, sizeof(*s));
    s->o = *o;
    s->daemon = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG, ntohs(sa.sin_port), NULL,
                                 NULL, serve_handle, s, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
                                 MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)10, MHD_OPTION_CONNECTION_LIMIT,
                                 (unsigned int)64, MHD_OPTION_END);
    if (!s->daemon) {
        free(s);
        return zk_err_set(err, ZK_EIO, "metrics server: cannot listen on %s (address in use?)", o->addr);
    }
    info = MHD_get_daemon_info(s->daemon, MHD_DAEMON_INFO_BIND_PORT);
    s->port = info ? info->port : ntohs(sa.sin_port);
    *out = s;
    return ZK_OK;
}

int serve_port(const struct serve *s)
{
    return s->port;
}

void serve_stop(struct serve *s)
{
    if (!s)
        return;
    MHD_stop_daemon(s->daemon);
    free(s);
}

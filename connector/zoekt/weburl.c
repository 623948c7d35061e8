/* weburl.c: code host addresses from Zoekt's templates; see weburl.h. */
#include "connector/zoekt/weburl.h"

#include "buf.h"
#include "err.h"

#include <stdio.h>
#include <string.h>

#define ZW_MAX 4096

struct zw_fields {
    const char *version;
    const char *path;
    long line;
};

/* Appends s escaped as Go escapes a URL path: letters, digits, "-_.~" and "$&+,/:;=@" stay, every
 * other byte becomes %XX. */
static int zw_put_escaped(struct buf *b, const char *s)
{
    int rc = ZK_OK;

    for (const unsigned char *p = (const unsigned char *)s; !rc && *p; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
            strchr("-_.~$&+,/:;=@", *p))
            rc = buf_putc(b, (char)*p);
        else
            rc = buf_printf(b, "%%%02X", *p);
    }
    return rc;
}

/* Reads a Go string literal at *p (strconv.Quote's form: \" and \\ escaped; any other escape is not
 * one zoekt-git-index writes for a URL) into out; advances *p past it. ZK_OK, or ZK_EINVAL. */
static int zw_read_quoted(const char **p, struct buf *out)
{
    const char *s = *p;
    int rc = ZK_OK;

    if (*s++ != '"')
        return ZK_EINVAL;
    for (; !rc && *s && *s != '"'; s++) {
        if (*s == '\\') {
            s++;
            if (*s != '"' && *s != '\\')
                return ZK_EINVAL;
        }
        rc = buf_putc(out, *s);
    }
    if (rc || *s != '"')
        return ZK_EINVAL;
    *p = s + 1;
    return ZK_OK;
}

/* Appends one path element to the join, with the single slash between elements that path.Join
 * leaves (the base keeps its own form). */
static int zw_join(struct buf *b, const char *elem, int escape)
{
    int rc = ZK_OK;

    while (*elem == '/')
        elem++;
    if (b->len && b->data[b->len - 1] != '/')
        rc = buf_putc(b, '/');
    return rc ? rc : escape ? zw_put_escaped(b, elem) : buf_puts(b, elem);
}

/* {{URLJoinPath ...}} from just after its name to just before "}}" (*p on return). */
static int zw_url_join(const char **p, const struct zw_fields *f, struct buf *b)
{
    struct buf quoted;
    int first = 1, rc = ZK_OK;

    buf_init(&quoted, ZW_MAX);
    while (!rc) {
        while (**p == ' ')
            (*p)++;
        if (strncmp(*p, "}}", 2) == 0)
            break;
        if (strncmp(*p, ".Version", 8) == 0 && !first) {
            rc = zw_join(b, f->version, 1);
            *p += 8;
        } else if (strncmp(*p, ".Path", 5) == 0 && !first) {
            rc = zw_join(b, f->path, 1);
            *p += 5;
        } else if (**p == '"') {
            buf_reset(&quoted);
            /* The base is written as it is: Go keeps the base URL's own escaping; later elements
             * are path text, escaped as the fields are. */
            if (!(rc = zw_read_quoted(p, &quoted)))
                rc = first ? buf_append(b, quoted.data, quoted.len) : zw_join(b, quoted.data, 1);
        } else {
            rc = ZK_EINVAL;
        }
        first = 0;
    }
    buf_free(&quoted);
    return first ? ZK_EINVAL : rc;
}

/* Renders template t with f into b. */
static int zw_render(const char *t, const struct zw_fields *f, struct buf *b)
{
    int rc = ZK_OK;

    while (!rc && *t) {
        const char *open = strstr(t, "{{"), *close;

        if (!open)
            return buf_puts(b, t);
        if ((rc = buf_append(b, t, (size_t)(open - t))))
            break;
        t = open + 2;
        /* A field outside URLJoinPath is written as it is, as Go's text/template writes it. */
        if (strncmp(t, ".Version}}", 10) == 0) {
            rc = buf_puts(b, f->version);
        } else if (strncmp(t, ".Path}}", 7) == 0) {
            rc = buf_puts(b, f->path);
        } else if (strncmp(t, ".LineNumber}}", 13) == 0) {
            rc = buf_printf(b, "%ld", f->line);
        } else if (strncmp(t, "URLJoinPath ", 12) == 0) {
            t += 12;
            rc = zw_url_join(&t, f, b);
        } else {
            rc = ZK_EINVAL;
        }
        if (rc || !(close = strstr(t, "}}")))
            return rc ? rc : ZK_EINVAL;
        t = close + 2;
    }
    return rc;
}

char *zw_file_url(const char *file_template, const char *line_template, const char *version, const char *path,
                  long line)
{
    struct zw_fields f = {version ? version : "", path ? path : "", line};
    struct buf b;

    if (!file_template || !*file_template)
        return NULL;
    buf_init(&b, ZW_MAX);
    if (zw_render(file_template, &f, &b) ||
        (line > 0 && line_template && *line_template && zw_render(line_template, &f, &b)) || !b.len) {
        buf_free(&b);
        return NULL;
    }
    return buf_steal(&b);
}

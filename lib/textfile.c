/* textfile.c: see textfile.h. */
#include "textfile.h"

#include "buf.h"
#include "mem.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

int textfile_next_line(const char *text, size_t len, size_t *pos, const char **line, size_t *n)
{
    size_t i = *pos, start, end;

    while (i < len) {
        start = i;
        while (i < len && text[i] != '\n')
            i++;
        end = i++;
        while (start < end && isspace((unsigned char)text[start]))
            start++;
        while (end > start && isspace((unsigned char)text[end - 1]))
            end--;
        if (start == end || text[start] == '#')
            continue;
        *pos = i;
        *line = text + start;
        *n = end - start;
        return 1;
    }
    *pos = len;
    return 0;
}

int textfile_first_line(const char *path, size_t max, char **out, struct zk_err *err)
{
    struct buf b;
    const char *line = "";
    size_t pos = 0, n = 0;
    int rc;

    *out = NULL;
    buf_init(&b, max);
    rc = buf_read_file(&b, path, err);
    if (rc != ZK_OK)
        return rc;
    textfile_next_line(b.data ? b.data : "", b.len, &pos, &line, &n);
    *out = mem_strndup(line, n);
    buf_free(&b);
    return ZK_OK;
}

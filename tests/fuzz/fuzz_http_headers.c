/* fuzz_http_headers.c: the Origin and Accept checks of the MCP Streamable HTTP transport
 * (connector/mcp/streamable.h), whose input is whatever a browser or client sends.
 *
 * Input: byte 0 chooses the configured origins (even: none, i.e. loopback only; odd: a list), the rest
 * is the header value, used as Origin and as Accept. Asserted:
 * - with no list, an Origin is allowed exactly when it matches, ignoring case,
 *   ^https?://(localhost|127\.0\.0\.1|\[::1\])(:[0-9]+)?$ (checked with regcomp as an independent
 *   oracle), so that no look-alike such as http://localhost.evil.example gets through;
 * - with a list, an Origin is allowed exactly when it equals one entry, ignoring case;
 * - an absent header is allowed for both;
 * - Accept admits JSON when some comma-separated entry's media range (before ';' and blanks) is
 *   application/json, application/ * or * / * (without the spaces), and only then. */
#include "tests/fuzz/fuzz.h"

#include "connector/mcp/streamable.h"

#include <regex.h>
#include <string.h>
#include <strings.h>

static const char allowed[] = "https://a.example, http://B.example:8080,null";

/* Whether value equals one entry of the list, the way a reader of the header documentation would
 * split it: at commas, leading spaces skipped. */
static int in_list(const char *value)
{
    static const char *const entries[] = {"https://a.example", "http://B.example:8080", "null"};

    for (size_t i = 0; i < sizeof(entries) / sizeof(entries[0]); i++)
        if (strcasecmp(entries[i], value) == 0)
            return 1;
    return 0;
}

static int accepts_json(const char *v)
{
    static const char *const ok[] = {"application/json", "application/*", "*/*"};
    char *copy = strdup(v), *save = NULL, *entry;
    int found = 0;

    FUZZ_CHECK(copy != NULL);
    for (entry = strtok_r(copy, ",", &save); entry != NULL && !found; entry = strtok_r(NULL, ",", &save)) {
        entry += strspn(entry, " \t");
        entry[strcspn(entry, "; \t")] = '\0';
        for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
            found |= strcasecmp(entry, ok[i]) == 0;
    }
    free(copy);
    return found;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static regex_t loopback;
    static int compiled;
    char *value;

    if (size < 1)
        return 0;
    if (!compiled) {
        FUZZ_CHECK(regcomp(&loopback, "^https?://(localhost|127\\.0\\.0\\.1|\\[::1\\])(:[0-9]+)?$",
                           REG_EXTENDED | REG_ICASE | REG_NOSUB) == 0);
        compiled = 1;
    }
    value = strndup((const char *)data + 1, size - 1);
    FUZZ_CHECK(value != NULL);

    FUZZ_CHECK(mcp_streamable_origin_allowed(NULL, data[0] & 1 ? allowed : NULL) == 1);
    if (data[0] & 1)
        FUZZ_CHECK(mcp_streamable_origin_allowed(value, allowed) == in_list(value));
    else
        FUZZ_CHECK(mcp_streamable_origin_allowed(value, NULL) == (regexec(&loopback, value, 0, NULL, 0) == 0));

    FUZZ_CHECK(mcp_streamable_accept_json(NULL) == 1);
    FUZZ_CHECK(mcp_streamable_accept_json(value) == accepts_json(value));
    free(value);
    return 0;
}

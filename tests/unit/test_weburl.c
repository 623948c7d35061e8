/* Unit tests for connector/zoekt/weburl: code host addresses from the templates zoekt-git-index
 * records, as Zoekt's own web UI renders them, and no address from a template it does not know. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>

#include "connector/zoekt/weburl.h"

static void expect(const char *file_t, const char *line_t, const char *version, const char *path, long line,
                   const char *want)
{
    char *got = zw_file_url(file_t, line_t, version, path, line);

    if (!want) {
        if (got)
            fail_msg("%s: got %s, want no address", file_t ? file_t : "(null)", got);
        return;
    }
    if (!got)
        fail_msg("%s: no address, want %s", file_t, want);
    assert_string_equal(got, want);
    free(got);
}

/* The templates of gitindex's setTemplates for the hosts it knows, filled as Go fills them. */
static void test_known_hosts(void **state)
{
    static const char github[] = "{{URLJoinPath \"https://github.com/acme/x\" \"blob\" .Version .Path}}";
    static const char gitlab[] = "{{URLJoinPath \"https://gitlab.com/acme/x\" \"-/blob\" .Version .Path}}";

    (void)state;
    expect(github, "#L{{.LineNumber}}", "0226d547", "src/main.go", 12,
           "https://github.com/acme/x/blob/0226d547/src/main.go#L12");
    /* No line: the file alone. */
    expect(github, "#L{{.LineNumber}}", "0226d547", "src/main.go", 0, "https://github.com/acme/x/blob/0226d547/src/main.go");
    expect(github, NULL, "0226d547", "src/main.go", 7, "https://github.com/acme/x/blob/0226d547/src/main.go");
    /* A path is escaped as a URL path is: a space, a '?' or a '#' in a name cannot end it early. */
    expect(github, "#L{{.LineNumber}}", "v1", "docs/a b?c#d.md", 1,
           "https://github.com/acme/x/blob/v1/docs/a%20b%3Fc%23d.md#L1");
    expect(gitlab, "#L{{.LineNumber}}", "abc", "x.go", 3, "https://gitlab.com/acme/x/-/blob/abc/x.go#L3");
    /* cgit and gitweb put fields outside URLJoinPath, which text/template writes as they are. */
    expect("{{URLJoinPath \"https://git.example/cgit/x.git\" \"tree\" .Path}}/?id={{.Version}}", "#n{{.LineNumber}}",
           "abc", "src/m.c", 10, "https://git.example/cgit/x.git/tree/src/m.c/?id=abc#n10");
    expect("https://g.example/gitweb?p=x.git;a=blob;f={{.Path}};hb={{.Version}}", "#l{{.LineNumber}}", "abc", "m.c",
           2, "https://g.example/gitweb?p=x.git;a=blob;f=m.c;hb=abc#l2");
    /* The other kinds spec.repositories[].codeHost takes, as the pinned zoekt-git-index writes them. */
    expect("{{URLJoinPath \"https://gitea.example/acme/x\" \"src/commit\" .Version .Path}}?display=source",
           "#L{{.LineNumber}}", "abc", "a b.go", 4, "https://gitea.example/acme/x/src/commit/abc/a%20b.go?display=source#L4");
    expect("{{URLJoinPath \"https://bitbucket.org/acme/x\" \"src\" .Version .Path}}", "#{{.LineNumber}}", "abc", "x.go", 5,
           "https://bitbucket.org/acme/x/src/abc/x.go#5");
    expect("{{URLJoinPath \"https://bb.example/projects/A/repos/x/browse\" .Path}}?at={{.Version}}", "#{{.LineNumber}}",
           "abc", "x.go", 6, "https://bb.example/projects/A/repos/x/browse/x.go?at=abc#6");
    expect("{{URLJoinPath \"https://dev.azure.com/o/p/_git/x\"}}?path=/{{.Path}}&version=GC{{.Version}}&_a=contents",
           "&line={{.LineNumber}}&lineEnd={{.LineNumber}}&lineStartColumn=1&lineEndColumn=200", "abc", "x.go", 7,
           "https://dev.azure.com/o/p/_git/x?path=/x.go&version=GCabc&_a=contents&line=7&lineEnd=7&lineStartColumn=1"
           "&lineEndColumn=200");
    expect("{{URLJoinPath \"https://go.googlesource.com/go\" \"+\" .Version .Path}}", "#{{.LineNumber}}", "abc", "x.go", 8,
           "https://go.googlesource.com/go/+/abc/x.go#8");
    expect("https://source.bazel.build/bazel/%2B/{{.Version}}:{{.Path}}", ";l={{.LineNumber}}", "abc", "x.go", 9,
           "https://source.bazel.build/bazel/%2B/abc:x.go;l=9");
    /* A quote in the base, as strconv.Quote writes it. */
    expect("{{URLJoinPath \"https://h.example/a\\\"b\" .Path}}", NULL, "v", "p", 0, "https://h.example/a\"b/p");
}

/* Anything else gives no address rather than a wrong one. */
static void test_unknown(void **state)
{
    (void)state;
    expect(NULL, NULL, "v", "p", 1, NULL);
    expect("", NULL, "v", "p", 1, NULL);
    expect("{{.Repo}}/{{.Path}}", NULL, "v", "p", 1, NULL);
    expect("{{printf \"%s\" .Path}}", NULL, "v", "p", 1, NULL);
    expect("{{URLJoinPath \"https://h\" .Path", NULL, "v", "p", 1, NULL);
    expect("{{URLJoinPath .Path}}", NULL, "v", "p", 1, NULL);
    expect("{{URLJoinPath \"https://h\\n\" .Path}}", NULL, "v", "p", 1, NULL);
    expect("https://h/{{.Path}}", "#L{{.Line}}", "v", "p", 1, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_hosts),
        cmocka_unit_test(test_unknown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

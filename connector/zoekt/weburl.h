/* weburl.h: the code host's address of a file and line, from the templates zoekt-git-index records for
 * a repository (Repository.FileURLTemplate and LineFragmentTemplate: Go text/template strings).
 *
 * Only what zoekt-git-index writes is understood: text, the fields {{.Version}}, {{.Path}} and
 * {{.LineNumber}} (written as they are, as text/template writes them), and {{URLJoinPath "base"
 * "elem"... .Version .Path}}, which joins its arguments with "/" as Go's url.JoinPath does, escaping
 * all but the base as a URL path is escaped (a space becomes %20; a '?' or '#' cannot end the path
 * early). A template with anything else gives no address rather than a wrong one. Pure. */
#ifndef ZK_ZOEKT_WEBURL_H
#define ZK_ZOEKT_WEBURL_H

/* The address of path at commit version, and of line in it when line > 0 and line_template is not NULL
 * or empty: a heap string the caller frees, or NULL when file_template is NULL, empty or not one this
 * module understands, or the address would pass 4 KiB. */
char *zw_file_url(const char *file_template, const char *line_template, const char *version, const char *path,
                  long line);

#endif

/* cmd.h: running a shell command from a cmocka test and reading what it printed. */
#ifndef ZK_TESTS_CMD_H
#define ZK_TESTS_CMD_H

#include <stddef.h>

/* Runs cmd with sh -c and puts the first line it printed, without the newline, in out (size bytes; an
 * empty string when it printed nothing). Fails the running test when cmd cannot run or exits non-zero. */
void cmd_first_line(const char *cmd, char *out, size_t size);

#endif

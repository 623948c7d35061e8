/* cmd.c: see cmd.h. */
#include "tests/support/cmd.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

void cmd_first_line(const char *cmd, char *out, size_t size)
{
    FILE *p = popen(cmd, "r");

    if (!p)
        fail_msg("cannot run: %s", cmd);
    out[0] = '\0';
    if (!fgets(out, (int)size, p))
        out[0] = '\0';
    if (pclose(p) != 0)
        fail_msg("failed: %s", cmd);
    out[strcspn(out, "\n")] = '\0';
}

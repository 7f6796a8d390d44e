/* cmd_bound.c - the 'hsdag bound' subcommand (placeholder until its issue lands).
 * Not here: any logic. Entry points: cmd_bound. */
#include "cli.h"

int cmd_bound(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "hsdag bound: not available in this build yet\n");
    return CLI_FAIL;
}

/* cmd_compare.c - the 'hsdag compare' subcommand (placeholder until its issue lands).
 * Not here: any logic. Entry points: cmd_compare. */
#include "cli.h"

int cmd_compare(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "hsdag compare: not available in this build yet\n");
    return CLI_FAIL;
}

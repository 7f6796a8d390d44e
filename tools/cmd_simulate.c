/* cmd_simulate.c - the 'hsdag simulate' subcommand (placeholder until its issue lands).
 * Not here: any logic. Entry points: cmd_simulate. */
#include "cli.h"

int cmd_simulate(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "hsdag simulate: not available in this build yet\n");
    return CLI_FAIL;
}

/* cmd_place.c - the 'hsdag place' subcommand (placeholder until its issue lands).
 * Not here: any logic. Entry points: cmd_place. */
#include "cli.h"

int cmd_place(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "hsdag place: not available in this build yet\n");
    return CLI_FAIL;
}

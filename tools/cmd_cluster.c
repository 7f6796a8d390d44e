/* cmd_cluster.c - the 'hsdag cluster' subcommand (placeholder until its issue lands).
 * Not here: any logic. Entry points: cmd_cluster. */
#include "cli.h"

int cmd_cluster(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "hsdag cluster: not available in this build yet\n");
    return CLI_FAIL;
}

/* cmd_train.c - the 'hsdag train' subcommand (placeholder until its issue lands).
 * Not here: any logic. Entry points: cmd_train. */
#include "cli.h"

int cmd_train(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "hsdag train: not available in this build yet\n");
    return CLI_FAIL;
}

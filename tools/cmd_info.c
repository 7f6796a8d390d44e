/* cmd_info.c - 'hsdag info' and 'hsdag convert' (placeholder until graph.c lands).
 * Not here: any logic. Entry points: cmd_info, cmd_convert. */
#include "cli.h"

int cmd_info(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return CLI_FAIL;
}

int cmd_convert(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return CLI_FAIL;
}

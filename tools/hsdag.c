/* hsdag.c - main() of the hsdag CLI: dispatches to one subcommand per library capability.
 * Not here: option handling of the subcommands (tools/cmd_*.c) or any logic (the library).
 * Entry points: main. */
#include "cli.h"
#include "hsdag/learn.h"
#include "hsdag/nn.h"

#include <string.h>

static const cli_command commands[] = {
    {"info", cmd_info, "summarise a computation graph (format, counts, FLOPs, depth, op histogram)"},
    {"convert", cmd_convert, "convert a graph to hsdag JSON or Graphviz DOT"},
    {"simulate", cmd_simulate, "simulate a placement on a device model: latency, busy time, memory"},
    {"place", cmd_place, "place a graph with one method (heuristic, exact or learned)"},
    {"bound", cmd_bound, "print a lower bound on latency"},
    {"compare", cmd_compare, "compare every placement method in one table"},
    {"train", cmd_train, "train the HSDAG placer (GCN + graph-parsing pooling + REINFORCE)"},
    {"profile", cmd_profile, "run an ONNX model under ONNX Runtime on this CPU: per-op profile, shape check"},
    {"calibrate", cmd_calibrate, "fit a CPU device model to measured profiles"},
    {"gen", cmd_gen, "generate a graph: a GPT-style transformer at any scale, or a seeded random DAG"},
    {"cluster", cmd_cluster, "PAC-ML: partition jobs arriving at a RAMP optical cluster"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: hsdag <command> [options]\n\n"
               "hsdag decides where each operator of a neural network's computation graph runs.\n\n"
               "commands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\nRun 'hsdag <command> --help' for the options of one command.\n"
               "Exit status: 0 ok, 1 failure, 2 bad input or options.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return CLI_BADINPUT;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return CLI_OK;
    }
    if (strcmp(argv[1], "--version") == 0) {
        puts("hsdag " HSDAG_VERSION);
        return CLI_OK;
    }
    /* process-wide settings belong to the program, not the library: one OpenBLAS thread (small matrices
     * gain nothing from threads, and a fixed count keeps results bit-identical), and the learned placers
     * ("hsdag") join the placer registry, once, before any command runs */
    hsdag_nn_set_threads(1);
    hsdag_err e = {0};
    if (hsdag_learn_register_methods(&e) < 0) {
        fprintf(stderr, "hsdag: %s\n", e.msg);
        return CLI_FAIL;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(argv[1], commands[i].name) == 0) return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "hsdag: unknown command '%s' (see hsdag --help)\n", argv[1]);
    return CLI_BADINPUT;
}

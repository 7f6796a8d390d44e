/* hsdag.c - main() of the hsdag CLI: dispatches to one subcommand per library capability.
 * Not here: options (tools/opt.c holds the one table) or any logic (the library).
 * Entry points: main. */
#include "cli.h"
#include "hsdag/learn.h"
#include "hsdag/placeto.h"
#include "hsdag/rnnplace.h"
#include "opt.h"

#include <errno.h>
#include <string.h>

typedef struct cli_entry {
    const char *name;
    int (*run)(int argc, char **argv);
} cli_entry;

/* "cluster" covers the four cluster subcommands (tools/cmd_cluster.c dispatches them), "gen" its two forms
 * (tools/cmd_gen.c). */
static const cli_entry entries[] = {
    {"info", cmd_info},   {"convert", cmd_convert}, {"simulate", cmd_simulate},
    {"place", cmd_place}, {"bound", cmd_bound},     {"compare", cmd_compare},
    {"train", cmd_train}, {"profile", cmd_profile}, {"calibrate", cmd_calibrate},
    {"gen", cmd_gen},     {"cluster", cmd_cluster},
};

static void usage(FILE *f)
{
    int n;
    const cli_command_info *c = cli_commands(&n);
    fprintf(f, "usage: hsdag <command> [options]\n\n"
               "hsdag decides where each operator of a neural network's computation graph runs.\n\n"
               "commands:\n");
    for (int i = 0; i < n; i++) fprintf(f, "  %-16s %s\n", c[i].name, c[i].summary);
    fprintf(f,
            "\nRun 'hsdag <command> --help' for the options of one command; 'hsdag help --reference' prints\n"
            "every option of every command (the README's CLI reference).\n"
            "Exit status: 0 ok, 1 the computation failed, 2 bad input or usage.\n");
}

/* A result that could not be written to standard output (a full disk, a closed pipe) is a failure. */
static int finish(int rc)
{
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "hsdag: standard output: write failed: %s\n", strerror(errno));
        return rc == CLI_OK ? CLI_FAIL : rc;
    }
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return CLI_BADINPUT;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        (strcmp(argv[1], "help") == 0 && argc == 2)) {
        usage(stdout);
        return finish(CLI_OK);
    }
    if (strcmp(argv[1], "--version") == 0) {
        puts("hsdag " HSDAG_VERSION);
        return finish(CLI_OK);
    }
    /* process-wide settings belong to the program, not the library: one OpenBLAS thread (small matrices
     * gain nothing from threads, and a fixed count keeps results bit-identical), and the learned placers
     * ("hsdag", "placeto", "rnn") join the placer registry, once, before any command runs */
    hsdag_nn_set_threads(1);
    hsdag_err e = {0};
    if (hsdag_learn_register_methods(&e) < 0 || hsdag_placeto_register_methods(&e) < 0 ||
        hsdag_rnnplace_register_methods(&e) < 0) {
        fprintf(stderr, "hsdag: %s\n", e.msg);
        return CLI_FAIL;
    }
    if (strcmp(argv[1], "help") == 0) {
        if (argc == 3 && strcmp(argv[2], "--reference") == 0) {
            cli_reference(stdout);
            return finish(CLI_OK);
        }
        if (argc == 3 && strcmp(argv[2], "--table") == 0) {
            cli_table_tsv(stdout);
            return finish(CLI_OK);
        }
        /* hsdag help CMD [SUB] = hsdag CMD [SUB] --help */
        char *args[4] = {argv[2], argc > 3 ? argv[3] : "--help", argc > 3 ? "--help" : NULL, NULL};
        for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++)
            if (strcmp(argv[2], entries[i].name) == 0) return finish(entries[i].run(argc > 3 ? 3 : 2, args));
        fprintf(stderr, "hsdag: unknown command '%s' (see hsdag --help)\n", argv[2]);
        return CLI_BADINPUT;
    }
    for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++)
        if (strcmp(argv[1], entries[i].name) == 0) return finish(entries[i].run(argc - 1, argv + 1));
    fprintf(stderr, "hsdag: unknown command '%s' (see hsdag --help)\n", argv[1]);
    return CLI_BADINPUT;
}

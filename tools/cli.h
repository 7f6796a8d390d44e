/* cli.h - shared pieces of the hsdag command-line tool: exit codes, error reporting, strict number parsing,
 * progress bar and output helpers. Not here: the option table (opt.h) or any placement logic (the library).
 * Entry points: cli_usage_error, cli_fail, cli_parse_*, cli_progress_*, cli_write_out, one cmd_<name>() per
 * subcommand. */
#ifndef HSDAG_TOOLS_CLI_H
#define HSDAG_TOOLS_CLI_H

#include "hsdag/common.h"

#include <stdio.h>

/* Exit codes: 0 ok, 1 internal/solver failure, 2 bad input or bad options. */
enum { CLI_OK = 0, CLI_FAIL = 1, CLI_BADINPUT = 2 };

/* Each subcommand: int cmd_<name>(int argc, char **argv) with argv[0] = "<name>". */
int cmd_info(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_simulate(int argc, char **argv);
int cmd_place(int argc, char **argv);
int cmd_bound(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_train(int argc, char **argv);
int cmd_pretrain(int argc, char **argv); /* 'train --graphs': cmd_train hands over */
int cmd_cluster(int argc, char **argv);
int cmd_cluster_train(int argc, char **argv);
int cmd_profile(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);
int cmd_gen(int argc, char **argv);

/* Prints "hsdag <cmd>: <msg>" on stderr and returns CLI_BADINPUT (use for bad options). */
int cli_usage_error(const char *cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Maps a library status to an exit code: input errors -> 2, others -> 1; prints e->msg. */
int cli_fail(const char *cmd, int status, const hsdag_err *e);

/* Parses numbers strictly (whole string, range-checked); return 0 or -1. */
int cli_parse_int(const char *s, long lo, long hi, long *out);
int cli_parse_double(const char *s, double lo, double hi, double *out);

/* Progress bar on stderr, only when stderr is a TTY and quiet == 0:
 * "[#####.....] 12/25 best 3.21 ms  ETA 0:04". */
typedef struct cli_progress {
    int active;
    long total;
    double t0, last;
    const char *label;
} cli_progress;
void cli_progress_start(cli_progress *p, const char *label, long total, int quiet);
void cli_progress_update(cli_progress *p, long done, const char *extra);
void cli_progress_end(cli_progress *p);

/* Writes b to path ("-" = stdout). Returns 0 or prints an error and returns CLI_FAIL. */
int cli_write_out(const char *cmd, const char *path, const hsdag_buf *b);

#endif

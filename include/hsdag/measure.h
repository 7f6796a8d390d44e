/* measure.h - the measurement oracle: a placement's latency from an external program (real hardware),
 *   run without a shell, with a timeout, a process-group kill and retries.
 * Not here: the simulator's latency (sim.h, hsdag_learn_sim_eval) or what the program does (e.g.
 *   examples/openvino_measure.py).
 * Entry points: hsdag_measure_config_default, hsdag_measure_create/free, hsdag_measure_eval,
 *   hsdag_measure_counts, hsdag_measure_argv.
 *
 * Usage:
 *   hsdag_measure_config mc = hsdag_measure_config_default();
 *   mc.cmd = "python3 examples/openvino_measure.py --model m.xml {placement}";
 *   mc.path = "out/measure_placement.json";
 *   hsdag_measure *m; hsdag_err e = {0};
 *   if (hsdag_measure_create(&m, &mc, g, devs, &e) < 0) puts(e.msg);   // bad quoting, empty command
 *   hsdag_learn_train(L, hsdag_measure_eval, m, NULL, NULL, &e);         // the reward of every step
 *   hsdag_measure_free(m);
 *
 * The command contract: cmd is split into words as a POSIX shell would split it (blanks separate words;
 * '...' and "..." group, backslash escapes the next character outside single quotes), and nothing else of a
 * shell applies: no variables, globs, pipes, redirections, ';' or '#' comments. Every word that contains
 * {placement} (or {}) gets the path of the placement file (hsdag placement JSON) in its place; without a
 * placeholder the path is appended as the last argument. The first word is looked up in PATH
 * (posix_spawnp). The program prints the latency in seconds; the last token of its standard output that
 * parses completely as a number is taken (it must be > 0). Exit status 0 is success; a nonzero status, a
 * signal or a run longer than timeout_s (the whole process group is killed) is a failure, retried up to
 * `retries` more times.
 */
#ifndef HSDAG_MEASURE_H
#define HSDAG_MEASURE_H

#include "hsdag/devices.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hsdag_measure_config {
    const char *cmd;  /* the command line (contract above); copied at create */
    const char *path; /* where each placement is written before a run; copied at create */
    double timeout_s; /* seconds per run (default 600) */
    int32_t retries;  /* further attempts after a failed run (default 2) */
    int memo;         /* 1 (default): a placement measured before is not run again; its first latency is
                       * returned (held in memory, one byte per node per placement, up to 256 MiB) */
} hsdag_measure_config;
HSDAG_API hsdag_measure_config hsdag_measure_config_default(void);

typedef struct hsdag_measure hsdag_measure;

/* Splits the command into words and prepares the argument vector; g and devs are borrowed (they name the
 * nodes and devices in the placement file) and must outlive m. Errors: HSDAG_EINVAL (no command, no path,
 * an unterminated quote, a timeout <= 0, retries < 0), HSDAG_ENOMEM. */
HSDAG_API int hsdag_measure_create(hsdag_measure **out, const hsdag_measure_config *c, const hsdag_graph *g,
                                   const hsdag_devices *devs, hsdag_err *e);
HSDAG_API void hsdag_measure_free(hsdag_measure *m); /* NULL is a no-op */

/* An hsdag_learn_eval_fn (ctx is an hsdag_measure *): writes device[] as the placement file, runs the
 * command (with retries), and returns its latency; *feasible = 1 (the hardware ran it). With c.memo, a
 * placement measured before returns its first latency without a run or a file written. HSDAG_EEXTERNAL with
 * the last attempt's reason when every attempt failed ("exit status 3", "timed out after 0.2 s", "printed no
 * positive latency", "cannot run 'x': ..."), HSDAG_EIO if the file cannot be written. */
HSDAG_API int hsdag_measure_eval(void *ctx, const int32_t *device, double *latency_s, int *feasible,
                                 hsdag_err *e);

/* What m did so far: *runs = placements the command measured, *repeats = evaluations answered from the memo
 * (either may be NULL). */
HSDAG_API void hsdag_measure_counts(const hsdag_measure *m, int64_t *runs, int64_t *repeats);

/* The argument vector a run executes (placeholders already replaced), NULL-terminated; *argc (optional)
 * gets its length. Valid until hsdag_measure_free. */
HSDAG_API const char *const *hsdag_measure_argv(const hsdag_measure *m, int32_t *argc);

#ifdef __cplusplus
}
#endif
#endif

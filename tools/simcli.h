/* simcli.h - what the commands that take a MODEL share (simulate, place, bound, compare, train): loading the
 * model, the device set and a profile from the common options, building the placement problem, and writing
 * a placement in every format the outputs ask for.
 * Not here: option parsing (opt.c), each command's own logic and printing.
 * Entry points: simcli_load, simcli_set_devices, simcli_problem, simcli_outputs_of, simcli_write_outputs,
 *   simcli_free, simcli_check_method_opts.
 */
#ifndef HSDAG_TOOLS_SIMCLI_H
#define HSDAG_TOOLS_SIMCLI_H

#include "cli.h"
#include "hsdag/io.h"
#include "hsdag/place.h"
#include "hsdag/placement.h"
#include "hsdag/sim.h"
#include "opt.h"

typedef struct simcli {
    const cli_args *a;
    const char *model; /* path */
    hsdag_graph *g;
    hsdag_devices *devs;
    hsdag_profile *prof;
    hsdag_sim_config sc;   /* semantics, op costs and profile from the options */
    int devices_defaulted; /* 1 when --devices was not given */
} simcli;
/* Applies the --mem caps to s->devs in order; CLI_OK or the error's exit status (message printed). */
int simcli_mem(simcli *s);

/* Loads a->pos[0], --profile and --devices, and fills s->sc from --semantics, --costs, --priority and
 * --objective. Returns CLI_OK or an exit code (after printing the error). */
int simcli_load(const cli_args *a, simcli *s);
/* Replaces the device set by a preset/file spec (used to widen a Tarnawski set for a split). */
int simcli_set_devices(simcli *s, const char *spec);
/* The placement problem for s->sc (the options' semantics and costs) after the --mem caps; an option that does not apply to the
 * model (--costs file without measured costs) is an error naming it. CLI_OK or an exit code. */
int simcli_problem(simcli *s, hsdag_place_problem **p);
void simcli_free(simcli *s);
/* Before any work: every method option given (--time-limit, --max-evals, --budget, --noise, --init) is read
 * by at least one of the methods to run (methods: one name or a comma list; NULL = compare's default list),
 * as the registry's hsdag_place_method.uses says; otherwise a usage error naming the methods that read it.
 * CLI_OK or 2. */
int simcli_check_method_opts(const cli_args *a, const char *methods);

/* Where to write one placement: any may be NULL. */
typedef struct simcli_outputs {
    const char *out, *affinity, *split, *dot, *dot_full, *trace;
} simcli_outputs;
/* The placement outputs given on the command line (--out, --affinity, --split, --dot, --dot-full, --trace). */
simcli_outputs simcli_outputs_of(const cli_args *a);
/* Writes dev (a placement on p) to every path in o; --dot draws every op up to SIMCLI_DOT_FULL_MAX ops and
 * the coarsened group graph above; --trace simulates dev once more with a recording simulator. CLI_OK or
 * an exit code (1: a write failed after the computation). */
#define SIMCLI_DOT_FULL_MAX 500
#define SIMCLI_DOT_GROUPS 80
int simcli_write_outputs(const simcli *s, const hsdag_place_problem *p, const int32_t *dev,
                         const simcli_outputs *o);

#endif

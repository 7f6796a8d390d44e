/* simcli.h - what 'hsdag simulate' and 'hsdag bound' share: loading the model, the device set, a profile and
 * the cost options, with one-line errors and CLI exit codes.
 * Not here: option parsing of each command, output formatting.
 * Entry points: simcli_load, simcli_free, simcli_parse_costs.
 */
#ifndef HSDAG_TOOLS_SIMCLI_H
#define HSDAG_TOOLS_SIMCLI_H

#include "cli.h"
#include "hsdag/io.h"
#include "hsdag/placement.h"
#include "hsdag/sim.h"

typedef struct simcli {
    const char *model;   /* path */
    const char *devices; /* preset name or file, NULL = the model's default */
    const char *profile; /* CSV path or NULL */
    hsdag_graph *g;
    hsdag_devices *devs;
    hsdag_profile *prof;
    int devices_defaulted; /* 1 when --devices was not given */
} simcli;

/* Loads s->model, s->profile and s->devices. Returns CLI_OK or an exit code (after printing the error). */
int simcli_load(const char *cmd, simcli *s);
/* Replaces the device set by a preset/file spec (used to widen a Tarnawski set for a split). */
int simcli_set_devices(const char *cmd, simcli *s, const char *spec);
void simcli_free(simcli *s);
/* "auto" | "roofline" | "file" -> *out; returns 0 or -1. */
int simcli_parse_costs(const char *s, hsdag_costsrc *out);
const char *simcli_costs_name(hsdag_costsrc c);
/* Prints the preset list and the --devices / --costs / --profile / --semantics help shared by both
 * commands. */
void simcli_help_common(FILE *f);

#endif

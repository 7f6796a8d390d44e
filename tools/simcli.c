/* simcli.c - shared loading for 'hsdag simulate' and 'hsdag bound' (model, devices, profile, cost options).
 * Not here: the commands themselves (cmd_simulate.c, cmd_bound.c).
 * Entry points: simcli_load, simcli_set_devices, simcli_free, simcli_parse_costs, simcli_costs_name,
 *               simcli_help_common.
 */
#include "simcli.h"

#include <string.h>

int simcli_load(const char *cmd, simcli *s)
{
    hsdag_err e = {0};
    int rc = hsdag_load_file(&s->g, s->model, HSDAG_FMT_UNKNOWN, &e);
    if (rc < 0) return cli_fail(cmd, rc, &e);
    if (s->profile && (rc = hsdag_profile_read_file(&s->prof, s->profile, &e)) < 0)
        return cli_fail(cmd, rc, &e);
    s->devices_defaulted = s->devices == NULL;
    return simcli_set_devices(cmd, s, s->devices);
}

int simcli_set_devices(const char *cmd, simcli *s, const char *spec)
{
    hsdag_err e = {0};
    hsdag_devices *d = NULL;
    int rc = hsdag_devices_load(&d, spec, s->g, &e);
    if (rc < 0) return cli_fail(cmd, rc, &e);
    hsdag_devices_free(s->devs);
    s->devs = d;
    return CLI_OK;
}

void simcli_free(simcli *s)
{
    hsdag_devices_free(s->devs);
    hsdag_profile_free(s->prof);
    hsdag_graph_free(s->g);
    memset(s, 0, sizeof *s);
}

int simcli_parse_costs(const char *s, hsdag_costsrc *out)
{
    if (strcmp(s, "auto") == 0)
        *out = HSDAG_COSTSRC_AUTO;
    else if (strcmp(s, "roofline") == 0)
        *out = HSDAG_COSTSRC_ROOFLINE;
    else if (strcmp(s, "file") == 0)
        *out = HSDAG_COSTSRC_FILE;
    else
        return -1;
    return 0;
}

const char *simcli_costs_name(hsdag_costsrc c)
{
    return c == HSDAG_COSTSRC_FILE ? "file" : c == HSDAG_COSTSRC_ROOFLINE ? "roofline" : "auto";
}

void simcli_help_common(FILE *f)
{
    fprintf(
        f,
        "  --devices D       a preset or a device JSON file (docs/devices.md). Presets:\n"
        "                      cpu-gpu   Intel Core i9-12900K + Intel Arc A770 16 GB, PCIe 4.0, sequential\n"
        "                      cpu-igpu  i9-12900K + its UHD Graphics 770 (shared DDR5), sequential\n"
        "                      cpu-4gpu  i9-12900K + four Arc A770 behind one PCIe switch, concurrent\n"
        "                      tarnawski[:K[:L]]  a Tarnawski JSON model's own K accelerators and L CPUs\n"
        "                    default: tarnawski for Tarnawski JSON models, cpu-gpu otherwise\n"
        "  --semantics S     sequential | concurrent | tarnawski (default: the device set's own)\n"
        "  --costs C         auto | roofline | file: op costs from FLOPs and bytes, or the model file's\n"
        "                    measured times (default auto: file when every op has them)\n"
        "  --profile CSV     per-op per-device times 'node,device,ms' overriding both\n"
        "  --json            print the result as one JSON object\n");
}

/* placement.h - reading and writing placements: hsdag placement JSON, Tarnawski splits, OpenVINO affinity
 * maps.
 * Not here: computing placements (place.h) or scoring them (sim.h).
 * Entry points: hsdag_placement_parse/read_file/from_spec, hsdag_placement_write_json/affinity/split.
 *
 * A placement is a plain int32_t array device[g->n_nodes] of indices into an hsdag_devices set.
 * Usage:
 *   int32_t *dev = hsdag_malloc(g->n_nodes * sizeof *dev);
 *   hsdag_placement_info pi; hsdag_err e = {0};
 *   if (hsdag_placement_from_spec(dev, &pi, "p.json", g, devs, &e) < 0) puts(e.msg);  // or "cpu-only", ...
 *   hsdag_buf b = {0}; hsdag_placement_write_json(&b, g, devs, dev);
 *   hsdag_write_file_atomic("q.json", b.data, b.len, &e);
 *   hsdag_buf_free(&b); hsdag_free(dev);
 *
 * hsdag placement JSON (docs/simulator.md):
 *   {"format": "hsdag-placement", "devices": "cpu-gpu", "default": "CPU",
 *    "placement": {"conv1": "GPU", "relu1": "GPU", "fc": "CPU", ...}}
 * "placement" is required: node name -> device name (or device index as a JSON integer). "default"
 * (optional) places every node not listed; without it every node must be listed. Other keys are ignored.
 * An OpenVINO affinity map {"layer": "CPU"|"GPU", ...} (no "placement" key, all values strings) is read as
 * the "placement" object itself, devices matched by name, then by ov_name.
 * Tarnawski split: {"cpus": [{"nodes": [ids]}], "fpgas": [{"nodes": [ids]}, ...]}: ids are file ids
 * (g->file_id); cpus[i] -> the i-th CPU device, fpgas[j] -> the j-th non-CPU device; every node listed once.
 */
#ifndef HSDAG_PLACEMENT_H
#define HSDAG_PLACEMENT_H

#include "hsdag/devices.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum hsdag_placement_format {
    HSDAG_PLF_UNKNOWN = 0,
    HSDAG_PLF_HSDAG,    /* {"placement": {...}} */
    HSDAG_PLF_AFFINITY, /* flat {"layer": "CPU"} */
    HSDAG_PLF_SPLIT,    /* Tarnawski split */
    HSDAG_PLF_SPEC      /* "cpu-only" / a device name, from hsdag_placement_from_spec */
} hsdag_placement_format;
/* "unknown", "hsdag", "affinity", "tarnawski-split", "shorthand" (JSON "placement_format"). */
HSDAG_API const char *hsdag_placement_format_name(hsdag_placement_format f);

typedef struct hsdag_placement_info {
    hsdag_placement_format format;
    /* Tarnawski split: entries of "cpus" / "fpgas" (set even when the set is too small,
     * so a caller can widen the device set, e.g. "tarnawski:K:L", and retry) */
    int32_t split_cpus, split_fpgas;
    int32_t n_listed; /* nodes the file named explicitly */
} hsdag_placement_info;

/* Parses any of the three formats (detected from the content) into device[g->n_nodes]. info may be NULL.
 * Errors (HSDAG_EPARSE / HSDAG_EINVAL, one line, `what` first): bad JSON, unknown node name or id, unknown
 * device, node listed twice (split), node missing without "default", more split groups than devices. */
HSDAG_API int hsdag_placement_parse(int32_t *device, hsdag_placement_info *info, const void *buf, size_t len,
                                    const char *what, const hsdag_graph *g, const hsdag_devices *devs,
                                    hsdag_err *e);
HSDAG_API int hsdag_placement_read_file(int32_t *device, hsdag_placement_info *info, const char *path,
                                        const hsdag_graph *g, const hsdag_devices *devs, hsdag_err *e);
/* spec: "<device>-only" or "<device>" (every op on that device, e.g. "cpu-only", "GPU", "gpu0"),
 * "<kind>-only"
 * (first device of that kind: "cpu-only", "gpu-only", "accel-only"), else a file path. */
HSDAG_API int hsdag_placement_from_spec(int32_t *device, hsdag_placement_info *info, const char *spec,
                                        const hsdag_graph *g, const hsdag_devices *devs, hsdag_err *e);

/* ---- writers (append to out; return 0 or HSDAG_ENOMEM / HSDAG_EINVAL for an out-of-range index) ---- */
/* hsdag placement JSON with "devices": devs->name; nodes in index order. */
HSDAG_API int hsdag_placement_write_json(hsdag_buf *out, const hsdag_graph *g, const hsdag_devices *devs,
                                         const int32_t *device);
/* OpenVINO affinity map: layer name -> device ov_name ("CPU"/"GPU"), ready for HETERO's per-node affinity. */
HSDAG_API int hsdag_placement_write_affinity(hsdag_buf *out, const hsdag_graph *g, const hsdag_devices *devs,
                                             const int32_t *device);
/* Tarnawski split: one "cpus" entry per CPU device, one "fpgas" entry per non-CPU device (in device order),
 * node ids = g->file_id, ascending. */
HSDAG_API int hsdag_placement_write_split(hsdag_buf *out, const hsdag_graph *g, const hsdag_devices *devs,
                                          const int32_t *device);

#ifdef __cplusplus
}
#endif
#endif

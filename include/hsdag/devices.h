/* devices.h - the device model (devices, links, default semantics), its presets and JSON files, and the
 *   per-op profile CSV (src/io/devices.c, src/io/profile.c).
 * Not here: the cost table built from them and scheduling (sim.h), placement files (placement.h), placers
 *   (place.h).
 * Entry points: hsdag_devices_load/parse/preset/free/find/write_json, hsdag_devices_spec_is_file,
 *   hsdag_profile_*, hsdag_semantics_parse/name.
 *
 * Usage:
 *   hsdag_devices *d; hsdag_err e = {0};
 *   if (hsdag_devices_load(&d, "cpu-gpu", g, &e) < 0) return;    // a preset name or a JSON file path
 *   int32_t gpu = hsdag_devices_find(d, "GPU");                  // index, or -1
 *   hsdag_devices_free(d);
 */
#ifndef HSDAG_DEVICES_H
#define HSDAG_DEVICES_H

#include "hsdag/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HSDAG_MAX_DEVICES 64 /* placements keep a 64-bit device mask per node */

/* Execution semantics of one inference request (docs/simulator.md). */
typedef enum hsdag_semantics {
    HSDAG_SEM_AUTO = -1, /* the device set's default */
    /* OpenVINO HETERO: ops one after another in topological order, copies at boundaries */
    HSDAG_SEM_SEQUENTIAL = 0,
    /* each device runs its ready ops by priority; transfers on link resources overlap */
    HSDAG_SEM_CONCURRENT,
    HSDAG_SEM_TARNAWSKI, /* Tarnawski et al.'s computeLatency (accelerator blocks, CPU unbounded) */
    HSDAG_SEM_COUNT_
} hsdag_semantics;
HSDAG_API const char *
hsdag_semantics_name(hsdag_semantics s); /* "sequential", "concurrent", "tarnawski", "auto" */
/* Parses "sequential" | "concurrent" | "tarnawski" | "auto"; returns 0 or HSDAG_EINVAL. */
HSDAG_API int hsdag_semantics_parse(hsdag_semantics *out, const char *s, hsdag_err *e);

typedef enum hsdag_devkind {
    HSDAG_DEV_CPU = 0,
    HSDAG_DEV_GPU,
    HSDAG_DEV_ACCEL, /* any other accelerator (Tarnawski "FPGA") */
    HSDAG_DEV_KIND_COUNT_
} hsdag_devkind;
HSDAG_API const char *hsdag_devkind_name(hsdag_devkind k); /* "cpu", "gpu", "accel" */

/* One device. Invariants: name unique within its set and non-empty; peak_flops > 0; mem_bw > 0;
 * 0 < eff[c] <= 1 for every class; launch_s >= 0; mem_capacity >= 0 (0 = unlimited). */
typedef struct hsdag_device {
    const char *name; /* "CPU", "GPU", "gpu0", "acc3", ... */
    const char
        *ov_name; /* OpenVINO device string for affinity maps ("CPU", "GPU", "GPU.1"); defaults to name */
    hsdag_devkind kind;
    double peak_flops;   /* FLOP/s, FP32 datasheet peak */
    double mem_bw;       /* bytes/s, device memory bandwidth */
    double mem_capacity; /* bytes usable by one request, 0 = unlimited */
    double launch_s;     /* seconds of fixed overhead per non-bookkeeping op (kernel launch / dispatch) */
    /* optional cache level (0 = none): an op's first cache_bytes move at cache_bw, the rest at mem_bw (an op whose
     * tensors fit in the last-level cache does not stream them from DRAM) */
    double cache_bytes; /* bytes */
    double cache_bw;    /* bytes/s */
    /* seconds per output element of each op class, on the compute side (0 = none): what an op costs beyond its
     * multiply-adds (a depthwise convolution's per-output work, an elementwise op's per-element work) */
    double elem_s[HSDAG_OP_CLASS_COUNT_];
    double eff[HSDAG_OP_CLASS_COUNT_]; /* fraction of peak_flops reached by each op class */
} hsdag_device;

/* A directed link a -> b. Links with the same resource id share one FIFO channel in the concurrent
 * simulator (a shared bus); point-to-point links each get their own id. Invariants: latency_s >= 0,
 * bandwidth > 0, 0 <= resource < n_resources. The diagonal (a == a) is unused. */
typedef struct hsdag_link {
    double latency_s;   /* seconds per transfer (setup, driver, synchronisation) */
    double bandwidth;   /* bytes/s */
    int32_t resource;   /* channel id (shared bus = same id) */
    double file_factor; /* multiplier on a file-given transfer time (Tarnawski edge cost, which is one
                            * accelerator<->host-DRAM copy): 1 between an accelerator and a CPU, 2 between two
                            * accelerators (through host DRAM), 0 between two CPUs (shared DRAM) */
} hsdag_link;

/* A device set. All memory lives in `arena`. Invariants: 1 <= n <= HSDAG_MAX_DEVICES; link has n*n
 * entries (row = source); resource_name has n_resources entries. */
typedef struct hsdag_devices {
    const char *name; /* preset name or the file's "name" */
    int32_t n;
    hsdag_device *dev; /* [n] */
    hsdag_link *link;  /* [n * n], link[a * n + b] */
    int32_t n_resources;
    const char **resource_name; /* [n_resources] e.g. "pcie", "CPU->GPU" */
    hsdag_semantics semantics;  /* default semantics of this set (never AUTO) */
    /* at most this many non-CPU devices may hold ops (Tarnawski maxFPGAs), -1 = no limit */
    int32_t max_accels_used;
    hsdag_arena *arena;
} hsdag_devices;

/* Built-in presets (numbers and sources: docs/devices.md):
 *   "cpu-gpu"    Intel Core i9-12900K (P-cores, AVX2 FP32) + Intel Arc A770 16 GB over PCIe 4.0 x16,
 * sequential;
 *   "cpu-4gpu"   the same CPU + four Arc A770 on a shared PCIe root complex, concurrent;
 *   "tarnawski"  from a Tarnawski JSON graph's own fields: maxFPGAs accelerators "acc0".. (device indices
 *                0..k-1, capacity maxSizePerFPGA) then maxCPUs CPUs "cpu0".. (indices k..k+l-1, the numbering
 * of
 *                hsdag_split_read), file costs, semantics tarnawski (needs g with
 *                g->meta.format == HSDAG_FMT_TARNAWSKI, or explicit counts "tarnawski:K" / "tarnawski:K:L").
 * g may be NULL except for "tarnawski". */
HSDAG_API int hsdag_devices_preset(hsdag_devices **out, const char *name, const hsdag_graph *g, hsdag_err *e);
/* Preset names, NULL-terminated (for --help). */
const char *const *hsdag_devices_preset_names(void);
/* One line describing a preset (for --help), or NULL for a name that is not one. */
HSDAG_API const char *hsdag_devices_preset_summary(const char *name);
/* The default for a graph: "tarnawski" for Tarnawski JSON graphs, "cpu-gpu" otherwise. */
HSDAG_API const char *hsdag_devices_default_name(const hsdag_graph *g);
/* 1 if hsdag_devices_load reads spec as a JSON file path (it holds a '/' or a '.'), 0 for a preset name. */
HSDAG_API int hsdag_devices_spec_is_file(const char *spec);
/* spec = a preset name, a JSON file path, or NULL/""/"auto" (= hsdag_devices_default_name(g)). */
HSDAG_API int hsdag_devices_load(hsdag_devices **out, const char *spec, const hsdag_graph *g, hsdag_err *e);
/* Parses the JSON schema of docs/devices.md. `what` names the input in messages (NULL = "<buffer>"). */
HSDAG_API int hsdag_devices_parse(hsdag_devices **out, const void *buf, size_t len, const char *what,
                                  hsdag_err *e);
/* Writes a set back in the same schema (round-trips through hsdag_devices_parse). */
HSDAG_API int hsdag_devices_write_json(hsdag_buf *out, const hsdag_devices *d);
HSDAG_API void hsdag_devices_free(hsdag_devices *d); /* NULL is a no-op */
/* Index of the device named `name` (exact, then case-insensitive), or -1. */
HSDAG_API int32_t hsdag_devices_find(const hsdag_devices *d, const char *name);
/* First device of kind k, or -1. */
HSDAG_API int32_t hsdag_devices_first_of(const hsdag_devices *d, hsdag_devkind k);

/* ---- per-op per-device profile (CSV lines "node,device,ms"; '#' comments; optional header) ---- */
typedef struct hsdag_profile hsdag_profile;
HSDAG_API int hsdag_profile_parse(hsdag_profile **out, const void *buf, size_t len, const char *what,
                                  hsdag_err *e);
HSDAG_API int hsdag_profile_read_file(hsdag_profile **out, const char *path, hsdag_err *e);
HSDAG_API int32_t hsdag_profile_count(const hsdag_profile *p); /* entries */
/* One entry (ms >= 0, finite; line = 1-based line number in the file). */
typedef struct hsdag_profile_entry {
    const char *node, *device;
    double ms;
    int32_t line;
} hsdag_profile_entry;
/* The entries in file order (*n of them), valid until hsdag_profile_free. */
HSDAG_API const hsdag_profile_entry *hsdag_profile_entries(const hsdag_profile *p, int32_t *n);
/* The name the profile was parsed under (the `what` of hsdag_profile_parse, "<buffer>" if none). */
HSDAG_API const char *hsdag_profile_what(const hsdag_profile *p);
/* Comment lines "#fused,<node>,<anchor>" (hsdag profile: node ran inside anchor's kernel): the text after
 * "#fused," as written (node names may hold commas; hsdag_calibrate splits it against the graph's names). */
HSDAG_API int32_t hsdag_profile_fused_count(const hsdag_profile *p);
HSDAG_API const char *hsdag_profile_fused(const hsdag_profile *p, int32_t i);
HSDAG_API void hsdag_profile_free(hsdag_profile *p);

#ifdef __cplusplus
}
#endif
#endif

/* io.h - importers and exporters of computation graphs, each on a (buffer, length) entry point.
 * Not here: placement files (place.h) and device files (devices.h).
 * Entry points: hsdag_load, hsdag_load_file, hsdag_detect, hsdag_<format>_read, hsdag_json_write,
 * hsdag_dot_write, hsdag_dot_write_groups, hsdag_suite_parse/read_file/free.
 *
 * Usage:
 *   hsdag_graph *g; hsdag_err e = {0};
 *   if (hsdag_load_file(&g, "model.onnx", HSDAG_FMT_UNKNOWN, &e) < 0) {   // detect by content
 *       fprintf(stderr, "%s\n", e.msg);  // "model.onnx: node 'conv1': ..."
 *       return;
 *   }
 *   hsdag_graph_free(g);
 */
#ifndef HSDAG_IO_H
#define HSDAG_IO_H

#include "hsdag/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HSDAG_MAX_FILE_BYTES ((size_t)1 << 30) /* 1 GiB */

/* Detects the format from content (first bytes), falling back to the path's extension
 * (path may be NULL). Returns HSDAG_FMT_UNKNOWN if nothing fits. */
HSDAG_API hsdag_format hsdag_detect(const void *buf, size_t len, const char *path);

/* Loads a graph in format fmt (HSDAG_FMT_UNKNOWN = detect). `what` names the input in messages
 * (a path, or NULL for "<buffer>"). Messages are one line: "<what>: <element>: <problem>". */
HSDAG_API int hsdag_load(hsdag_graph **out, const void *buf, size_t len, hsdag_format fmt, const char *what,
                         hsdag_err *e);
HSDAG_API int hsdag_load_file(hsdag_graph **out, const char *path, hsdag_format fmt, hsdag_err *e);

/* ---- per-format readers (buffer entry points; `what` as above) ---- */
HSDAG_API int hsdag_onnx_read(hsdag_graph **out, const void *buf, size_t len, const char *what, hsdag_err *e);
/* OpenVINO IR .xml: libxml2 with network access, DTD loading and entity expansion disabled. */
HSDAG_API int hsdag_ovxml_read(hsdag_graph **out, const void *buf, size_t len, const char *what,
                               hsdag_err *e);
/* PipeDream graph.txt (forward graph): n nodes, E edges; cost ACCEL = forward ms, BWD = backward ms,
 * mem_bytes = activation + parameter, edge bytes = source activation. */
HSDAG_API int hsdag_pipedream_read(hsdag_graph **out, const void *buf, size_t len, const char *what,
                                   hsdag_err *e);
/* PAC-ML/ddls job graph from a PipeDream forward graph: 2n nodes, 2E+1 edges. Forward node i
 * (file id i) keeps file id i; its backward twin has file id 2n-(i-1) and cost ACCEL = backward ms;
 * edge bytes = source activation; join edge from file id n to n+1. Nodes are in topological order. */
HSDAG_API int hsdag_pipedream_mirror(hsdag_graph **out, const hsdag_graph *fwd, hsdag_err *e);
/* Tarnawski et al. JSON workload. cost CPU = cpuLatency, ACCEL = fpgaLatency, mem_bytes = size,
 * color = colorClass, edge_cost_ms = cost, meta.max_accels/max_cpus/max_size_per_accel kept. */
HSDAG_API int hsdag_tarnawski_read(hsdag_graph **out, const void *buf, size_t len, const char *what,
                                   hsdag_err *e);
/* hsdag JSON (docs/formats.md): exact round trip of every field of the IR. */
HSDAG_API int hsdag_json_read(hsdag_graph **out, const void *buf, size_t len, const char *what, hsdag_err *e);
/* NNCF Graphviz DOT through graphviz cgraph. */
HSDAG_API int hsdag_dot_read(hsdag_graph **out, const void *buf, size_t len, const char *what, hsdag_err *e);

/* ---- writers (append to a buffer) ---- */
HSDAG_API int hsdag_json_write(hsdag_buf *out, const hsdag_graph *g);
/* Graphviz DOT; device may be NULL (no colouring) or give each node's device index, with
 * device_names[n_devices] for the legend. */
HSDAG_API int hsdag_dot_write(hsdag_buf *out, const hsdag_graph *g, const int32_t *device,
                              const char *const *device_names, int32_t n_devices);
/* A placement's coarsened drawing for graphs too big to lay out op by op: one box per group of ops on one
 * device ("GPU: 37 ops", first .. last op), filled by device, with the tensors between two groups summed on
 * one edge. Groups are the connected same-device components when there are at most max_groups of them,
 * else (device, band of longest-path levels) with at most max_groups groups. device is required. Returns 0,
 * HSDAG_EINVAL (no device array, max_groups < 1) or HSDAG_ENOMEM. */
HSDAG_API int hsdag_dot_write_groups(hsdag_buf *out, const hsdag_graph *g, const int32_t *device,
                                     const char *const *device_names, int32_t n_devices, int32_t max_groups);

/* ---- benchmark suites (bench/NAME.suite): one instance per line ----
 * Line grammar (whitespace-separated tokens; '#' to the end of a line is a comment; blank lines ignored):
 *   NAME BEST_MS HOW MODEL [--devices D] [--semantics S] [--costs C] [--mem DEV=SIZE]...
 * BEST_MS is the best known latency in ms (or "-" if none), HOW says how it was obtained (one token, e.g.
 * "ilp:optimal", "ilp:gap=1.2%", "best:local-search"). Names are unique. At most 4096 entries, 16 --mem per
 * entry, lines of at most 4096 bytes. Errors: EPARSE "<what>:<line>: <problem>". */
typedef struct hsdag_suite_entry {
    const char *name, *model, *how;
    const char *devices, *semantics, *costs; /* NULL = the command's default */
    double best_ms;                          /* NAN if unknown */
    int32_t n_mem;
    const char *mem[16];
    int32_t line; /* 1-based line in the file */
} hsdag_suite_entry;
typedef struct hsdag_suite {
    int32_t n;
    hsdag_suite_entry *entry; /* [n] */
    hsdag_arena *arena;
} hsdag_suite;
HSDAG_API int hsdag_suite_parse(hsdag_suite **out, const void *buf, size_t len, const char *what,
                                hsdag_err *e);
HSDAG_API int hsdag_suite_read_file(hsdag_suite **out, const char *path, hsdag_err *e);
HSDAG_API void hsdag_suite_free(hsdag_suite *s); /* NULL is a no-op */

#ifdef __cplusplus
}
#endif
#endif

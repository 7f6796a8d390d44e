/* ortprof.h - what ONNX Runtime measured on one model (the JSON printed by the bridge scripts/ort-profile.js,
 * which `hsdag profile` runs), matched to the importer's graph: per-node times, what ORT fused or removed,
 * and the output shapes ORT computed, compared with the importer's.
 * Not here: running ORT (the CLI starts the bridge; the library never does), fitting devices (calibrate.h).
 * Entry points: hsdag_ortprof_parse, hsdag_ortprof_write_csv, hsdag_ortprof_write_json, hsdag_ortprof_free.
 *
 * Usage:
 *   hsdag_ortprof *p; hsdag_err e = {0};
 *   if (hsdag_ortprof_parse(&p, buf, len, "bridge", g, &e) < 0) return;  // buf: the bridge's JSON; g: the .onnx
 *   hsdag_buf csv = {0};
 *   hsdag_ortprof_write_csv(&csv, p, g, "CPU");                        // node,device,ms (+ # notes)
 *   printf("%d shape differences\n", p->n_shape_diffs);
 *   hsdag_ortprof_free(p);
 */
#ifndef HSDAG_ORTPROF_H
#define HSDAG_ORTPROF_H

#include "hsdag/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What ORT did with one node of the original graph. */
typedef enum hsdag_ort_status {
    HSDAG_ORT_KERNEL = 0, /* runs as (the anchor of) one ORT kernel; carries that kernel's time */
    HSDAG_ORT_FUSED,      /* folded into the kernel of node `into` (e.g. Relu into FusedConv); 0 ms */
    HSDAG_ORT_FOLDED,     /* constant-folded at session creation (shape arithmetic, Constant); 0 ms */
    HSDAG_ORT_REMOVED,    /* eliminated (Identity, Dropout, ...); 0 ms */
    HSDAG_ORT_STATUS_COUNT_
} hsdag_ort_status;
HSDAG_API const char *hsdag_ort_status_name(hsdag_ort_status s); /* "kernel", "fused", "folded", "removed" */

/* One difference between an inferred output shape and ORT's. */
typedef struct hsdag_ort_shape_diff {
    int32_t node;   /* graph node */
    int32_t output; /* output slot of that node */
    int unknown;    /* 1: hsdag left the shape (or a dim) unknown where ORT knows it; 0: a real mismatch */
    char hsdag[96], ort[96]; /* both shapes as text, "[1,64,56,56]" or "?" */
} hsdag_ort_shape_diff;

/* Invariants: node_ms, status, into have g->n_nodes entries (graph node order); node_ms >= 0 and is 0 unless
 * status == KERNEL; into[v] is a graph node or -1. Sum of node_ms = kernel_ms minus orphan_unattributed_ms. */
typedef struct hsdag_ortprof {
    char ort_version[32];
    int32_t threads, runs, warmup;
    char opt[16];     /* graph optimisation level: all, extended, basic, disabled */
    char clock[8];    /* "wall" or "cpu" (process CPU time per run: latency without other processes' time) */
    double median_ms; /* end-to-end time of session.run by `clock`, median of `runs` (no profiling) */
    double median_wall_ms, median_cpu_ms; /* both clocks (NAN if the bridge did not report them) */
    double kernel_ms;                     /* sum over kernels of their median time (profiled session) */
    double orphan_ms; /* time of kernels without an original node (layout reorders), given to a neighbour */
    double unattributed_ms; /* orphan time that found no node (not in node_ms) */
    int32_t n_orphans;
    double *node_ms; /* [n_nodes] attributed median ms */
    uint8_t *status; /* [n_nodes] hsdag_ort_status */
    int32_t *into;   /* [n_nodes] for FUSED: the anchor node, else -1 */
    int32_t n_status[HSDAG_ORT_STATUS_COUNT_];
    /* shapes (only when the bridge ran with --check-shapes) */
    int has_shapes;
    int32_t n_shapes_checked; /* output tensors compared */
    int32_t n_shape_diffs;    /* all differences (also those beyond the stored list) */
    int32_t n_shape_unknown;  /* of which hsdag had no shape */
    int32_t n_diff_list;      /* entries stored in diffs (at most 1000) */
    hsdag_ort_shape_diff *diffs;
    hsdag_arena *arena;
} hsdag_ortprof;

/* Parses the bridge's JSON (format "hsdag-ort-profile", version 1) and matches it to g (the importer's graph of
 * the same file: nodes are matched by their index in the file, g->file_id). `what` names the input in messages.
 * Errors: HSDAG_EPARSE (bad JSON, wrong format, a node index outside the graph). */
HSDAG_API int hsdag_ortprof_parse(hsdag_ortprof **out, const void *buf, size_t len, const char *what,
                                  const hsdag_graph *g, hsdag_err *e);
/* Writes the profile CSV that --profile and `hsdag calibrate` read: a header comment (ORT version, threads,
 * runs, latencies), "node,device,ms", one line per non-bookkeeping node, and comment lines "#fused,<node>,
 * <anchor>" and "#folded,<node>" / "#removed,<node>" saying where each node's time went. */
HSDAG_API int hsdag_ortprof_write_csv(hsdag_buf *out, const hsdag_ortprof *p, const hsdag_graph *g,
                                      const char *device);
/* The "hsdag-profile/1" result document (docs/formats.md, "Result JSON"): the run's settings, end-to-end and
 * kernel latencies, node counts by status and, after a shape check, the differences. model names the input;
 * wall_s = seconds the profiling took. 0 or HSDAG_ENOMEM. */
HSDAG_API int hsdag_ortprof_write_json(hsdag_buf *out, const hsdag_ortprof *p, const hsdag_graph *g,
                                       const char *model, double wall_s);
HSDAG_API void hsdag_ortprof_free(hsdag_ortprof *p); /* NULL is a no-op */

#ifdef __cplusplus
}
#endif
#endif

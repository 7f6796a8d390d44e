/* sim.h - the cost of every op on every device (the cost table), the latency simulator (three semantics),
 *   its Chrome/Perfetto trace and lower bounds on latency.
 * Not here: the device model and its files (devices.h), placement files (placement.h), placers (place.h).
 * Entry points: hsdag_costs_create/free, hsdag_costs_xfer_s, hsdag_sim_create/run/free/costs/trace_write,
 *   hsdag_sim_config_default, hsdag_bound_compute, hsdag_devices_mem_override.
 *
 * Usage (create once, run many times; a run allocates nothing):
 *   hsdag_sim *s; hsdag_err e = {0};
 *   hsdag_sim_config cfg = hsdag_sim_config_default();      // semantics AUTO = the device set's default
 *   if (hsdag_sim_create(&s, g, devs, &cfg, &e) < 0) return;
 *   int32_t *dev = hsdag_calloc((size_t)g->n_nodes, sizeof *dev); // [g->n_nodes] device index per node
 *   hsdag_sim_result r;
 *   if (hsdag_sim_run(s, dev, &r) < 0) return;               // only fails on a device index out of range
 *   printf("%.3f ms %s\n", r.makespan_s * 1e3, r.feasible ? "ok" : "infeasible");
 *   hsdag_free(dev); hsdag_sim_free(s);
 *   // the cost table alone:
 *   hsdag_costs *c; hsdag_costs_config cc = hsdag_costs_config_default();
 *   if (hsdag_costs_create(&c, g, devs, &cc, &e) < 0) return;
 *   double t = c->node_s[v * c->n_devices + k];                  // seconds of node v on device k
 *   double x = hsdag_costs_xfer_s(c, v, a, b);                   // seconds to send v's output a -> b
 *   hsdag_costs_free(c);
 */
#ifndef HSDAG_SIM_H
#define HSDAG_SIM_H

#include "hsdag/devices.h"

#include <math.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the cost table ---- */
typedef enum hsdag_costsrc {
    HSDAG_COSTSRC_AUTO =
        0, /* FILE if every non-bookkeeping node has the needed measured column, else ROOFLINE */
    HSDAG_COSTSRC_ROOFLINE, /* max(flops / (peak * eff), bytes / mem_bw) + launch_s */
    HSDAG_COSTSRC_FILE      /* graph->cost_ms: CPU column on cpu devices, ACCEL column on gpu/accel devices;
                             * a node without the needed column falls back to the roofline; a graph with
                             * no measured cost at all is refused (HSDAG_EUNSUPPORTED) */
} hsdag_costsrc;

typedef struct hsdag_costs_config {
    hsdag_costsrc source;
    const hsdag_profile *profile; /* optional (NULL): overrides single (node, device) entries, any source */
} hsdag_costs_config;
HSDAG_API hsdag_costs_config hsdag_costs_config_default(void);
/* "auto" | "roofline" | "file" (the order of the enum, for --help and JSON "op_costs"); parse returns 0 or
 * HSDAG_EINVAL. */
HSDAG_API const char *hsdag_costsrc_name(hsdag_costsrc c);
HSDAG_API int hsdag_costsrc_parse(hsdag_costsrc *out, const char *s, hsdag_err *e);

/* The precomputed [node x device] cost table and everything a simulator or placer needs per node.
 * Read-only after hsdag_costs_create. Invariants: node_s >= 0 and finite; bookkeeping nodes cost 0 everywhere
 * (unless a profile says otherwise); allowed[v*n_devices+d] == 0 where the op may not run on d (Tarnawski
 * supportedOnFpga = false on a non-CPU device) - node_s still holds a finite cost there so a forced placement
 * can be simulated, and the simulator reports it as infeasible.
 * Memory model (docs/simulator.md): a node's static_bytes are resident on its device for the whole request;
 * its act_bytes are live from its start until its last consumer on that device finishes; a copy of
 * xfer_bytes lives on each receiving device from the transfer's start until its last consumer there
 * finishes. */
typedef struct hsdag_costs {
    int32_t n_nodes, n_devices;
    const hsdag_graph *g;      /* borrowed; must outlive the table */
    const hsdag_devices *devs; /* borrowed; must outlive the table */
    hsdag_costsrc source;      /* what AUTO resolved to */
    int32_t n_profiled;        /* (node, device) entries taken from the profile */
    double *node_s;            /* [n_nodes * n_devices] seconds, node v on device d at v*n_devices + d */
    uint8_t *allowed;          /* [n_nodes * n_devices] */
    double *xfer_bytes; /* [n_nodes] bytes sent once per receiving device: max over out-edges of edge_bytes */
    double *file_xfer_s;  /* [n_nodes] file-given transfer time (Tarnawski edge cost, ms/1000), NAN if none */
    double *static_bytes; /* [n_nodes] mem_bytes when the file gives it, else param_bytes */
    double *act_bytes;    /* [n_nodes] 0 when the file gives mem_bytes (already included), else out_bytes */
    double *link_lat_s;   /* [n_devices^2] copies of the link table for locality */
    double *link_inv_bw;  /* [n_devices^2] seconds per byte */
    double *link_file_factor; /* [n_devices^2] */
    int32_t host;             /* first CPU device (host memory), -1 if none */
    hsdag_arena *arena;
} hsdag_costs;

HSDAG_API int hsdag_costs_create(hsdag_costs **out, const hsdag_graph *g, const hsdag_devices *d,
                                 const hsdag_costs_config *cfg, hsdag_err *e);
HSDAG_API void hsdag_costs_free(hsdag_costs *c); /* NULL is a no-op */

/* Seconds to send node v's output from device a to device b (0 if a == b): the file's transfer time times the
 * link's file_factor when the file gives one, else latency + xfer_bytes / bandwidth. */
static inline double hsdag_costs_xfer_s(const hsdag_costs *c, int32_t v, int32_t a, int32_t b)
{
    if (a == b) return 0.0;
    int32_t k = a * c->n_devices + b;
    double f = c->file_xfer_s[v];
    if (!isnan(f)) return f * c->link_file_factor[k];
    return c->link_lat_s[k] + c->xfer_bytes[v] * c->link_inv_bw[k];
}

/* HEFT's per-node averages, the one home of them (the simulator's priorities and the list placers use them):
 * mean_cost[n_nodes] = mean node_s over the node's allowed devices (over all devices when none is allowed);
 * mean_xfer[n_nodes] = mean hsdag_costs_xfer_s of its output over the ordered pairs of distinct devices (0
 * on one device). Either output may be NULL. */
HSDAG_API void hsdag_costs_means(double *mean_cost, double *mean_xfer, const hsdag_costs *c);
/* HEFT's upward rank from those averages: rank[v] = mean_cost[v] + the largest mean_xfer[v] + rank[s] over
 * v's successors s (0 without successors). rank has g->n_nodes slots. */
HSDAG_API void hsdag_costs_upward_rank(double *rank, const hsdag_graph *g, const double *mean_cost,
                                       const double *mean_xfer);

/* Seconds to move node v's output between device a and host memory, as Tarnawski et al. charge it (one
 * accelerator <-> CPU DRAM copy): the file's transfer time when given, else the link a -> host; 0 without a
 * CPU. */
static inline double hsdag_costs_host_xfer_s(const hsdag_costs *c, int32_t v, int32_t a)
{
    double f = c->file_xfer_s[v];
    if (!isnan(f)) return f;
    if (c->host < 0) return 0.0;
    int32_t k = a * c->n_devices + c->host;
    return c->link_lat_s[k] + c->xfer_bytes[v] * c->link_inv_bw[k];
}

/* Roofline time of one op on one device (seconds), used by hsdag_costs_create; exposed for tests and docs. */
/* The work of node v as the roofline counts it: flops, bytes = incoming edge bytes + output bytes + parameter
 * bytes, elems = output elements (known shapes). Returns 1 for a bookkeeping node (cost 0 everywhere), else 0. */
HSDAG_API int hsdag_costs_node_work(const hsdag_graph *g, int32_t v, double *flops, double *bytes,
                                    double *elems);
HSDAG_API double hsdag_roofline_s(const hsdag_device *dev, hsdag_opclass cls, double flops, double bytes);
/* The same with the device's per-output-element cost of the class (elem_s) added to the compute side; this is
 * what the cost table uses. */
HSDAG_API double hsdag_roofline_elems_s(const hsdag_device *dev, hsdag_opclass cls, double flops,
                                        double bytes, double elems);

/* Concurrent semantics: the order in which a device picks among its ready ops (ties: lower node index). */
typedef enum hsdag_priority {
    HSDAG_PRIO_UPWARD_RANK = 0, /* HEFT upward rank: mean cost over allowed devices + max successor rank */
    HSDAG_PRIO_TOPO             /* lower topological index first */
} hsdag_priority;
HSDAG_API const char *hsdag_priority_name(hsdag_priority p); /* "rank", "topo"; NULL past the last */
HSDAG_API int hsdag_priority_parse(hsdag_priority *out, const char *s, hsdag_err *e);

/* What a run reports as its objective (objective_s) and what the placers minimise. */
typedef enum hsdag_objective {
    HSDAG_OBJ_LATENCY = 0, /* the makespan of one request under the semantics */
    /* time per sample of the split run as a pipeline (Tarnawski et al.'s max-load): the maximum over devices
     * of compute + communication (docs/simulator.md, "Throughput") */
    HSDAG_OBJ_THROUGHPUT,
    HSDAG_OBJ_COUNT_
} hsdag_objective;
HSDAG_API const char *hsdag_objective_name(hsdag_objective o); /* "latency", "throughput" */
/* Parses "latency" | "throughput"; returns 0 or HSDAG_EINVAL (with a message in e, which may be NULL). */
HSDAG_API int hsdag_objective_parse(hsdag_objective *out, const char *s, hsdag_err *e);

typedef struct hsdag_sim_config {
    hsdag_semantics semantics; /* HSDAG_SEM_AUTO = devs->semantics */
    hsdag_objective objective; /* default LATENCY; THROUGHPUT also computes the per-device loads */
    hsdag_priority priority;   /* concurrent only */
    hsdag_costs_config costs;  /* how op costs are obtained */
    int record_trace;          /* 1: keep each op's and transfer's start/end for hsdag_sim_trace_write */
} hsdag_sim_config;
HSDAG_API hsdag_sim_config hsdag_sim_config_default(void);

/* Result of one run. The arrays point into the simulator and stay valid until the next run or free.
 * Invariants: makespan_s >= 0; feasible == 0 iff max_excess_bytes > 0 or n_unsupported > 0 or
 * n_color_violations > 0 or accels_used > devs->max_accels_used (when that limit is >= 0). */
typedef struct hsdag_sim_result {
    hsdag_semantics semantics; /* what actually ran */
    double makespan_s;         /* latency of one request, seconds */
    int feasible;
    int32_t n_devices;
    const double *busy_s;         /* [n_devices] seconds of op execution on each device */
    const double *peak_mem_bytes; /* [n_devices] peak of static + live bytes (memory model: devices.h) */
    const double *excess_bytes;   /* [n_devices] max(0, peak - capacity); 0 where capacity is unlimited */
    double max_excess_bytes;      /* max over devices */
    double xfer_bytes;            /* total bytes moved between devices */
    double xfer_s;                /* total seconds of transfers (sum, overlapping or not) */
    int64_t n_xfers;              /* number of tensor copies (one per tensor per receiving device) */
    int32_t n_unsupported;        /* ops on a device that may not run them (costs->allowed == 0) */
    int32_t n_color_violations; /* colour classes split over more than one device (counted once per class) */
    int32_t accels_used;        /* non-CPU devices holding at least one op */
    int32_t n_blocks;     /* tarnawski: contiguous accelerator blocks after the longest-path cut; else 0 */
    int32_t n_cycle_cuts; /* tarnawski: extra cuts because the blocks formed a cycle (Tarnawski et al.'s
                                  * tool rejects such splits; docs/simulator.md gives our extension); else
                                  * 0 */
    hsdag_objective objective; /* what objective_s is */
    double objective_s;        /* makespan_s (latency) or max_load_s (throughput) */
    double max_load_s;         /* throughput only (NAN otherwise): max over devices of load_s */
    const double *load_s;      /* throughput only (NULL otherwise): [n_devices] compute + communication */
} hsdag_sim_result;

typedef struct hsdag_sim hsdag_sim;

/* Builds the cost table, priorities and every buffer a run needs. g and devs are borrowed and must outlive
 * s. */
HSDAG_API int hsdag_sim_create(hsdag_sim **out, const hsdag_graph *g, const hsdag_devices *devs,
                               const hsdag_sim_config *cfg, hsdag_err *e);
/* Simulates one request with device[v] in [0, n_devices) for every node v. O((V+E) log V), no allocation,
 * deterministic (events ordered by time, then sequence number). Returns 0, or HSDAG_EINVAL for an
 * out-of-range device index (nothing else can fail). */
HSDAG_API int hsdag_sim_run(hsdag_sim *s, const int32_t *device, hsdag_sim_result *out);
HSDAG_API void hsdag_sim_free(hsdag_sim *s); /* NULL is a no-op */

HSDAG_API const hsdag_costs *hsdag_sim_costs(const hsdag_sim *s);
HSDAG_API hsdag_semantics hsdag_sim_semantics(const hsdag_sim *s);
/* Runs the same evaluation with another semantics without rebuilding the tables. */
HSDAG_API void hsdag_sim_set_semantics(hsdag_sim *s, hsdag_semantics sem);
/* Switches the objective the next runs report. */
HSDAG_API void hsdag_sim_set_objective(hsdag_sim *s, hsdag_objective obj);
HSDAG_API hsdag_objective hsdag_sim_objective(const hsdag_sim *s);

/* Appends the last run's schedule as Chrome/Perfetto trace JSON ({"traceEvents": [...]}): one track (tid) per
 * device and one per link resource, times in microseconds. Needs cfg.record_trace = 1 and a run first
 * (HSDAG_EINVAL otherwise). */
HSDAG_API int hsdag_sim_trace_write(const hsdag_sim *s, hsdag_buf *out, hsdag_err *e);

/* ---- memory-capacity override (src/sim/memcap.c) ----
 * spec "DEV=SIZE": SIZE in bytes with an optional K, M, G or T suffix (powers of 1024), or "P%" = P percent
 * of the peak memory the simulator reports on DEV when every op of g runs there (under cfg; NULL =
 * defaults): "GPU=50%" gives a GPU that holds about half of what the model needs. DEV is matched as by
 * hsdag_devices_find. Sets devs->dev[DEV].mem_capacity (at least 1 byte: 0 would mean unlimited).
 * Returns 0 or EINVAL (message names the spec). */
HSDAG_API int hsdag_devices_mem_override(hsdag_devices *devs, const hsdag_graph *g,
                                         const hsdag_sim_config *cfg, const char *spec, hsdag_err *e);

/* ---- lower bounds on latency (docs/simulator.md) ---- */

/* Optional exact solver for a semantics (e.g. the two-device min-cut for sequential, from the placers);
 * writes the optimal latency in seconds ignoring memory caps (a relaxation, so still a lower bound).
 * Return 0, HSDAG_EUNSUPPORTED when it does not apply (the bound then falls back), or another error. */
typedef int (*hsdag_bound_exact_fn)(void *ctx, double *opt_s, const hsdag_costs *c, hsdag_semantics sem,
                                    hsdag_err *e);

typedef struct hsdag_bound {
    hsdag_semantics semantics;
    hsdag_objective objective; /* what lower_s bounds */
    double lower_s;            /* the bound: the largest valid term below */
    double critical_path_s;    /* longest path with each op on its fastest allowed device, no communication */
    double work_s;             /* sum over ops of their cheapest allowed cost */
    double work_per_device_s;  /* work_s / n_devices (concurrent latency; throughput: / the devices that may
                               * hold ops, accelerators capped by max_accels_used), else NAN */
    double max_class_s;        /* throughput: the costliest colour class at its cheapest device, else NAN */
    double exact_s;            /* from the exact hook, NAN if none or not applicable */
    double path_blocks_s;      /* tarnawski latency: the cheapest run of the longest paths with memory-capped
                           * accelerator blocks and their communication, NAN otherwise or when too long */
    double memory_s;  /* the placers' min-cut bound with memory caps (hsdag_place_bound_memory), else NAN */
    const char *rule; /* "critical-path", "work/devices", "sum-min-cost", "max-class", "exact", "path-blocks",
                       * "mincut-memory", "comm-path", "windows" */
    double comm_path_s; /* concurrent latency: the critical path with communication (each op's earliest finish
                         * per device, every input arriving from its producer's best device), else NAN */
    double windows_s;   /* concurrent latency: chain windows (the ops between two nodes of the longest path
                         * at least their fractional load on the devices, windows in series), else NAN */
} hsdag_bound;

/* Valid terms per semantics:
 *   sequential: sum-min-cost (every op runs, one at a time), or the exact optimum from the hook;
 *   concurrent: max(critical-path, work/devices, comm-path, windows: with two device classes, the ops between
 *               two nodes of the longest path take at least their fractional load, copies deciding where
 *               each may run);
 *   tarnawski:  critical path with each node at min(cpuLatency, fpgaLatency if allowed) - every path's nodes
 *               are paid in series (a block's finish includes all of its nodes' fpgaLatency after its
 * inputs); and path-blocks: on three longest paths (under the cheapest cost, cpuLatency, size), the
 *               cheapest split into CPU nodes and accelerator segments that each fit one accelerator's memory,
 *               each segment paying the communication into and out of it along the path. Valid for feasible
 *               placements (memory caps and allowed devices respected), as every bound is used.
 * sem AUTO = the device set's default. exact may be NULL. */
HSDAG_API int hsdag_bound_compute(hsdag_bound *out, const hsdag_costs *c, hsdag_semantics sem,
                                  hsdag_bound_exact_fn exact, void *ctx, hsdag_err *e);
/* The same for either objective. Throughput (any semantics): max(max-class, work/devices) - every colour
 * class sits on one device and pays at least its cheapest compute there, and the devices together carry at
 * least the total cheapest work (communication only adds). The exact hook is used for latency only. */
HSDAG_API int hsdag_bound_objective(hsdag_bound *out, const hsdag_costs *c, hsdag_semantics sem,
                                    hsdag_objective obj, hsdag_bound_exact_fn exact, void *ctx, hsdag_err *e);

/* ---- result JSON (docs/formats.md, "Result JSON") ----
 * The keys every result about one model on one device set starts with: model (as named by the caller),
 * nodes, edges, devices, semantics (what ran, never auto), objective (what the result's objective_ms and
 * bounds measure), op_costs (what auto resolved to), profiled (cost entries taken from a profile). For the
 * result writers of this and higher layers. */
HSDAG_API void hsdag_costs_write_json_head(hsdag_jw *w, const hsdag_costs *c, hsdag_semantics sem,
                                           hsdag_objective obj, const char *model);
/* The "hsdag-bound/1" document: the head, lower_bound_ms, lower_bound_rule and the terms of the bound, then
 * the bound over contiguous splits a placer proved (bound --contiguous): contiguous_s (NAN if none), the
 * method that proved it and its note (contiguous_method NULL = not asked: all three null). */
HSDAG_API int hsdag_bound_write_json(hsdag_buf *out, const hsdag_costs *c, const hsdag_bound *b,
                                     const char *model, double contiguous_s, const char *contiguous_method,
                                     const char *contiguous_note);

#ifdef __cplusplus
}
#endif
#endif

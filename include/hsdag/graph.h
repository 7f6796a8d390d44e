/* graph.h - the computation-graph IR: an immutable DAG in CSR form, nodes in topological order.
 * Not here: file formats (io.h), devices and latency (devices.h, sim.h), learning.
 * Entry points: hsdag_gb_* (builder), hsdag_graph_free, hsdag_graph_stats, hsdag_graph_summary_write_json,
 *   hsdag_opcost_estimate.
 *
 * Usage:
 *   hsdag_gb *b = hsdag_gb_create();
 *   int32_t x = hsdag_gb_add_node(b, "x", "Parameter");
 *   int32_t r = hsdag_gb_add_node(b, "relu", "Relu");
 *   hsdag_gb_add_edge(b, x, r, 4096.0);
 *   hsdag_graph *g; hsdag_err e = {0};
 *   if (hsdag_gb_finish(b, &g, &e) < 0) puts(e.msg);   // rejects cycles, dangling edges
 *   hsdag_gb_free(b);
 *   for (int32_t k = g->out_off[x]; k < g->out_off[x + 1]; k++) printf("x -> %d\n", g->out_dst[k]);
 *   hsdag_graph_free(g);
 */
#ifndef HSDAG_GRAPH_H
#define HSDAG_GRAPH_H

#include "hsdag/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- hard caps on what a file may ask for (bad input gets HSDAG_ELIMIT, not a crash) ---- */
#define HSDAG_MAX_NODES 10000000
#define HSDAG_MAX_EDGES 50000000
#define HSDAG_MAX_RANK 16
#define HSDAG_MAX_ELEMS 1e11 /* elements of one tensor (0.4 TB in f32); above it a shape is absurd: ELIMIT */
/* Ranges of the numbers a graph may carry, checked once by hsdag_gb_finish for every reader (ELIMIT
 * naming the node or edge): a value beyond them is a broken file, and no solver could scale it. */
#define HSDAG_MAX_COST_MS 1e12 /* a measured op or transfer time (ms): ~31 years */
#define HSDAG_MAX_BYTES 1e18   /* a size in bytes (node memory, parameters, outputs, an edge): 1 EB */
#define HSDAG_MAX_FLOPS 1e24   /* an op's floating-point operations: ~30 years at 1 EFLOP/s */

typedef enum hsdag_dtype {
    HSDAG_DT_UNKNOWN = 0,
    HSDAG_DT_F32,
    HSDAG_DT_F16,
    HSDAG_DT_BF16,
    HSDAG_DT_F64,
    HSDAG_DT_I8,
    HSDAG_DT_U8,
    HSDAG_DT_I16,
    HSDAG_DT_U16,
    HSDAG_DT_I32,
    HSDAG_DT_U32,
    HSDAG_DT_I64,
    HSDAG_DT_U64,
    HSDAG_DT_BOOL,
    HSDAG_DT_I4,
    HSDAG_DT_U4,
    HSDAG_DT_U1,
    HSDAG_DT_COUNT_
} hsdag_dtype;
HSDAG_API double
hsdag_dtype_bytes(hsdag_dtype t); /* bytes per element (0.5 for 4-bit, 0.125 for u1); 4 if unknown */
HSDAG_API const char *hsdag_dtype_name(hsdag_dtype t); /* "f32", "i64", ... */
HSDAG_API hsdag_dtype
hsdag_dtype_parse(const char *s); /* accepts "f32", "FP32", "float32", "float", ...; UNKNOWN otherwise */

/* Coarse op classes used by cost models and features. */
typedef enum hsdag_opclass {
    HSDAG_OP_UNKNOWN = 0, /* not in the cost table: byte-only cost */
    HSDAG_OP_BOOKKEEPING, /* zero cost: Constant, Identity, Shape, Parameter, Result, ... */
    HSDAG_OP_CONV,        /* Conv, ConvTranspose, GroupConvolution, Conv2d, ... */
    HSDAG_OP_MATMUL,      /* MatMul, Gemm, Einsum, Linear, FullyConnected */
    HSDAG_OP_ELEMWISE,    /* Add, Mul, Relu, Sigmoid, Gelu, Clip, Cast, ... */
    HSDAG_OP_POOL,        /* MaxPool, AveragePool, GlobalAveragePool, ... */
    HSDAG_OP_NORM,        /* BatchNormalization, LayerNormalization, MVN, ... */
    HSDAG_OP_SOFTMAX,     /* Softmax, LogSoftmax */
    HSDAG_OP_REDUCE,      /* ReduceMean, ReduceSum, ... */
    HSDAG_OP_DATAMOVE,    /* Concat, Reshape, Transpose, Gather, Slice, Split, Pad, ... */
    HSDAG_OP_CLASS_COUNT_
} hsdag_opclass;
HSDAG_API const char *hsdag_opclass_name(hsdag_opclass c);

/* Node flags (bit set). */
enum {
    HSDAG_NF_BOOKKEEPING = 1u << 0, /* zero-cost node */
    HSDAG_NF_UNKNOWN_OP = 1u << 1,  /* op type not in the cost table */
    HSDAG_NF_INPUT = 1u << 2,       /* graph input / Parameter */
    HSDAG_NF_OUTPUT = 1u << 3,      /* graph output / Result */
    HSDAG_NF_BACKWARD = 1u << 4,    /* backward-pass node (Tarnawski isBackwardNode, mirrored graphs) */
    HSDAG_NF_NO_ACCEL = 1u << 5,    /* may not run on an accelerator (Tarnawski supportedOnFpga = 0) */
    HSDAG_NF_RENAMED = 1u << 6,     /* name was empty or duplicate and was made unique */
    /* computed from constants only (ONNX: initializers, Constant, static Shape): a runtime folds it when it loads
     * the model, so it is also BOOKKEEPING (zero cost) */
    HSDAG_NF_FOLDED = 1u << 7
};

typedef enum hsdag_format {
    HSDAG_FMT_UNKNOWN = 0,
    HSDAG_FMT_ONNX,
    HSDAG_FMT_OVXML,     /* OpenVINO IR v10/v11 .xml */
    HSDAG_FMT_PIPEDREAM, /* PipeDream profile graph.txt */
    HSDAG_FMT_TARNAWSKI, /* Tarnawski et al. JSON workload */
    HSDAG_FMT_JSON,      /* hsdag's own JSON */
    HSDAG_FMT_DOT,       /* NNCF Graphviz DOT */
    HSDAG_FMT_BUILT      /* built in code */
} hsdag_format;
HSDAG_API const char *hsdag_format_name(
    hsdag_format f); /* "onnx", "openvino-ir", "pipedream", "tarnawski", "hsdag-json", "dot", ... */

/* Measured cost kinds (columns of hsdag_graph.cost_ms). */
typedef enum hsdag_costkind {
    HSDAG_COST_CPU = 0, /* Tarnawski cpuLatency */
    HSDAG_COST_ACCEL,   /* Tarnawski fpgaLatency (any accelerator), PipeDream forward time (GPU-profiled) */
    HSDAG_COST_BWD,     /* PipeDream backward time */
    HSDAG_COST_KINDS_
} hsdag_costkind;

/* Graph-level metadata from the file. Unknown values are -1 (ints) or NAN (doubles). */
typedef struct hsdag_graph_meta {
    hsdag_format format;
    int64_t file_nodes; /* node count as in the file (ONNX graph.node, IR <layer>s, ...) */
    int64_t file_edges; /* edge count as in the file (IR <edge> elements, ...) */
    int32_t ir_version; /* ONNX ir_version or OpenVINO IR version, -1 if none */
    int32_t opset;      /* ONNX default-domain opset, -1 if none */
    /* Tarnawski fields */
    int32_t max_accels;        /* maxFPGAs (k) */
    int32_t max_cpus;          /* maxCPUs (l) */
    double max_size_per_accel; /* maxSizePerFPGA, bytes */
    const char *name;          /* model / net name, may be "" */
} hsdag_graph_meta;

/* The IR. All arrays live in g->arena. Invariants:
 *  - nodes 0..n_nodes-1 are in topological order (every edge has src < dst);
 *  - edges are unique (src, dst) pairs sorted by (src, dst); edge id k is the k-th such pair;
 *  - out_off/out_dst: CSR by source; the out-edge at CSR slot k has edge id k;
 *  - in_off/in_src/in_eid: CSR by destination, sorted by source, in_eid maps to edge id;
 *  - names are unique and non-empty; op strings are interned (equal ops share one pointer);
 *  - outputs of node v are out_shape slots out_shape_off[v] .. out_shape_off[v+1]-1. */
typedef struct hsdag_graph {
    int32_t n_nodes;
    int32_t n_edges;

    /* per node */
    const char **name;
    const char **op;
    uint8_t *opclass;    /* hsdag_opclass */
    uint32_t *flags;     /* HSDAG_NF_* */
    double *flops;       /* estimated floating-point operations (multiply-add = 2) */
    double *param_bytes; /* weights read by the op */
    double *out_bytes;   /* sum of output tensor bytes (known shapes only) */
    double *
        mem_bytes; /* memory footprint if given by the file (Tarnawski size, PipeDream act+param), else NAN */
    int32_t *color;   /* co-location class, -1 if none (Tarnawski colorClass) */
    int32_t *file_id; /* the node's id in the file (IR layer id, PipeDream nodeN, Tarnawski id), else index */
    double *cost_ms;  /* [n_nodes * HSDAG_COST_KINDS_], NAN where not measured */

    /* output tensors */
    int32_t *out_shape_off; /* [n_nodes + 1] */
    int32_t n_out_shapes;
    int8_t *shape_rank;     /* [n_out_shapes], -1 = unknown rank */
    uint8_t *shape_dtype;   /* [n_out_shapes] hsdag_dtype */
    int32_t *shape_dim_off; /* [n_out_shapes + 1] into shape_dims */
    int64_t *shape_dims;    /* -1 = dynamic/unknown dim */

    /* edges */
    int32_t *out_off;     /* [n_nodes + 1] */
    int32_t *out_dst;     /* [n_edges] */
    int32_t *in_off;      /* [n_nodes + 1] */
    int32_t *in_src;      /* [n_edges] */
    int32_t *in_eid;      /* [n_edges] */
    int32_t *edge_src;    /* [n_edges] */
    double *edge_bytes;   /* [n_edges] tensor bytes carried (sum over distinct tensors) */
    double *edge_cost_ms; /* [n_edges] transfer time given by the file (Tarnawski cost), NAN otherwise */

    hsdag_graph_meta meta;
    hsdag_arena *arena;
} hsdag_graph;

HSDAG_API void hsdag_graph_free(hsdag_graph *g); /* frees everything; NULL is a no-op */

/* Edge id of (u, v) or -1; O(log outdeg). */
HSDAG_API int32_t hsdag_graph_edge_id(const hsdag_graph *g, int32_t u, int32_t v);
/* Node index by name or -1; O(n) (build an hsdag_strmap for repeated lookups). */
HSDAG_API int32_t hsdag_graph_find(const hsdag_graph *g, const char *name);
/* Element count of output slot s (product of dims), -1 if any dim is unknown. */
HSDAG_API double hsdag_graph_shape_elems(const hsdag_graph *g, int32_t s);

/* ---- builder: mutable, append-only; hsdag_gb_finish validates and produces the CSR IR ---- */
typedef struct hsdag_gb hsdag_gb;
HSDAG_API hsdag_gb *hsdag_gb_create(void); /* NULL on ENOMEM */
HSDAG_API void hsdag_gb_free(hsdag_gb *b);
/* Adds a node; name may be NULL or "" (a unique name "<op>_<index>" is given). Returns index or <0. */
HSDAG_API int32_t hsdag_gb_add_node(hsdag_gb *b, const char *name, const char *op);
/* Per-node setters (index from add_node). Values not set keep defaults:
 * flops 0, param 0, mem NAN, color -1, file_id = index, costs NAN, flags 0. */
HSDAG_API void hsdag_gb_set_flops(hsdag_gb *b, int32_t v, double flops);
HSDAG_API void hsdag_gb_set_param_bytes(hsdag_gb *b, int32_t v, double bytes);
HSDAG_API void hsdag_gb_set_mem_bytes(hsdag_gb *b, int32_t v, double bytes);
HSDAG_API void hsdag_gb_set_color(hsdag_gb *b, int32_t v, int32_t color);
HSDAG_API void hsdag_gb_set_file_id(hsdag_gb *b, int32_t v, int32_t id);
HSDAG_API void hsdag_gb_set_cost(hsdag_gb *b, int32_t v, hsdag_costkind k, double ms);
HSDAG_API void hsdag_gb_set_flags(hsdag_gb *b, int32_t v, uint32_t flags); /* ORs into the node's flags */
/* Sets opclass explicitly (otherwise derived from the op string by hsdag_opclass_of at finish). */
HSDAG_API void hsdag_gb_set_opclass(hsdag_gb *b, int32_t v, hsdag_opclass c);
/* Appends an output tensor of node v: rank dims (rank -1 = unknown; dims may hold -1). */
HSDAG_API int hsdag_gb_add_output(hsdag_gb *b, int32_t v, hsdag_dtype dt, int rank, const int64_t *dims);
/* Adds an edge u -> v carrying bytes. Parallel (u, v) edges are merged at finish (bytes summed,
 * cost max), so importers add one edge per distinct tensor. u or v out of range gives
 * HSDAG_EDANGLING at finish. */
HSDAG_API int hsdag_gb_add_edge(hsdag_gb *b, int32_t u, int32_t v, double bytes);
/* As add_edge with a file-given transfer cost (ms, NAN if none). */
HSDAG_API int hsdag_gb_add_edge_ex(hsdag_gb *b, int32_t u, int32_t v, double bytes, double cost_ms);
HSDAG_API void hsdag_gb_set_meta(hsdag_gb *b, const hsdag_graph_meta *m);
/* Validates (dangling ends, self-loops, cycles: the message names a node on the cycle), renames
 * empty/duplicate names ("name", "name_1", ...; stable: first occurrence keeps its name),
 * sorts topologically (Kahn, ties by insertion order, so ids are stable), merges parallel edges
 * (bytes summed, cost max) and derives opclass/flags/out_bytes. The builder may be reused or freed. */
HSDAG_API int hsdag_gb_finish(hsdag_gb *b, hsdag_graph **out, hsdag_err *e);

/* ---- op cost annotation ---- */
/* Classifies an op type string (ONNX, OpenVINO, PyTorch or NNCF spelling). */
HSDAG_API hsdag_opclass hsdag_opclass_of(const char *op);

typedef struct hsdag_shape_ref {
    int rank;            /* -1 = unknown */
    const int64_t *dims; /* -1 = unknown dim */
} hsdag_shape_ref;

typedef struct hsdag_opcost_in {
    const char *op;
    int n_in;
    const hsdag_shape_ref *in; /* input shapes, in op-input order (data, weight, bias, ...) */
    int n_out;
    const hsdag_shape_ref *out; /* output shapes */
    int64_t group;              /* conv groups (0 = unknown/1) */
    const char *equation;       /* Einsum equation or NULL */
    int trans_a, trans_b;       /* Gemm transA/transB */
} hsdag_opcost_in;

typedef struct hsdag_opcost {
    double flops; /* estimate, 0 when unknown or bookkeeping */
    hsdag_opclass opclass;
    int known; /* 1 if the op is in the cost table */
} hsdag_opcost;

/* Estimates FLOPs from shapes. Rules (multiply-add = 2 FLOPs):
 *  Conv: 2 * out_elems * prod(weight dims[1:]);  ConvTranspose: 2 * in_elems * prod(weight dims[1:]) ...
 *  MatMul/Gemm: 2 * M * N * K;  Einsum: 2 * prod of all distinct index sizes (when parsable);
 *  elementwise: out_elems (x4 for transcendental ones); pooling: out_elems * window;
 *  norms: 5 * elems; softmax: 5 * elems; reductions: in_elems; data movement and bookkeeping: 0. */
HSDAG_API hsdag_opcost hsdag_opcost_estimate(const hsdag_opcost_in *in);

/* ---- statistics for `hsdag info` ---- */
typedef struct hsdag_op_count {
    const char *op;
    int32_t count;
} hsdag_op_count;

typedef struct hsdag_graph_stats {
    int32_t nodes, edges;
    double total_flops;
    double param_bytes;
    double activation_bytes; /* sum of out_bytes */
    int32_t depth;           /* nodes on the longest path */
    int32_t max_width;       /* most nodes sharing one longest-path level */
    int32_t unknown_ops;     /* nodes with HSDAG_NF_UNKNOWN_OP */
    int32_t bookkeeping_ops;
    /* non-bookkeeping nodes with an output of unknown shape: their FLOPs and bytes count only what is known */
    int32_t unshaped_ops;
    int32_t sources, sinks;
    int32_t n_op_types;
    hsdag_op_count *ops; /* sorted by count desc, then name; hsdag_malloc'd */
} hsdag_graph_stats;
HSDAG_API int hsdag_graph_stats_compute(const hsdag_graph *g, hsdag_graph_stats *s, hsdag_err *e);
HSDAG_API void hsdag_graph_stats_free(hsdag_graph_stats *s);
/* The "hsdag-graph-summary/1" document (docs/formats.md, "Result JSON") of `hsdag info --json`: file (as
 * the caller named it), format, node and edge counts as in the file and in the graph, the statistics and
 * the op histogram. mirrored = 1 when g is a mirrored PipeDream job graph. 0 or HSDAG_ENOMEM. */
HSDAG_API int hsdag_graph_summary_write_json(hsdag_buf *out, const hsdag_graph *g,
                                             const hsdag_graph_stats *st, const char *file, int mirrored);

/* Longest-path level of every node (sources are level 0); lvl has n_nodes slots. Returns depth. */
HSDAG_API int32_t hsdag_graph_levels(const hsdag_graph *g, int32_t *lvl);

#ifdef __cplusplus
}
#endif
#endif

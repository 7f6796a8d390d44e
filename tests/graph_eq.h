/* graph_eq.h - test helper: field-by-field equality of two IR graphs, reporting the first difference.
 * Not here: tolerance-based comparison (doubles must be equal, NaN equal to NaN, 0 equal to -0).
 * Entry points: graph_eq (returns 1 if equal, else prints the first difference to stderr and returns 0). */
#ifndef HSDAG_TEST_GRAPH_EQ_H
#define HSDAG_TEST_GRAPH_EQ_H
#include "hsdag/graph.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static int graph_eq_d_(double a, double b)
{
    return (isnan(a) && isnan(b)) || a == b;
}

#define GEQ_FAIL_(...)                             \
    do {                                           \
        fprintf(stderr, "graph_eq: " __VA_ARGS__); \
        fprintf(stderr, "\n");                     \
        return 0;                                  \
    } while (0)
#define GEQ_I32_(arr, n)                          \
    for (int64_t i_ = 0; i_ < (int64_t)(n); i_++) \
        if (a->arr[i_] != b->arr[i_])             \
    GEQ_FAIL_(#arr "[%lld]: %lld vs %lld", (long long)i_, (long long)a->arr[i_], (long long)b->arr[i_])
#define GEQ_DBL_(arr, n)                          \
    for (int64_t i_ = 0; i_ < (int64_t)(n); i_++) \
        if (!graph_eq_d_(a->arr[i_], b->arr[i_])) \
    GEQ_FAIL_(#arr "[%lld]: %.17g vs %.17g", (long long)i_, a->arr[i_], b->arr[i_])

static int graph_eq(const hsdag_graph *a, const hsdag_graph *b)
{
    if (a->n_nodes != b->n_nodes) GEQ_FAIL_("n_nodes %d vs %d", a->n_nodes, b->n_nodes);
    if (a->n_edges != b->n_edges) GEQ_FAIL_("n_edges %d vs %d", a->n_edges, b->n_edges);
    if (a->n_out_shapes != b->n_out_shapes)
        GEQ_FAIL_("n_out_shapes %d vs %d", a->n_out_shapes, b->n_out_shapes);
    int32_t n = a->n_nodes, m = a->n_edges, s = a->n_out_shapes;
    for (int32_t v = 0; v < n; v++) {
        if (strcmp(a->name[v], b->name[v]) != 0)
            GEQ_FAIL_("name[%d]: '%s' vs '%s'", v, a->name[v], b->name[v]);
        if (strcmp(a->op[v], b->op[v]) != 0) GEQ_FAIL_("op[%d]: '%s' vs '%s'", v, a->op[v], b->op[v]);
    }
    GEQ_I32_(opclass, n);
    GEQ_I32_(flags, n);
    GEQ_DBL_(flops, n);
    GEQ_DBL_(param_bytes, n);
    GEQ_DBL_(out_bytes, n);
    GEQ_DBL_(mem_bytes, n);
    GEQ_I32_(color, n);
    GEQ_I32_(file_id, n);
    GEQ_DBL_(cost_ms, (int64_t)n * HSDAG_COST_KINDS_);
    GEQ_I32_(out_shape_off, n + 1);
    GEQ_I32_(shape_rank, s);
    GEQ_I32_(shape_dtype, s);
    GEQ_I32_(shape_dim_off, s + 1);
    GEQ_I32_(shape_dims, a->shape_dim_off[s]);
    GEQ_I32_(out_off, n + 1);
    GEQ_I32_(out_dst, m);
    GEQ_I32_(in_off, n + 1);
    GEQ_I32_(in_src, m);
    GEQ_I32_(in_eid, m);
    GEQ_I32_(edge_src, m);
    GEQ_DBL_(edge_bytes, m);
    GEQ_DBL_(edge_cost_ms, m);
    const hsdag_graph_meta *x = &a->meta, *y = &b->meta;
    if (x->format != y->format) GEQ_FAIL_("meta.format %d vs %d", (int)x->format, (int)y->format);
    if (x->file_nodes != y->file_nodes || x->file_edges != y->file_edges) GEQ_FAIL_("meta.file_nodes/edges");
    if (x->ir_version != y->ir_version || x->opset != y->opset) GEQ_FAIL_("meta.ir_version/opset");
    if (x->max_accels != y->max_accels || x->max_cpus != y->max_cpus) GEQ_FAIL_("meta.max_accels/cpus");
    if (!graph_eq_d_(x->max_size_per_accel, y->max_size_per_accel)) GEQ_FAIL_("meta.max_size_per_accel");
    if (strcmp(x->name ? x->name : "", y->name ? y->name : "") != 0) GEQ_FAIL_("meta.name");
    return 1;
}
#undef GEQ_I32_
#undef GEQ_DBL_
#endif

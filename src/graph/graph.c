/* graph.c - the graph builder and the immutable CSR IR: validation, unique names, topological
 * order, parallel-edge merging, lookups and the statistics behind `hsdag info`.
 * Not here: op classification and FLOP rules (opcost.c), file formats (src/io/).
 * Entry points: hsdag_gb_*, hsdag_graph_free, hsdag_graph_edge_id/find/shape_elems, hsdag_graph_stats_*. */
#include "hsdag/graph.h"

#include <math.h>
#include <string.h>

/* ---- dtypes and names ---- */
static const struct {
    const char *name;
    double bytes;
} dtype_info[HSDAG_DT_COUNT_] = {
    [HSDAG_DT_UNKNOWN] = {"unknown", 4}, [HSDAG_DT_F32] = {"f32", 4},      [HSDAG_DT_F16] = {"f16", 2},
    [HSDAG_DT_BF16] = {"bf16", 2},       [HSDAG_DT_F64] = {"f64", 8},      [HSDAG_DT_I8] = {"i8", 1},
    [HSDAG_DT_U8] = {"u8", 1},           [HSDAG_DT_I16] = {"i16", 2},      [HSDAG_DT_U16] = {"u16", 2},
    [HSDAG_DT_I32] = {"i32", 4},         [HSDAG_DT_U32] = {"u32", 4},      [HSDAG_DT_I64] = {"i64", 8},
    [HSDAG_DT_U64] = {"u64", 8},         [HSDAG_DT_BOOL] = {"boolean", 1}, [HSDAG_DT_I4] = {"i4", 0.5},
    [HSDAG_DT_U4] = {"u4", 0.5},         [HSDAG_DT_U1] = {"u1", 0.125},
};

double hsdag_dtype_bytes(hsdag_dtype t)
{
    return (t > 0 && t < HSDAG_DT_COUNT_) ? dtype_info[t].bytes : 4;
}

const char *hsdag_dtype_name(hsdag_dtype t)
{
    return (t >= 0 && t < HSDAG_DT_COUNT_) ? dtype_info[t].name : "unknown";
}

static int str_ieq(const char *a, const char *b)
{
    for (; *a && *b; a++, b++) {
        char x = *a, y = *b;
        if (x >= 'A' && x <= 'Z') x = (char)(x - 'A' + 'a');
        if (y >= 'A' && y <= 'Z') y = (char)(y - 'A' + 'a');
        if (x != y) return 0;
    }
    return *a == *b;
}

hsdag_dtype hsdag_dtype_parse(const char *s)
{
    static const struct {
        const char *alias;
        hsdag_dtype t;
    } aliases[] = {
        {"fp32", HSDAG_DT_F32},      {"float32", HSDAG_DT_F32}, {"float", HSDAG_DT_F32},
        {"fp16", HSDAG_DT_F16},      {"float16", HSDAG_DT_F16}, {"half", HSDAG_DT_F16},
        {"bfloat16", HSDAG_DT_BF16}, {"fp64", HSDAG_DT_F64},    {"float64", HSDAG_DT_F64},
        {"double", HSDAG_DT_F64},    {"int8", HSDAG_DT_I8},     {"uint8", HSDAG_DT_U8},
        {"int16", HSDAG_DT_I16},     {"uint16", HSDAG_DT_U16},  {"int32", HSDAG_DT_I32},
        {"uint32", HSDAG_DT_U32},    {"int64", HSDAG_DT_I64},   {"uint64", HSDAG_DT_U64},
        {"bool", HSDAG_DT_BOOL},     {"int4", HSDAG_DT_I4},     {"uint4", HSDAG_DT_U4},
        {"bin", HSDAG_DT_U1},
    };
    if (!s) return HSDAG_DT_UNKNOWN;
    for (int t = 1; t < HSDAG_DT_COUNT_; t++)
        if (str_ieq(s, dtype_info[t].name)) return (hsdag_dtype)t;
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (str_ieq(s, aliases[i].alias)) return aliases[i].t;
    return HSDAG_DT_UNKNOWN;
}

const char *hsdag_format_name(hsdag_format f)
{
    switch (f) {
    case HSDAG_FMT_ONNX:
        return "onnx";
    case HSDAG_FMT_OVXML:
        return "openvino-ir";
    case HSDAG_FMT_PIPEDREAM:
        return "pipedream";
    case HSDAG_FMT_TARNAWSKI:
        return "tarnawski";
    case HSDAG_FMT_JSON:
        return "hsdag-json";
    case HSDAG_FMT_DOT:
        return "dot";
    case HSDAG_FMT_BUILT:
        return "built";
    default:
        return "unknown";
    }
}

/* ---- builder ---- */
typedef struct gb_node {
    int32_t name_off; /* into b->strs, -1 = none */
    int32_t op_off;
    uint32_t flags;
    int32_t opclass; /* -1 = not set */
    double flops, param, mem;
    int32_t color, file_id;
    double cost[HSDAG_COST_KINDS_];
} gb_node;

typedef struct gb_out {
    int32_t node;
    int8_t rank;
    uint8_t dtype;
    int32_t dim_off;
} gb_out;

typedef struct gb_edge {
    int32_t u, v;
    int32_t seq; /* insertion index, set at finish: ties in the sort keep it, so merged sums are portable */
    double bytes, cost;
} gb_edge;

struct hsdag_gb {
    gb_node *nodes;
    size_t n_nodes, cap_nodes;
    gb_out *outs;
    size_t n_outs, cap_outs;
    int64_t *dims;
    size_t n_dims, cap_dims;
    gb_edge *edges;
    size_t n_edges, cap_edges;
    char *strs;
    size_t n_strs, cap_strs;
    hsdag_graph_meta meta;
    int oom;
};

hsdag_gb *hsdag_gb_create(void)
{
    hsdag_gb *b = hsdag_calloc(1, sizeof *b);
    if (!b) return NULL;
    b->meta.format = HSDAG_FMT_BUILT;
    b->meta.file_nodes = b->meta.file_edges = -1;
    b->meta.ir_version = b->meta.opset = -1;
    b->meta.max_accels = b->meta.max_cpus = -1;
    b->meta.max_size_per_accel = NAN;
    b->meta.name = "";
    return b;
}

void hsdag_gb_free(hsdag_gb *b)
{
    if (!b) return;
    hsdag_free(b->nodes);
    hsdag_free(b->outs);
    hsdag_free(b->dims);
    hsdag_free(b->edges);
    hsdag_free(b->strs);
    hsdag_free(b);
}

static int32_t gb_str(hsdag_gb *b, const char *s)
{
    if (!s) return -1;
    size_t n = strlen(s) + 1;
    if (b->n_strs + n > (size_t)INT32_MAX) return -2;
    if (hsdag_grow((void **)&b->strs, &b->cap_strs, b->n_strs + n, 1) < 0) return -2;
    memcpy(b->strs + b->n_strs, s, n);
    int32_t off = (int32_t)b->n_strs;
    b->n_strs += n;
    return off;
}

int32_t hsdag_gb_add_node(hsdag_gb *b, const char *name, const char *op)
{
    if (b->oom) return HSDAG_ENOMEM;
    if (b->n_nodes >= HSDAG_MAX_NODES) return HSDAG_ELIMIT;
    if (hsdag_grow((void **)&b->nodes, &b->cap_nodes, b->n_nodes + 1, sizeof *b->nodes) < 0) goto oom;
    gb_node *n = &b->nodes[b->n_nodes];
    memset(n, 0, sizeof *n);
    n->name_off = (name && *name) ? gb_str(b, name) : -1;
    n->op_off = gb_str(b, (op && *op) ? op : "Unknown");
    if (n->name_off == -2 || n->op_off < 0) goto oom;
    n->opclass = -1;
    n->mem = NAN;
    n->color = -1;
    n->file_id = (int32_t)b->n_nodes;
    for (int k = 0; k < HSDAG_COST_KINDS_; k++) n->cost[k] = NAN;
    return (int32_t)b->n_nodes++;
oom:
    b->oom = 1;
    return HSDAG_ENOMEM;
}

static gb_node *gb_node_at(hsdag_gb *b, int32_t v)
{
    HSDAG_ASSERT(v >= 0 && (size_t)v < b->n_nodes);
    return &b->nodes[v];
}

void hsdag_gb_set_flops(hsdag_gb *b, int32_t v, double flops)
{
    gb_node_at(b, v)->flops = flops;
}
void hsdag_gb_set_param_bytes(hsdag_gb *b, int32_t v, double bytes)
{
    gb_node_at(b, v)->param = bytes;
}
void hsdag_gb_set_mem_bytes(hsdag_gb *b, int32_t v, double bytes)
{
    gb_node_at(b, v)->mem = bytes;
}
void hsdag_gb_set_color(hsdag_gb *b, int32_t v, int32_t color)
{
    gb_node_at(b, v)->color = color;
}
void hsdag_gb_set_file_id(hsdag_gb *b, int32_t v, int32_t id)
{
    gb_node_at(b, v)->file_id = id;
}
void hsdag_gb_set_flags(hsdag_gb *b, int32_t v, uint32_t flags)
{
    gb_node_at(b, v)->flags |= flags;
}
void hsdag_gb_set_opclass(hsdag_gb *b, int32_t v, hsdag_opclass c)
{
    gb_node_at(b, v)->opclass = (int32_t)c;
}

void hsdag_gb_set_cost(hsdag_gb *b, int32_t v, hsdag_costkind k, double ms)
{
    HSDAG_ASSERT(k >= 0 && k < HSDAG_COST_KINDS_);
    gb_node_at(b, v)->cost[k] = ms;
}

int hsdag_gb_add_output(hsdag_gb *b, int32_t v, hsdag_dtype dt, int rank, const int64_t *dims)
{
    if (b->oom) return HSDAG_ENOMEM;
    if (v < 0 || (size_t)v >= b->n_nodes) return HSDAG_EINVAL;
    if (rank > HSDAG_MAX_RANK) return HSDAG_ELIMIT;
    if (rank < 0) rank = -1;
    size_t nd = rank > 0 ? (size_t)rank : 0;
    if (b->n_outs >= (size_t)INT32_MAX - 1 || b->n_dims + nd >= (size_t)INT32_MAX) return HSDAG_ELIMIT;
    if (hsdag_grow((void **)&b->outs, &b->cap_outs, b->n_outs + 1, sizeof *b->outs) < 0 ||
        hsdag_grow((void **)&b->dims, &b->cap_dims, b->n_dims + nd + 1, sizeof *b->dims) < 0) {
        b->oom = 1;
        return HSDAG_ENOMEM;
    }
    gb_out *o = &b->outs[b->n_outs++];
    o->node = v;
    o->rank = (int8_t)rank;
    o->dtype = (uint8_t)((dt >= 0 && dt < HSDAG_DT_COUNT_) ? dt : HSDAG_DT_UNKNOWN);
    o->dim_off = (int32_t)b->n_dims;
    for (size_t i = 0; i < nd; i++) b->dims[b->n_dims++] = dims[i] < 0 ? -1 : dims[i];
    return 0;
}

int hsdag_gb_add_edge_ex(hsdag_gb *b, int32_t u, int32_t v, double bytes, double cost_ms)
{
    if (b->oom) return HSDAG_ENOMEM;
    if (b->n_edges >= HSDAG_MAX_EDGES) return HSDAG_ELIMIT;
    if (hsdag_grow((void **)&b->edges, &b->cap_edges, b->n_edges + 1, sizeof *b->edges) < 0) {
        b->oom = 1;
        return HSDAG_ENOMEM;
    }
    gb_edge *ed = &b->edges[b->n_edges++];
    ed->u = u;
    ed->v = v;
    ed->bytes = (isfinite(bytes) && bytes > 0) ? bytes : 0;
    ed->cost = cost_ms;
    return 0;
}

int hsdag_gb_add_edge(hsdag_gb *b, int32_t u, int32_t v, double bytes)
{
    return hsdag_gb_add_edge_ex(b, u, v, bytes, NAN);
}

void hsdag_gb_set_meta(hsdag_gb *b, const hsdag_graph_meta *m)
{
    b->meta = *m;
}

/* ---- finish: validate, order, merge, copy into the arena ---- */
static const char *gb_name(const hsdag_gb *b, int32_t v)
{
    int32_t off = b->nodes[v].name_off;
    return off >= 0 ? b->strs + off : "";
}

static int edge_cmp(const void *a, const void *c)
{
    const gb_edge *x = a, *y = c;
    if (x->u != y->u) return x->u < y->u ? -1 : 1;
    if (x->v != y->v) return x->v < y->v ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

/* Kahn's algorithm with a min-heap of ready nodes keyed by insertion index (the core heap): among ready
 * nodes the earliest added goes first, so a file that is already topologically ordered keeps its order
 * exactly. O(E + V log V). */
static int less_i32(const void *a, const void *b, void *ctx)
{
    (void)ctx;
    return *(const int32_t *)a < *(const int32_t *)b;
}

static int gb_toposort(const hsdag_gb *b, const int32_t *off, const int32_t *adj, int32_t *order,
                       int32_t *indeg, int32_t *heap, hsdag_err *e, const char *what)
{
    int32_t n = (int32_t)b->n_nodes, tail = 0;
    hsdag_heap ready;
    hsdag_heap_init(&ready, sizeof(int32_t), heap, (size_t)n, less_i32, NULL); /* n slots: never full */
    for (int32_t v = 0; v < n; v++) indeg[v] = 0;
    for (int32_t v = 0; v < n; v++)
        for (int32_t k = off[v]; k < off[v + 1]; k++) indeg[adj[k]]++;
    for (int32_t v = 0; v < n; v++)
        if (indeg[v] == 0) hsdag_heap_push(&ready, &v);
    while (ready.n > 0) {
        int32_t u;
        hsdag_heap_pop(&ready, &u);
        order[tail++] = u;
        for (int32_t k = off[u]; k < off[u + 1]; k++)
            if (--indeg[adj[k]] == 0) hsdag_heap_push(&ready, &adj[k]);
    }
    if (tail == n) return 0;
    /* Name a node ON a cycle: every unfinished node (indeg > 0) has an unfinished predecessor. One
     * such predecessor per node (one pass over the edges into the free heap array), followed n times
     * from any unfinished node, must end inside a cycle. Error path only; O(V + E). */
    int32_t *pred = heap, bad = -1;
    for (int32_t v = 0; v < n; v++) pred[v] = -1;
    for (size_t k = 0; k < b->n_edges; k++) {
        int32_t u = b->edges[k].u, v = b->edges[k].v;
        if (indeg[u] > 0 && indeg[v] > 0 && pred[v] < 0) pred[v] = u;
    }
    for (int32_t v = 0; v < n && bad < 0; v++)
        if (indeg[v] > 0) bad = v;
    for (int32_t step = 0; step < n; step++) {
        HSDAG_ASSERT(bad >= 0 && pred[bad] >= 0);
        bad = pred[bad];
    }
    const char *nm = gb_name(b, bad);
    return hsdag_err_set(e, HSDAG_ECYCLE,
                         "%sgraph has a cycle through node '%s' (%d of %d nodes are on or behind cycles)",
                         what, *nm ? nm : b->strs + b->nodes[bad].op_off, (int)(n - tail), (int)n);
}

/* Pass 2 of naming (see hsdag_gb_finish): gives every node without a name yet "<base>_<k>". */
static int gb_rename(hsdag_gb *b, hsdag_graph *g, const int32_t *rank, hsdag_strmap *names)
{
    int32_t n = (int32_t)b->n_nodes;
    int rc = HSDAG_ENOMEM;
    int64_t *dup_next = hsdag_calloc((size_t)n + 1, sizeof *dup_next), *op_next = NULL;
    size_t op_cap = 0;
    hsdag_strmap *ops = hsdag_strmap_create();
    if (!dup_next || !ops) goto done;
    for (int32_t v = 0; v < n; v++) {
        int32_t i = rank[v];
        if (g->name[i]) continue;
        const char *nm = gb_name(b, v), *op = b->strs + b->nodes[v].op_off;
        int64_t *memo, k;
        if (*nm) {
            int32_t owner = hsdag_strmap_get(names, nm, strlen(nm));
            HSDAG_ASSERT(owner >= 0 && owner < n);
            memo = &dup_next[owner];
            k = 1;
        } else {
            int32_t slot = hsdag_strmap_get(ops, op, strlen(op));
            if (slot < 0) {
                slot = hsdag_strmap_count(ops);
                if (hsdag_strmap_put(ops, op, strlen(op), slot) < 0 ||
                    hsdag_grow((void **)&op_next, &op_cap, (size_t)slot + 1, sizeof *op_next) < 0)
                    goto done;
                op_next[slot] = 0;
            }
            memo = &op_next[slot];
            k = v;
        }
        if (*memo > k) k = *memo;
        char buf[256];
        const char *base = *nm ? nm : op;
        for (;; k++) {
            snprintf(buf, sizeof buf, "%.200s_%lld", base, (long long)k);
            if (hsdag_strmap_get(names, buf, strlen(buf)) < 0) break;
        }
        *memo = k + 1;
        if (!(g->name[i] = hsdag_arena_strdup(g->arena, buf))) goto done;
        if (hsdag_strmap_put_borrowed(names, g->name[i], strlen(buf), v) < 0) goto done;
        b->nodes[v].flags |= HSDAG_NF_RENAMED;
    }
    rc = 0;
done:
    hsdag_free(dup_next);
    hsdag_free(op_next);
    hsdag_strmap_free(ops);
    return rc;
}

/* ---- hsdag_gb_finish, step by step ---- */

/* Dangling ends and self-loops: 0 or the status with e set. */
static int gb_check_edges(const hsdag_gb *b, const char *what, hsdag_err *e)
{
    int32_t n = (int32_t)b->n_nodes;
    for (size_t k = 0; k < b->n_edges; k++) {
        const gb_edge *ed = &b->edges[k];
        if (ed->u < 0 || ed->u >= n || ed->v < 0 || ed->v >= n) {
            int32_t ok = (ed->u >= 0 && ed->u < n) ? ed->u : ((ed->v >= 0 && ed->v < n) ? ed->v : -1);
            return hsdag_err_set(e, HSDAG_EDANGLING, "%sedge %zu refers to a missing node (%d -> %d)%s%s%s",
                                 what, k, (int)ed->u, (int)ed->v, ok >= 0 ? " next to node '" : "",
                                 ok >= 0 ? gb_name(b, ok) : "", ok >= 0 ? "'" : "");
        }
        if (ed->u == ed->v)
            return hsdag_err_set(e, HSDAG_ECYCLE, "%snode '%s' has an edge to itself", what,
                                 gb_name(b, ed->u));
    }
    return 0;
}

/* gb_range's test alone: the element's name is formatted only for a value out of range (issue 15: formatting
 * it for every node and edge was a sixth of loading a large graph). */
static int gb_ok(double x, double max)
{
    return isnan(x) || (x >= 0 && x <= max);
}

/* 0 if x is NAN (not given) or in [0, max], else a status with "<what><elem>: <field> <x> is ..." in e. */
static int gb_range(hsdag_err *e, const char *what, const char *elem, const char *field, double x, double max,
                    const char *unit)
{
    if (gb_ok(x, max)) return 0;
    if (x < 0) return hsdag_err_set(e, HSDAG_ELIMIT, "%s%s: %s is negative (%.6g)", what, elem, field, x);
    return hsdag_err_set(e, HSDAG_ELIMIT, "%s%s: %s %.6g %s is above the limit of %.6g %s", what, elem, field,
                         x, unit, max, unit);
}

/* The ranges of graph.h (HSDAG_MAX_COST_MS, _BYTES, _FLOPS) for every node's numbers. */
static int gb_check_nodes(const hsdag_gb *b, hsdag_err *e, const char *what)
{
    static const char *const cost_field[HSDAG_COST_KINDS_] = {"cost_ms.cpu", "cost_ms.accel", "cost_ms.bwd"};
    for (size_t v = 0; v < b->n_nodes; v++) {
        const gb_node *nd = &b->nodes[v];
        int ok = gb_ok(nd->flops, HSDAG_MAX_FLOPS) && gb_ok(nd->param, HSDAG_MAX_BYTES) &&
                 gb_ok(nd->mem, HSDAG_MAX_BYTES);
        for (int k = 0; k < HSDAG_COST_KINDS_ && ok; k++) ok = gb_ok(nd->cost[k], HSDAG_MAX_COST_MS);
        if (ok) continue;
        char elem[200];
        snprintf(elem, sizeof elem, "node '%.150s'", gb_name(b, (int32_t)v));
        int rc = gb_range(e, what, elem, "flops", nd->flops, HSDAG_MAX_FLOPS, "FLOP");
        if (!rc) rc = gb_range(e, what, elem, "param_bytes", nd->param, HSDAG_MAX_BYTES, "B");
        if (!rc) rc = gb_range(e, what, elem, "mem_bytes", nd->mem, HSDAG_MAX_BYTES, "B");
        for (int k = 0; k < HSDAG_COST_KINDS_ && !rc; k++)
            rc = gb_range(e, what, elem, cost_field[k], nd->cost[k], HSDAG_MAX_COST_MS, "ms");
        if (rc) return rc;
    }
    return 0;
}

/* The merged edges (m of them, relabelled by rank; order maps back) in range: each given one is, as the sum's
 * terms are not negative, but a sum may not be. */
static int gb_check_merged(const hsdag_gb *b, const gb_edge *edges, size_t m, const int32_t *order,
                           const char *what, hsdag_err *e)
{
    for (size_t k = 0; k < m; k++) {
        if (gb_ok(edges[k].bytes, HSDAG_MAX_BYTES) && gb_ok(edges[k].cost, HSDAG_MAX_COST_MS)) continue;
        char elem[340];
        snprintf(elem, sizeof elem, "edge '%.150s' -> '%.150s'", gb_name(b, order[edges[k].u]),
                 gb_name(b, order[edges[k].v]));
        int rc = gb_range(e, what, elem, "bytes", edges[k].bytes, HSDAG_MAX_BYTES, "B");
        if (!rc) rc = gb_range(e, what, elem, "cost_ms", edges[k].cost, HSDAG_MAX_COST_MS, "ms");
        if (rc) return rc;
    }
    return 0;
}

/* Sorts one source's edges (all of one u) by edge_cmp: insertion sort for the usual few, qsort for a wide fan-out. */
static void gb_sort_run(gb_edge *r, size_t len)
{
    if (len > 32) {
        qsort(r, len, sizeof *r, edge_cmp);
        return;
    }
    for (size_t i = 1; i < len; i++) {
        gb_edge x = r[i];
        size_t j = i;
        for (; j > 0 && edge_cmp(&r[j - 1], &x) > 0; j--) r[j] = r[j - 1];
        r[j] = x;
    }
}

/* Relabels the edges into edges[] by rank (the new node index), sorts them and merges parallel ones (bytes
 * summed, cost max). Returns the count left. The sort is by counting on the source (n, stable, so by seq within
 * one source), then each source's run by (dst, seq): the order of qsort by edge_cmp, in O(E) for the usual
 * degrees. pos has n + 1 slots of scratch. */
static size_t gb_merge_edges(const hsdag_gb *b, const int32_t *rank, gb_edge *edges, int32_t *pos)
{
    size_t ne = b->n_edges, m = 0;
    int32_t n = (int32_t)b->n_nodes;
    for (int32_t i = 0; i <= n; i++) pos[i] = 0;
    for (size_t k = 0; k < ne; k++) pos[rank[b->edges[k].u] + 1]++;
    for (int32_t i = 0; i < n; i++) pos[i + 1] += pos[i];
    for (size_t k = 0; k < ne; k++) {
        gb_edge x = b->edges[k];
        x.u = rank[x.u];
        x.v = rank[x.v];
        x.seq = (int32_t)k;
        edges[pos[x.u]++] = x;
    }
    for (size_t k = 0; k < ne;) { /* pos[u] is now the end of u's run */
        size_t end = (size_t)pos[edges[k].u];
        gb_sort_run(edges + k, end - k);
        k = end;
    }
    for (size_t k = 0; k < ne; k++) {
        if (m > 0 && edges[m - 1].u == edges[k].u && edges[m - 1].v == edges[k].v) {
            edges[m - 1].bytes += edges[k].bytes;
            if (isnan(edges[m - 1].cost) || edges[k].cost > edges[m - 1].cost)
                edges[m - 1].cost = edges[k].cost;
        } else {
            edges[m++] = edges[k];
        }
    }
    return m;
}

/* The IR with every array allocated in its arena (n nodes, m edges). NULL on ENOMEM. */
static hsdag_graph *gb_alloc_ir(const hsdag_gb *b, int32_t n, size_t m)
{
    hsdag_graph *g = hsdag_calloc(1, sizeof *g);
    if (!g) return NULL;
    g->arena = hsdag_arena_create(((size_t)n * 160 + m * 40 + b->n_strs + b->n_dims * 8) / 4 + 4096);
    if (!g->arena) goto oom;
    hsdag_arena *a = g->arena;
    size_t N = (size_t)n, M = m, S = b->n_outs;
#define ARR(field, count) \
    if (!(g->field = hsdag_arena_alloc(a, (count) * sizeof *g->field + 1))) goto oom
    ARR(name, N);
    ARR(op, N);
    ARR(opclass, N);
    ARR(flags, N);
    ARR(flops, N);
    ARR(param_bytes, N);
    ARR(out_bytes, N);
    ARR(mem_bytes, N);
    ARR(color, N);
    ARR(file_id, N);
    ARR(cost_ms, N * HSDAG_COST_KINDS_);
    ARR(out_shape_off, N + 1);
    ARR(shape_rank, S);
    ARR(shape_dtype, S);
    ARR(shape_dim_off, S + 1);
    ARR(shape_dims, b->n_dims);
    ARR(out_off, N + 1);
    ARR(out_dst, M);
    ARR(in_off, N + 1);
    ARR(in_src, M);
    ARR(in_eid, M);
    ARR(edge_src, M);
    ARR(edge_bytes, M);
    ARR(edge_cost_ms, M);
    ARR(edge_seq, M);
#undef ARR
    g->n_nodes = n;
    g->n_edges = (int32_t)m;
    g->meta = b->meta;
    g->meta.name = hsdag_arena_strdup(a, b->meta.name ? b->meta.name : "");
    if (!g->meta.name) goto oom;
    return g;
oom:
    hsdag_graph_free(g);
    return NULL;
}

/* Interned op strings (equal ops share one pointer), in the new node order. 0 or -1 (ENOMEM). */
static int gb_intern_ops(const hsdag_gb *b, hsdag_graph *g, const int32_t *order)
{
    hsdag_strmap *ops = hsdag_strmap_create();
    const char **op_strs = NULL;
    size_t op_cap = 0;
    int failed = !ops;
    for (int32_t i = 0; i < g->n_nodes && !failed; i++) {
        int32_t v = order[i];
        const char *op = b->strs + b->nodes[v].op_off;
        int32_t id = hsdag_strmap_get(ops, op, strlen(op));
        if (id < 0) {
            id = hsdag_strmap_count(ops);
            const char *cp = hsdag_arena_strdup(g->arena, op);
            if (!cp || hsdag_strmap_put(ops, op, strlen(op), id) < 0 ||
                hsdag_grow((void **)&op_strs, &op_cap, (size_t)id + 1, sizeof *op_strs) < 0) {
                failed = 1;
                break;
            }
            op_strs[id] = cp;
        }
        g->op[i] = op_strs[id];
    }
    hsdag_free(op_strs);
    hsdag_strmap_free(ops);
    return failed ? -1 : 0;
}

/* Unique names: pass 1 reserves the given names in insertion order (the first occurrence keeps its name),
 * pass 2 renames the rest. 0 or -1 (ENOMEM). */
static int gb_names(hsdag_gb *b, hsdag_graph *g, const int32_t *rank, hsdag_strmap *names)
{
    /* sized once; keys borrowed from the builder's strings and the graph's arena, both alive longer than the map */
    if (hsdag_strmap_reserve(names, (size_t)g->n_nodes) < 0) return -1;
    for (int32_t v = 0; v < g->n_nodes; v++) {
        const char *nm = gb_name(b, v);
        if (!*nm) continue;
        int r = hsdag_strmap_put_borrowed(names, nm, strlen(nm), v);
        if (r < 0) return -1;
        if (r == 0 && !(g->name[rank[v]] = hsdag_arena_strdup(g->arena, nm))) return -1;
    }
    /* The next suffix to try is remembered per base: per first owner of a duplicated name, per op
     * string for unnamed nodes. Every suffix below it was seen taken, and names are never released,
     * so the names are exactly those of probing from the start, but n duplicates cost O(n) probes,
     * not O(n^2) (10,000 nodes named "x" took 43 s before). */
    if (gb_rename(b, g, rank, names) < 0) return -1;
    for (int32_t i = 0; i < g->n_nodes; i++)
        if (!g->name[i]) return -1;
    return 0;
}

/* Per-node fields in the new order; opclass and flags derived from the op where not set. */
static void gb_node_fields(const hsdag_gb *b, hsdag_graph *g, const int32_t *order)
{
    for (int32_t i = 0; i < g->n_nodes; i++) {
        const gb_node *s = &b->nodes[order[i]];
        hsdag_opclass c = s->opclass >= 0 ? (hsdag_opclass)s->opclass : hsdag_opclass_of(g->op[i]);
        g->opclass[i] = (uint8_t)c;
        g->flags[i] = s->flags | (c == HSDAG_OP_BOOKKEEPING ? HSDAG_NF_BOOKKEEPING : 0) |
                      (c == HSDAG_OP_UNKNOWN ? HSDAG_NF_UNKNOWN_OP : 0);
        g->flops[i] = s->flops;
        g->param_bytes[i] = s->param;
        g->mem_bytes[i] = s->mem;
        g->color[i] = s->color;
        g->file_id[i] = s->file_id;
        for (int k = 0; k < HSDAG_COST_KINDS_; k++)
            g->cost_ms[(size_t)i * HSDAG_COST_KINDS_ + k] = s->cost[k];
    }
}

/* Output shapes grouped by new node index (stable within a node), then each node's output bytes. tmp has
 * n + 1 slots of scratch. 0 or -1 (ENOMEM). */
static int gb_shapes(const hsdag_gb *b, hsdag_graph *g, const int32_t *rank, int32_t *tmp)
{
    int32_t n = g->n_nodes;
    size_t S = b->n_outs;
    for (int32_t i = 0; i <= n; i++) g->out_shape_off[i] = 0;
    for (size_t s = 0; s < S; s++) g->out_shape_off[rank[b->outs[s].node] + 1]++;
    for (int32_t i = 0; i < n; i++) g->out_shape_off[i + 1] += g->out_shape_off[i];
    for (int32_t i = 0; i < n; i++) tmp[i] = g->out_shape_off[i];
    int32_t *slot_of = hsdag_malloc((S ? S : 1) * sizeof *slot_of);
    int32_t *src_of_slot = hsdag_malloc((S ? S : 1) * sizeof *src_of_slot);
    if (!slot_of || !src_of_slot) {
        hsdag_free(slot_of);
        hsdag_free(src_of_slot);
        return -1;
    }
    for (size_t s = 0; s < S; s++) slot_of[s] = tmp[rank[b->outs[s].node]]++;
    /* dims laid out in slot order */
    for (size_t s = 0; s < S; s++) src_of_slot[slot_of[s]] = (int32_t)s;
    int32_t d = 0;
    for (size_t t = 0; t < S; t++) {
        const gb_out *o = &b->outs[src_of_slot[t]];
        g->shape_rank[t] = o->rank;
        g->shape_dtype[t] = o->dtype;
        g->shape_dim_off[t] = d;
        for (int r = 0; r < o->rank; r++) g->shape_dims[d++] = b->dims[o->dim_off + r];
    }
    g->shape_dim_off[S] = d;
    g->n_out_shapes = (int32_t)S;
    hsdag_free(slot_of);
    hsdag_free(src_of_slot);
    for (int32_t i = 0; i < n; i++) {
        double bytes = 0;
        for (int32_t s = g->out_shape_off[i]; s < g->out_shape_off[i + 1]; s++) {
            double el = hsdag_graph_shape_elems(g, s);
            if (el > 0) bytes += el * hsdag_dtype_bytes((hsdag_dtype)g->shape_dtype[s]);
        }
        g->out_bytes[i] = bytes;
    }
    return 0;
}

/* Edges: the out-CSR is the sorted, merged list itself; the in-CSR by counting (stable in source order);
 * edge_seq ranks the merged edges by insertion (ne = edges before merging). tmp has n slots of scratch.
 * 0 or -1 (ENOMEM). */
static int gb_edges_csr(hsdag_graph *g, const gb_edge *edges, size_t ne, int32_t *tmp)
{
    int32_t n = g->n_nodes;
    size_t M = (size_t)g->n_edges;
    for (size_t k = 0; k < M; k++) {
        g->edge_src[k] = edges[k].u;
        g->out_dst[k] = edges[k].v;
        g->edge_bytes[k] = edges[k].bytes;
        g->edge_cost_ms[k] = edges[k].cost;
        g->edge_seq[k] = edges[k].seq; /* insertion index for now, ranked below */
        g->out_off[edges[k].u + 1]++;
        g->in_off[edges[k].v + 1]++;
    }
    for (int32_t i = 0; i < n; i++) {
        g->out_off[i + 1] += g->out_off[i];
        g->in_off[i + 1] += g->in_off[i];
    }
    /* merged edges leave holes in the insertion indices: rank them (counting over [0, ne)) */
    {
        int32_t *rk = hsdag_malloc((ne ? ne : 1) * sizeof *rk);
        if (!rk) return -1;
        for (size_t k = 0; k < ne; k++) rk[k] = -1;
        for (size_t k = 0; k < M; k++) rk[g->edge_seq[k]] = (int32_t)k;
        for (size_t k = 0, r = 0; k < ne; k++)
            if (rk[k] >= 0) g->edge_seq[rk[k]] = (int32_t)r++;
        hsdag_free(rk);
    }
    for (int32_t i = 0; i < n; i++) tmp[i] = g->in_off[i];
    for (size_t k = 0; k < M; k++) {
        int32_t slot = tmp[edges[k].v]++;
        g->in_src[slot] = edges[k].u;
        g->in_eid[slot] = (int32_t)k;
    }
    return 0;
}

int hsdag_gb_finish(hsdag_gb *b, hsdag_graph **out, hsdag_err *e)
{
    *out = NULL;
    /* Messages start with the graph's name if it has one; readers put the file name in front, so an
     * unnamed graph gives "file.dot: graph has a cycle ...", not "file.dot: graph: graph has ...". */
    char what[140] = "";
    if (b->meta.name && *b->meta.name) snprintf(what, sizeof what, "%.120s: ", b->meta.name);
    if (b->oom) return hsdag_err_set(e, HSDAG_ENOMEM, "%sout of memory while building the graph", what);
    int32_t n = (int32_t)b->n_nodes;
    int rc = gb_check_edges(b, what, e);
    if (!rc) rc = gb_check_nodes(b, e, what);
    if (rc < 0) return rc;
    int32_t *off = NULL, *adj = NULL, *order = NULL, *rank = NULL, *tmp = NULL;
    hsdag_graph *g = NULL;
    hsdag_strmap *names = NULL;
    gb_edge *edges = NULL;
    size_t ne = b->n_edges;
    off = hsdag_calloc((size_t)n + 1, sizeof *off);
    adj = hsdag_malloc((ne ? ne : 1) * sizeof *adj);
    order = hsdag_malloc(((size_t)n + 1) * sizeof *order);
    rank = hsdag_malloc(((size_t)n + 1) * sizeof *rank);
    tmp = hsdag_malloc(((size_t)n + 1) * sizeof *tmp);
    edges = hsdag_malloc((ne ? ne : 1) * sizeof *edges);
    names = hsdag_strmap_create();
    if (!off || !adj || !order || !rank || !tmp || !edges || !names) goto oom;

    /* builder CSR in insertion order, then the topological order and each node's new index (rank) */
    for (size_t k = 0; k < ne; k++) off[b->edges[k].u + 1]++;
    for (int32_t v = 0; v < n; v++) off[v + 1] += off[v];
    for (int32_t v = 0; v <= n; v++) tmp[v] = off[v];
    for (size_t k = 0; k < ne; k++) adj[tmp[b->edges[k].u]++] = b->edges[k].v;
    if ((rc = gb_toposort(b, off, adj, order, tmp, rank, e, what)) < 0) goto fail;
    for (int32_t i = 0; i < n; i++) rank[order[i]] = i;

    size_t m = gb_merge_edges(b, rank, edges, tmp);
    if ((rc = gb_check_merged(b, edges, m, order, what, e)) < 0) goto fail;
    if (!(g = gb_alloc_ir(b, n, m))) goto oom;
    if (gb_intern_ops(b, g, order) < 0 || gb_names(b, g, rank, names) < 0) goto oom;
    gb_node_fields(b, g, order);
    if (gb_shapes(b, g, rank, tmp) < 0) goto oom;
    if (gb_edges_csr(g, edges, ne, tmp) < 0) goto oom;
    *out = g;
    g = NULL;
    goto done;
oom:
    rc = hsdag_err_set(e, HSDAG_ENOMEM, "%sout of memory while building the graph", what);
fail:
done:
    hsdag_free(off);
    hsdag_free(adj);
    hsdag_free(order);
    hsdag_free(rank);
    hsdag_free(tmp);
    hsdag_free(edges);
    hsdag_strmap_free(names);
    hsdag_graph_free(g);
    return rc;
}

void hsdag_graph_free(hsdag_graph *g)
{
    if (!g) return;
    hsdag_arena_free(g->arena);
    hsdag_free(g);
}

/* ---- lookups ---- */
int32_t hsdag_graph_edge_id(const hsdag_graph *g, int32_t u, int32_t v)
{
    int32_t lo = g->out_off[u], hi = g->out_off[u + 1];
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (g->out_dst[mid] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (lo < g->out_off[u + 1] && g->out_dst[lo] == v) ? lo : -1;
}

int32_t hsdag_graph_find(const hsdag_graph *g, const char *name)
{
    for (int32_t v = 0; v < g->n_nodes; v++)
        if (strcmp(g->name[v], name) == 0) return v;
    return -1;
}

double hsdag_graph_shape_elems(const hsdag_graph *g, int32_t s)
{
    int r = g->shape_rank[s];
    if (r < 0) return -1;
    double el = 1;
    for (int32_t d = g->shape_dim_off[s]; d < g->shape_dim_off[s + 1]; d++) {
        if (g->shape_dims[d] < 0) return -1;
        el *= (double)g->shape_dims[d];
    }
    return el;
}

/* ---- statistics ---- */
int32_t hsdag_graph_levels(const hsdag_graph *g, int32_t *lvl)
{
    int32_t depth = 0;
    for (int32_t v = 0; v < g->n_nodes; v++) {
        int32_t l = 0;
        for (int32_t k = g->in_off[v]; k < g->in_off[v + 1]; k++)
            if (lvl[g->in_src[k]] + 1 > l) l = lvl[g->in_src[k]] + 1;
        lvl[v] = l;
        if (l + 1 > depth) depth = l + 1;
    }
    return depth;
}

static int op_count_cmp(const void *a, const void *b)
{
    const hsdag_op_count *x = a, *y = b;
    if (x->count != y->count) return x->count > y->count ? -1 : 1;
    return strcmp(x->op, y->op);
}

int hsdag_graph_stats_compute(const hsdag_graph *g, hsdag_graph_stats *s, hsdag_err *e)
{
    memset(s, 0, sizeof *s);
    int32_t n = g->n_nodes;
    int32_t *lvl = hsdag_malloc(((size_t)n + 1) * sizeof *lvl);
    int32_t *width = hsdag_calloc((size_t)n + 1, sizeof *width);
    /* op strings are interned, so pointer identity groups them */
    s->ops = hsdag_calloc((size_t)n + 1, sizeof *s->ops);
    if (!lvl || !width || !s->ops) {
        hsdag_free(lvl);
        hsdag_free(width);
        hsdag_graph_stats_free(s);
        return hsdag_err_set(e, HSDAG_ENOMEM, "out of memory computing statistics");
    }
    s->nodes = n;
    s->edges = g->n_edges;
    s->depth = n ? hsdag_graph_levels(g, lvl) : 0;
    for (int32_t v = 0; v < n; v++) {
        s->total_flops += g->flops[v];
        s->param_bytes += g->param_bytes[v];
        s->activation_bytes += g->out_bytes[v];
        if (g->flags[v] & HSDAG_NF_UNKNOWN_OP) s->unknown_ops++;
        if (g->flags[v] & HSDAG_NF_BOOKKEEPING) s->bookkeeping_ops++;
        int unshaped = 0;
        for (int32_t k = g->out_shape_off[v]; k < g->out_shape_off[v + 1]; k++)
            if (hsdag_graph_shape_elems(g, k) < 0) unshaped = 1;
        if (unshaped && !(g->flags[v] & HSDAG_NF_BOOKKEEPING) && g->opclass[v] != HSDAG_OP_BOOKKEEPING)
            s->unshaped_ops++;
        if (g->in_off[v] == g->in_off[v + 1]) s->sources++;
        if (g->out_off[v] == g->out_off[v + 1]) s->sinks++;
        if (++width[lvl[v]] > s->max_width) s->max_width = width[lvl[v]];
    }
    hsdag_strmap *m = hsdag_strmap_create();
    if (!m) {
        hsdag_free(lvl);
        hsdag_free(width);
        hsdag_graph_stats_free(s);
        return hsdag_err_set(e, HSDAG_ENOMEM, "out of memory computing statistics");
    }
    for (int32_t v = 0; v < n; v++) {
        int32_t id = hsdag_strmap_get(m, g->op[v], strlen(g->op[v]));
        if (id < 0) {
            id = s->n_op_types;
            if (hsdag_strmap_put(m, g->op[v], strlen(g->op[v]), id) < 0) {
                /* a half-counted histogram must not pass for the real one */
                hsdag_strmap_free(m);
                hsdag_free(lvl);
                hsdag_free(width);
                hsdag_graph_stats_free(s);
                return hsdag_err_set(e, HSDAG_ENOMEM, "out of memory computing statistics");
            }
            s->n_op_types++;
            s->ops[id].op = g->op[v];
        }
        s->ops[id].count++;
    }
    hsdag_strmap_free(m);
    qsort(s->ops, (size_t)s->n_op_types, sizeof *s->ops, op_count_cmp);
    hsdag_free(lvl);
    hsdag_free(width);
    return 0;
}

void hsdag_graph_stats_free(hsdag_graph_stats *s)
{
    if (!s) return;
    hsdag_free(s->ops);
    s->ops = NULL;
    s->n_op_types = 0;
}

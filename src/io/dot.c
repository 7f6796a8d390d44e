/* dot.c - NNCF Graphviz DOT reader (graphviz cgraph): `"<id> <name>" [id=, type=<op>]` nodes and
 * `"a" -> "b" [label="[1, 3, 224, 224]"]` or `[shape="(1, 3, 64, 64)"]` edges.
 * Not here: the DOT writer (hsdag_dot_write lives elsewhere), layout attributes, clusters as devices.
 * Entry points: hsdag_dot_read.
 *
 * Rules (what the numbers mean):
 *  - every DOT node is a node, in file order; name = the `label` attribute if set (not "\N"), else the
 *    DOT node id, with a leading "<id> " removed when it repeats the `id` attribute; op = `type`
 *    ("Unknown" if absent); file_id = `id` if it is an integer, else the index;
 *  - meta.file_nodes / file_edges = cgraph's node and edge counts (edge statements; in a `strict`
 *    graph cgraph itself merges repeated a -> b statements);
 *  - an edge's tensor is its `label` or `shape` attribute "[d, ...]" / "(d, ...)" / "(d,)" / "[]" (a
 *    scalar); dims -1 are dynamic; element type from the edge's `dtype` attribute, else f32 (NNCF
 *    graphs carry no precision); edge bytes = elements x element bytes, 0 if dynamic or unparsable;
 *  - a node's output tensors come from its out-edges: one per distinct `out_port_id` (torch_hook
 *    graphs) in port order, otherwise one per distinct shape text in file order; edges repeating the
 *    same (source, tensor, target) carry that tensor once; other parallel edges are summed;
 *  - parameter bytes: constant nodes (Constant, Const, get_attr, nncf_model_const) give their output
 *    bytes to the first non-constant consumer, as for OpenVINO IR (rule in constw.h);
 *  - FLOPs: hsdag_opcost_estimate with input shapes ordered by `in_port_id` when every in-edge has
 *    one, else non-constant inputs first (the data), then constant ones (weights), each in file order;
 *    constant-valued nodes (computed from constants only) are folded: 0 FLOPs.
 * Security: cgraph is not built for hostile input: the input is capped at HSDAG_DOT_MAX_BYTES, must
 * not contain NUL bytes, is pre-scanned (dot_prescan: identifier length, nesting, the edges and attribute
 * slots it would create) and the address space cgraph needs is probed before cgraph sees it; cgraph's
 * messages are captured through agseterrf (process-global, so this reader is not thread-safe; cgraph's
 * parser is not re-entrant anyway).
 */
#include "hsdag/io.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <string.h>

#include <graphviz/cgraph.h>

#include "constw.h"
#include "ioutil.h"

/* cgraph's flex scanner keeps global state between reads: the buffered rest of the input (stream
 * semantics) and its start condition (inside a quoted or HTML string after some syntax errors), so
 * one bad or over-long input spoiled the next hsdag_dot_read. flex's yylex_destroy (prefix "aag",
 * exported by libcgraph but declared in no installed header) resets all of it; the next read starts
 * the scanner afresh. */
extern int aaglex_destroy(void);

#define HSDAG_DOT_MAX_BYTES ((size_t)64 << 20) /* 64 MiB of DOT text */

/* ---- cgraph message capture: the first error message (warnings are skipped) ---- */
typedef struct dot_errcap {
    char msg[256];
    size_t len;
    int mode; /* 0 idle, 1 inside the first error, 2 first error complete or inside a warning */
    int have;
} dot_errcap;
static _Thread_local dot_errcap dot_cap;

static int dot_err_collect(char *s)
{
    if (!s) return 0;
    if (strcmp(s, "Error") == 0) {
        dot_cap.mode = dot_cap.have ? 2 : 1;
        dot_cap.have = 1;
        return 0;
    }
    if (strcmp(s, "Warning") == 0) {
        dot_cap.mode = 2;
        return 0;
    }
    if (dot_cap.mode != 1 || (dot_cap.len == 0 && strcmp(s, ": ") == 0)) return 0;
    for (; *s && dot_cap.len + 1 < sizeof dot_cap.msg; s++)
        dot_cap.msg[dot_cap.len++] = (*s == '\n' || *s == '\r' || *s == '\t') ? ' ' : *s;
    dot_cap.msg[dot_cap.len] = 0;
    return 0;
}

/* ---- parse state ---- */
typedef struct dot_edge {
    int32_t u, v;      /* node indices (file order) */
    uint64_t seq;      /* cgraph creation order = file order */
    int64_t out_port;  /* -1 if absent */
    int64_t in_port;   /* -1 if absent */
    int64_t key;       /* scratch sort key */
    const char *shape; /* label/shape text, "" if none (owned by cgraph) */
    const char *dtype; /* dtype text or NULL (owned by cgraph) */
    int32_t tensor;    /* index into the tensor table */
} dot_edge;

/* A distinct output tensor of a node; tensors of one node are contiguous, in output order. */
typedef struct dot_tensor {
    int32_t node;
    int64_t out_port;
    uint64_t first_seq;
    const char *shape;
    const char *dtype;
    int8_t rank; /* -1 unknown */
    uint8_t dt;  /* hsdag_dtype */
    int32_t dim_off;
    double bytes; /* 0 if unknown */
} dot_tensor;

typedef struct dot_ctx {
    const char *what;
    hsdag_err *e;
    Agraph_t *g;
    int32_t n;
    Agnode_t **nodes;
    dot_edge *edges;
    int32_t m;
    dot_tensor *tensors;
    int32_t n_tensors;
    int64_t *dims;
    size_t n_dims, cap_dims;
} dot_ctx;

/* Attribute text or NULL when unset/empty. */
static const char *dot_get(void *obj, Agsym_t *sym)
{
    if (!sym) return NULL;
    const char *s = agxget(obj, sym);
    return s && *s ? s : NULL;
}

/* Parses "[1, 3, 224, 224]", "(64, 3, 7, 7)", "(64,)", "[]" into dims. Returns the rank, -1 if the
 * text is not a shape, or -2 with the error set when the shape exceeds a hard limit. */
static int dot_shape_parse(dot_ctx *c, const char *s, const char *where)
{
    while (*s == ' ') s++;
    char close = *s == '[' ? ']' : *s == '(' ? ')' : 0;
    if (!close) return -1;
    s++;
    int rank = 0;
    size_t start = c->n_dims;
    for (;;) {
        while (*s == ' ') s++;
        if (*s == close) break;
        char *end;
        errno = 0;
        long long v = strtoll(s, &end, 10);
        if (end == s || errno == ERANGE || v < -1) goto notshape;
        if (rank >= HSDAG_MAX_RANK) {
            c->n_dims = start;
            hsdag_err_set(c->e, HSDAG_ELIMIT, "%s: %s: shape rank above %d", c->what, where, HSDAG_MAX_RANK);
            return -2;
        }
        if (hsdag_grow((void **)&c->dims, &c->cap_dims, c->n_dims + 1, sizeof *c->dims) < 0) {
            c->n_dims = start;
            hsdag_err_set(c->e, HSDAG_ENOMEM, "%s: out of memory", c->what);
            return -2;
        }
        c->dims[c->n_dims++] = v;
        rank++;
        s = end;
        while (*s == ' ') s++;
        if (*s == ',')
            s++;
        else if (*s != close)
            goto notshape;
    }
    s++;
    while (*s == ' ') s++;
    if (*s) goto notshape;
    double elems = rank ? hsdag_ioutil_shape_elems(c->dims + start, rank) : 1.0;
    if (elems > HSDAG_MAX_ELEMS) {
        c->n_dims = start;
        hsdag_err_set(c->e, HSDAG_ELIMIT, "%s: %s: shape has %.3g elements (limit %.3g)", c->what, where,
                      elems, (double)HSDAG_MAX_ELEMS);
        return -2;
    }
    return rank;
notshape:
    c->n_dims = start;
    return -1;
}

static int dot_is_const_op(const char *op)
{
    return strcmp(op, "Constant") == 0 || strcmp(op, "Const") == 0 || strcmp(op, "get_attr") == 0 ||
           strcmp(op, "nncf_model_const") == 0;
}

/* ---- comparators (qsort has no context: keys are precomputed into the records) ---- */
static int dot_cmp_i64(int64_t a, int64_t b)
{
    return a < b ? -1 : a > b;
}

/* by source, out_port, shape text, file order: groups the edges of one tensor */
static int dot_edge_tensor_cmp(const void *a, const void *b)
{
    const dot_edge *x = a, *y = b;
    int r;
    if ((r = dot_cmp_i64(x->u, y->u))) return r;
    if ((r = dot_cmp_i64(x->out_port, y->out_port))) return r;
    if (x->out_port < 0 && (r = strcmp(x->shape, y->shape))) return r;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* by node, out_port, first appearance: the output order of a node's tensors */
static int dot_tensor_cmp(const void *a, const void *b)
{
    const dot_tensor *x = a, *y = b;
    int r;
    if ((r = dot_cmp_i64(x->node, y->node))) return r;
    if ((r = dot_cmp_i64(x->out_port, y->out_port))) return r;
    return x->first_seq < y->first_seq ? -1 : x->first_seq > y->first_seq;
}

/* by source, target, tensor: distinct builder edges */
static int dot_edge_pair_cmp(const void *a, const void *b)
{
    const dot_edge *x = a, *y = b;
    int r;
    if ((r = dot_cmp_i64(x->u, y->u))) return r;
    if ((r = dot_cmp_i64(x->v, y->v))) return r;
    return dot_cmp_i64(x->tensor, y->tensor);
}

/* by target, then key (in_port or constness), then file order: a node's inputs */
static int dot_edge_input_cmp(const void *a, const void *b)
{
    const dot_edge *x = a, *y = b;
    int r;
    if ((r = dot_cmp_i64(x->v, y->v))) return r;
    if ((r = dot_cmp_i64(x->key, y->key))) return r;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int dot_seq_cmp(const void *a, const void *b)
{
    uint64_t x = AGSEQ(*(Agnode_t *const *)a), y = AGSEQ(*(Agnode_t *const *)b);
    return x < y ? -1 : x > y;
}

/* ---- steps ---- */
/* Nodes in file order and every edge with its attributes. */
static int dot_collect(dot_ctx *c)
{
    Agraph_t *g = c->g;
    /* counted by walking, not with agnnodes/agnedges: their dtsize recurses once per element of a
     * degenerate tree (600,000 parallel a -> b edges overflowed the stack) */
    long nn = 0, ne = 0;
    for (Agnode_t *v = agfstnode(g); v; v = agnxtnode(g, v)) {
        nn++;
        for (Agedge_t *ed = agfstout(g, v); ed; ed = agnxtout(g, ed)) ne++;
    }
    if (nn > HSDAG_MAX_NODES)
        return hsdag_err_set(c->e, HSDAG_ELIMIT, "%s: %ld nodes (limit %d)", c->what, nn, HSDAG_MAX_NODES);
    if (ne > HSDAG_MAX_EDGES)
        return hsdag_err_set(c->e, HSDAG_ELIMIT, "%s: %ld edges (limit %d)", c->what, ne, HSDAG_MAX_EDGES);
    c->nodes = hsdag_calloc((size_t)nn + 1, sizeof *c->nodes);
    c->edges = hsdag_calloc((size_t)ne + 1, sizeof *c->edges);
    if (!c->nodes || !c->edges) return hsdag_err_set(c->e, HSDAG_ENOMEM, "%s: out of memory", c->what);
    int32_t n = 0;
    for (Agnode_t *v = agfstnode(g); v && n < nn; v = agnxtnode(g, v)) c->nodes[n++] = v;
    c->n = n;
    /* cgraph iterates nodes by sequence already; sorting makes the binary search below safe anyway */
    qsort(c->nodes, (size_t)n, sizeof *c->nodes, dot_seq_cmp);
    Agsym_t *s_label = agattr(g, AGEDGE, "label", NULL), *s_shape = agattr(g, AGEDGE, "shape", NULL);
    Agsym_t *s_op = agattr(g, AGEDGE, "out_port_id", NULL), *s_ip = agattr(g, AGEDGE, "in_port_id", NULL);
    Agsym_t *s_dt = agattr(g, AGEDGE, "dtype", NULL);
    int32_t m = 0;
    for (int32_t a = 0; a < n; a++)
        for (Agedge_t *ed = agfstout(g, c->nodes[a]); ed && m < ne; ed = agnxtout(g, ed)) {
            dot_edge *d = &c->edges[m++];
            Agnode_t *h = aghead(ed);
            int32_t lo = 0, hi = n;
            while (lo < hi) {
                int32_t mid = lo + (hi - lo) / 2;
                if (AGSEQ(c->nodes[mid]) < AGSEQ(h))
                    lo = mid + 1;
                else
                    hi = mid;
            }
            HSDAG_ASSERT(lo < n && c->nodes[lo] == h);
            d->u = a;
            d->v = lo;
            d->seq = (uint64_t)AGSEQ(ed);
            const char *sh = dot_get(ed, s_shape);
            if (!sh) sh = dot_get(ed, s_label);
            d->shape = sh ? sh : "";
            d->dtype = dot_get(ed, s_dt);
            if (hsdag_ioutil_parse_i64(dot_get(ed, s_op), &d->out_port) < 0 || d->out_port < 0)
                d->out_port = -1;
            if (hsdag_ioutil_parse_i64(dot_get(ed, s_ip), &d->in_port) < 0 || d->in_port < 0) d->in_port = -1;
        }
    c->m = m;
    return 0;
}

/* Gives every edge a tensor: one per distinct (source, out_port or shape text); parses the shapes. */
static int dot_tensors(dot_ctx *c)
{
    int32_t *remap = NULL;
    int rc = 0;
    c->tensors = hsdag_calloc((size_t)c->m + 1, sizeof *c->tensors);
    remap = hsdag_malloc(((size_t)c->m + 1) * sizeof *remap);
    if (!c->tensors || !remap) {
        rc = hsdag_err_set(c->e, HSDAG_ENOMEM, "%s: out of memory", c->what);
        goto done;
    }
    qsort(c->edges, (size_t)c->m, sizeof *c->edges, dot_edge_tensor_cmp);
    for (int32_t k = 0; k < c->m; k++) {
        dot_edge *d = &c->edges[k], *p = k ? &c->edges[k - 1] : NULL;
        if (!p || p->u != d->u || p->out_port != d->out_port ||
            (d->out_port < 0 && strcmp(p->shape, d->shape))) {
            dot_tensor *t = &c->tensors[c->n_tensors];
            t->node = d->u;
            t->out_port = d->out_port;
            t->first_seq = d->seq;
            t->shape = d->shape;
            t->dtype = d->dtype;
            t->dim_off = c->n_tensors; /* scratch: the pre-sort index */
            c->n_tensors++;
        }
        d->tensor = c->n_tensors - 1;
    }
    qsort(c->tensors, (size_t)c->n_tensors, sizeof *c->tensors, dot_tensor_cmp);
    for (int32_t t = 0; t < c->n_tensors; t++) remap[c->tensors[t].dim_off] = t;
    for (int32_t k = 0; k < c->m; k++) c->edges[k].tensor = remap[c->edges[k].tensor];
    for (int32_t t = 0; t < c->n_tensors; t++) {
        dot_tensor *tt = &c->tensors[t];
        char where[200];
        snprintf(where, sizeof where, "node '%.150s' output", agnameof(c->nodes[tt->node]));
        tt->dim_off = (int32_t)c->n_dims;
        int rank = dot_shape_parse(c, tt->shape, where);
        if (rank == -2) {
            rc = c->e ? c->e->status : HSDAG_ELIMIT;
            goto done;
        }
        tt->rank = (int8_t)rank;
        hsdag_dtype dt = tt->dtype ? hsdag_dtype_parse(tt->dtype) : HSDAG_DT_F32;
        if (dt == HSDAG_DT_UNKNOWN) dt = HSDAG_DT_F32;
        tt->dt = (uint8_t)dt;
        double elems = rank < 0 ? -1.0 : rank ? hsdag_ioutil_shape_elems(c->dims + tt->dim_off, rank) : 1.0;
        tt->bytes = elems < 0 ? 0.0 : elems * hsdag_dtype_bytes(dt);
    }
done:
    hsdag_free(remap);
    return rc;
}

/* Node name: label (unless "\N") or DOT id, without a leading "<id> " that repeats the id attribute. */
static const char *dot_node_name(Agnode_t *v, Agsym_t *s_label, const char *idattr)
{
    const char *nm = dot_get(v, s_label);
    if (!nm || strcmp(nm, "\\N") == 0) nm = agnameof(v);
    if (!nm) return "";
    if (idattr) {
        size_t il = strlen(idattr);
        if (strncmp(nm, idattr, il) == 0 && nm[il] == ' ' && nm[il + 1]) nm += il + 1;
    }
    return nm;
}

/* dot_build's per-node scratch arrays (n + 1 or n + 2 entries; src, dst: one per file edge). */
typedef struct dot_scratch {
    int32_t *src, *dst, *in_off, *out_off;
    uint8_t *is_const, *cv, *all_ports;
    double *cbytes, *param;
} dot_scratch;

/* Nodes in file order with their output tensors (tensors are sorted by node): s->out_off, is_const, cbytes.
 * Returns 0 or the builder's status. */
static int dot_build_nodes(dot_ctx *c, hsdag_gb *b, dot_scratch *s)
{
    Agsym_t *s_type = agattr(c->g, AGNODE, "type", NULL), *s_id = agattr(c->g, AGNODE, "id", NULL);
    Agsym_t *s_nlabel = agattr(c->g, AGNODE, "label", NULL);
    int32_t n = c->n;
    for (int32_t t = 0; t < c->n_tensors; t++) s->out_off[c->tensors[t].node + 1]++;
    for (int32_t i = 0; i < n; i++) s->out_off[i + 1] += s->out_off[i];
    for (int32_t i = 0; i < n; i++) {
        const char *idattr = dot_get(c->nodes[i], s_id);
        const char *op = dot_get(c->nodes[i], s_type);
        if (!op) op = "Unknown";
        int32_t v = hsdag_gb_add_node(b, dot_node_name(c->nodes[i], s_nlabel, idattr), op);
        if (v < 0) return v;
        HSDAG_ASSERT(v == i);
        int64_t fid;
        if (hsdag_ioutil_parse_i64(idattr, &fid) == 0 && fid >= 0 && fid <= INT32_MAX)
            hsdag_gb_set_file_id(b, v, (int32_t)fid);
        s->is_const[i] = (uint8_t)dot_is_const_op(op);
        for (int32_t t = s->out_off[i]; t < s->out_off[i + 1]; t++) {
            const dot_tensor *tt = &c->tensors[t];
            int brc = hsdag_gb_add_output(b, v, (hsdag_dtype)tt->dt, tt->rank,
                                          c->dims ? c->dims + tt->dim_off : NULL);
            if (brc < 0) return brc;
            s->cbytes[i] += tt->bytes;
        }
    }
    return 0;
}

/* Distinct (source, target, tensor) edges into the builder and s->src / dst; then the constant attribution
 * (s->cv, param). Returns 0 or the builder's status (ENOMEM). */
static int dot_build_edges(dot_ctx *c, hsdag_gb *b, dot_scratch *s)
{
    int32_t m = 0;
    qsort(c->edges, (size_t)c->m, sizeof *c->edges, dot_edge_pair_cmp);
    for (int32_t k = 0; k < c->m; k++) {
        const dot_edge *d = &c->edges[k];
        if (k > 0 && dot_edge_pair_cmp(d, &c->edges[k - 1]) == 0) continue;
        int brc = hsdag_gb_add_edge(b, d->u, d->v, c->tensors[d->tensor].bytes);
        if (brc < 0) return brc;
        s->src[m] = d->u;
        s->dst[m] = d->v;
        m++;
    }
    if (hsdag_constw_attribute(c->n, m, s->src, s->dst, s->is_const, s->cbytes, s->cv, s->param) < 0)
        return HSDAG_ENOMEM;
    return 0;
}

/* The inputs of each node in op order (by in_port, or constness when a node's ports are not all given),
 * then each node's op class, FLOPs and parameter bytes. Returns 0 or HSDAG_ENOMEM. */
static int dot_build_costs(dot_ctx *c, hsdag_gb *b, dot_scratch *s)
{
    Agsym_t *s_type = agattr(c->g, AGNODE, "type", NULL);
    int32_t n = c->n, max_in = 0, *in_off = s->in_off, *out_off = s->out_off;
    for (int32_t i = 0; i < n; i++) s->all_ports[i] = 1;
    for (int32_t k = 0; k < c->m; k++) {
        in_off[c->edges[k].v + 1]++;
        if (c->edges[k].in_port < 0) s->all_ports[c->edges[k].v] = 0;
    }
    for (int32_t k = 0; k < c->m; k++) {
        dot_edge *d = &c->edges[k];
        d->key = s->all_ports[d->v] ? d->in_port : (int64_t)s->cv[d->u];
    }
    qsort(c->edges, (size_t)c->m, sizeof *c->edges, dot_edge_input_cmp);
    for (int32_t i = 0; i < n; i++) {
        if (in_off[i + 1] > max_in) max_in = in_off[i + 1];
        in_off[i + 1] += in_off[i];
    }
    for (int32_t i = 0; i < n; i++)
        if (out_off[i + 1] - out_off[i] > max_in) max_in = out_off[i + 1] - out_off[i];
    hsdag_shape_ref *refs = hsdag_malloc(((size_t)max_in * 2 + 1) * sizeof *refs);
    if (!refs) return HSDAG_ENOMEM;
    for (int32_t i = 0; i < n; i++) {
        int n_in = in_off[i + 1] - in_off[i], n_out = out_off[i + 1] - out_off[i];
        for (int j = 0; j < n_in; j++) {
            const dot_tensor *tt = &c->tensors[c->edges[in_off[i] + j].tensor];
            refs[j] = (hsdag_shape_ref){tt->rank, c->dims ? c->dims + tt->dim_off : NULL};
        }
        for (int j = 0; j < n_out; j++) {
            const dot_tensor *tt = &c->tensors[out_off[i] + j];
            refs[n_in + j] = (hsdag_shape_ref){tt->rank, c->dims ? c->dims + tt->dim_off : NULL};
        }
        hsdag_opcost_in in;
        memset(&in, 0, sizeof in);
        in.op = dot_get(c->nodes[i], s_type);
        if (!in.op) in.op = "Unknown";
        in.n_in = n_in;
        in.in = refs;
        in.n_out = n_out;
        in.out = refs + n_in;
        hsdag_opcost oc = hsdag_opcost_estimate(&in);
        hsdag_gb_set_opclass(b, i, oc.opclass);
        hsdag_gb_set_flops(b, i, s->cv[i] ? 0.0 : oc.flops);
        hsdag_gb_set_param_bytes(b, i, s->param[i]);
    }
    hsdag_free(refs);
    return 0;
}

static int dot_build(dot_ctx *c, hsdag_graph **out)
{
    int rc, brc = HSDAG_ENOMEM;
    int32_t n = c->n;
    dot_scratch s;
    hsdag_gb *b = hsdag_gb_create();
    s.src = hsdag_malloc(((size_t)c->m + 1) * sizeof *s.src);
    s.dst = hsdag_malloc(((size_t)c->m + 1) * sizeof *s.dst);
    s.in_off = hsdag_calloc((size_t)n + 2, sizeof *s.in_off);
    s.out_off = hsdag_calloc((size_t)n + 2, sizeof *s.out_off);
    s.is_const = hsdag_calloc((size_t)n + 1, 1);
    s.cv = hsdag_calloc((size_t)n + 1, 1);
    s.all_ports = hsdag_calloc((size_t)n + 1, 1);
    s.cbytes = hsdag_calloc((size_t)n + 1, sizeof *s.cbytes);
    s.param = hsdag_calloc((size_t)n + 1, sizeof *s.param);
    if (!b || !s.src || !s.dst || !s.in_off || !s.out_off || !s.is_const || !s.cv || !s.all_ports ||
        !s.cbytes || !s.param)
        goto builder;
    if ((brc = dot_build_nodes(c, b, &s)) < 0 || (brc = dot_build_edges(c, b, &s)) < 0 ||
        (brc = dot_build_costs(c, b, &s)) < 0)
        goto builder;
    hsdag_graph_meta meta;
    hsdag_ioutil_meta_init(&meta, HSDAG_FMT_DOT);
    meta.file_nodes = c->n;
    meta.file_edges = c->m;
    meta.name = agnameof(c->g) ? agnameof(c->g) : "";
    if (meta.name[0] == '%') meta.name = ""; /* cgraph's internal name of an anonymous graph */
    hsdag_gb_set_meta(b, &meta);
    rc = hsdag_gb_finish(b, out, c->e);
    if (rc < 0) hsdag_err_prefix(c->e, c->what);
    goto done;
builder:
    rc = hsdag_ioutil_builder_fail(c->e, c->what, brc);
done:
    hsdag_gb_free(b);
    hsdag_free(s.src);
    hsdag_free(s.dst);
    hsdag_free(s.in_off);
    hsdag_free(s.out_off);
    hsdag_free(s.is_const);
    hsdag_free(s.cv);
    hsdag_free(s.all_ports);
    hsdag_free(s.cbytes);
    hsdag_free(s.param);
    return rc;
}

/* ---- the extent of the first graph (cgraph parses one graph and silently leaves the rest) ---- */
/* Skips a comment or string starting at s[i] (or returns i unchanged if there is none there). */
static size_t dot_skip_lexeme(const char *s, size_t n, size_t i)
{
    if (s[i] == '"') {
        for (i++; i < n && s[i] != '"'; i++)
            if (s[i] == '\\' && i + 1 < n) i++;
        return i < n ? i + 1 : n;
    }
    if (s[i] == '<') { /* HTML string: balanced <...> */
        int depth = 0;
        for (; i < n; i++) {
            if (s[i] == '<')
                depth++;
            else if (s[i] == '>' && --depth == 0)
                return i + 1;
        }
        return n;
    }
    if (s[i] == '/' && i + 1 < n && s[i + 1] == '/') {
        while (i < n && s[i] != '\n') i++;
        return i;
    }
    if (s[i] == '#') { /* cgraph 2.42's scanner: '#' to the end of the line, anywhere outside a string */
        while (i < n && s[i] != '\n') i++;
        return i;
    }
    if (s[i] == '/' && i + 1 < n && s[i + 1] == '*') {
        for (i += 2; i + 1 < n; i++)
            if (s[i] == '*' && s[i + 1] == '/') return i + 2;
        return n;
    }
    return i;
}

/* Offset just past the brace that closes the first graph, or 0 if there is none (cgraph then reports
 * the syntax error itself). */
static size_t dot_first_graph_end(const char *s, size_t n)
{
    int depth = 0;
    size_t i = 0;
    while (i < n) {
        size_t j = dot_skip_lexeme(s, n, i);
        if (j != i) {
            i = j;
            continue;
        }
        if (s[i] == '{')
            depth++;
        else if (s[i] == '}' && --depth == 0)
            return i + 1;
        else if (s[i] == '}' && depth < 0)
            return 0;
        i++;
    }
    return 0;
}

/* 1 if s[0..n) holds only blanks and comments. */
static int dot_blank_tail(const char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        if (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r' || s[i] == '\f' || s[i] == '\v') {
            i++;
            continue;
        }
        if (s[i] == '"' || s[i] == '<') return 0;
        size_t j = dot_skip_lexeme(s, n, i);
        if (j == i) return 0;
        i = j;
    }
    return 1;
}

static size_t dot_line_of(const char *s, size_t off)
{
    size_t line = 1;
    for (size_t i = 0; i < off; i++) line += s[i] == '\n';
    return line;
}

/* ---- the pre-scan: what cgraph would build, bounded before cgraph sees the text ----
 * cgraph is not built for hostile input: a 4 MB identifier takes its lexer 28 s (quadratic), an edge
 * statement between two node lists or subgraphs of 8,000 nodes each (94 KB) creates 64M edges, every
 * attribute name gives every object a slot (5,000 names x 5,000 nodes = 200 MB from 73 KB), and deep
 * nesting grows its parser's stack. The pre-scan tokenises the text as cgraph's scanner does and
 * follows the statement grammar far enough to bound, from above, the edges an edge statement creates
 * (the product of each pair of operands' node counts; a named subgraph keeps every node ever put in it),
 * the node mentions, the distinct attribute names and the nesting depth. */
#define DOT_MAX_ID 65536     /* bytes of one identifier, quoted string (with '+' joins) or HTML string */
#define DOT_MAX_DEPTH 64     /* nested subgraph bodies */
#define DOT_EDGES_BASE 65536 /* edges allowed beyond one per DOT_BYTES_PER_EDGE bytes of text */
#define DOT_BYTES_PER_EDGE 4
#define DOT_SLOTS_PER_BYTE 8 /* attribute slots (names x objects) per byte of text, beyond 2^20 */

typedef enum {
    DT_END,
    DT_ATOM,
    DT_EDGEOP,
    DT_LBRACE,
    DT_RBRACE,
    DT_LBRACKET,
    DT_RBRACKET,
    DT_SEMI,
    DT_COMMA,
    DT_EQUALS,
    DT_COLON,
    DT_ATTRKW, /* node, edge, graph */
    DT_SUBGRAPH,
    DT_OTHER
} dot_tok;

typedef struct dot_lex {
    const char *s;
    size_t n, i; /* text, length, position */
    size_t line;
    size_t tok_start, tok_len; /* the last token (an atom: its text, quotes included) */
} dot_lex;

static int dot_letter(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80;
}

static int dot_kw(const char *p, size_t k, const char *kw)
{
    if (strlen(kw) != k) return 0;
    for (size_t j = 0; j < k; j++)
        if ((p[j] | 0x20) != kw[j]) return 0;
    return 1;
}

/* Blanks and comments before the next token (cgraph: '#' starts a comment anywhere, not only at a line
 * start: "a#;\n-> b" is the edge a -> b). */
static void dot_lex_skip(dot_lex *x)
{
    for (;;) {
        if (x->i >= x->n) return;
        char c = x->s[x->i];
        if (c == '\n') {
            x->line++;
            x->i++;
        } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
            x->i++;
        } else if ((c == '/' && x->i + 1 < x->n && (x->s[x->i + 1] == '/' || x->s[x->i + 1] == '*')) ||
                   c == '#') {
            size_t j = dot_skip_lexeme(x->s, x->n, x->i);
            for (size_t k = x->i; k < j; k++) x->line += x->s[k] == '\n';
            x->i = j;
        } else {
            return;
        }
    }
}

/* One quoted string from x->i (at '"'); returns its end. */
static size_t dot_lex_quoted(dot_lex *x, size_t i)
{
    for (i++; i < x->n && x->s[i] != '"'; i++) {
        if (x->s[i] == '\\' && i + 1 < x->n) i++;
        if (x->s[i] == '\n') x->line++;
    }
    return i < x->n ? i + 1 : x->n;
}

static dot_tok dot_lex_next(dot_lex *x)
{
    dot_lex_skip(x);
    x->tok_start = x->i;
    x->tok_len = 0;
    if (x->i >= x->n) return DT_END;
    const char *s = x->s;
    unsigned char c = (unsigned char)s[x->i];
    size_t i = x->i;
    if (c == '"') { /* quoted, with "a" + "b" joins */
        i = dot_lex_quoted(x, i);
        for (;;) {
            dot_lex y = *x;
            y.i = i;
            dot_lex_skip(&y);
            if (y.i >= y.n || s[y.i] != '+') break;
            y.i++;
            dot_lex_skip(&y);
            if (y.i >= y.n || s[y.i] != '"') break;
            x->line = y.line;
            i = dot_lex_quoted(x, y.i);
        }
    } else if (c == '<') { /* HTML string: balanced <...> */
        int depth = 0;
        for (; i < x->n; i++) {
            if (s[i] == '\n') x->line++;
            if (s[i] == '<')
                depth++;
            else if (s[i] == '>' && --depth == 0)
                break;
        }
        i = i < x->n ? i + 1 : x->n;
    } else if (dot_letter(c)) {
        while (i < x->n && (dot_letter((unsigned char)s[i]) || (s[i] >= '0' && s[i] <= '9'))) i++;
        size_t k = i - x->i;
        x->i = i;
        x->tok_len = k;
        if (dot_kw(s + x->tok_start, k, "node") || dot_kw(s + x->tok_start, k, "edge") ||
            dot_kw(s + x->tok_start, k, "graph"))
            return DT_ATTRKW;
        if (dot_kw(s + x->tok_start, k, "subgraph")) return DT_SUBGRAPH;
        if (dot_kw(s + x->tok_start, k, "digraph") || dot_kw(s + x->tok_start, k, "strict")) return DT_OTHER;
        return DT_ATOM;
    } else if ((c >= '0' && c <= '9') || c == '.' ||
               (c == '-' && i + 1 < x->n && ((s[i + 1] >= '0' && s[i + 1] <= '9') || s[i + 1] == '.'))) {
        /* a number: -?(digits(.digits*)? | .digits); what follows starts a new token, as in cgraph */
        size_t j = i + (c == '-');
        size_t d0 = j;
        while (j < x->n && s[j] >= '0' && s[j] <= '9') j++;
        int intpart = j > d0;
        if (j < x->n && s[j] == '.') {
            size_t f0 = ++j;
            while (j < x->n && s[j] >= '0' && s[j] <= '9') j++;
            if (!intpart && j == f0) { /* a lone '.' or "-." */
                x->i = i + 1;
                return DT_OTHER;
            }
        } else if (!intpart) {
            x->i = i + 1;
            return DT_OTHER;
        }
        i = j;
    } else if ((c == '-' && i + 1 < x->n && (s[i + 1] == '>' || s[i + 1] == '-'))) {
        x->i = i + 2;
        return DT_EDGEOP;
    } else {
        x->i = i + 1;
        switch (c) {
        case '{':
            return DT_LBRACE;
        case '}':
            return DT_RBRACE;
        case '[':
            return DT_LBRACKET;
        case ']':
            return DT_RBRACKET;
        case ';':
            return DT_SEMI;
        case ',':
            return DT_COMMA;
        case '=':
            return DT_EQUALS;
        case ':':
            return DT_COLON;
        default:
            return DT_OTHER;
        }
    }
    x->tok_len = i - x->i;
    x->i = i;
    return DT_ATOM;
}

static dot_tok dot_lex_peek(const dot_lex *x)
{
    dot_lex y = *x;
    return dot_lex_next(&y);
}

typedef struct dot_frame {
    double nodes; /* node mentions inside this body, nested ones included */
    double left;  /* the enclosing statement's operand before an edge operator into this body, or -1 */
    int32_t name; /* named subgraph: its index in the name table, else -1 */
} dot_frame;

typedef struct dot_scan {
    double edges, mentions, slots;
    int32_t attr_names;
} dot_scan;

/* The pre-scan's state: the lexer, the body stack, the current edge statement's operands (node counts;
 * -1 = none), the named subgraphs' node totals and the attribute names seen. */
typedef struct dot_pscan {
    dot_lex x;
    dot_frame stack[DOT_MAX_DEPTH + 1];
    int depth, skip_atom, in_brackets;
    double left, operand, *sub_total;
    size_t n_sub, cap_sub;
    dot_tok prev;
    int32_t pending_name;
    hsdag_strmap *attrs, *subs;
    dot_scan *sc;
    const char *what;
    hsdag_err *e;
} dot_pscan;

/* Ends the current edge statement: its last operator's edges are counted. */
static void dot_ps_flush(dot_pscan *p)
{
    if (p->left >= 0 && p->operand >= 0) p->sc->edges += p->left * p->operand;
    p->left = p->operand = -1;
}

static int dot_ps_oom(dot_pscan *p)
{
    return hsdag_err_set(p->e, HSDAG_ENOMEM, "%s: out of memory", p->what);
}

/* A token inside [...]: names go into the name table, nothing else counts. */
static int dot_ps_bracket(dot_pscan *p, dot_tok t)
{
    if (t == DT_RBRACKET) {
        p->in_brackets = 0;
        dot_ps_flush(p);
    } else if (t == DT_ATOM && !p->skip_atom && dot_lex_peek(&p->x) == DT_EQUALS) {
        if (hsdag_strmap_put(p->attrs, p->x.s + p->x.tok_start, p->x.tok_len, 0) < 0) return dot_ps_oom(p);
    } else if (t == DT_EQUALS) {
        p->skip_atom = 1;
        return 0;
    }
    p->skip_atom = 0;
    return 0;
}

/* "subgraph [name]": a name gets an entry in the table of named subgraphs (their node totals). */
static int dot_ps_subgraph(dot_pscan *p)
{
    if (p->operand >= 0 && p->prev != DT_EDGEOP) dot_ps_flush(p);
    p->pending_name = -1;
    if (dot_lex_peek(&p->x) != DT_ATOM) return 0;
    dot_lex_next(&p->x);
    const char *name = p->x.s + p->x.tok_start;
    int32_t id = hsdag_strmap_get(p->subs, name, p->x.tok_len);
    if (id < 0) {
        id = (int32_t)p->n_sub;
        if (hsdag_strmap_put(p->subs, name, p->x.tok_len, id) < 0 ||
            hsdag_grow((void **)&p->sub_total, &p->cap_sub, p->n_sub + 1, sizeof *p->sub_total) < 0)
            return dot_ps_oom(p);
        p->sub_total[p->n_sub++] = 0;
    }
    p->pending_name = id;
    return 0;
}

/* '{' opens a body (ELIMIT past DOT_MAX_DEPTH), '}' closes one: 1 when it closed the graph itself. */
static int dot_ps_brace(dot_pscan *p, dot_tok t)
{
    if (t == DT_LBRACE) {
        if (p->operand >= 0 && p->prev != DT_EDGEOP && p->prev != DT_SUBGRAPH) dot_ps_flush(p);
        if (p->depth >= DOT_MAX_DEPTH)
            return hsdag_err_set(p->e, HSDAG_ELIMIT, "%s: line %zu: subgraphs nested deeper than %d", p->what,
                                 p->x.line, DOT_MAX_DEPTH);
        p->stack[++p->depth] = (dot_frame){0, p->left, p->prev == DT_SUBGRAPH ? p->pending_name : -1};
        p->pending_name = -1;
        p->left = p->operand = -1;
        return 0;
    }
    dot_ps_flush(p);
    dot_frame f = p->stack[p->depth--];
    if (p->depth == 0) return 1; /* the graph's closing brace */
    double size = f.nodes;
    if (f.name >= 0) size = p->sub_total[f.name] += f.nodes; /* every node ever put in it */
    p->stack[p->depth].nodes += size;
    p->left = f.left;
    p->operand = size; /* the subgraph is the statement's current operand */
    return 0;
}

/* One token of a body outside brackets. Returns 0, 1 at the graph's closing brace, or an error. */
static int dot_ps_token(dot_pscan *p, dot_tok t)
{
    switch (t) {
    case DT_ATOM:
        if (p->skip_atom) { /* a port, an attribute value or a subgraph's name */
            p->skip_atom = 0;
            break;
        }
        if (dot_lex_peek(&p->x) == DT_EQUALS) { /* a graph attribute "name = value" */
            dot_ps_flush(p);
            if (hsdag_strmap_put(p->attrs, p->x.s + p->x.tok_start, p->x.tok_len, 0) < 0)
                return dot_ps_oom(p);
            break;
        }
        if (p->operand >= 0 && p->prev != DT_COMMA) dot_ps_flush(p); /* a new statement */
        p->operand = p->operand < 0 ? 1 : p->operand + 1;
        p->stack[p->depth].nodes += 1;
        p->sc->mentions += 1;
        break;
    case DT_EQUALS:
    case DT_COLON:
        p->skip_atom = 1;
        break;
    case DT_EDGEOP:
        if (p->left >= 0 && p->operand >= 0) p->sc->edges += p->left * p->operand;
        p->left = p->operand >= 0 ? p->operand : 0;
        p->operand = -1;
        break;
    case DT_SUBGRAPH:
        return dot_ps_subgraph(p);
    case DT_LBRACE:
    case DT_RBRACE:
        return dot_ps_brace(p, t);
    case DT_LBRACKET:
        p->in_brackets = 1;
        break;
    case DT_SEMI:
    case DT_ATTRKW:
        dot_ps_flush(p);
        break;
    default:
        break;
    }
    return 0;
}

/* The limits on what the scan counted, for len bytes of text. */
static int dot_ps_bounds(dot_pscan *p, size_t len)
{
    dot_scan *sc = p->sc;
    sc->attr_names = hsdag_strmap_count(p->attrs);
    sc->slots = (double)sc->attr_names * (sc->mentions + sc->edges);
    double max_edges = fmin((double)HSDAG_MAX_EDGES, DOT_EDGES_BASE + (double)len / DOT_BYTES_PER_EDGE);
    double max_slots = 1048576.0 + (double)DOT_SLOTS_PER_BYTE * (double)len;
    if (sc->edges > max_edges)
        return hsdag_err_set(
            p->e, HSDAG_ELIMIT,
            "%s: the edge statements would create up to %.0f edges (limit %.0f for %zu bytes: "
            "node lists or subgraphs as edge ends multiply)",
            p->what, sc->edges, max_edges, len);
    if (sc->mentions > HSDAG_MAX_NODES)
        return hsdag_err_set(p->e, HSDAG_ELIMIT, "%s: more than %d nodes", p->what, HSDAG_MAX_NODES);
    if (sc->slots > max_slots)
        return hsdag_err_set(p->e, HSDAG_ELIMIT,
                             "%s: %d attribute names on up to %.0f nodes and edges need %.0f attribute slots "
                             "(limit %.0f for %zu bytes)",
                             p->what, sc->attr_names, sc->mentions + sc->edges, sc->slots, max_slots, len);
    return 0;
}

/* Bounds what cgraph would build from text (NUL-terminated, len bytes): ELIMIT with a one-line message
 * naming the line, or 0 with *sc filled. */
static int dot_prescan(dot_scan *sc, const char *text, size_t len, const char *what, hsdag_err *e)
{
    dot_pscan *p = hsdag_calloc(1, sizeof *p);
    if (!p) return hsdag_err_set(e, HSDAG_ENOMEM, "%s: out of memory", what);
    memset(sc, 0, sizeof *sc);
    p->x = (dot_lex){.s = text, .n = len, .line = 1};
    p->left = p->operand = -1;
    p->prev = DT_OTHER;
    p->pending_name = -1;
    p->sc = sc;
    p->what = what;
    p->e = e;
    p->attrs = hsdag_strmap_create();
    p->subs = hsdag_strmap_create();
    int rc = !p->attrs || !p->subs ? dot_ps_oom(p) : 0;
    for (dot_tok t; rc == 0 && (t = dot_lex_next(&p->x)) != DT_END; p->prev = t) {
        if (t == DT_ATOM && p->x.tok_len > DOT_MAX_ID) {
            rc = hsdag_err_set(e, HSDAG_ELIMIT, "%s: line %zu: an identifier of %zu bytes (limit %d)", what,
                               p->x.line, p->x.tok_len, DOT_MAX_ID);
        } else if (p->depth == 0) { /* the header: strict, digraph, the graph's name */
            if (t == DT_LBRACE) {
                p->stack[++p->depth] = (dot_frame){0, -1, -1};
                p->left = p->operand = -1;
            }
        } else if (p->in_brackets) {
            rc = dot_ps_bracket(p, t);
        } else {
            rc = dot_ps_token(p, t);
        }
    }
    if (rc >= 0) rc = dot_ps_bounds(p, len); /* rc 1: the graph's closing brace */
    hsdag_strmap_free(p->attrs);
    hsdag_strmap_free(p->subs);
    hsdag_free(p->sub_total);
    hsdag_free(p);
    return rc;
}

int hsdag_dot_read(hsdag_graph **out, const void *buf, size_t len, const char *what, hsdag_err *e)
{
    int rc;
    char *text = NULL;
    dot_ctx c;
    memset(&c, 0, sizeof c);
    c.what = what ? what : "<buffer>";
    c.e = e;
    if (out) *out = NULL;
    if (!buf || !out) return hsdag_err_set(e, HSDAG_EINVAL, "%s: no buffer or output", c.what);
    if (len > HSDAG_DOT_MAX_BYTES)
        return hsdag_err_set(e, HSDAG_ELIMIT, "%s: %zu bytes is above the DOT limit of %zu", c.what, len,
                             HSDAG_DOT_MAX_BYTES);
    const char *nul = memchr(buf, 0, len);
    if (nul)
        return hsdag_err_set(e, HSDAG_EPARSE, "%s: NUL byte at offset %zu (not a DOT text file)", c.what,
                             (size_t)(nul - (const char *)buf));
    text = hsdag_malloc(len + 1);
    if (!text) return hsdag_err_set(e, HSDAG_ENOMEM, "%s: out of memory", c.what);
    memcpy(text, buf, len);
    text[len] = 0;

    size_t end = dot_first_graph_end(text, len);
    if (end > 0 && !dot_blank_tail(text + end, len - end)) {
        rc = hsdag_err_set(e, HSDAG_EPARSE, "%s: line %zu: DOT text continues after the first graph", c.what,
                           dot_line_of(text, end));
        goto done;
    }
    dot_scan sc;
    if ((rc = dot_prescan(&sc, text, end > 0 ? end : len, c.what, e)) < 0) goto done;
    {
        /* cgraph does not survive an allocation failure (it prints and then dereferences NULL): make sure
         * the address space its graph needs is there first. Measured on cgraph 2.42: ~270 bytes per node,
         * ~240 per edge, 8 per attribute slot; the bound counts every node mention as a node. */
        double need = 320.0 * sc.mentions + 320.0 * sc.edges + 8.0 * sc.slots + 4.0 * (double)len + 1048576.0;
        void *probe = need < 0x1p62 ? hsdag_malloc((size_t)need) : NULL;
        if (!probe) {
            rc = hsdag_err_set(e, HSDAG_ENOMEM, "%s: out of memory (the DOT graph needs about %.0f MB)",
                               c.what, need / 1048576.0);
            goto done;
        }
        hsdag_free(probe);
    }
    memset(&dot_cap, 0, sizeof dot_cap);
    agusererrf prev = agseterrf(dot_err_collect);
    agreseterrors();
    agreadline(1);
    c.g = agmemread(text);
    aaglex_destroy();
    agseterrf(prev);
    if (!c.g) {
        while (dot_cap.len > 0 && dot_cap.msg[dot_cap.len - 1] == ' ') dot_cap.msg[--dot_cap.len] = 0;
        rc = hsdag_err_set(e, HSDAG_EPARSE, "%s: DOT %s", c.what, dot_cap.len ? dot_cap.msg : "syntax error");
        goto done;
    }
    if (!agisdirected(c.g)) {
        rc = hsdag_err_set(e, HSDAG_EUNSUPPORTED, "%s: undirected graph (a computation graph is a digraph)",
                           c.what);
        goto done;
    }
    if ((rc = dot_collect(&c)) < 0) goto done;
    /* the pre-scan's counts are upper bounds of what cgraph built (the fuzz targets hold it to that) */
    HSDAG_ASSERT((double)c.m <= sc.edges && (double)c.n <= sc.mentions);
    if ((rc = dot_tensors(&c)) < 0) goto done;
    rc = dot_build(&c, out);
done:
    if (c.g) agclose(c.g);
    agreseterrors();
    hsdag_free(text);
    hsdag_free(c.nodes);
    hsdag_free(c.edges);
    hsdag_free(c.tensors);
    hsdag_free(c.dims);
    return rc;
}

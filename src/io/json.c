/* json.c - hsdag's own JSON graph format ("format": "hsdag-graph", docs/formats.md): an exact, lossless
 * image of the IR, written one node / one edge per line and read back through the builder.
 * Not here: other JSON formats (tarnawski.c, split.c) or placements; the writer never rounds a number.
 * Entry points: hsdag_json_read, hsdag_json_write. */
#include "hsdag/io.h"
#include "jsonin.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define HJ_FORMAT "hsdag-graph"
#define HJ_VERSION 1
#define HJ_MAX_DEPTH 16

static const struct {
    uint32_t bit;
    const char *name;
} hj_flags[] = {
    {HSDAG_NF_BOOKKEEPING, "bookkeeping"},
    {HSDAG_NF_UNKNOWN_OP, "unknown_op"},
    {HSDAG_NF_INPUT, "input"},
    {HSDAG_NF_OUTPUT, "output"},
    {HSDAG_NF_BACKWARD, "backward"},
    {HSDAG_NF_NO_ACCEL, "no_accel"},
    {HSDAG_NF_RENAMED, "renamed"},
    {HSDAG_NF_FOLDED, "folded"},
};
#define HJ_NFLAGS (sizeof hj_flags / sizeof hj_flags[0])

static const char *const hj_cost_keys[HSDAG_COST_KINDS_] = {"cpu", "accel", "bwd"};

/* The format's own spellings (docs/formats.md), kept here so that renaming a display string elsewhere
 * never changes the file format. Sizes are checked against the enums below. */
static const char *const hj_opclass_names[] = {"unknown", "bookkeeping", "conv",    "matmul", "elemwise",
                                               "pool",    "norm",        "softmax", "reduce", "datamove"};
static const char *const hj_dtype_names[] = {"unknown", "f32",  "f16", "bf16", "f64", "i8",
                                             "u8",      "i16",  "u16", "i32",  "u32", "i64",
                                             "u64",     "bool", "i4",  "u4",   "u1"};
static const char *const hj_format_names[] = {"unknown",   "onnx",       "openvino-ir", "pipedream",
                                              "tarnawski", "hsdag-json", "dot",         "built"};
typedef char
    hj_check_opclass_[(sizeof hj_opclass_names / sizeof *hj_opclass_names == HSDAG_OP_CLASS_COUNT_) ? 1 : -1];
typedef char hj_check_dtype_[(sizeof hj_dtype_names / sizeof *hj_dtype_names == HSDAG_DT_COUNT_) ? 1 : -1];
typedef char
    hj_check_format_[(sizeof hj_format_names / sizeof *hj_format_names == HSDAG_FMT_BUILT + 1) ? 1 : -1];
#define HJ_NAME(table, i) (((size_t)(i) < sizeof table / sizeof *table) ? table[(size_t)(i)] : table[0])

/* Index of s in table, or -1. */
static int hj_lookup(const char *const *table, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(table[i], s) == 0) return (int)i;
    return -1;
}

/* ---- writer ---- */

#define HJ_LIT(b, lit) hsdag_buf_append((b), (lit), sizeof(lit) - 1)

/* Decimal text of an integer, without printf (the writer's hot path). */
static void hj_int(hsdag_buf *b, int64_t x)
{
    char tmp[24], *p = tmp + sizeof tmp;
    uint64_t u = x < 0 ? (uint64_t)0 - (uint64_t)x : (uint64_t)x;
    do {
        *--p = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (x < 0) *--p = '-';
    hsdag_buf_append(b, p, (size_t)(tmp + sizeof tmp - p));
}

/* Shortest round-trip text (hsdag_buf_double); integral values below 10^15 take the integer path, which
 * gives the same digits as "%.15g". -0 is written as 0 (JSON readers turn "-0" into an integer 0), NaN
 * as null. */
static void hj_num(hsdag_buf *b, double v)
{
    if (v == 0) {
        HJ_LIT(b, "0");
    } else if (fabs(v) < 1e15 && v == floor(v)) {
        hj_int(b, (int64_t)v);
    } else {
        hsdag_buf_double(b, v);
    }
}

static void hj_key(hsdag_buf *b, const char *sep_key)
{
    hsdag_buf_append(b, sep_key, strlen(sep_key));
}

static void hj_write_meta(const hsdag_graph *g, hsdag_buf *b)
{
    const hsdag_graph_meta *m = &g->meta;
    HJ_LIT(b, "\"meta\":{\"source_format\":");
    hsdag_buf_json_str(b, HJ_NAME(hj_format_names, m->format));
    HJ_LIT(b, ",\"name\":");
    hsdag_buf_json_str(b, m->name ? m->name : "");
    HJ_LIT(b, ",\"file_nodes\":");
    hj_int(b, m->file_nodes);
    HJ_LIT(b, ",\"file_edges\":");
    hj_int(b, m->file_edges);
    HJ_LIT(b, ",\"ir_version\":");
    hj_int(b, m->ir_version);
    HJ_LIT(b, ",\"opset\":");
    hj_int(b, m->opset);
    HJ_LIT(b, ",\"max_accels\":");
    hj_int(b, m->max_accels);
    HJ_LIT(b, ",\"max_cpus\":");
    hj_int(b, m->max_cpus);
    HJ_LIT(b, ",\"max_size_per_accel\":");
    hj_num(b, m->max_size_per_accel);
    HJ_LIT(b, "},\n");
}

static void hj_write_outputs(const hsdag_graph *g, int32_t v, hsdag_buf *b)
{
    HJ_LIT(b, ",\"outputs\":[");
    for (int32_t s = g->out_shape_off[v]; s < g->out_shape_off[v + 1]; s++) {
        if (s > g->out_shape_off[v]) HJ_LIT(b, ",");
        HJ_LIT(b, "{\"dtype\":\"");
        hj_key(b, HJ_NAME(hj_dtype_names, g->shape_dtype[s]));
        HJ_LIT(b, "\",\"shape\":");
        if (g->shape_rank[s] < 0) {
            HJ_LIT(b, "null}");
            continue;
        }
        HJ_LIT(b, "[");
        for (int32_t d = g->shape_dim_off[s]; d < g->shape_dim_off[s + 1]; d++) {
            if (d > g->shape_dim_off[s]) HJ_LIT(b, ",");
            hj_int(b, g->shape_dims[d]);
        }
        HJ_LIT(b, "]}");
    }
    HJ_LIT(b, "]}");
}

static void hj_write_node(const hsdag_graph *g, int32_t v, hsdag_buf *b)
{
    HJ_LIT(b, "{\"name\":");
    hsdag_buf_json_str(b, g->name[v]);
    HJ_LIT(b, ",\"op\":");
    hsdag_buf_json_str(b, g->op[v]);
    HJ_LIT(b, ",\"opclass\":\"");
    hj_key(b, HJ_NAME(hj_opclass_names, g->opclass[v]));
    HJ_LIT(b, "\",\"flags\":[");
    uint32_t f = g->flags[v], known = 0;
    int first = 1;
    for (size_t i = 0; i < HJ_NFLAGS; i++) {
        known |= hj_flags[i].bit;
        if (f & hj_flags[i].bit) {
            hsdag_buf_printf(b, "%s\"%s\"", first ? "" : ",", hj_flags[i].name);
            first = 0;
        }
    }
    if (f & ~known) hsdag_buf_printf(b, "%s%u", first ? "" : ",", f & ~known); /* future bits, as a number */
    HJ_LIT(b, "],\"flops\":");
    hj_num(b, g->flops[v]);
    HJ_LIT(b, ",\"param_bytes\":");
    hj_num(b, g->param_bytes[v]);
    HJ_LIT(b, ",\"out_bytes\":");
    hj_num(b, g->out_bytes[v]);
    HJ_LIT(b, ",\"mem_bytes\":");
    hj_num(b, g->mem_bytes[v]);
    HJ_LIT(b, ",\"color\":");
    hj_int(b, g->color[v]);
    HJ_LIT(b, ",\"file_id\":");
    hj_int(b, g->file_id[v]);
    HJ_LIT(b, ",\"cost_ms\":{");
    for (int k = 0; k < HSDAG_COST_KINDS_; k++) {
        hsdag_buf_printf(b, "%s\"%s\":", k ? "," : "", hj_cost_keys[k]);
        hj_num(b, g->cost_ms[(size_t)v * HSDAG_COST_KINDS_ + (size_t)k]);
    }
    HJ_LIT(b, "}");
    hj_write_outputs(g, v, b);
}

int hsdag_json_write(hsdag_buf *out, const hsdag_graph *g)
{
    hsdag_buf_printf(out, "{\"format\":\"%s\",\"version\":%d,\n", HJ_FORMAT, HJ_VERSION);
    hj_write_meta(g, out);
    HJ_LIT(out, "\"nodes\":[\n");
    for (int32_t v = 0; v < g->n_nodes; v++) {
        hj_write_node(g, v, out);
        if (v + 1 < g->n_nodes)
            HJ_LIT(out, ",\n");
        else
            HJ_LIT(out, "\n");
    }
    HJ_LIT(out, "],\n\"edges\":[\n");
    for (int32_t k = 0; k < g->n_edges; k++) {
        HJ_LIT(out, "{\"src\":");
        hj_int(out, g->edge_src[k]);
        HJ_LIT(out, ",\"dst\":");
        hj_int(out, g->out_dst[k]);
        HJ_LIT(out, ",\"bytes\":");
        hj_num(out, g->edge_bytes[k]);
        HJ_LIT(out, ",\"cost_ms\":");
        hj_num(out, g->edge_cost_ms[k]);
        if (k + 1 < g->n_edges)
            HJ_LIT(out, "},\n");
        else
            HJ_LIT(out, "}\n");
    }
    HJ_LIT(out, "]}\n");
    return out->oom ? HSDAG_ENOMEM : 0;
}

/* ---- reader ---- */

static int hj_read_meta(json_object *root, const char *what, hsdag_graph_meta *m, hsdag_err *e)
{
    json_object *mo;
    const char *fmt = NULL, *name = NULL;
    int64_t fn = -1, fe = -1, irv = -1, ops = -1, ka = -1, kc = -1;
    double cap = NAN;
    int rc = hsdag_jsonin_object(root, "meta", 0, &mo, what, "", e);
    if (rc < 0) return rc;
    if (rc == 0) {
        const char *c = "meta";
        if ((rc = hsdag_jsonin_string(mo, "source_format", 0, &fmt, what, c, e)) < 0) return rc;
        if ((rc = hsdag_jsonin_string(mo, "name", 0, &name, what, c, e)) < 0) return rc;
        if ((rc = hsdag_jsonin_int(mo, "file_nodes", 0, -1, INT64_MAX - 1, &fn, what, c, e)) < 0) return rc;
        if ((rc = hsdag_jsonin_int(mo, "file_edges", 0, -1, INT64_MAX - 1, &fe, what, c, e)) < 0) return rc;
        if ((rc = hsdag_jsonin_int(mo, "ir_version", 0, INT32_MIN, INT32_MAX, &irv, what, c, e)) < 0)
            return rc;
        if ((rc = hsdag_jsonin_int(mo, "opset", 0, INT32_MIN, INT32_MAX, &ops, what, c, e)) < 0) return rc;
        if ((rc = hsdag_jsonin_int(mo, "max_accels", 0, -1, INT32_MAX, &ka, what, c, e)) < 0) return rc;
        if ((rc = hsdag_jsonin_int(mo, "max_cpus", 0, -1, INT32_MAX, &kc, what, c, e)) < 0) return rc;
        if ((rc = hsdag_jsonin_number(mo, "max_size_per_accel", HSDAG_JI_NULLABLE, 0, HSDAG_MAX_BYTES, &cap,
                                      what, c, e)) < 0)
            return rc;
    }
    m->format = HSDAG_FMT_JSON;
    if (fmt) {
        int f = hj_lookup(hj_format_names, sizeof hj_format_names / sizeof *hj_format_names, fmt);
        if (f < 0)
            return hsdag_err_set(e, HSDAG_EPARSE, "%s: meta: source_format '%s' is not a known format", what,
                                 fmt);
        m->format = (hsdag_format)f;
    }
    m->name = name ? name : "";
    m->file_nodes = fn;
    m->file_edges = fe;
    m->ir_version = (int32_t)irv;
    m->opset = (int32_t)ops;
    m->max_accels = (int32_t)ka;
    m->max_cpus = (int32_t)kc;
    m->max_size_per_accel = cap;
    return 0;
}

static int hj_read_flags(json_object *nd, const char *what, const char *ctx, uint32_t *flags, hsdag_err *e)
{
    json_object *arr;
    size_t n;
    int rc = hsdag_jsonin_array(nd, "flags", 0, &arr, &n, what, ctx, e);
    *flags = 0;
    if (rc != 0) return rc < 0 ? rc : 0;
    for (size_t i = 0; i < n; i++) {
        json_object *f = json_object_array_get_idx(arr, i);
        if (json_object_is_type(f, json_type_int)) {
            int64_t x = json_object_get_int64(f);
            if (x <= 0 || x > (int64_t)UINT32_MAX)
                return hsdag_err_set(e, HSDAG_EPARSE, "%s: %s: flags[%zu] is not a flag bit set", what, ctx,
                                     i);
            *flags |= (uint32_t)x;
            continue;
        }
        const char *s = json_object_is_type(f, json_type_string) ? json_object_get_string(f) : NULL;
        size_t k = 0;
        while (s && k < HJ_NFLAGS && strcmp(s, hj_flags[k].name) != 0) k++;
        if (!s || k == HJ_NFLAGS)
            return hsdag_err_set(e, HSDAG_EPARSE, "%s: %s: flags[%zu] is not a known flag name", what, ctx,
                                 i);
        *flags |= hj_flags[k].bit;
    }
    return 0;
}

static int hj_read_outputs(json_object *nd, int32_t v, const char *what, const char *ctx, hsdag_gb *b,
                           hsdag_err *e)
{
    json_object *arr;
    size_t n;
    int rc = hsdag_jsonin_array(nd, "outputs", 0, &arr, &n, what, ctx, e);
    if (rc != 0) return rc < 0 ? rc : 0;
    for (size_t i = 0; i < n; i++) {
        char c2[200];
        snprintf(c2, sizeof c2, "%s: outputs[%zu]", ctx, i);
        json_object *o = json_object_array_get_idx(arr, i), *shape;
        if (!json_object_is_type(o, json_type_object))
            return hsdag_err_set(e, HSDAG_EPARSE, "%s: %s is not an object", what, c2);
        const char *dts;
        size_t rank = 0;
        if ((rc = hsdag_jsonin_string(o, "dtype", HSDAG_JI_REQUIRED, &dts, what, c2, e)) < 0) return rc;
        int dti = hj_lookup(hj_dtype_names, sizeof hj_dtype_names / sizeof *hj_dtype_names, dts);
        hsdag_dtype dt =
            dti >= 0 ? (hsdag_dtype)dti : hsdag_dtype_parse(dts); /* also "float32", "FP16", ... */
        if (dti < 0 && dt == HSDAG_DT_UNKNOWN)
            return hsdag_err_set(e, HSDAG_EPARSE, "%s: %s: dtype '%s' is not a known type", what, c2, dts);
        rc =
            hsdag_jsonin_array(o, "shape", HSDAG_JI_REQUIRED | HSDAG_JI_NULLABLE, &shape, &rank, what, c2, e);
        if (rc < 0) return rc;
        if (rc == 1) { /* null: unknown rank */
            if ((rc = hsdag_gb_add_output(b, v, dt, -1, NULL)) < 0)
                return hsdag_err_set(e, rc, "%s: %s: %s", what, c2, hsdag_status_str(rc));
            continue;
        }
        if (rank > HSDAG_MAX_RANK)
            return hsdag_err_set(e, HSDAG_ELIMIT, "%s: %s: rank %zu exceeds %d", what, c2, rank,
                                 HSDAG_MAX_RANK);
        int64_t dims[HSDAG_MAX_RANK];
        for (size_t d = 0; d < rank; d++) {
            char nm[32];
            snprintf(nm, sizeof nm, "shape[%zu]", d);
            rc = hsdag_jsonin_value_int(json_object_array_get_idx(shape, d), -1, INT64_MAX - 1, &dims[d],
                                        what, c2, nm, e);
            if (rc < 0) return rc;
        }
        if ((rc = hsdag_gb_add_output(b, v, dt, (int)rank, dims)) < 0)
            return hsdag_err_set(e, rc, "%s: %s: %s", what, c2, hsdag_status_str(rc));
    }
    return 0;
}

static int hj_read_node(json_object *nd, size_t i, const char *what, hsdag_gb *b, hsdag_err *e)
{
    char ctx[128];
    snprintf(ctx, sizeof ctx, "nodes[%zu]", i);
    if (!json_object_is_type(nd, json_type_object))
        return hsdag_err_set(e, HSDAG_EPARSE, "%s: %s is not an object", what, ctx);
    const char *name, *op, *ocs = NULL;
    int rc;
    if ((rc = hsdag_jsonin_string(nd, "name", HSDAG_JI_REQUIRED, &name, what, ctx, e)) < 0) return rc;
    snprintf(ctx, sizeof ctx, "nodes[%zu] '%.80s'", i, name);
    if ((rc = hsdag_jsonin_string(nd, "op", HSDAG_JI_REQUIRED, &op, what, ctx, e)) < 0) return rc;
    if ((rc = hsdag_jsonin_string(nd, "opclass", 0, &ocs, what, ctx, e)) < 0) return rc;
    int oc = -1;
    if (ocs) {
        oc = hj_lookup(hj_opclass_names, sizeof hj_opclass_names / sizeof *hj_opclass_names, ocs);
        if (oc < 0)
            return hsdag_err_set(e, HSDAG_EPARSE, "%s: %s: opclass '%s' is not a known class", what, ctx,
                                 ocs);
    }
    uint32_t flags;
    if ((rc = hj_read_flags(nd, what, ctx, &flags, e)) < 0) return rc;
    double flops = 0, param = 0, mem = NAN, cost[HSDAG_COST_KINDS_];
    int64_t color = -1, file_id = (int64_t)i;
    const unsigned nul = HSDAG_JI_NULLABLE;
    if ((rc = hsdag_jsonin_number(nd, "flops", nul, 0, HSDAG_MAX_FLOPS, &flops, what, ctx, e)) < 0) return rc;
    if ((rc = hsdag_jsonin_number(nd, "param_bytes", nul, 0, HSDAG_MAX_BYTES, &param, what, ctx, e)) < 0)
        return rc;
    if ((rc = hsdag_jsonin_number(nd, "mem_bytes", nul, 0, HSDAG_MAX_BYTES, &mem, what, ctx, e)) < 0)
        return rc;
    if ((rc = hsdag_jsonin_int(nd, "color", 0, -1, INT32_MAX, &color, what, ctx, e)) < 0) return rc;
    if ((rc = hsdag_jsonin_int(nd, "file_id", 0, INT32_MIN, INT32_MAX, &file_id, what, ctx, e)) < 0)
        return rc;
    json_object *co = NULL;
    if ((rc = hsdag_jsonin_object(nd, "cost_ms", 0, &co, what, ctx, e)) < 0) return rc;
    for (int k = 0; k < HSDAG_COST_KINDS_; k++) {
        cost[k] = NAN;
        if (co && (rc = hsdag_jsonin_number(co, hj_cost_keys[k], nul, 0, HSDAG_MAX_COST_MS, &cost[k], what,
                                            ctx, e)) < 0)
            return rc;
    }
    int32_t v = hsdag_gb_add_node(b, name, op);
    if (v < 0) return hsdag_err_set(e, v, "%s: %s: cannot add node: %s", what, ctx, hsdag_status_str(v));
    if (oc >= 0) hsdag_gb_set_opclass(b, v, (hsdag_opclass)oc);
    hsdag_gb_set_flags(b, v, flags);
    hsdag_gb_set_flops(b, v, flops);
    hsdag_gb_set_param_bytes(b, v, param);
    hsdag_gb_set_mem_bytes(b, v, mem);
    hsdag_gb_set_color(b, v, (int32_t)color);
    hsdag_gb_set_file_id(b, v, (int32_t)file_id);
    for (int k = 0; k < HSDAG_COST_KINDS_; k++) hsdag_gb_set_cost(b, v, (hsdag_costkind)k, cost[k]);
    return hj_read_outputs(nd, v, what, ctx, b, e);
}

static int hj_read_edge(json_object *ed, size_t k, size_t n, const char *what, hsdag_gb *b,
                        hsdag_jsonin_key *pairs, hsdag_err *e)
{
    char ctx[64];
    snprintf(ctx, sizeof ctx, "edges[%zu]", k);
    if (!json_object_is_type(ed, json_type_object))
        return hsdag_err_set(e, HSDAG_EPARSE, "%s: %s is not an object", what, ctx);
    int64_t s, d;
    double bytes = 0, cost = NAN;
    int rc;
    if ((rc = hsdag_jsonin_int(ed, "src", HSDAG_JI_REQUIRED, INT32_MIN, INT32_MAX, &s, what, ctx, e)) < 0)
        return rc;
    if ((rc = hsdag_jsonin_int(ed, "dst", HSDAG_JI_REQUIRED, INT32_MIN, INT32_MAX, &d, what, ctx, e)) < 0)
        return rc;
    snprintf(ctx, sizeof ctx, "edges[%zu] (%lld -> %lld)", k, (long long)s, (long long)d);
    if (s < 0 || (size_t)s >= n || d < 0 || (size_t)d >= n)
        return hsdag_err_set(e, HSDAG_EDANGLING, "%s: %s: node index out of range (%zu nodes)", what, ctx, n);
    if (s == d) return hsdag_err_set(e, HSDAG_ECYCLE, "%s: %s: edge from a node to itself", what, ctx);
    if ((rc = hsdag_jsonin_number(ed, "bytes", HSDAG_JI_NULLABLE, 0, HSDAG_MAX_BYTES, &bytes, what, ctx, e)) <
        0)
        return rc;
    if ((rc = hsdag_jsonin_number(ed, "cost_ms", HSDAG_JI_NULLABLE, 0, HSDAG_MAX_COST_MS, &cost, what, ctx,
                                  e)) < 0)
        return rc;
    pairs[k].key = (s << 32) | d;
    pairs[k].idx = (int32_t)k;
    rc = hsdag_gb_add_edge_ex(b, (int32_t)s, (int32_t)d, bytes, cost);
    if (rc < 0) return hsdag_err_set(e, rc, "%s: %s: cannot add edge: %s", what, ctx, hsdag_status_str(rc));
    return 0;
}

int hsdag_json_read(hsdag_graph **out, const void *buf, size_t len, const char *what, hsdag_err *e)
{
    *out = NULL;
    if (!what) what = "<buffer>";
    json_object *root = NULL, *nodes, *edges;
    hsdag_gb *b = NULL;
    hsdag_jsonin_key *pairs = NULL;
    size_t n = 0, m = 0;
    const char *fmt;
    int64_t version;
    hsdag_graph_meta meta;
    int rc = hsdag_jsonin_parse(buf, len, HJ_MAX_DEPTH, what, &root, e);
    if (rc < 0) goto done;
    if (!json_object_is_type(root, json_type_object)) {
        rc = hsdag_err_set(e, HSDAG_EPARSE, "%s: top level is not a JSON object", what);
        goto done;
    }
    if ((rc = hsdag_jsonin_string(root, "format", HSDAG_JI_REQUIRED, &fmt, what, "", e)) < 0) goto done;
    if (strcmp(fmt, HJ_FORMAT) != 0) {
        rc = hsdag_err_set(e, HSDAG_EFORMAT, "%s: format is '%s', not '%s'", what, fmt, HJ_FORMAT);
        goto done;
    }
    if ((rc = hsdag_jsonin_int(root, "version", HSDAG_JI_REQUIRED, INT32_MIN, INT32_MAX, &version, what, "",
                               e)) < 0)
        goto done;
    if (version != HJ_VERSION) {
        rc = hsdag_err_set(e, HSDAG_EUNSUPPORTED, "%s: version %lld is not supported (this reader knows %d)",
                           what, (long long)version, HJ_VERSION);
        goto done;
    }
    if ((rc = hj_read_meta(root, what, &meta, e)) < 0) goto done;
    if ((rc = hsdag_jsonin_array(root, "nodes", HSDAG_JI_REQUIRED, &nodes, &n, what, "", e)) < 0) goto done;
    if ((rc = hsdag_jsonin_array(root, "edges", HSDAG_JI_REQUIRED, &edges, &m, what, "", e)) < 0) goto done;
    if (n > HSDAG_MAX_NODES || m > HSDAG_MAX_EDGES) {
        rc = hsdag_err_set(e, HSDAG_ELIMIT, "%s: %zu nodes / %zu edges exceed the limits (%d / %d)", what, n,
                           m, HSDAG_MAX_NODES, HSDAG_MAX_EDGES);
        goto done;
    }
    b = hsdag_gb_create();
    pairs = hsdag_malloc((m ? m : 1) * sizeof *pairs);
    if (!b || !pairs) {
        rc = hsdag_err_set(e, HSDAG_ENOMEM, "%s: out of memory", what);
        goto done;
    }
    for (size_t i = 0; i < n; i++)
        if ((rc = hj_read_node(json_object_array_get_idx(nodes, i), i, what, b, e)) < 0) goto done;
    for (size_t k = 0; k < m; k++)
        if ((rc = hj_read_edge(json_object_array_get_idx(edges, k), k, n, what, b, pairs, e)) < 0) goto done;
    if ((rc = hsdag_jsonin_edges_unique(pairs, m, edges, "src", "dst", what, e)) < 0) goto done;
    hsdag_gb_set_meta(b, &meta);
    if ((rc = hsdag_gb_finish(b, out, e)) < 0) hsdag_err_prefix(e, what);
done:
    hsdag_free(pairs);
    hsdag_gb_free(b);
    json_object_put(root);
    return rc < 0 ? rc : 0;
}

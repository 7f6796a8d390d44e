/* json.c - hsdag's own JSON graph format ("format": "hsdag-graph", docs/formats.md): an exact, lossless
 * image of the IR, written one node / one edge per line and read back through the builder, by a streaming
 * reader (no document tree; linear, about the file plus the builder in memory) and, for every text the
 * streaming reader does not take (errors above all), by the json-c tree reader that words the message.
 * Not here: other JSON formats (tarnawski.c, split.c) or placements; the writer never rounds a number.
 * Entry points: hsdag_json_read, hsdag_json_write; hsdag_json_read_tree, hsdag_json_read_stream (json_int.h). */
#include "hsdag/io.h"
#include "ioutil.h"
#include "json_int.h"
#include "jsonin.h"
#include "jsonstream.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
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

int hsdag_json_read_tree(hsdag_graph **out, const void *buf, size_t len, const char *what, hsdag_err *e)
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

/* ---- the streaming reader ----
 * Takes a text only when the tree reader would take it and build the same graph: the same builder calls with
 * the same values in the same order. It gives up (HSDAG_JSTREAM_STOP) on every error and on what it leaves to
 * json-c (see jsonstream.h), and on a few legal but unusual layouts: a key twice in one object (json-c keeps
 * the last), edges before nodes. Field rules: those of hsdag_jsonin_value_number / _value_int. */
#define JS_STOP HSDAG_JSTREAM_STOP

/* hsdag_jsonin_value_number's rule on a parsed number */
static int js_num(const hsdag_jnum *n, double lo, double hi, double *out)
{
    double d = n->d;
    if (d < lo || d > hi) return JS_STOP;
    *out = d;
    return 0;
}

/* hsdag_jsonin_value_int's rule: an integer, or a double with an integral value */
static int js_int(const hsdag_jnum *n, int64_t lo, int64_t hi, int64_t *out)
{
    int64_t i;
    if (n->is_int) {
        i = n->i;
    } else {
        if (n->d != floor(n->d) || fabs(n->d) > 9.0e18) return JS_STOP;
        i = (int64_t)n->d;
    }
    if (i < lo || i > hi) return JS_STOP;
    *out = i;
    return 0;
}

static int js_get_num(hsdag_jstream *s, double lo, double hi, int nullable, double *out)
{
    hsdag_jnum n;
    if (hsdag_jstream_peek(s) == 'n') {
        if (!nullable || hsdag_jstream_null(s)) return JS_STOP;
        *out = NAN;
        return 0;
    }
    return hsdag_jstream_number(s, &n) || js_num(&n, lo, hi, out);
}

static int js_get_int(hsdag_jstream *s, int64_t lo, int64_t hi, int64_t *out)
{
    hsdag_jnum n;
    return hsdag_jstream_number(s, &n) || js_int(&n, lo, hi, out);
}

/* Marks key bit k as seen; a key given twice stops (json-c would keep the last one). */
static int js_seen(uint32_t *seen, int k)
{
    if (*seen & (1u << k)) return JS_STOP;
    *seen |= 1u << k;
    return 0;
}

/* the key after the highest one seen: where the next key usually is (hsdag writes keys in table order) */
static int js_hint(uint32_t seen, int n)
{
    int h = 0;
    while (h < n && (seen >> h)) h++;
    return h < n ? h : 0;
}

/* An object member's key: *k its index among keys[0..n) (the value left to read), or -1 with an unknown member's
 * value skipped. A key given twice stops. */
static int js_member(hsdag_jstream *s, const char *const *keys, int n, uint32_t *seen, int *k)
{
    if (hsdag_jstream_key_index(s, keys, n, js_hint(*seen, n), k)) return JS_STOP;
    if (*k < 0) return hsdag_jstream_skip(s);
    return js_seen(seen, *k);
}

/* Per-node scratch, reused for every node: the tree reader's locals plus the outputs, kept until add_node. */
typedef struct js_node {
    char *name, *op; /* copies: the tokenizer's buffer holds only the last string */
    size_t name_cap, op_cap;
    int opclass;
    uint32_t flags;
    double flops, param, mem, cost[HSDAG_COST_KINDS_];
    int64_t color, file_id;
    int n_out;
    uint8_t *out_dt;
    int8_t *out_rank;
    int32_t *out_dim; /* first dim of each output in dims */
    size_t out_cap;
    int64_t *dims;
    size_t n_dims, dims_cap;
} js_node;

static void js_node_free(js_node *nd)
{
    hsdag_free(nd->name);
    hsdag_free(nd->op);
    hsdag_free(nd->out_dt);
    hsdag_free(nd->out_rank);
    hsdag_free(nd->out_dim);
    hsdag_free(nd->dims);
}

/* a string value copied into *dst (grown as needed) */
static int js_copy_string(hsdag_jstream *s, char **dst, size_t *cap)
{
    if (hsdag_jstream_string(s)) return JS_STOP;
    if (hsdag_grow((void **)dst, cap, s->str_len + 1, 1) < 0) return s->oom = 1, JS_STOP;
    memcpy(*dst, s->str, s->str_len + 1);
    return 0;
}

static int js_read_flags(hsdag_jstream *s, uint32_t *flags)
{
    int first = 1, r;
    *flags = 0;
    if (hsdag_jstream_open(s, '[')) return JS_STOP;
    while ((r = hsdag_jstream_more(s, ']', &first)) == 1) {
        if (hsdag_jstream_peek(s) == '"') {
            if (hsdag_jstream_string(s)) return JS_STOP;
            size_t k = 0;
            while (k < HJ_NFLAGS && strcmp(s->str, hj_flags[k].name) != 0) k++;
            if (k == HJ_NFLAGS) return JS_STOP;
            *flags |= hj_flags[k].bit;
            continue;
        }
        hsdag_jnum n;
        if (hsdag_jstream_number(s, &n) || !n.is_int || n.i <= 0 || n.i > (int64_t)UINT32_MAX) return JS_STOP;
        *flags |= (uint32_t)n.i;
    }
    return r;
}

static int js_out_room(hsdag_jstream *s, js_node *nd)
{
    size_t need = (size_t)nd->n_out + 1, cap = nd->out_cap, c2 = cap, c3 = cap;
    if (need <= cap) return 0;
    if (hsdag_grow((void **)&nd->out_dt, &cap, need, 1) < 0 ||
        hsdag_grow((void **)&nd->out_rank, &c2, need, 1) < 0 ||
        hsdag_grow((void **)&nd->out_dim, &c3, need, sizeof *nd->out_dim) < 0)
        return s->oom = 1, HSDAG_ENOMEM;
    nd->out_cap = cap < c2 ? (cap < c3 ? cap : c3) : (c2 < c3 ? c2 : c3);
    return 0;
}

/* one {"dtype": ..., "shape": ...} */
static int js_read_output(hsdag_jstream *s, js_node *nd)
{
    static const char *const keys[] = {"dtype", "shape"};
    int first = 1, r, dt = -1, rank = -2;
    uint32_t seen = 0;
    if (js_out_room(s, nd) < 0 || hsdag_jstream_open(s, '{')) return JS_STOP;
    int32_t dim0 = (int32_t)nd->n_dims;
    while ((r = hsdag_jstream_more(s, '}', &first)) == 1) {
        int k;
        if (js_member(s, keys, 2, &seen, &k)) return JS_STOP;
        if (k < 0) continue;
        if (k == 0) {
            if (hsdag_jstream_string(s)) return JS_STOP;
            dt = hj_lookup(hj_dtype_names, sizeof hj_dtype_names / sizeof *hj_dtype_names, s->str);
            if (dt < 0) dt = (int)hsdag_dtype_parse(s->str);
            if (dt == HSDAG_DT_UNKNOWN && strcmp(s->str, "unknown") != 0) return JS_STOP;
            continue;
        }
        if (hsdag_jstream_peek(s) == 'n') {
            if (hsdag_jstream_null(s)) return JS_STOP;
            rank = -1;
            continue;
        }
        int f2 = 1, r2;
        rank = 0;
        if (hsdag_jstream_open(s, '[')) return JS_STOP;
        while ((r2 = hsdag_jstream_more(s, ']', &f2)) == 1) {
            int64_t x;
            if (rank == HSDAG_MAX_RANK || js_get_int(s, -1, INT64_MAX - 1, &x)) return JS_STOP;
            if (hsdag_grow((void **)&nd->dims, &nd->dims_cap, nd->n_dims + 1, sizeof *nd->dims) < 0)
                return s->oom = 1, JS_STOP;
            nd->dims[nd->n_dims++] = x;
            rank++;
        }
        if (r2) return JS_STOP;
    }
    if (r || dt < 0 || rank < -1) return JS_STOP;
    nd->out_dt[nd->n_out] = (uint8_t)dt;
    nd->out_rank[nd->n_out] = (int8_t)rank;
    nd->out_dim[nd->n_out] = dim0;
    nd->n_out++;
    return 0;
}

static int js_read_costs(hsdag_jstream *s, double *cost)
{
    int first = 1, r;
    uint32_t seen = 0;
    if (hsdag_jstream_open(s, '{')) return JS_STOP;
    while ((r = hsdag_jstream_more(s, '}', &first)) == 1) {
        int k;
        if (js_member(s, hj_cost_keys, HSDAG_COST_KINDS_, &seen, &k)) return JS_STOP;
        if (k < 0) continue;
        if (js_get_num(s, 0, HUGE_VAL, 1, &cost[k])) return JS_STOP;
    }
    return r;
}

enum {
    JN_NAME,
    JN_OP,
    JN_OPCLASS,
    JN_FLAGS,
    JN_FLOPS,
    JN_PARAM,
    JN_OUT_BYTES,
    JN_MEM,
    JN_COLOR,
    JN_FILE_ID,
    JN_COST,
    JN_OUTPUTS
};
/* out_bytes is derived from the outputs (the tree reader ignores it too); it is in the table only so that the key,
 * which hsdag writes for every node, is matched in place at its hint rather than tried against every key and
 * then compared again (a sixth of the key matching of a large graph). */
static const char *const js_node_keys[] = {"name",  "op",          "opclass",   "flags",
                                           "flops", "param_bytes", "out_bytes", "mem_bytes",
                                           "color", "file_id",     "cost_ms",   "outputs"};

static int js_node_field(hsdag_jstream *s, js_node *nd, int k)
{
    int first = 1, r;
    switch (k) {
    case JN_NAME:
        return js_copy_string(s, &nd->name, &nd->name_cap);
    case JN_OP:
        return js_copy_string(s, &nd->op, &nd->op_cap);
    case JN_OPCLASS:
        if (hsdag_jstream_string(s)) return JS_STOP;
        nd->opclass = hj_lookup(hj_opclass_names, sizeof hj_opclass_names / sizeof *hj_opclass_names, s->str);
        return nd->opclass < 0 ? JS_STOP : 0;
    case JN_FLAGS:
        return js_read_flags(s, &nd->flags);
    case JN_FLOPS:
        return js_get_num(s, 0, HUGE_VAL, 1, &nd->flops);
    case JN_PARAM:
        return js_get_num(s, 0, HUGE_VAL, 1, &nd->param);
    case JN_OUT_BYTES:
        return hsdag_jstream_skip(s);
    case JN_MEM:
        return js_get_num(s, 0, HUGE_VAL, 1, &nd->mem);
    case JN_COLOR:
        return js_get_int(s, -1, INT32_MAX, &nd->color);
    case JN_FILE_ID:
        return js_get_int(s, INT32_MIN, INT32_MAX, &nd->file_id);
    case JN_COST:
        return js_read_costs(s, nd->cost);
    default: /* JN_OUTPUTS */
        if (hsdag_jstream_open(s, '[')) return JS_STOP;
        while ((r = hsdag_jstream_more(s, ']', &first)) == 1)
            if (js_read_output(s, nd)) return JS_STOP;
        return r;
    }
}

static int js_read_node(hsdag_jstream *s, js_node *nd, size_t i, hsdag_gb *b)
{
    int first = 1, r;
    uint32_t seen = 0;
    nd->opclass = -1;
    nd->flags = 0;
    nd->flops = nd->param = 0;
    nd->mem = NAN;
    nd->color = -1;
    nd->file_id = (int64_t)i;
    for (int k = 0; k < HSDAG_COST_KINDS_; k++) nd->cost[k] = NAN;
    nd->n_out = 0;
    nd->n_dims = 0;
    if (hsdag_jstream_open(s, '{')) return JS_STOP;
    while ((r = hsdag_jstream_more(s, '}', &first)) == 1) {
        int k;
        if (js_member(s, js_node_keys, (int)(sizeof js_node_keys / sizeof *js_node_keys), &seen, &k))
            return JS_STOP;
        if (k < 0) continue;
        if (js_node_field(s, nd, k)) return JS_STOP;
    }
    const uint32_t need = (1u << JN_NAME) | (1u << JN_OP);
    if (r || (seen & need) != need) return JS_STOP;
    int32_t v = hsdag_gb_add_node(b, nd->name, nd->op);
    if (v < 0) return s->oom |= v == HSDAG_ENOMEM, JS_STOP;
    if (nd->opclass >= 0) hsdag_gb_set_opclass(b, v, (hsdag_opclass)nd->opclass);
    hsdag_gb_set_flags(b, v, nd->flags);
    hsdag_gb_set_flops(b, v, nd->flops);
    hsdag_gb_set_param_bytes(b, v, nd->param);
    hsdag_gb_set_mem_bytes(b, v, nd->mem);
    hsdag_gb_set_color(b, v, (int32_t)nd->color);
    hsdag_gb_set_file_id(b, v, (int32_t)nd->file_id);
    for (int k = 0; k < HSDAG_COST_KINDS_; k++) hsdag_gb_set_cost(b, v, (hsdag_costkind)k, nd->cost[k]);
    for (int o = 0; o < nd->n_out; o++) {
        const int64_t *dims = nd->out_rank[o] > 0 ? nd->dims + nd->out_dim[o] : NULL; /* dims: NULL if none */
        int rc = hsdag_gb_add_output(b, v, (hsdag_dtype)nd->out_dt[o], nd->out_rank[o], dims);
        if (rc < 0) return s->oom |= rc == HSDAG_ENOMEM, JS_STOP;
    }
    return 0;
}

/* Duplicate (src, dst) pairs: keys are checked while they ascend (as hsdag writes them), sorted otherwise. */
static int js_key_cmp(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int js_read_edge(hsdag_jstream *s, size_t n, hsdag_gb *b, int64_t *key)
{
    static const char *const keys[] = {"src", "dst", "bytes", "cost_ms"};
    int first = 1, r;
    uint32_t seen = 0;
    int64_t ends[2] = {0, 0};
    double bytes = 0, cost = NAN;
    if (hsdag_jstream_open(s, '{')) return JS_STOP;
    while ((r = hsdag_jstream_more(s, '}', &first)) == 1) {
        int k;
        if (js_member(s, keys, 4, &seen, &k)) return JS_STOP;
        if (k < 0) continue;
        if (k < 2 ? js_get_int(s, INT32_MIN, INT32_MAX, &ends[k])
                  : js_get_num(s, 0, HUGE_VAL, 1, k == 2 ? &bytes : &cost))
            return JS_STOP;
    }
    if (r || (seen & 3u) != 3u) return JS_STOP;
    if (ends[0] < 0 || (size_t)ends[0] >= n || ends[1] < 0 || (size_t)ends[1] >= n || ends[0] == ends[1])
        return JS_STOP;
    *key = (ends[0] << 32) | ends[1];
    int rc = hsdag_gb_add_edge_ex(b, (int32_t)ends[0], (int32_t)ends[1], bytes, cost);
    if (rc < 0) return s->oom |= rc == HSDAG_ENOMEM, JS_STOP;
    return 0;
}

static int js_read_meta(hsdag_jstream *s, hsdag_graph_meta *m, char **name)
{
    static const char *const keys[] = {"source_format", "name",       "file_nodes",
                                       "file_edges",    "ir_version", "opset",
                                       "max_accels",    "max_cpus",   "max_size_per_accel"};
    static const int64_t lo[] = {0, 0, -1, -1, INT32_MIN, INT32_MIN, -1, -1};
    static const int64_t hi[] = {0,         0,         INT64_MAX - 1, INT64_MAX - 1,
                                 INT32_MAX, INT32_MAX, INT32_MAX,     INT32_MAX};
    int first = 1, r;
    uint32_t seen = 0;
    int64_t v[8] = {0, 0, -1, -1, -1, -1, -1, -1};
    if (hsdag_jstream_open(s, '{')) return JS_STOP;
    while ((r = hsdag_jstream_more(s, '}', &first)) == 1) {
        int k;
        if (js_member(s, keys, 9, &seen, &k)) return JS_STOP;
        if (k < 0) continue;
        if (k == 0) {
            if (hsdag_jstream_string(s)) return JS_STOP;
            int f = hj_lookup(hj_format_names, sizeof hj_format_names / sizeof *hj_format_names, s->str);
            if (f < 0) return JS_STOP;
            m->format = (hsdag_format)f;
        } else if (k == 1) {
            if (hsdag_jstream_string(s)) return JS_STOP;
            hsdag_free(*name);
            if (!(*name = hsdag_malloc(s->str_len + 1))) return s->oom = 1, JS_STOP;
            memcpy(*name, s->str, s->str_len + 1);
        } else if (k == 8) {
            if (js_get_num(s, 0, HUGE_VAL, 1, &m->max_size_per_accel)) return JS_STOP;
        } else if (js_get_int(s, lo[k], hi[k], &v[k])) {
            return JS_STOP;
        }
    }
    m->file_nodes = v[2];
    m->file_edges = v[3];
    m->ir_version = (int32_t)v[4];
    m->opset = (int32_t)v[5];
    m->max_accels = (int32_t)v[6];
    m->max_cpus = (int32_t)v[7];
    return r;
}

enum { JT_FORMAT, JT_VERSION, JT_META, JT_NODES, JT_EDGES };

/* the top-level object's members, nodes and edges straight into the builder */
static int js_read_top(hsdag_jstream *s, hsdag_gb *b, hsdag_graph_meta *meta, char **name, int64_t **keys)
{
    static const char *const top[] = {"format", "version", "meta", "nodes", "edges"};
    int first = 1, r;
    uint32_t seen = 0;
    size_t n = 0, m = 0, kcap = 0;
    int sorted = 1;
    js_node nd = {0};
    if (hsdag_jstream_open(s, '{')) return JS_STOP;
    while ((r = hsdag_jstream_more(s, '}', &first)) == 1) {
        int64_t ver;
        int fi = 1, r2 = 0;
        int k;
        if (js_member(s, top, 5, &seen, &k)) goto stop;
        if (k < 0) continue;
        switch (k) {
        case JT_FORMAT:
            if (hsdag_jstream_string(s) || strcmp(s->str, HJ_FORMAT) != 0) goto stop;
            break;
        case JT_VERSION:
            if (js_get_int(s, INT32_MIN, INT32_MAX, &ver) || ver != HJ_VERSION) goto stop;
            break;
        case JT_META:
            if (js_read_meta(s, meta, name)) goto stop;
            break;
        case JT_NODES:
            if ((seen & (1u << JT_EDGES)) || hsdag_jstream_open(s, '[')) goto stop;
            while ((r2 = hsdag_jstream_more(s, ']', &fi)) == 1)
                if (n >= HSDAG_MAX_NODES || js_read_node(s, &nd, n++, b)) goto stop;
            break;
        default: /* JT_EDGES */
            if (!(seen & (1u << JT_NODES)) || hsdag_jstream_open(s, '[')) goto stop;
            while ((r2 = hsdag_jstream_more(s, ']', &fi)) == 1) {
                if (m >= HSDAG_MAX_EDGES) goto stop;
                if (hsdag_grow((void **)keys, &kcap, m + 1, sizeof **keys) < 0) {
                    s->oom = 1;
                    goto stop;
                }
                if (js_read_edge(s, n, b, &(*keys)[m])) goto stop;
                if (m > 0 && (*keys)[m] <= (*keys)[m - 1]) sorted = 0;
                m++;
            }
            break;
        }
        if (r2) goto stop;
    }
    const uint32_t need = (1u << JT_FORMAT) | (1u << JT_VERSION) | (1u << JT_NODES) | (1u << JT_EDGES);
    if (r || (seen & need) != need) goto stop; /* meta is optional */
    if (!sorted) {
        qsort(*keys, m, sizeof **keys, js_key_cmp);
        for (size_t i = 1; i < m; i++)
            if ((*keys)[i] == (*keys)[i - 1]) goto stop;
    }
    js_node_free(&nd);
    return 0;
stop:
    js_node_free(&nd);
    return JS_STOP;
}

/* The document of s into *out: 0, HSDAG_ENOMEM or JS_STOP (hsdag_json_read_stream's contract). Frees s. */
static int js_read_doc(hsdag_jstream *s, hsdag_graph **out)
{
    hsdag_graph_meta meta;
    hsdag_ioutil_meta_init(&meta, HSDAG_FMT_JSON);
    char *name = NULL;
    int64_t *keys = NULL;
    hsdag_gb *b = hsdag_gb_create();
    int rc = JS_STOP;
    if (!b) s->oom = 1;
    if (b && js_read_top(s, b, &meta, &name, &keys) == 0 && hsdag_jstream_end(s) == 0 && !s->bad_file) {
        hsdag_err fe = {0};
        meta.name = name ? name : "";
        hsdag_gb_set_meta(b, &meta);
        rc = hsdag_gb_finish(b, out, &fe); /* a failure other than memory: the tree reader words it */
        if (rc < 0) s->oom |= rc == HSDAG_ENOMEM, rc = JS_STOP;
    }
    if (s->oom) rc = HSDAG_ENOMEM;
    hsdag_jstream_free(s);
    hsdag_free(name);
    hsdag_free(keys);
    hsdag_gb_free(b);
    return rc;
}

int hsdag_json_read_stream(hsdag_graph **out, const void *buf, size_t len)
{
    *out = NULL;
    if (!buf || len == 0 || len > HSDAG_MAX_FILE_BYTES || len > (size_t)INT_MAX) return JS_STOP;
    hsdag_jstream s;
    hsdag_jstream_init(&s, buf, len);
    return js_read_doc(&s, out);
}

int hsdag_json_read_file_stream(hsdag_graph **out, FILE *f, size_t piece)
{
    *out = NULL;
    hsdag_jstream s;
    hsdag_jstream_init_file(&s, f, piece, HSDAG_MAX_FILE_BYTES);
    return js_read_doc(&s, out);
}

int hsdag_json_read(hsdag_graph **out, const void *buf, size_t len, const char *what, hsdag_err *e)
{
    int rc = hsdag_json_read_stream(out, buf, len);
    if (rc == 0) return 0;
    /* out of memory: the tree reader needs more still */
    if (rc == HSDAG_ENOMEM) return hsdag_err_set(e, rc, "%s: out of memory", what ? what : "<buffer>");
    return hsdag_json_read_tree(out, buf, len, what, e);
}

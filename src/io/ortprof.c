/* ortprof.c - reads the ONNX Runtime bridge's JSON (scripts/ort-profile.js) against the importer's graph:
 * per-node times, fused/folded/removed nodes, and ORT's output shapes compared with the inferred ones; writes
 * the per-op profile CSV.
 * Not here: starting ORT (tools/cmd_profile.c), the attribution rules (the bridge applies them; docs/devices.md
 * "Profiling" lists them), fitting a device (sim/calibrate.c).
 * Entry points: hsdag_ortprof_parse, hsdag_ortprof_write_csv, hsdag_ortprof_write_json, hsdag_ortprof_free,
 *   hsdag_ort_status_name. */
#include "hsdag/ortprof.h"

#include <math.h>
#include <string.h>

#include "jsonin.h"

#define ORT_MAX_DIFFS 1000

static const char *const status_names[HSDAG_ORT_STATUS_COUNT_] = {"kernel", "fused", "folded", "removed"};

const char *hsdag_ort_status_name(hsdag_ort_status s)
{
    return (s >= 0 && s < HSDAG_ORT_STATUS_COUNT_) ? status_names[s] : "?";
}

void hsdag_ortprof_free(hsdag_ortprof *p)
{
    if (p) hsdag_arena_free(p->arena);
}

static void shape_text(char *out, size_t n, int rank, const int64_t *d)
{
    if (rank < 0) {
        snprintf(out, n, "?");
        return;
    }
    size_t k = (size_t)snprintf(out, n, "[");
    for (int i = 0; i < rank && k < n; i++) {
        if (d[i] < 0)
            k += (size_t)snprintf(out + k, n - k, "%s?", i ? "," : "");
        else
            k += (size_t)snprintf(out + k, n - k, "%s%lld", i ? "," : "", (long long)d[i]);
    }
    if (k < n) snprintf(out + k, n - k, "]");
}

/* Compares output slot k of node v with ORT's shape (JSON array of ints, or null). */
static int check_shape(hsdag_ortprof *p, const hsdag_graph *g, int32_t v, int32_t k, json_object *js,
                       const char *what, hsdag_err *e)
{
    int64_t od[HSDAG_MAX_RANK];
    int orank = -1;
    if (js && json_object_is_type(js, json_type_array)) {
        size_t n = json_object_array_length(js);
        if (n > HSDAG_MAX_RANK)
            return hsdag_err_set(e, HSDAG_EPARSE, "%s: shapes: node '%.200s': rank %zu above %d", what,
                                 g->name[v], n, HSDAG_MAX_RANK);
        for (size_t i = 0; i < n; i++) {
            int rc = hsdag_jsonin_value_int(json_object_array_get_idx(js, i), -1, INT64_MAX, &od[i], what,
                                            "shapes", g->name[v], e);
            if (rc < 0) return rc;
        }
        orank = (int)n;
    }
    if (orank < 0) return 0; /* ORT gave no shape */
    int32_t s = g->out_shape_off[v] + k;
    int hr = g->shape_rank[s];
    const int64_t *hd = hr > 0 ? g->shape_dims + g->shape_dim_off[s] : NULL;
    int diff = 0, unknown = 0;
    if (hr < 0)
        diff = unknown = 1;
    else if (hr != orank)
        diff = 1;
    else
        for (int i = 0; i < hr; i++) {
            if (od[i] < 0) continue;
            if (hd[i] < 0)
                diff = unknown = 1;
            else if (hd[i] != od[i])
                diff = 1, unknown = 0;
            if (diff && !unknown) break;
        }
    p->n_shapes_checked++;
    if (!diff) return 0;
    p->n_shape_diffs++;
    p->n_shape_unknown += unknown;
    if (p->n_diff_list >= ORT_MAX_DIFFS) return 0;
    hsdag_ort_shape_diff *d = &p->diffs[p->n_diff_list++];
    d->node = v;
    d->output = k;
    d->unknown = unknown;
    shape_text(d->hsdag, sizeof d->hsdag, hr, hd);
    shape_text(d->ort, sizeof d->ort, orank, od);
    return 0;
}

static int status_of(const char *s)
{
    for (int i = 0; i < HSDAG_ORT_STATUS_COUNT_; i++)
        if (strcmp(s, status_names[i]) == 0) return i;
    return -1;
}

/* Graph node of file index i, or -1. */
static int32_t node_of(const int32_t *by_file, int32_t nf, int64_t i)
{
    return (i >= 0 && i < nf) ? by_file[i] : -1;
}

static int parse_nodes(hsdag_ortprof *p, json_object *root, const int32_t *by_file, int32_t nf,
                       const char *what, hsdag_err *e)
{
    json_object *arr;
    size_t n;
    int rc = hsdag_jsonin_array(root, "nodes", HSDAG_JI_REQUIRED, &arr, &n, what, "top level", e);
    if (rc < 0) return rc;
    for (size_t j = 0; j < n; j++) {
        json_object *o = json_object_array_get_idx(arr, j);
        char ctx[32];
        snprintf(ctx, sizeof ctx, "nodes[%zu]", j);
        if (!json_object_is_type(o, json_type_object))
            return hsdag_err_set(e, HSDAG_EPARSE, "%s: %s: not an object", what, ctx);
        int64_t i, into = -1;
        double ms = 0;
        const char *st = NULL;
        if ((rc = hsdag_jsonin_int(o, "i", HSDAG_JI_REQUIRED, 0, INT32_MAX, &i, what, ctx, e)) < 0 ||
            (rc = hsdag_jsonin_int(o, "into", 0, -1, INT32_MAX, &into, what, ctx, e)) < 0 ||
            (rc = hsdag_jsonin_number(o, "ms", 0, 0, 1e12, &ms, what, ctx, e)) < 0 ||
            (rc = hsdag_jsonin_string(o, "status", HSDAG_JI_REQUIRED, &st, what, ctx, e)) < 0)
            return rc;
        int32_t v = node_of(by_file, nf, i);
        int s = status_of(st);
        if (v < 0)
            return hsdag_err_set(e, HSDAG_EPARSE, "%s: %s: node index %lld is not in the graph", what, ctx,
                                 (long long)i);
        if (s < 0) return hsdag_err_set(e, HSDAG_EPARSE, "%s: %s: unknown status '%.40s'", what, ctx, st);
        p->status[v] = (uint8_t)s;
        p->node_ms[v] = ms;
        p->into[v] = s == HSDAG_ORT_FUSED ? node_of(by_file, nf, into) : -1;
    }
    return 0;
}

static int parse_shapes(hsdag_ortprof *p, const hsdag_graph *g, json_object *root, const int32_t *by_file,
                        int32_t nf, const char *what, hsdag_err *e)
{
    json_object *arr;
    size_t n;
    int rc = hsdag_jsonin_array(root, "shapes", 0, &arr, &n, what, "top level", e);
    if (rc != 0) return rc < 0 ? rc : 0;
    p->has_shapes = 1;
    for (size_t j = 0; j < n; j++) {
        json_object *o = json_object_array_get_idx(arr, j), *outs;
        char ctx[32];
        snprintf(ctx, sizeof ctx, "shapes[%zu]", j);
        if (!json_object_is_type(o, json_type_object))
            return hsdag_err_set(e, HSDAG_EPARSE, "%s: %s: not an object", what, ctx);
        int64_t i;
        size_t no;
        if ((rc = hsdag_jsonin_int(o, "i", HSDAG_JI_REQUIRED, 0, INT32_MAX, &i, what, ctx, e)) < 0 ||
            (rc = hsdag_jsonin_array(o, "out", HSDAG_JI_REQUIRED, &outs, &no, what, ctx, e)) < 0)
            return rc;
        int32_t v = node_of(by_file, nf, i);
        if (v < 0)
            return hsdag_err_set(e, HSDAG_EPARSE, "%s: %s: node index %lld is not in the graph", what, ctx,
                                 (long long)i);
        int32_t nout = g->out_shape_off[v + 1] - g->out_shape_off[v];
        for (int32_t k = 0; k < nout && (size_t)k < no; k++)
            if ((rc = check_shape(p, g, v, k, json_object_array_get_idx(outs, (size_t)k), what, e)) < 0)
                return rc;
    }
    return 0;
}

int hsdag_ortprof_parse(hsdag_ortprof **out, const void *buf, size_t len, const char *what,
                        const hsdag_graph *g, hsdag_err *e)
{
    *out = NULL;
    what = what ? what : "<buffer>";
    json_object *root = NULL;
    int32_t *by_file = NULL;
    hsdag_ortprof *p = NULL;
    int rc = hsdag_jsonin_parse(buf, len, 8, what, &root, e);
    if (rc < 0) return rc;
    const char *fmt = NULL, *ver = "", *opt = "";
    int64_t ver_n = 0, threads = 0, runs = 0, warmup = 0;
    if (!json_object_is_type(root, json_type_object)) {
        rc = hsdag_err_set(e, HSDAG_EPARSE, "%s: the top level is not an object", what);
        goto done;
    }
    if ((rc = hsdag_jsonin_string(root, "format", HSDAG_JI_REQUIRED, &fmt, what, "top level", e)) < 0)
        goto done;
    if (strcmp(fmt, "hsdag-ort-profile") != 0) {
        rc = hsdag_err_set(e, HSDAG_EPARSE, "%s: format '%.60s' is not hsdag-ort-profile", what, fmt);
        goto done;
    }
    if ((rc = hsdag_jsonin_int(root, "version", HSDAG_JI_REQUIRED, 1, 1, &ver_n, what, "top level", e)) < 0)
        goto done;
    hsdag_arena *a = hsdag_arena_create(0);
    if (!a) goto oom;
    if (!(p = hsdag_arena_alloc(a, sizeof *p))) {
        hsdag_arena_free(a);
        goto oom;
    }
    memset(p, 0, sizeof *p);
    p->arena = a;
    const int32_t V = g->n_nodes;
    p->node_ms = hsdag_arena_alloc(p->arena, ((size_t)V + 1) * sizeof *p->node_ms);
    p->status = hsdag_arena_alloc(p->arena, (size_t)V + 1);
    p->into = hsdag_arena_alloc(p->arena, ((size_t)V + 1) * sizeof *p->into);
    p->diffs = hsdag_arena_alloc(p->arena, ORT_MAX_DIFFS * sizeof *p->diffs);
    by_file = hsdag_malloc(((size_t)V + 1) * sizeof *by_file);
    if (!p->node_ms || !p->status || !p->into || !p->diffs || !by_file) goto oom;
    for (int32_t v = 0; v < V; v++) {
        p->node_ms[v] = 0;
        p->status[v] = HSDAG_ORT_REMOVED; /* nodes the bridge does not list */
        p->into[v] = -1;
        by_file[v] = -1;
    }
    for (int32_t v = 0; v < V; v++)
        if (g->file_id[v] >= 0 && g->file_id[v] < V) by_file[g->file_id[v]] = v;
    if ((rc = hsdag_jsonin_string(root, "ort_version", 0, &ver, what, "top level", e)) < 0 ||
        (rc = hsdag_jsonin_string(root, "opt", 0, &opt, what, "top level", e)) < 0 ||
        (rc = hsdag_jsonin_int(root, "threads", 0, 0, 1 << 20, &threads, what, "top level", e)) < 0 ||
        (rc = hsdag_jsonin_int(root, "runs", 0, 0, INT32_MAX, &runs, what, "top level", e)) < 0 ||
        (rc = hsdag_jsonin_int(root, "warmup", 0, 0, INT32_MAX, &warmup, what, "top level", e)) < 0 ||
        (rc = hsdag_jsonin_number(root, "median_ms", HSDAG_JI_REQUIRED, 0, 1e12, &p->median_ms, what,
                                  "top level", e)) < 0 ||
        (rc = hsdag_jsonin_number(root, "kernel_ms", HSDAG_JI_REQUIRED, 0, 1e12, &p->kernel_ms, what,
                                  "top level", e)) < 0)
        goto fail;
    const char *clk = "wall";
    p->median_wall_ms = p->median_cpu_ms = NAN;
    if ((rc = hsdag_jsonin_string(root, "clock", 0, &clk, what, "top level", e)) < 0 ||
        (rc = hsdag_jsonin_number(root, "median_wall_ms", HSDAG_JI_NULLABLE, 0, 1e12, &p->median_wall_ms,
                                  what, "top level", e)) < 0 ||
        (rc = hsdag_jsonin_number(root, "median_cpu_ms", HSDAG_JI_NULLABLE, 0, 1e12, &p->median_cpu_ms, what,
                                  "top level", e)) < 0)
        goto fail;
    snprintf(p->clock, sizeof p->clock, "%s", clk);
    snprintf(p->ort_version, sizeof p->ort_version, "%s", ver);
    snprintf(p->opt, sizeof p->opt, "%s", opt);
    p->threads = (int32_t)threads;
    p->runs = (int32_t)runs;
    p->warmup = (int32_t)warmup;
    if ((rc = parse_nodes(p, root, by_file, V, what, e)) < 0) goto fail;
    json_object *orph;
    size_t no;
    if ((rc = hsdag_jsonin_array(root, "orphan_kernels", 0, &orph, &no, what, "top level", e)) < 0) goto fail;
    for (size_t j = 0; rc == 0 && j < no; j++) {
        json_object *o = json_object_array_get_idx(orph, j);
        double ms = 0;
        int64_t into = -1;
        if (!json_object_is_type(o, json_type_object)) continue;
        if ((rc = hsdag_jsonin_number(o, "ms", 0, 0, 1e12, &ms, what, "orphan_kernels", e)) < 0 ||
            (rc = hsdag_jsonin_int(o, "into", 0, -1, INT32_MAX, &into, what, "orphan_kernels", e)) < 0)
            goto fail;
        p->n_orphans++;
        p->orphan_ms += ms;
        if (into < 0) p->unattributed_ms += ms;
    }
    rc = 0;
    for (int32_t v = 0; v < V; v++) p->n_status[p->status[v]]++;
    if ((rc = parse_shapes(p, g, root, by_file, V, what, e)) < 0) goto fail;
    *out = p;
    p = NULL;
    rc = 0;
    goto done;
oom:
    rc = hsdag_err_set(e, HSDAG_ENOMEM, "%s: out of memory", what);
fail:
    hsdag_ortprof_free(p);
    p = NULL;
done:
    if (p) hsdag_ortprof_free(p);
    hsdag_free(by_file);
    json_object_put(root);
    return rc;
}

int hsdag_ortprof_write_csv(hsdag_buf *b, const hsdag_ortprof *p, const hsdag_graph *g, const char *device)
{
    hsdag_buf_printf(b,
                     "# hsdag profile: ONNX Runtime %s, CPU, %d intra-op thread(s), graph optimisation %s\n",
                     p->ort_version, (int)p->threads, p->opt);
    hsdag_buf_printf(
        b, "# median of %d runs after %d warm-up runs (%s clock): end-to-end %.4f ms, kernels %.4f ms",
        (int)p->runs, (int)p->warmup, p->clock, p->median_ms, p->kernel_ms);
    hsdag_buf_printf(b, " (%d layout kernels, %.4f ms, given to a neighbour)\n", (int)p->n_orphans,
                     p->orphan_ms);
    hsdag_buf_printf(b,
                     "# nodes: %d kernels, %d fused, %d constant-folded, %d removed (0 ms each; see below)\n",
                     (int)p->n_status[HSDAG_ORT_KERNEL], (int)p->n_status[HSDAG_ORT_FUSED],
                     (int)p->n_status[HSDAG_ORT_FOLDED], (int)p->n_status[HSDAG_ORT_REMOVED]);
    hsdag_buf_printf(b, "node,device,ms\n");
    for (int32_t v = 0; v < g->n_nodes; v++) {
        hsdag_buf_printf(b, "%s,%s,", g->name[v], device);
        hsdag_buf_printf(b, "%.6g\n", p->node_ms[v]);
    }
    for (int32_t v = 0; v < g->n_nodes; v++) {
        if (p->status[v] == HSDAG_ORT_KERNEL) continue;
        if (p->status[v] == HSDAG_ORT_FUSED && p->into[v] >= 0)
            hsdag_buf_printf(b, "#fused,%s,%s\n", g->name[v], g->name[p->into[v]]);
        else
            hsdag_buf_printf(b, "#%s,%s\n", hsdag_ort_status_name((hsdag_ort_status)p->status[v]),
                             g->name[v]);
    }
    return b->oom ? HSDAG_ENOMEM : 0;
}

int hsdag_ortprof_write_json(hsdag_buf *out, const hsdag_ortprof *p, const hsdag_graph *g, const char *model,
                             double wall_s)
{
    hsdag_jw w;
    hsdag_jw_begin(&w, out, "hsdag-profile/1");
    hsdag_jw_str(&w, "model", model);
    hsdag_jw_int(&w, "nodes", g->n_nodes);
    hsdag_jw_str(&w, "ort_version", p->ort_version);
    hsdag_jw_int(&w, "threads", p->threads);
    hsdag_jw_int(&w, "runs", p->runs);
    hsdag_jw_int(&w, "warmup", p->warmup);
    hsdag_jw_str(&w, "opt", p->opt);
    hsdag_jw_str(&w, "clock", p->clock);
    hsdag_jw_num(&w, "latency_ms", p->median_ms);
    hsdag_jw_num(&w, "wall_latency_ms", p->median_wall_ms);
    hsdag_jw_num(&w, "cpu_latency_ms", p->median_cpu_ms);
    hsdag_jw_num(&w, "kernel_ms", p->kernel_ms);
    hsdag_jw_int(&w, "orphan_kernels", p->n_orphans);
    hsdag_jw_num(&w, "orphan_ms", p->orphan_ms);
    for (int s = 0; s < HSDAG_ORT_STATUS_COUNT_; s++) {
        char key[32];
        snprintf(key, sizeof key, "%s_nodes", hsdag_ort_status_name((hsdag_ort_status)s));
        hsdag_jw_int(&w, key, p->n_status[s]);
    }
    if (p->has_shapes) {
        hsdag_jw_int(&w, "shapes_checked", p->n_shapes_checked);
        hsdag_jw_int(&w, "shape_diffs", p->n_shape_diffs);
        hsdag_jw_int(&w, "shape_unknown", p->n_shape_unknown);
        hsdag_jw_array(&w, "diffs");
        for (int32_t i = 0; i < p->n_diff_list; i++) {
            const hsdag_ort_shape_diff *d = &p->diffs[i];
            hsdag_jw_object(&w, NULL);
            hsdag_jw_str(&w, "node", g->name[d->node]);
            hsdag_jw_str(&w, "op", g->op[d->node]);
            hsdag_jw_int(&w, "output", d->output);
            hsdag_jw_str(&w, "hsdag", d->hsdag);
            hsdag_jw_str(&w, "ort", d->ort);
            hsdag_jw_close(&w);
        }
        hsdag_jw_close(&w);
    } else {
        hsdag_jw_null(&w, "shapes_checked");
        hsdag_jw_null(&w, "shape_diffs");
        hsdag_jw_null(&w, "shape_unknown");
        hsdag_jw_null(&w, "diffs");
    }
    hsdag_jw_num(&w, "wall_s", wall_s);
    return hsdag_jw_end(&w);
}

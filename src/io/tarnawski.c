/* tarnawski.c - reader for the JSON workloads of Tarnawski et al. (NeurIPS 2020,
 * msr-fiddle/dnn-partitioning).
 * Not here: their split files (split.c), their latency model (the simulator) or any writing of this format.
 * Entry points: hsdag_tarnawski_read. */
#include "hsdag/io.h"
#include "ioutil.h"
#include "jsonin.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- sanity caps (bad input gets a clear error, not a silly graph) ---- */
#define TW_MAX_MS HSDAG_MAX_COST_MS  /* a latency or transfer cost above ~31 years is a broken file */
#define TW_MAX_BYTES HSDAG_MAX_BYTES /* 1 EB */
#define TW_MAX_DEVICES 1000000
#define TW_LINK_BYTES_PER_MS (2147483648.0 / 1000.0) /* their 2 GiB/s CPU<->accelerator link */
#define TW_MAX_DEPTH 32

static int tw_read_meta(json_object *root, const char *what, hsdag_graph_meta *m, hsdag_err *e)
{
    int64_t k = -1, l = -1;
    double cap = NAN;
    int rc;
    if ((rc = hsdag_jsonin_number(root, "maxSizePerFPGA", 0, 0, TW_MAX_BYTES, &cap, what, "", e)) < 0)
        return rc;
    if ((rc = hsdag_jsonin_int(root, "maxFPGAs", 0, 0, TW_MAX_DEVICES, &k, what, "", e)) < 0) return rc;
    if ((rc = hsdag_jsonin_int(root, "maxCPUs", 0, 0, TW_MAX_DEVICES, &l, what, "", e)) < 0) return rc;
    m->max_size_per_accel = cap;
    m->max_accels = (int32_t)k;
    m->max_cpus = (int32_t)l;
    return 0;
}

/* Reads nodes[i] into the builder; ids[i] gets its file id. */
static int tw_read_node(json_object *nd, size_t i, const char *what, hsdag_gb *b, hsdag_jsonin_key *ids,
                        hsdag_err *e)
{
    char ctx[64];
    snprintf(ctx, sizeof ctx, "nodes[%zu]", i);
    if (!json_object_is_type(nd, json_type_object))
        return hsdag_err_set(e, HSDAG_EPARSE, "%s: %s is not an object", what, ctx);
    int64_t id, color = -1;
    int rc;
    if ((rc = hsdag_jsonin_int(nd, "id", HSDAG_JI_REQUIRED, 0, INT32_MAX, &id, what, ctx, e)) < 0) return rc;
    snprintf(ctx, sizeof ctx, "nodes[%zu] (id %lld)", i, (long long)id);
    const char *name = NULL;
    char defname[32];
    int on_fpga = 1, bwd = 0;
    double cpu, fpga, size;
    if ((rc = hsdag_jsonin_string(nd, "name", 0, &name, what, ctx, e)) < 0) return rc;
    if ((rc = hsdag_jsonin_bool(nd, "supportedOnFpga", HSDAG_JI_REQUIRED, &on_fpga, what, ctx, e)) < 0)
        return rc;
    if ((rc = hsdag_jsonin_number(nd, "cpuLatency", HSDAG_JI_REQUIRED, 0, TW_MAX_MS, &cpu, what, ctx, e)) < 0)
        return rc;
    if ((rc = hsdag_jsonin_number(nd, "fpgaLatency", HSDAG_JI_REQUIRED, 0, TW_MAX_MS, &fpga, what, ctx, e)) <
        0)
        return rc;
    if ((rc = hsdag_jsonin_bool(nd, "isBackwardNode", 0, &bwd, what, ctx, e)) < 0) return rc;
    if ((rc = hsdag_jsonin_int(nd, "colorClass", 0, 0, INT32_MAX, &color, what, ctx, e)) < 0) return rc;
    if ((rc = hsdag_jsonin_number(nd, "size", HSDAG_JI_REQUIRED, 0, TW_MAX_BYTES, &size, what, ctx, e)) < 0)
        return rc;
    if (!name) {
        snprintf(defname, sizeof defname, "node%lld", (long long)id);
        name = defname;
    }
    int32_t v = hsdag_gb_add_node(b, name, "Measured");
    if (v < 0) return hsdag_err_set(e, v, "%s: %s: cannot add node: %s", what, ctx, hsdag_status_str(v));
    hsdag_gb_set_opclass(b, v, HSDAG_OP_UNKNOWN);
    hsdag_gb_set_cost(b, v, HSDAG_COST_CPU, cpu);
    hsdag_gb_set_cost(b, v, HSDAG_COST_ACCEL, fpga);
    hsdag_gb_set_mem_bytes(b, v, size);
    hsdag_gb_set_color(b, v, (int32_t)color);
    hsdag_gb_set_file_id(b, v, (int32_t)id);
    hsdag_gb_set_flags(
        b, v, (on_fpga ? 0u : (uint32_t)HSDAG_NF_NO_ACCEL) | (bwd ? (uint32_t)HSDAG_NF_BACKWARD : 0u));
    ids[i].key = id;
    ids[i].idx = (int32_t)i;
    return 0;
}

/* Reads edges[k]; the ends are mapped through ids (sorted); pairs[k] gets (src, dst) for the duplicate
 * check. */
static int tw_read_edge(json_object *ed, size_t k, const char *what, hsdag_gb *b, const hsdag_jsonin_key *ids,
                        size_t n, hsdag_jsonin_key *pairs, hsdag_err *e)
{
    char ctx[64];
    snprintf(ctx, sizeof ctx, "edges[%zu]", k);
    if (!json_object_is_type(ed, json_type_object))
        return hsdag_err_set(e, HSDAG_EPARSE, "%s: %s is not an object", what, ctx);
    int64_t s, d;
    double cost, bytes = NAN;
    int rc;
    if ((rc = hsdag_jsonin_int(ed, "sourceId", HSDAG_JI_REQUIRED, INT32_MIN, INT32_MAX, &s, what, ctx, e)) <
        0)
        return rc;
    if ((rc = hsdag_jsonin_int(ed, "destId", HSDAG_JI_REQUIRED, INT32_MIN, INT32_MAX, &d, what, ctx, e)) < 0)
        return rc;
    snprintf(ctx, sizeof ctx, "edges[%zu] (%lld -> %lld)", k, (long long)s, (long long)d);
    if ((rc = hsdag_jsonin_number(ed, "cost", HSDAG_JI_REQUIRED, 0, TW_MAX_MS, &cost, what, ctx, e)) < 0)
        return rc;
    if ((rc = hsdag_jsonin_number(ed, "size", 0, 0, TW_MAX_BYTES, &bytes, what, ctx, e)) < 0) return rc;
    if (rc == 1) bytes = cost * TW_LINK_BYTES_PER_MS;
    int32_t u = hsdag_jsonin_keys_find(ids, n, s), v = hsdag_jsonin_keys_find(ids, n, d);
    if (u < 0)
        return hsdag_err_set(e, HSDAG_EDANGLING, "%s: %s: sourceId %lld is not a node id", what, ctx,
                             (long long)s);
    if (v < 0)
        return hsdag_err_set(e, HSDAG_EDANGLING, "%s: %s: destId %lld is not a node id", what, ctx,
                             (long long)d);
    if (u == v) return hsdag_err_set(e, HSDAG_ECYCLE, "%s: %s: edge from a node to itself", what, ctx);
    pairs[k].key = ((int64_t)u << 32) | (int64_t)v;
    pairs[k].idx = (int32_t)k;
    rc = hsdag_gb_add_edge_ex(b, u, v, bytes, cost);
    if (rc < 0) return hsdag_err_set(e, rc, "%s: %s: cannot add edge: %s", what, ctx, hsdag_status_str(rc));
    return 0;
}

int hsdag_tarnawski_read(hsdag_graph **out, const void *buf, size_t len, const char *what, hsdag_err *e)
{
    *out = NULL;
    if (!what) what = "<buffer>";
    json_object *root = NULL, *nodes, *edges;
    hsdag_gb *b = NULL;
    hsdag_jsonin_key *ids = NULL, *pairs = NULL;
    size_t n = 0, m = 0;
    int rc = hsdag_jsonin_parse(buf, len, TW_MAX_DEPTH, what, &root, e);
    if (rc < 0) goto done;
    if (!json_object_is_type(root, json_type_object)) {
        rc = hsdag_err_set(e, HSDAG_EPARSE, "%s: top level is not a JSON object", what);
        goto done;
    }
    hsdag_graph_meta meta;
    hsdag_ioutil_meta_init(&meta, HSDAG_FMT_TARNAWSKI);
    if ((rc = tw_read_meta(root, what, &meta, e)) < 0) goto done;
    if ((rc = hsdag_jsonin_array(root, "nodes", HSDAG_JI_REQUIRED, &nodes, &n, what, "", e)) < 0) goto done;
    if ((rc = hsdag_jsonin_array(root, "edges", HSDAG_JI_REQUIRED, &edges, &m, what, "", e)) < 0) goto done;
    if (n > HSDAG_MAX_NODES || m > HSDAG_MAX_EDGES) {
        rc = hsdag_err_set(e, HSDAG_ELIMIT, "%s: %zu nodes / %zu edges exceed the limits (%d / %d)", what, n,
                           m, HSDAG_MAX_NODES, HSDAG_MAX_EDGES);
        goto done;
    }
    meta.file_nodes = (int64_t)n;
    meta.file_edges = (int64_t)m;
    b = hsdag_gb_create();
    ids = hsdag_malloc((n ? n : 1) * sizeof *ids);
    pairs = hsdag_malloc((m ? m : 1) * sizeof *pairs);
    if (!b || !ids || !pairs) {
        rc = hsdag_err_set(e, HSDAG_ENOMEM, "%s: out of memory", what);
        goto done;
    }
    for (size_t i = 0; i < n; i++)
        if ((rc = tw_read_node(json_object_array_get_idx(nodes, i), i, what, b, ids, e)) < 0) goto done;
    int32_t earlier = -1, dup = hsdag_jsonin_keys_sort_dup(ids, n, &earlier);
    if (dup >= 0) {
        int64_t id = -1;
        for (size_t i = 0; i < n; i++)
            if (ids[i].idx == dup) id = ids[i].key;
        rc = hsdag_err_set(e, HSDAG_EPARSE, "%s: nodes[%d] (id %lld): duplicate id (also nodes[%d])", what,
                           dup, (long long)id, earlier);
        goto done;
    }
    for (size_t k = 0; k < m; k++)
        if ((rc = tw_read_edge(json_object_array_get_idx(edges, k), k, what, b, ids, n, pairs, e)) < 0)
            goto done;
    if ((rc = hsdag_jsonin_edges_unique(pairs, m, edges, "sourceId", "destId", what, e)) < 0) goto done;
    hsdag_gb_set_meta(b, &meta);
    if ((rc = hsdag_gb_finish(b, out, e)) < 0) hsdag_err_prefix(e, what);
done:
    hsdag_free(ids);
    hsdag_free(pairs);
    hsdag_gb_free(b);
    json_object_put(root);
    return rc < 0 ? rc : 0;
}

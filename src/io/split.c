/* split.c - reads and writes the split files of Tarnawski et al. ({"cpus":[{"nodes":[..]}],"fpgas":[..]}).
 * Not here: evaluating or choosing a split; the graph must already be loaded (ids are its file ids).
 * Entry points: hsdag_split_read, hsdag_split_write (include/hsdag/split.h). */
#include "hsdag/split.h"
#include "jsonin.h"

#include <string.h>

#define SPLIT_MAX_DEVICES 1000000
#define SPLIT_MAX_DEPTH 16

/* Assigns every id in group[gi].nodes (group = "cpus" or "fpgas") to device dev. */
static int split_group(json_object *grp, const char *gname, size_t gi, int32_t dev, const char *what,
                       const hsdag_graph *g, const hsdag_jsonin_key *keys, int32_t *device_of_node,
                       hsdag_err *e)
{
    char ctx[64];
    snprintf(ctx, sizeof ctx, "%s[%zu]", gname, gi);
    if (!json_object_is_type(grp, json_type_object))
        return hsdag_err_set(e, HSDAG_EPARSE, "%s: %s is not an object", what, ctx);
    json_object *ids;
    size_t n;
    int rc = hsdag_jsonin_array(grp, "nodes", HSDAG_JI_REQUIRED, &ids, &n, what, ctx, e);
    if (rc < 0) return rc;
    for (size_t i = 0; i < n; i++) {
        char name[48];
        int64_t id;
        snprintf(name, sizeof name, "nodes[%zu]", i);
        rc = hsdag_jsonin_value_int(json_object_array_get_idx(ids, i), INT32_MIN, INT32_MAX, &id, what, ctx,
                                    name, e);
        if (rc < 0) return rc;
        int32_t v = hsdag_jsonin_keys_find(keys, (size_t)g->n_nodes, id);
        if (v < 0)
            return hsdag_err_set(e, HSDAG_EDANGLING, "%s: %s.%s: id %lld is not a node of the graph", what,
                                 ctx, name, (long long)id);
        if (device_of_node[v] >= 0)
            return hsdag_err_set(e, HSDAG_EPARSE, "%s: %s.%s: node id %lld ('%s') is already on device %d",
                                 what, ctx, name, (long long)id, g->name[v], device_of_node[v]);
        device_of_node[v] = dev;
    }
    return 0;
}

int hsdag_split_read(const void *buf, size_t len, const char *what, const hsdag_graph *g,
                     int32_t *device_of_node, int32_t *n_cpus, int32_t *n_accels, hsdag_err *e)
{
    if (!what) what = "<buffer>";
    *n_cpus = *n_accels = 0;
    json_object *root = NULL, *cpus, *fpgas;
    size_t nc = 0, nf = 0;
    hsdag_jsonin_key *keys = hsdag_malloc((size_t)(g->n_nodes ? g->n_nodes : 1) * sizeof *keys);
    int rc = keys ? 0 : hsdag_err_set(e, HSDAG_ENOMEM, "%s: out of memory", what);
    if (rc < 0) goto done;
    for (int32_t v = 0; v < g->n_nodes; v++) {
        keys[v].key = g->file_id[v];
        keys[v].idx = v;
        device_of_node[v] = -1;
    }
    int32_t earlier = -1, dup = hsdag_jsonin_keys_sort_dup(keys, (size_t)g->n_nodes, &earlier);
    if (dup >= 0) {
        rc = hsdag_err_set(e, HSDAG_EINVAL, "%s: the graph has two nodes with file id %d ('%s', '%s')", what,
                           g->file_id[dup], g->name[earlier], g->name[dup]);
        goto done;
    }
    if ((rc = hsdag_jsonin_parse(buf, len, SPLIT_MAX_DEPTH, what, &root, e)) < 0) goto done;
    if (!json_object_is_type(root, json_type_object)) {
        rc = hsdag_err_set(e, HSDAG_EPARSE, "%s: top level is not a JSON object", what);
        goto done;
    }
    if ((rc = hsdag_jsonin_array(root, "cpus", HSDAG_JI_REQUIRED, &cpus, &nc, what, "", e)) < 0) goto done;
    if ((rc = hsdag_jsonin_array(root, "fpgas", HSDAG_JI_REQUIRED, &fpgas, &nf, what, "", e)) < 0) goto done;
    if (nc > SPLIT_MAX_DEVICES || nf > SPLIT_MAX_DEVICES) {
        rc = hsdag_err_set(e, HSDAG_ELIMIT, "%s: %zu CPUs / %zu accelerators exceed the limit %d", what, nc,
                           nf, SPLIT_MAX_DEVICES);
        goto done;
    }
    for (size_t i = 0; i < nf; i++)
        if ((rc = split_group(json_object_array_get_idx(fpgas, i), "fpgas", i, (int32_t)i, what, g, keys,
                              device_of_node, e)) < 0)
            goto done;
    for (size_t j = 0; j < nc; j++)
        if ((rc = split_group(json_object_array_get_idx(cpus, j), "cpus", j, (int32_t)(nf + j), what, g, keys,
                              device_of_node, e)) < 0)
            goto done;
    for (int32_t v = 0; v < g->n_nodes; v++)
        if (device_of_node[v] < 0) {
            rc = hsdag_err_set(e, HSDAG_EPARSE, "%s: node id %d ('%s') is on no device", what, g->file_id[v],
                               g->name[v]);
            goto done;
        }
    *n_accels = (int32_t)nf;
    *n_cpus = (int32_t)nc;
done:
    hsdag_free(keys);
    json_object_put(root);
    return rc < 0 ? rc : 0;
}

/* Writes one {"nodes": [...]} entry: the file ids of order[lo..hi). */
static void split_write_group(const hsdag_graph *g, const int32_t *order, int32_t lo, int32_t hi, int last,
                              hsdag_buf *out)
{
    hsdag_buf_printf(out, "    {\"nodes\": [");
    for (int32_t k = lo; k < hi; k++) hsdag_buf_printf(out, k > lo ? ", %d" : "%d", g->file_id[order[k]]);
    hsdag_buf_printf(out, last ? "]}\n" : "]},\n");
}

int hsdag_split_write(const hsdag_graph *g, const int32_t *device_of_node, int32_t n_accels, int32_t n_cpus,
                      hsdag_buf *out, hsdag_err *e)
{
    if (n_accels < 0 || n_cpus < 0 || n_accels > SPLIT_MAX_DEVICES || n_cpus > SPLIT_MAX_DEVICES)
        return hsdag_err_set(e, HSDAG_EINVAL, "split: bad device counts (%d accelerators, %d CPUs)", n_accels,
                             n_cpus);
    int32_t nd = n_accels + n_cpus;
    for (int32_t v = 0; v < g->n_nodes; v++)
        if (device_of_node[v] < 0 || device_of_node[v] >= nd)
            return hsdag_err_set(e, HSDAG_EINVAL, "split: node '%s' has device %d, not in 0..%d", g->name[v],
                                 device_of_node[v], nd - 1);
    /* Bucket the nodes by device (stable, so each list is in graph order). */
    int32_t *off = hsdag_calloc((size_t)nd + 1, sizeof *off);
    int32_t *order = hsdag_malloc((size_t)(g->n_nodes ? g->n_nodes : 1) * sizeof *order);
    if (!off || !order) {
        hsdag_free(off);
        hsdag_free(order);
        return hsdag_err_set(e, HSDAG_ENOMEM, "split: out of memory");
    }
    for (int32_t v = 0; v < g->n_nodes; v++) off[device_of_node[v] + 1]++;
    for (int32_t d = 0; d < nd; d++) off[d + 1] += off[d];
    for (int32_t v = 0; v < g->n_nodes; v++) order[off[device_of_node[v]]++] = v;
    for (int32_t d = nd; d > 0; d--) off[d] = off[d - 1]; /* restore the starts */
    off[0] = 0;
    hsdag_buf_printf(out, "{\n  \"cpus\": [\n");
    for (int32_t j = 0; j < n_cpus; j++)
        split_write_group(g, order, off[n_accels + j], off[n_accels + j + 1], j + 1 == n_cpus, out);
    hsdag_buf_printf(out, "  ],\n  \"fpgas\": [\n");
    for (int32_t i = 0; i < n_accels; i++)
        split_write_group(g, order, off[i], off[i + 1], i + 1 == n_accels, out);
    hsdag_buf_printf(out, "  ]\n}\n");
    hsdag_free(off);
    hsdag_free(order);
    if (out->oom) return hsdag_err_set(e, HSDAG_ENOMEM, "split: out of memory");
    return 0;
}

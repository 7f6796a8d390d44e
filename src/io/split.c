/* split.c - reads and writes the split files of Tarnawski et al. ({"cpus":[{"nodes":[..]}],"fpgas":[..]}):
 *   the one split reader and writer (split_int.h), used by hsdag_split_* and by the placement files.
 * Not here: evaluating or choosing a split; mapping groups to a device set (placement.c); the graph must
 *   already be loaded (ids are its file ids).
 * Entry points: hsdag_split_read, hsdag_split_write (include/hsdag/split.h), io_split_groups,
 *   io_split_write (split_int.h). */
#include "hsdag/split.h"
#include "split_int.h"

#include <stdlib.h>
#include <string.h>

#define SPLIT_MAX_DEVICES 1000000
#define SPLIT_MAX_DEPTH 16

/* "fpgas[i]" or "cpus[j]" of a group index. */
static void group_name(char *buf, size_t cap, int32_t gi, int32_t n_fpgas)
{
    if (gi < n_fpgas)
        snprintf(buf, cap, "fpgas[%d]", (int)gi);
    else
        snprintf(buf, cap, "cpus[%d]", (int)(gi - n_fpgas));
}

/* Assigns every id in list[gi].nodes (list = "cpus" or "fpgas") to group `grp`. */
static int split_group(json_object *entry, const char *list, size_t gi, int32_t grp, int32_t n_fpgas,
                       const char *what, const hsdag_graph *g, const hsdag_jsonin_key *keys,
                       int32_t *group_of, hsdag_err *e)
{
    char ctx[64];
    snprintf(ctx, sizeof ctx, "%s[%zu]", list, gi);
    if (!json_object_is_type(entry, json_type_object))
        return hsdag_err_set(e, HSDAG_EPARSE, "%s: %s is not an object", what, ctx);
    json_object *ids;
    size_t n;
    int rc = hsdag_jsonin_array(entry, "nodes", HSDAG_JI_REQUIRED, &ids, &n, what, ctx, e);
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
        if (group_of[v] >= 0) {
            char other[32];
            group_name(other, sizeof other, group_of[v], n_fpgas);
            return hsdag_err_set(e, HSDAG_EPARSE,
                                 "%s: %s.%s: node id %lld ('%s') is listed twice (also in %s)", what, ctx,
                                 name, (long long)id, g->name[v], other);
        }
        group_of[v] = grp;
    }
    return 0;
}

int io_split_groups(int32_t *group_of, int32_t *n_cpus, int32_t *n_fpgas, json_object *root, unsigned flags,
                    const hsdag_graph *g, const char *what, hsdag_err *e)
{
    json_object *cpus = NULL, *fpgas = NULL;
    size_t nc = 0, nf = 0;
    unsigned need = (flags & IO_SPLIT_OPTIONAL_LISTS) ? 0 : HSDAG_JI_REQUIRED;
    *n_cpus = *n_fpgas = 0;
    int rc = hsdag_jsonin_array(root, "cpus", need, &cpus, &nc, what, "", e);
    if (rc < 0) return rc;
    if ((rc = hsdag_jsonin_array(root, "fpgas", need, &fpgas, &nf, what, "", e)) < 0) return rc;
    rc = 0; /* an optional list may have been absent (1) */
    *n_cpus = nc > INT32_MAX ? INT32_MAX : (int32_t)nc;
    *n_fpgas = nf > INT32_MAX ? INT32_MAX : (int32_t)nf;
    if (nc > SPLIT_MAX_DEVICES || nf > SPLIT_MAX_DEVICES)
        return hsdag_err_set(e, HSDAG_ELIMIT, "%s: %zu CPUs / %zu accelerators exceed the limit %d", what, nc,
                             nf, SPLIT_MAX_DEVICES);
    hsdag_jsonin_key *keys = hsdag_malloc((size_t)(g->n_nodes ? g->n_nodes : 1) * sizeof *keys);
    if (!keys) return hsdag_err_set(e, HSDAG_ENOMEM, "%s: out of memory", what);
    for (int32_t v = 0; v < g->n_nodes; v++) {
        keys[v].key = g->file_id[v];
        keys[v].idx = v;
        group_of[v] = -1;
    }
    int32_t earlier = -1, dup = hsdag_jsonin_keys_sort_dup(keys, (size_t)g->n_nodes, &earlier);
    if (dup >= 0) {
        rc = hsdag_err_set(e, HSDAG_EINVAL, "%s: the graph has two nodes with file id %d ('%s', '%s')", what,
                           g->file_id[dup], g->name[earlier], g->name[dup]);
        goto done;
    }
    for (size_t i = 0; i < nf && rc == 0; i++)
        rc = split_group(json_object_array_get_idx(fpgas, i), "fpgas", i, (int32_t)i, (int32_t)nf, what, g,
                         keys, group_of, e);
    for (size_t j = 0; j < nc && rc == 0; j++)
        rc = split_group(json_object_array_get_idx(cpus, j), "cpus", j, (int32_t)(nf + j), (int32_t)nf, what,
                         g, keys, group_of, e);
    for (int32_t v = 0; v < g->n_nodes && rc == 0; v++)
        if (group_of[v] < 0)
            rc = hsdag_err_set(e, HSDAG_EPARSE, "%s: node id %d ('%s') is in no group of the split", what,
                               g->file_id[v], g->name[v]);
done:
    hsdag_free(keys);
    return rc;
}

int hsdag_split_read(int32_t *device_of_node, int32_t *n_cpus, int32_t *n_accels, const void *buf, size_t len,
                     const char *what, const hsdag_graph *g, hsdag_err *e)
{
    if (!what) what = "<buffer>";
    *n_cpus = *n_accels = 0;
    json_object *root = NULL;
    int32_t nc = 0, nf = 0;
    int rc = hsdag_jsonin_parse(buf, len, SPLIT_MAX_DEPTH, what, &root, e);
    if (rc == 0 && !json_object_is_type(root, json_type_object))
        rc = hsdag_err_set(e, HSDAG_EPARSE, "%s: top level is not a JSON object", what);
    if (rc == 0) rc = io_split_groups(device_of_node, &nc, &nf, root, 0, g, what, e);
    if (rc == 0) {
        *n_accels = nf;
        *n_cpus = nc;
    }
    json_object_put(root);
    return rc < 0 ? rc : 0;
}

/* ---- writer ---- */

typedef struct id_item {
    int32_t id, v;
} id_item;

static int id_cmp(const void *a, const void *b)
{
    const id_item *x = a, *y = b;
    return (x->id > y->id) - (x->id < y->id);
}

int io_split_write(hsdag_buf *out, const hsdag_graph *g, const int32_t *group_of, int32_t n_fpgas,
                   int32_t n_cpus, const char *const *names, hsdag_err *e)
{
    int32_t V = g->n_nodes, ng = n_fpgas + n_cpus;
    for (int32_t v = 0; v < V; v++)
        if (group_of[v] < 0 || group_of[v] >= ng)
            return hsdag_err_set(e, HSDAG_EINVAL, "split: node '%s' has device %d, not in 0..%d", g->name[v],
                                 group_of[v], ng - 1);
    id_item *it = hsdag_malloc(((size_t)V + 1) * sizeof *it);
    if (!it) return hsdag_err_set(e, HSDAG_ENOMEM, "split: out of memory");
    for (int32_t v = 0; v < V; v++) it[v].id = g->file_id[v], it[v].v = v;
    qsort(it, (size_t)V, sizeof *it, id_cmp);
    for (int k = 0; k < 2; k++) { /* "cpus" (groups n_fpgas..), then "fpgas" (groups 0..) */
        hsdag_buf_printf(out, "%s\"%s\": [", k ? ",\n  " : "{\n  ", k ? "fpgas" : "cpus");
        int32_t lo = k ? 0 : n_fpgas, hi = k ? n_fpgas : ng;
        for (int32_t gi = lo; gi < hi; gi++) {
            hsdag_buf_printf(out, "%s\n    {", gi > lo ? "," : "");
            if (names) {
                hsdag_buf_printf(out, "\"device\": ");
                hsdag_buf_json_str(out, names[gi]);
                hsdag_buf_printf(out, ", ");
            }
            hsdag_buf_printf(out, "\"nodes\": [");
            int first = 1;
            for (int32_t i = 0; i < V; i++)
                if (group_of[it[i].v] == gi) {
                    hsdag_buf_printf(out, "%s%d", first ? "" : ", ", (int)it[i].id);
                    first = 0;
                }
            hsdag_buf_printf(out, "]}");
        }
        hsdag_buf_printf(out, "%s]", hi > lo ? "\n  " : "");
    }
    hsdag_buf_printf(out, "\n}\n");
    hsdag_free(it);
    return out->oom ? hsdag_err_set(e, HSDAG_ENOMEM, "split: out of memory") : 0;
}

int hsdag_split_write(hsdag_buf *out, const hsdag_graph *g, const int32_t *device_of_node, int32_t n_accels,
                      int32_t n_cpus, hsdag_err *e)
{
    if (n_accels < 0 || n_cpus < 0 || n_accels > SPLIT_MAX_DEVICES || n_cpus > SPLIT_MAX_DEVICES)
        return hsdag_err_set(e, HSDAG_EINVAL, "split: bad device counts (%d accelerators, %d CPUs)", n_accels,
                             n_cpus);
    return io_split_write(out, g, device_of_node, n_accels, n_cpus, NULL, e);
}

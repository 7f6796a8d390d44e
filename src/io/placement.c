/* placement.c - placement files: hsdag placement JSON, flat OpenVINO affinity maps and Tarnawski splits
 * in;
 * the same three out. Formats are described in include/hsdag/placement.h and docs/simulator.md.
 * Not here: computing or scoring placements. (A split reader may also exist in the Tarnawski importer's
 * module;
 * this one maps split groups onto a device set, which that one does not need to know about.)
 * Entry points: hsdag_placement_parse/read_file/from_spec, hsdag_placement_write_json/affinity/split.
 */
#include "hsdag/placement.h"

#include <json-c/json.h>
#include <string.h>
#include <strings.h>

#define PL_MAX_BYTES ((size_t)1 << 30)

/* ---- name lookup ---- */

static int32_t pl_device(const hsdag_devices *d, const char *name)
{
    int32_t i = hsdag_devices_find(d, name);
    if (i >= 0) return i;
    for (int32_t k = 0; k < d->n; k++) /* affinity maps use OpenVINO names ("GPU.1") */
        if (strcasecmp(d->dev[k].ov_name, name) == 0) return k;
    return -1;
}

static int pl_names(const hsdag_graph *g, hsdag_strmap **out)
{
    hsdag_strmap *m = hsdag_strmap_create();
    if (!m) return HSDAG_ENOMEM;
    for (int32_t v = 0; v < g->n_nodes; v++)
        if (hsdag_strmap_put(m, g->name[v], strlen(g->name[v]), v) < 0) {
            hsdag_strmap_free(m);
            return HSDAG_ENOMEM;
        }
    *out = m;
    return 0;
}

/* ---- {"placement": {...}} and flat affinity maps ---- */

static int pl_read_map(json_object *map, json_object *def, const char *what, const hsdag_graph *g,
                       const hsdag_devices *devs, int32_t *device, hsdag_placement_info *info, hsdag_err *e)
{
    hsdag_strmap *names = NULL;
    int rc = pl_names(g, &names);
    if (rc < 0) return hsdag_err_set(e, rc, "%s: out of memory", what);
    int32_t dflt = -1;
    if (def) {
        if (!json_object_is_type(def, json_type_string) ||
            (dflt = pl_device(devs, json_object_get_string(def))) < 0) {
            rc = hsdag_err_set(e, HSDAG_EINVAL, "%s: \"default\": unknown device '%.80s'", what,
                               json_object_get_string(def));
            goto done;
        }
    }
    for (int32_t v = 0; v < g->n_nodes; v++) device[v] = -1;
    int32_t listed = 0;
    json_object_object_foreach(map, key, val)
    {
        int32_t v = hsdag_strmap_get(names, key, strlen(key));
        if (v < 0) {
            rc = hsdag_err_set(e, HSDAG_EINVAL, "%s: unknown node '%.120s'", what, key);
            goto done;
        }
        int32_t d = -1;
        if (json_object_is_type(val, json_type_string))
            d = pl_device(devs, json_object_get_string(val));
        else if (json_object_is_type(val, json_type_int)) {
            int64_t x = json_object_get_int64(val);
            d = (x >= 0 && x < devs->n) ? (int32_t)x : -1;
        } else {
            rc = hsdag_err_set(e, HSDAG_EINVAL, "%s: node '%.120s': device is not a string or an index", what,
                               key);
            goto done;
        }
        if (d < 0) {
            rc = hsdag_err_set(e, HSDAG_EINVAL,
                               "%s: node '%.120s': unknown device '%.80s' (devices '%s' has %d)", what, key,
                               json_object_get_string(val), devs->name, (int)devs->n);
            goto done;
        }
        device[v] = d;
        listed++;
    }
    for (int32_t v = 0; v < g->n_nodes; v++)
        if (device[v] < 0) {
            if (dflt < 0) {
                rc = hsdag_err_set(e, HSDAG_EINVAL,
                                   "%s: node '%.120s' has no device (list it or give \"default\")", what,
                                   g->name[v]);
                goto done;
            }
            device[v] = dflt;
        }
    if (info) info->n_listed = listed;
done:
    hsdag_strmap_free(names);
    return rc;
}

/* ---- Tarnawski split ---- */

typedef struct id_item {
    int32_t id, v;
} id_item;

static int id_cmp(const void *a, const void *b)
{
    const id_item *x = a, *y = b;
    return (x->id > y->id) - (x->id < y->id);
}

static int32_t find_id(const id_item *it, int32_t n, int64_t id)
{
    int32_t lo = 0, hi = n - 1;
    while (lo <= hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (it[mid].id == id) return it[mid].v;
        if (it[mid].id < id)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

static int pl_read_split(json_object *root, const char *what, const hsdag_graph *g, const hsdag_devices *devs,
                         int32_t *device, hsdag_placement_info *info, hsdag_err *e)
{
    json_object *groups[2] = {NULL, NULL};
    static const char *const keys[2] = {"cpus", "fpgas"};
    int32_t n_of_kind[2] = {0, 0}, cnt[2] = {0, 0};
    for (int32_t d = 0; d < devs->n; d++) n_of_kind[devs->dev[d].kind == HSDAG_DEV_CPU ? 0 : 1]++;
    for (int k = 0; k < 2; k++) {
        if (!json_object_object_get_ex(root, keys[k], &groups[k])) continue;
        if (!json_object_is_type(groups[k], json_type_array))
            return hsdag_err_set(e, HSDAG_EPARSE, "%s: \"%s\" is not an array", what, keys[k]);
        size_t n = json_object_array_length(groups[k]);
        cnt[k] = n > HSDAG_MAX_DEVICES * 16 ? HSDAG_MAX_DEVICES * 16 : (int32_t)n;
    }
    if (info) {
        info->split_cpus = cnt[0];
        info->split_fpgas = cnt[1];
    }
    /* empty groups need no device; count the non-empty ones against the set */
    int32_t need[2] = {0, 0};
    for (int k = 0; k < 2; k++)
        for (int32_t i = 0; i < cnt[k]; i++) {
            json_object *grp = json_object_array_get_idx(groups[k], (size_t)i), *nodes;
            if (!json_object_is_type(grp, json_type_object) ||
                !json_object_object_get_ex(grp, "nodes", &nodes) ||
                !json_object_is_type(nodes, json_type_array))
                return hsdag_err_set(e, HSDAG_EPARSE, "%s: %s[%d] has no \"nodes\" array", what, keys[k],
                                     (int)i);
            if (json_object_array_length(nodes) > 0) need[k] = i + 1;
        }
    if (need[0] > n_of_kind[0] || need[1] > n_of_kind[1])
        return hsdag_err_set(
            e, HSDAG_EINVAL,
            "%s: the split uses %d CPU and %d accelerator groups, devices '%s' have %d and %d", what,
            (int)need[0], (int)need[1], devs->name, (int)n_of_kind[0], (int)n_of_kind[1]);
    int32_t V = g->n_nodes;
    id_item *it = hsdag_malloc(((size_t)V + 1) * sizeof *it);
    if (!it) return hsdag_err_set(e, HSDAG_ENOMEM, "%s: out of memory", what);
    for (int32_t v = 0; v < V; v++) it[v].id = g->file_id[v], it[v].v = v, device[v] = -1;
    qsort(it, (size_t)V, sizeof *it, id_cmp);
    int rc = 0;
    int32_t listed = 0;
    for (int k = 0; k < 2; k++) {
        int32_t seen = 0;
        for (int32_t dev = 0; dev < devs->n && seen < need[k]; dev++) {
            if ((devs->dev[dev].kind == HSDAG_DEV_CPU) != (k == 0)) continue;
            json_object *nodes;
            json_object_object_get_ex(json_object_array_get_idx(groups[k], (size_t)seen), "nodes", &nodes);
            size_t n = json_object_array_length(nodes);
            for (size_t j = 0; j < n; j++) {
                json_object *x = json_object_array_get_idx(nodes, j);
                if (!json_object_is_type(x, json_type_int)) {
                    rc = hsdag_err_set(e, HSDAG_EPARSE, "%s: %s[%d]: node %zu is not an integer id", what,
                                       keys[k], (int)seen, j);
                    goto done;
                }
                int64_t id = json_object_get_int64(x);
                int32_t v = (id >= INT32_MIN && id <= INT32_MAX) ? find_id(it, V, id) : -1;
                if (v < 0) {
                    rc = hsdag_err_set(e, HSDAG_EINVAL, "%s: %s[%d]: unknown node id %lld", what, keys[k],
                                       (int)seen, (long long)id);
                    goto done;
                }
                if (device[v] >= 0) {
                    rc = hsdag_err_set(e, HSDAG_EINVAL, "%s: node id %lld is listed twice", what,
                                       (long long)id);
                    goto done;
                }
                device[v] = dev;
                listed++;
            }
            seen++;
        }
    }
    for (int32_t v = 0; v < V; v++)
        if (device[v] < 0) {
            rc = hsdag_err_set(e, HSDAG_EINVAL, "%s: node id %d ('%.80s') is in no group of the split", what,
                               (int)g->file_id[v], g->name[v]);
            goto done;
        }
    if (info) info->n_listed = listed;
done:
    hsdag_free(it);
    return rc;
}

/* ---- entry points ---- */

int hsdag_placement_parse(const void *buf, size_t len, const char *what, const hsdag_graph *g,
                          const hsdag_devices *devs, int32_t *device, hsdag_placement_info *info,
                          hsdag_err *e)
{
    what = what ? what : "<buffer>";
    if (info) memset(info, 0, sizeof *info);
    if (len > PL_MAX_BYTES)
        return hsdag_err_set(e, HSDAG_ELIMIT, "%s: placement file larger than 1 GiB", what);
    json_tokener *tok = json_tokener_new_ex(64);
    if (!tok) return hsdag_err_set(e, HSDAG_ENOMEM, "%s: out of memory", what);
    json_object *root = json_tokener_parse_ex(tok, (const char *)buf, (int)len);
    enum json_tokener_error je = json_tokener_get_error(tok);
    size_t used = json_tokener_get_parse_end(tok);
    int rc;
    if (!root || je != json_tokener_success) {
        rc = hsdag_err_set(
            e, HSDAG_EPARSE, "%s: bad JSON at byte %zu: %s", what, used,
            json_tokener_error_desc(je == json_tokener_continue ? json_tokener_error_parse_eof : je));
        goto done;
    }
    for (size_t i = used; i < len; i++) {
        char ch = ((const char *)buf)[i];
        if (ch != ' ' && ch != '\n' && ch != '\r' && ch != '\t') {
            rc = hsdag_err_set(e, HSDAG_EPARSE, "%s: bad JSON: trailing data at byte %zu", what, i);
            goto done;
        }
    }
    if (!json_object_is_type(root, json_type_object)) {
        rc = hsdag_err_set(e, HSDAG_EPARSE, "%s: the top level is not an object", what);
        goto done;
    }
    json_object *pl, *def = NULL, *tmp;
    if (json_object_object_get_ex(root, "placement", &pl)) {
        if (!json_object_is_type(pl, json_type_object)) {
            rc = hsdag_err_set(e, HSDAG_EPARSE, "%s: \"placement\" is not an object", what);
            goto done;
        }
        json_object_object_get_ex(root, "default", &def);
        if (info) info->format = HSDAG_PLF_HSDAG;
        rc = pl_read_map(pl, def, what, g, devs, device, info, e);
    } else if (json_object_object_get_ex(root, "cpus", &tmp) ||
               json_object_object_get_ex(root, "fpgas", &tmp)) {
        if (info) info->format = HSDAG_PLF_SPLIT;
        rc = pl_read_split(root, what, g, devs, device, info, e);
    } else {
        if (info) info->format = HSDAG_PLF_AFFINITY;
        rc = pl_read_map(root, NULL, what, g, devs, device, info, e);
    }
done:
    json_object_put(root);
    json_tokener_free(tok);
    return rc;
}

int hsdag_placement_read_file(const char *path, const hsdag_graph *g, const hsdag_devices *devs,
                              int32_t *device, hsdag_placement_info *info, hsdag_err *e)
{
    char *buf = NULL;
    size_t len = 0;
    if (info) memset(info, 0, sizeof *info);
    int rc = hsdag_read_file(path, &buf, &len, PL_MAX_BYTES, e);
    if (rc < 0) return rc;
    rc = hsdag_placement_parse(buf, len, path, g, devs, device, info, e);
    hsdag_free(buf);
    return rc;
}

int hsdag_placement_from_spec(const char *spec, const hsdag_graph *g, const hsdag_devices *devs,
                              int32_t *device, hsdag_placement_info *info, hsdag_err *e)
{
    if (info) memset(info, 0, sizeof *info);
    if (!spec || !*spec) return hsdag_err_set(e, HSDAG_EINVAL, "placement: empty specification");
    char name[256];
    size_t n = strlen(spec);
    int32_t d = -1;
    if (n < sizeof name) {
        memcpy(name, spec, n + 1);
        if (n > 5 && strcmp(name + n - 5, "-only") == 0) name[n - 5] = 0;
        d = hsdag_devices_find(devs, name);
        for (int k = 0; d < 0 && k < HSDAG_DEV_KIND_COUNT_; k++)
            if (strcmp(name, hsdag_devkind_name((hsdag_devkind)k)) == 0)
                d = hsdag_devices_first_of(devs, (hsdag_devkind)k);
        if (d < 0 && strcmp(name, "gpu") == 0)
            d = hsdag_devices_first_of(devs, HSDAG_DEV_ACCEL); /* Tarnawski sets */
    }
    if (d >= 0) {
        for (int32_t v = 0; v < g->n_nodes; v++) device[v] = d;
        if (info) info->format = HSDAG_PLF_SPEC, info->n_listed = g->n_nodes;
        return 0;
    }
    if (strchr(spec, '/') || strchr(spec, '.'))
        return hsdag_placement_read_file(spec, g, devs, device, info, e);
    return hsdag_err_set(e, HSDAG_EINVAL,
                         "placement: '%.120s' is neither a device of '%s', '<device>-only', nor a file", spec,
                         devs->name);
}

/* ---- writers ---- */

static int pl_check(const hsdag_graph *g, const hsdag_devices *devs, const int32_t *device)
{
    for (int32_t v = 0; v < g->n_nodes; v++)
        if (device[v] < 0 || device[v] >= devs->n) return HSDAG_EINVAL;
    return 0;
}

int hsdag_placement_write_json(const hsdag_graph *g, const hsdag_devices *devs, const int32_t *device,
                               hsdag_buf *b)
{
    if (pl_check(g, devs, device) < 0) return HSDAG_EINVAL;
    hsdag_buf_printf(b, "{\n  \"format\": \"hsdag-placement\",\n  \"devices\": ");
    hsdag_buf_json_str(b, devs->name);
    hsdag_buf_printf(b, ",\n  \"placement\": {");
    for (int32_t v = 0; v < g->n_nodes; v++) {
        hsdag_buf_printf(b, "%s\n    ", v ? "," : "");
        hsdag_buf_json_str(b, g->name[v]);
        hsdag_buf_printf(b, ": ");
        hsdag_buf_json_str(b, devs->dev[device[v]].name);
    }
    hsdag_buf_printf(b, "\n  }\n}\n");
    return b->oom ? HSDAG_ENOMEM : 0;
}

int hsdag_placement_write_affinity(const hsdag_graph *g, const hsdag_devices *devs, const int32_t *device,
                                   hsdag_buf *b)
{
    if (pl_check(g, devs, device) < 0) return HSDAG_EINVAL;
    hsdag_buf_printf(b, "{");
    for (int32_t v = 0; v < g->n_nodes; v++) {
        hsdag_buf_printf(b, "%s\n  ", v ? "," : "");
        hsdag_buf_json_str(b, g->name[v]);
        hsdag_buf_printf(b, ": ");
        hsdag_buf_json_str(b, devs->dev[device[v]].ov_name);
    }
    hsdag_buf_printf(b, "\n}\n");
    return b->oom ? HSDAG_ENOMEM : 0;
}

int hsdag_placement_write_split(const hsdag_graph *g, const hsdag_devices *devs, const int32_t *device,
                                hsdag_buf *b)
{
    if (pl_check(g, devs, device) < 0) return HSDAG_EINVAL;
    int32_t V = g->n_nodes;
    id_item *it = hsdag_malloc(((size_t)V + 1) * sizeof *it);
    if (!it) return HSDAG_ENOMEM;
    for (int32_t v = 0; v < V; v++) it[v].id = g->file_id[v], it[v].v = v;
    qsort(it, (size_t)V, sizeof *it, id_cmp);
    for (int k = 0; k < 2; k++) {
        hsdag_buf_printf(b, "%s\"%s\": [", k ? ",\n  " : "{\n  ", k ? "fpgas" : "cpus");
        int first_grp = 1;
        for (int32_t d = 0; d < devs->n; d++) {
            if ((devs->dev[d].kind == HSDAG_DEV_CPU) != (k == 0)) continue;
            hsdag_buf_printf(b, "%s\n    {\"device\": ", first_grp ? "" : ",");
            first_grp = 0;
            hsdag_buf_json_str(b, devs->dev[d].name);
            hsdag_buf_printf(b, ", \"nodes\": [");
            int first = 1;
            for (int32_t i = 0; i < V; i++)
                if (device[it[i].v] == d) {
                    hsdag_buf_printf(b, "%s%d", first ? "" : ", ", (int)it[i].id);
                    first = 0;
                }
            hsdag_buf_printf(b, "]}");
        }
        hsdag_buf_printf(b, "%s]", first_grp ? "" : "\n  ");
    }
    hsdag_buf_printf(b, "\n}\n");
    hsdag_free(it);
    return b->oom ? HSDAG_ENOMEM : 0;
}

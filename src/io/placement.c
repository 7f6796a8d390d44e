/* placement.c - placement files: hsdag placement JSON, flat OpenVINO affinity maps and Tarnawski splits
 * in;
 * the same three out. Formats are described in include/hsdag/placement.h and docs/simulator.md.
 * Not here: computing or scoring placements; the split lists themselves (split.c's reader and writer, which
 *   this file maps onto a device set); JSON parsing (jsonin.h, and jsonstream.h for the fast path: hsdag
 *   placement JSON without a document tree, anything unusual or wrong handed to the json-c reader).
 * Entry points: hsdag_placement_parse/read_file/from_spec, hsdag_placement_write_json/affinity/split,
 *   hsdag_placement_format_name; hsdag_placement_parse_stream/_tree (placement_int.h).
 */
#include "hsdag/placement.h"
#include "ioutil.h"
#include "jsonstream.h"
#include "placement_int.h"
#include "split_int.h"

#include <string.h>

const char *hsdag_placement_format_name(hsdag_placement_format f)
{
    static const char *const names[] = {"unknown", "hsdag", "affinity", "tarnawski-split", "shorthand"};
    return f >= HSDAG_PLF_UNKNOWN && f <= HSDAG_PLF_SPEC ? names[f] : "unknown";
}
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

/* ---- Tarnawski split (the one split reader of src/io/split.c), mapped onto the device set ---- */

/* The device of every split group: fpgas[i] -> the i-th non-CPU device, cpus[j] -> the j-th CPU. */
static void pl_split_devices(const hsdag_devices *devs, int32_t n_fpgas, int32_t n_cpus, int32_t *dev_of,
                             int32_t *n_of_kind)
{
    n_of_kind[0] = n_of_kind[1] = 0;
    for (int32_t gi = 0; gi < n_fpgas + n_cpus; gi++) dev_of[gi] = -1;
    for (int32_t d = 0; d < devs->n; d++) {
        int cpu = devs->dev[d].kind == HSDAG_DEV_CPU;
        int32_t gi = cpu ? n_fpgas + n_of_kind[0] : n_of_kind[1];
        if (cpu ? n_of_kind[0] < n_cpus : n_of_kind[1] < n_fpgas) dev_of[gi] = d;
        n_of_kind[cpu ? 0 : 1]++;
    }
}

static int pl_read_split(json_object *root, const char *what, const hsdag_graph *g, const hsdag_devices *devs,
                         int32_t *device, hsdag_placement_info *info, hsdag_err *e)
{
    int32_t nc = 0, nf = 0;
    /* placement files complete a training workload's split from its inference one (IO_SPLIT_INFER_COLORS) */
    int rc =
        io_split_groups(device, &nc, &nf, root, IO_SPLIT_OPTIONAL_LISTS | IO_SPLIT_INFER_COLORS, g, what, e);
    if (info) {
        info->split_cpus = nc;
        info->split_fpgas = nf;
    }
    if (rc < 0) return rc;
    /* empty groups need no device; count the non-empty ones against the set */
    int32_t need[2] = {0, 0}, n_of_kind[2];
    for (int32_t v = 0; v < g->n_nodes; v++) {
        int cpu = device[v] >= nf;
        int32_t idx = cpu ? device[v] - nf : device[v];
        if (idx + 1 > need[cpu ? 0 : 1]) need[cpu ? 0 : 1] = idx + 1;
    }
    int32_t *dev_of = hsdag_malloc(((size_t)nf + (size_t)nc + 1) * sizeof *dev_of);
    if (!dev_of) return hsdag_err_set(e, HSDAG_ENOMEM, "%s: out of memory", what);
    pl_split_devices(devs, nf, nc, dev_of, n_of_kind);
    if (need[0] > n_of_kind[0] || need[1] > n_of_kind[1])
        rc =
            hsdag_err_set(e, HSDAG_EINVAL,
                          "%s: the split uses %d CPU and %d accelerator groups, devices '%s' have %d and %d",
                          what, (int)need[0], (int)need[1], devs->name, (int)n_of_kind[0], (int)n_of_kind[1]);
    else
        for (int32_t v = 0; v < g->n_nodes; v++) device[v] = dev_of[device[v]];
    hsdag_free(dev_of);
    if (rc == 0 && info) info->n_listed = g->n_nodes;
    return rc;
}

/* ---- the streaming reader: {"placement": {...}} without a document tree ----
 * Takes a text only where the json-c reader below takes it and gives the same devices; STOP
 * (HSDAG_JSTREAM_STOP) on every error, on a key given twice (json-c keeps the last), on the other formats, and
 * on whatever the tokenizer leaves to json-c. Writes no message: the json-c reader words it. */
#define PS_STOP HSDAG_JSTREAM_STOP

typedef struct pl_stream {
    hsdag_jstream s;
    const hsdag_graph *g;
    const hsdag_devices *devs;
    hsdag_strmap *names; /* built when a node comes out of index order */
    int32_t next;        /* the node expected next: files hsdag writes list nodes in index order */
    int oom;
} pl_stream;

/* the node named by the decoded key, or -1 */
static int32_t ps_node(pl_stream *ps)
{
    const hsdag_graph *g = ps->g;
    int32_t v = ps->next;
    if (v < g->n_nodes && strcmp(g->name[v], ps->s.str) == 0) { /* the key holds no NUL (jsonstream.h) */
        ps->next = v + 1;
        return v;
    }
    if (!ps->names && pl_names(g, &ps->names) < 0) {
        ps->oom = 1;
        return -1;
    }
    v = hsdag_strmap_get(ps->names, ps->s.str, ps->s.str_len);
    if (v >= 0) ps->next = v + 1;
    return v;
}

/* a device: its name (or OpenVINO name) as a string, or its index as an integer; -1 if neither */
static int32_t ps_device(pl_stream *ps)
{
    if (hsdag_jstream_peek(&ps->s) == '"')
        return hsdag_jstream_string(&ps->s) ? -1 : pl_device(ps->devs, ps->s.str);
    hsdag_jnum n;
    if (hsdag_jstream_number(&ps->s, &n) || !n.is_int) return -1;
    return n.i >= 0 && n.i < ps->devs->n ? (int32_t)n.i : -1;
}

static int ps_map(pl_stream *ps, int32_t *device, int32_t *listed)
{
    int first = 1, r;
    if (hsdag_jstream_open(&ps->s, '{')) return PS_STOP;
    while ((r = hsdag_jstream_more(&ps->s, '}', &first)) == 1) {
        int32_t v, d;
        if (hsdag_jstream_key(&ps->s) || (v = ps_node(ps)) < 0 || device[v] >= 0) return PS_STOP;
        if ((d = ps_device(ps)) < 0) return PS_STOP;
        device[v] = d;
        (*listed)++;
    }
    return r;
}

/* a string member's value equal to want */
static int ps_string_is(pl_stream *ps, const char *want)
{
    return hsdag_jstream_string(&ps->s) || strcmp(ps->s.str, want) != 0 ? PS_STOP : 0;
}

static int ps_top(pl_stream *ps, int32_t *device, hsdag_placement_info *info)
{
    static const char *const keys[] = {"format", "devices", "default", "placement"};
    int first = 1, r, k;
    uint32_t seen = 0;
    int32_t dflt = -1, listed = 0;
    for (int32_t v = 0; v < ps->g->n_nodes; v++) device[v] = -1;
    if (hsdag_jstream_open(&ps->s, '{')) return PS_STOP;
    while ((r = hsdag_jstream_more(&ps->s, '}', &first)) == 1) {
        if (hsdag_jstream_key_index(&ps->s, keys, 4, 0, &k)) return PS_STOP;
        if (k < 0) {
            if (hsdag_jstream_skip(&ps->s)) return PS_STOP;
            continue;
        }
        if (seen & (1u << k)) return PS_STOP;
        seen |= 1u << k;
        int bad;
        switch (k) {
        case 0:
            bad = ps_string_is(ps, "hsdag-placement");
            break;
        case 1: /* a placement for another device set maps nodes to the wrong devices */
            bad = ps_string_is(ps, ps->devs->name);
            break;
        case 2:
            bad = hsdag_jstream_peek(&ps->s) != '"' || (dflt = ps_device(ps)) < 0;
            break;
        default:
            bad = ps_map(ps, device, &listed);
        }
        if (bad) return PS_STOP;
    }
    if (r || !(seen & (1u << 3)) || hsdag_jstream_end(&ps->s)) return PS_STOP;
    for (int32_t v = 0; v < ps->g->n_nodes; v++)
        if (device[v] < 0) {
            if (dflt < 0) return PS_STOP;
            device[v] = dflt;
        }
    if (info) info->format = HSDAG_PLF_HSDAG, info->n_listed = listed;
    return 0;
}

/* ps_top on the tokenizer set up in ps; frees it. 0, HSDAG_ENOMEM or PS_STOP. */
static int ps_run(pl_stream *ps, int32_t *device, hsdag_placement_info *info)
{
    int rc = ps_top(ps, device, info);
    if (ps->s.bad_file) rc = PS_STOP;
    if (ps->oom || ps->s.oom) rc = HSDAG_ENOMEM;
    hsdag_jstream_free(&ps->s);
    hsdag_strmap_free(ps->names);
    return rc;
}

int hsdag_placement_parse_stream(int32_t *device, hsdag_placement_info *info, const void *buf, size_t len,
                                 const hsdag_graph *g, const hsdag_devices *devs)
{
    if (info) memset(info, 0, sizeof *info);
    if (!buf || len == 0 || len > PL_MAX_BYTES) return PS_STOP;
    pl_stream ps = {.g = g, .devs = devs};
    hsdag_jstream_init(&ps.s, buf, len);
    return ps_run(&ps, device, info);
}

/* A large placement file read in pieces (hsdag_ioutil_open_pieces): 0, HSDAG_ENOMEM, or 1 if not taken (the
 * caller reads the file whole). */
static int ps_file(int32_t *device, hsdag_placement_info *info, const char *path, const hsdag_graph *g,
                   const hsdag_devices *devs)
{
    FILE *f;
    if (!hsdag_ioutil_open_pieces(&f, NULL, 0, path, PL_MAX_BYTES)) return 1;
    pl_stream ps = {.g = g, .devs = devs};
    hsdag_jstream_init_file(&ps.s, f, HSDAG_IOUTIL_PIECE, PL_MAX_BYTES);
    int rc = ps_run(&ps, device, info);
    fclose(f);
    return rc == PS_STOP ? 1 : rc;
}

/* ---- entry points ---- */

int hsdag_placement_parse_tree(int32_t *device, hsdag_placement_info *info, const void *buf, size_t len,
                               const char *what, const hsdag_graph *g, const hsdag_devices *devs,
                               hsdag_err *e)
{
    what = what ? what : "<buffer>";
    if (info) memset(info, 0, sizeof *info);
    if (len > PL_MAX_BYTES)
        return hsdag_err_set(e, HSDAG_ELIMIT, "%s: placement file larger than 1 GiB", what);
    json_object *root = NULL;
    int rc = hsdag_jsonin_parse(buf, len, 64, what, &root, e);
    if (rc < 0) goto done;
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
        /* a newer or other format, or a placement for another device set, would map nodes to the wrong
         * devices silently */
        if (json_object_object_get_ex(root, "format", &tmp) &&
            (!json_object_is_type(tmp, json_type_string) ||
             strcmp(json_object_get_string(tmp), "hsdag-placement"))) {
            rc = hsdag_err_set(e, HSDAG_EUNSUPPORTED, "%s: \"format\" is '%.80s', not 'hsdag-placement'",
                               what, json_object_get_string(tmp));
            goto done;
        }
        if (json_object_object_get_ex(root, "devices", &tmp) &&
            (!json_object_is_type(tmp, json_type_string) ||
             strcmp(json_object_get_string(tmp), devs->name))) {
            rc = hsdag_err_set(
                e, HSDAG_EINVAL,
                "%s: the placement is for device set '%.80s', not '%.80s' (give that set with --devices)",
                what, json_object_get_string(tmp), devs->name);
            goto done;
        }
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
    return rc;
}

int hsdag_placement_parse(int32_t *device, hsdag_placement_info *info, const void *buf, size_t len,
                          const char *what, const hsdag_graph *g, const hsdag_devices *devs, hsdag_err *e)
{
    int rc = hsdag_placement_parse_stream(device, info, buf, len, g, devs);
    if (rc == 0) return 0;
    /* out of memory: the tree reader needs more still */
    if (rc == HSDAG_ENOMEM) return hsdag_err_set(e, rc, "%s: out of memory", what ? what : "<buffer>");
    return hsdag_placement_parse_tree(device, info, buf, len, what, g, devs, e);
}

int hsdag_placement_read_file(int32_t *device, hsdag_placement_info *info, const char *path,
                              const hsdag_graph *g, const hsdag_devices *devs, hsdag_err *e)
{
    char *buf = NULL;
    size_t len = 0;
    if (info) memset(info, 0, sizeof *info);
    int rc = ps_file(device, info, path, g, devs);
    if (rc == HSDAG_ENOMEM) return hsdag_err_set(e, rc, "%s: out of memory", path);
    if (rc == 0) return 0;
    if (info) memset(info, 0, sizeof *info);
    rc = hsdag_read_file(&buf, &len, path, PL_MAX_BYTES, e);
    if (rc < 0) return rc;
    rc = hsdag_placement_parse(device, info, buf, len, path, g, devs, e);
    hsdag_free(buf);
    return rc;
}

int hsdag_placement_from_spec(int32_t *device, hsdag_placement_info *info, const char *spec,
                              const hsdag_graph *g, const hsdag_devices *devs, hsdag_err *e)
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
        return hsdag_placement_read_file(device, info, spec, g, devs, e);
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

int hsdag_placement_write_json(hsdag_buf *b, const hsdag_graph *g, const hsdag_devices *devs,
                               const int32_t *device)
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

int hsdag_placement_write_affinity(hsdag_buf *b, const hsdag_graph *g, const hsdag_devices *devs,
                                   const int32_t *device)
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

int hsdag_placement_write_split(hsdag_buf *b, const hsdag_graph *g, const hsdag_devices *devs,
                                const int32_t *device)
{
    if (pl_check(g, devs, device) < 0) return HSDAG_EINVAL;
    /* groups: the non-CPU devices in order (fpgas), then the CPUs (cpus), each named by its device */
    int32_t n_cpus = 0, n_fpgas = 0, n_of_kind[2];
    for (int32_t d = 0; d < devs->n; d++) devs->dev[d].kind == HSDAG_DEV_CPU ? n_cpus++ : n_fpgas++;
    int32_t *dev_of = hsdag_malloc(((size_t)devs->n + 1) * sizeof *dev_of), grp_of[HSDAG_MAX_DEVICES];
    int32_t *group = hsdag_malloc(((size_t)g->n_nodes + 1) * sizeof *group);
    const char *names[HSDAG_MAX_DEVICES];
    int rc = HSDAG_ENOMEM;
    if (dev_of && group) {
        pl_split_devices(devs, n_fpgas, n_cpus, dev_of, n_of_kind);
        for (int32_t gi = 0; gi < devs->n; gi++) {
            grp_of[dev_of[gi]] = gi;
            names[gi] = devs->dev[dev_of[gi]].name;
        }
        for (int32_t v = 0; v < g->n_nodes; v++) group[v] = grp_of[device[v]];
        rc = io_split_write(b, g, group, n_fpgas, n_cpus, names, NULL);
    }
    hsdag_free(dev_of);
    hsdag_free(group);
    return rc;
}

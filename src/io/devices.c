/* devices.c - device sets: built-in presets (numbers and sources in docs/devices.md), the JSON schema reader
 * and writer, name lookup and semantics names.
 * Not here: op costs (costs.c), scheduling (sim.c). Never reads a file except through hsdag_devices_load.
 * Entry points: hsdag_devices_preset/load/parse/write_json/free/find/first_of, hsdag_semantics_*,
 * hsdag_devkind_name.
 */
#include "hsdag/devices.h"
#include "jsonin.h"

#include <math.h>
#include <string.h>
#include <strings.h>

/* ---- names ---- */

static const char *const sem_names[HSDAG_SEM_COUNT_] = {"sequential", "concurrent", "tarnawski"};
static const char *const kind_names[HSDAG_DEV_KIND_COUNT_] = {"cpu", "gpu", "accel"};
/* Keys of the efficiency table, indexed by hsdag_opclass (the schema's own spelling). */
static const char *const class_keys[HSDAG_OP_CLASS_COUNT_] = {
    "unknown", "bookkeeping", "conv", "matmul", "elemwise", "pool", "norm", "softmax", "reduce", "datamove"};

const char *hsdag_semantics_name(hsdag_semantics s)
{
    if (s == HSDAG_SEM_AUTO) return "auto";
    return (s >= 0 && s < HSDAG_SEM_COUNT_) ? sem_names[s] : "?";
}

int hsdag_semantics_parse(hsdag_semantics *out, const char *s, hsdag_err *e)
{
    if (!s) return hsdag_err_set(e, HSDAG_EINVAL, "semantics: missing");
    if (strcmp(s, "auto") == 0) {
        *out = HSDAG_SEM_AUTO;
        return 0;
    }
    for (int i = 0; i < HSDAG_SEM_COUNT_; i++)
        if (strcmp(s, sem_names[i]) == 0) {
            *out = (hsdag_semantics)i;
            return 0;
        }
    return hsdag_err_set(e, HSDAG_EINVAL, "semantics '%.40s': sequential, concurrent, tarnawski or auto", s);
}

const char *hsdag_devkind_name(hsdag_devkind k)
{
    return (k >= 0 && k < HSDAG_DEV_KIND_COUNT_) ? kind_names[k] : "?";
}

/* ---- allocation of a set ---- */

static hsdag_devices *devs_new(int32_t n, const char *name)
{
    hsdag_arena *a = hsdag_arena_create(0);
    if (!a) return NULL;
    hsdag_devices *d = hsdag_arena_alloc(a, sizeof *d);
    if (!d) goto oom;
    d->arena = a;
    d->n = n;
    d->name = hsdag_arena_strdup(a, name ? name : "");
    d->dev = hsdag_arena_alloc(a, (size_t)n * sizeof *d->dev);
    d->link = hsdag_arena_alloc(a, (size_t)n * (size_t)n * sizeof *d->link);
    /* at most one resource per directed pair */
    d->resource_name = hsdag_arena_alloc(a, ((size_t)n * (size_t)n + 1) * sizeof *d->resource_name);
    if (!d->name || !d->dev || !d->link || !d->resource_name) goto oom;
    d->semantics = HSDAG_SEM_SEQUENTIAL;
    d->max_accels_used = -1;
    for (int32_t i = 0; i < n * n; i++) d->link[i].resource = -1;
    return d;
oom:
    hsdag_arena_free(a);
    return NULL;
}

void hsdag_devices_free(hsdag_devices *d)
{
    if (d) hsdag_arena_free(d->arena);
}

/* Returns the id of the resource called name, adding it if new; -1 on ENOMEM. */
static int32_t devs_resource(hsdag_devices *d, const char *name)
{
    for (int32_t r = 0; r < d->n_resources; r++)
        if (strcmp(d->resource_name[r], name) == 0) return r;
    const char *s = hsdag_arena_strdup(d->arena, name);
    if (!s) return -1;
    d->resource_name[d->n_resources] = s;
    return d->n_resources++;
}

/* Default multiplier on a file-given transfer time between two kinds (see hsdag_link.file_factor). */
static double kind_file_factor(hsdag_devkind a, hsdag_devkind b)
{
    int ca = a == HSDAG_DEV_CPU, cb = b == HSDAG_DEV_CPU;
    if (ca && cb) return 0.0;
    if (ca || cb) return 1.0;
    return 2.0;
}

/* Sets link a -> b (and b -> a when sym) on a resource named bus, or on an own "A->B" resource if bus is
 * NULL. */
static int devs_set_link(hsdag_devices *d, int32_t a, int32_t b, double lat, double bw, const char *bus,
                         double file_factor, int sym)
{
    for (int pass = 0; pass < (sym ? 2 : 1); pass++) {
        int32_t x = pass ? b : a, y = pass ? a : b;
        char nm[300];
        if (bus)
            snprintf(nm, sizeof nm, "%s", bus);
        else
            snprintf(nm, sizeof nm, "%.140s->%.140s", d->dev[x].name, d->dev[y].name);
        int32_t r = devs_resource(d, nm);
        if (r < 0) return HSDAG_ENOMEM;
        hsdag_link *l = &d->link[x * d->n + y];
        l->latency_s = lat;
        l->bandwidth = bw;
        l->resource = r;
        l->file_factor = file_factor >= 0 ? file_factor : kind_file_factor(d->dev[x].kind, d->dev[y].kind);
    }
    return 0;
}

static void dev_fill(hsdag_devices *d, int32_t i, const char *name, const char *ov, hsdag_devkind kind,
                     double peak, double bw, double cap, double launch)
{
    hsdag_device *v = &d->dev[i];
    v->name = hsdag_arena_strdup(d->arena, name);
    v->ov_name = hsdag_arena_strdup(d->arena, ov ? ov : name);
    v->kind = kind;
    v->peak_flops = peak;
    v->mem_bw = bw;
    v->mem_capacity = cap;
    v->launch_s = launch;
    v->cache_bytes = 0;
    v->cache_bw = 0;
    for (int c = 0; c < HSDAG_OP_CLASS_COUNT_; c++) v->eff[c] = 1.0, v->elem_s[c] = 0;
}

/* ---- presets (every number is explained with its source in docs/devices.md) ---- */

/* Intel Core i9-12900K, the 8 P-cores OpenVINO uses for latency: 8 cores x 32 FP32 FLOP/cycle (two 256-bit
 * FMA
 * ports, AVX2) x 3.2 GHz P-core base = 819.2 GFLOP/s; DDR5-4800 dual channel 76.8 GB/s (Intel ARK);
 * 32 GiB of host memory (2 x 16 GB, our configuration); 1 us per op dispatch (assumption, docs). */
#define I9_PEAK (8.0 * 32.0 * 3.2e9)
#define I9_BW 76.8e9
#define I9_CAP (32.0 * 1073741824.0)
#define I9_LAUNCH 1e-6
/* Intel Arc A770 16 GB: 32 Xe-cores = 4096 FP32 lanes x 2 (FMA) x 2.1 GHz graphics clock = 17.2 TFLOP/s;
 * 560 GB/s GDDR6; 16 GiB; 10 us per kernel launch (the DistIR simulator's constant). */
#define A770_PEAK (4096.0 * 2.0 * 2.1e9)
#define A770_BW 560e9
#define A770_CAP (16.0 * 1073741824.0)
#define A770_LAUNCH 10e-6
/* Intel UHD Graphics 770 (the i9-12900K's iGPU): 32 EUs x 8 FP32 lanes x 2 x 1.55 GHz = 793.6 GFLOP/s, host
 * DDR5. */
#define UHD770_PEAK (32.0 * 8.0 * 2.0 * 1.55e9)
/* PCIe 4.0 x16: 16 GT/s x 16 lanes x 128/130 / 8 = 31.5 GB/s per direction; 25 us per copy (Placeto's
 * constant). */
#define PCIE4_BW (16e9 * 16.0 * 128.0 / 130.0 / 8.0)
#define PCIE_LAT 25e-6

static int preset_cpu_gpu(hsdag_devices **out)
{
    hsdag_devices *d = devs_new(2, "cpu-gpu");
    if (!d) return HSDAG_ENOMEM;
    dev_fill(d, 0, "CPU", "CPU", HSDAG_DEV_CPU, I9_PEAK, I9_BW, I9_CAP, I9_LAUNCH);
    dev_fill(d, 1, "GPU", "GPU", HSDAG_DEV_GPU, A770_PEAK, A770_BW, A770_CAP, A770_LAUNCH);
    d->semantics = HSDAG_SEM_SEQUENTIAL;
    if (devs_set_link(d, 0, 1, PCIE_LAT, PCIE4_BW, NULL, -1, 1) < 0) goto oom;
    *out = d;
    return 0;
oom:
    hsdag_devices_free(d);
    return HSDAG_ENOMEM;
}

static int preset_cpu_igpu(hsdag_devices **out)
{
    hsdag_devices *d = devs_new(2, "cpu-igpu");
    if (!d) return HSDAG_ENOMEM;
    dev_fill(d, 0, "CPU", "CPU", HSDAG_DEV_CPU, I9_PEAK, I9_BW, I9_CAP, I9_LAUNCH);
    /* the iGPU shares the host's DDR5 (bandwidth and capacity) */
    dev_fill(d, 1, "GPU", "GPU", HSDAG_DEV_GPU, UHD770_PEAK, I9_BW, I9_CAP, A770_LAUNCH);
    d->semantics = HSDAG_SEM_SEQUENTIAL;
    /* a copy inside DRAM reads and writes every byte: half the DRAM bandwidth; 10 us synchronisation
     * (assumption) */
    if (devs_set_link(d, 0, 1, 10e-6, I9_BW / 2.0, "dram", -1, 1) < 0) goto oom;
    *out = d;
    return 0;
oom:
    hsdag_devices_free(d);
    return HSDAG_ENOMEM;
}

static int preset_cpu_4gpu(hsdag_devices **out)
{
    hsdag_devices *d = devs_new(5, "cpu-4gpu");
    if (!d) return HSDAG_ENOMEM;
    dev_fill(d, 0, "CPU", "CPU", HSDAG_DEV_CPU, I9_PEAK, I9_BW, I9_CAP, I9_LAUNCH);
    for (int i = 0; i < 4; i++) {
        char nm[16], ov[16];
        snprintf(nm, sizeof nm, "gpu%d", i);
        snprintf(ov, sizeof ov, "GPU.%d", i);
        dev_fill(d, 1 + i, nm, ov, HSDAG_DEV_GPU, A770_PEAK, A770_BW, A770_CAP, A770_LAUNCH);
    }
    d->semantics = HSDAG_SEM_CONCURRENT;
    /* all four cards sit behind the CPU's one x16 root port (a PCIe switch): one shared channel per
     * direction;
     * GPU<->GPU copies are staged through host memory: two traversals, so twice the latency, half the
     * bandwidth */
    for (int32_t a = 0; a < 5; a++)
        for (int32_t b = 0; b < 5; b++) {
            if (a == b) continue;
            int gg = a > 0 && b > 0;
            const char *bus = (a == 0 || (gg && a < b)) ? "pcie-down" : "pcie-up";
            if (devs_set_link(d, a, b, gg ? 2 * PCIE_LAT : PCIE_LAT, gg ? PCIE4_BW / 2 : PCIE4_BW, bus, -1,
                              0) < 0)
                goto oom;
        }
    *out = d;
    return 0;
oom:
    hsdag_devices_free(d);
    return HSDAG_ENOMEM;
}

/* k accelerators and l CPUs with the Tarnawski file's conventions: edge cost = bytes / 2^31 s (2 GiB/s),
 * paid once per accelerator<->host copy; CPUs share DRAM (free); accelerator pairs copy through DRAM
 * (twice). */
static int preset_tarnawski_kl(int32_t k, int32_t l, double cap, int32_t max_used, hsdag_devices **out)
{
    /* accelerators first, then CPUs: the device numbering of hsdag_split_read (fpgas[i] -> i, cpus[j] -> k +
     * j) */
    hsdag_devices *d = devs_new(k + l, "tarnawski");
    if (!d) return HSDAG_ENOMEM;
    for (int32_t i = 0; i < k; i++) {
        char nm[32];
        snprintf(nm, sizeof nm, "acc%d", (int)i);
        /* nominal roofline figures, used only for nodes without file costs: the Arc A770 and i9-12900K
         * above */
        dev_fill(d, i, nm, "GPU", HSDAG_DEV_ACCEL, A770_PEAK, A770_BW, cap, 0);
    }
    for (int32_t i = 0; i < l; i++) {
        char nm[32];
        snprintf(nm, sizeof nm, "cpu%d", (int)i);
        dev_fill(d, k + i, nm, "CPU", HSDAG_DEV_CPU, I9_PEAK, I9_BW, 0, 0);
    }
    d->semantics = HSDAG_SEM_TARNAWSKI;
    d->max_accels_used = max_used;
    const double gib2 = 2147483648.0;
    for (int32_t a = 0; a < k + l; a++)
        for (int32_t b = a + 1; b < k + l; b++) {
            int ca = a >= k, cb = b >= k;
            double bw = (ca && cb) ? 0.0 : (ca || cb) ? gib2 : gib2 / 2;
            if (devs_set_link(d, a, b, 0.0, bw, NULL, -1, 1) < 0) goto oom;
        }
    *out = d;
    return 0;
oom:
    hsdag_devices_free(d);
    return HSDAG_ENOMEM;
}

static const char *const preset_list[] = {"cpu-gpu", "cpu-igpu", "cpu-4gpu", "tarnawski", NULL};
const char *const *hsdag_devices_preset_names(void)
{
    return preset_list;
}

/* one line each for --help, in preset_list order */
static const char *const preset_summary[] = {
    "Intel Core i9-12900K + Intel Arc A770 16 GB over PCIe 4.0, sequential (OpenVINO HETERO)",
    "i9-12900K + its UHD Graphics 770 (shared DDR5), sequential",
    "i9-12900K + four Arc A770 behind one PCIe switch, concurrent",
    ("a Tarnawski JSON model's own accelerators and CPUs (tarnawski:K[:L] sets the counts), tarnawski "
     "semantics")}; /* parenthesised: one element split over two lines (clang's -Wstring-concatenation) */

const char *hsdag_devices_preset_summary(const char *name)
{
    for (int i = 0; preset_list[i]; i++)
        if (name && strcmp(name, preset_list[i]) == 0) return preset_summary[i];
    return NULL;
}

const char *hsdag_devices_default_name(const hsdag_graph *g)
{
    return (g && g->meta.format == HSDAG_FMT_TARNAWSKI) ? "tarnawski" : "cpu-gpu";
}

static int parse_count(const char *s, long lo, long hi, long *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || v < lo || v > hi) return -1;
    *out = v;
    return (int)(end - s);
}

int hsdag_devices_preset(hsdag_devices **out, const char *name, const hsdag_graph *g, hsdag_err *e)
{
    *out = NULL;
    int rc = HSDAG_ENOMEM;
    if (!name) return hsdag_err_set(e, HSDAG_EINVAL, "devices: no preset name");
    if (strcmp(name, "cpu-gpu") == 0)
        rc = preset_cpu_gpu(out);
    else if (strcmp(name, "cpu-igpu") == 0)
        rc = preset_cpu_igpu(out);
    else if (strcmp(name, "cpu-4gpu") == 0)
        rc = preset_cpu_4gpu(out);
    else if (strncmp(name, "tarnawski", 9) == 0) {
        const char *p = name + 9;
        long k = -1, l = -1;
        double cap = 0;
        int32_t max_used = -1;
        int fromfile = g && g->meta.format == HSDAG_FMT_TARNAWSKI;
        if (fromfile) {
            k = g->meta.max_accels;
            l = g->meta.max_cpus;
            cap = isfinite(g->meta.max_size_per_accel) && g->meta.max_size_per_accel > 0
                      ? g->meta.max_size_per_accel
                      : 0;
            max_used = g->meta.max_accels >= 0 ? g->meta.max_accels : -1;
        }
        if (*p == ':') {
            int n = parse_count(p + 1, 0, HSDAG_MAX_DEVICES, &k);
            if (n < 0) goto badspec;
            p += 1 + n;
            if (*p == ':') {
                n = parse_count(p + 1, 1, HSDAG_MAX_DEVICES, &l);
                if (n < 0) goto badspec;
                p += 1 + n;
            }
            if (*p) goto badspec;
        } else if (*p) {
            goto unknown;
        }
        if (k < 0)
            return hsdag_err_set(e, HSDAG_EINVAL,
                                 "devices: preset 'tarnawski' needs a Tarnawski JSON model "
                                 "or explicit counts 'tarnawski:K[:L]'");
        if (l < 1) l = 1;
        if (k + l > HSDAG_MAX_DEVICES)
            return hsdag_err_set(e, HSDAG_ELIMIT,
                                 "devices: preset '%s': %ld accelerators + %ld CPUs exceed %d devices", name,
                                 k, l, HSDAG_MAX_DEVICES);
        rc = preset_tarnawski_kl((int32_t)k, (int32_t)l, cap, max_used, out);
    } else {
        goto unknown;
    }
    if (rc < 0) return hsdag_err_set(e, rc, "devices: preset '%s': out of memory", name);
    return 0;
badspec:
    return hsdag_err_set(e, HSDAG_EINVAL, "devices: bad preset '%s' (want tarnawski:K or tarnawski:K:L)",
                         name);
unknown:
    return hsdag_err_set(
        e, HSDAG_EINVAL,
        "devices: unknown preset '%s' (presets: cpu-gpu, cpu-igpu, cpu-4gpu, tarnawski; or a .json file)",
        name);
}

int hsdag_devices_spec_is_file(const char *spec)
{
    return spec && (strchr(spec, '/') != NULL || strchr(spec, '.') != NULL);
}

int hsdag_devices_load(hsdag_devices **out, const char *spec, const hsdag_graph *g, hsdag_err *e)
{
    *out = NULL;
    if (!spec || !*spec || strcmp(spec, "auto") == 0) spec = hsdag_devices_default_name(g);
    if (!hsdag_devices_spec_is_file(spec)) return hsdag_devices_preset(out, spec, g, e);
    char *buf = NULL;
    size_t len = 0;
    int rc = hsdag_read_file(&buf, &len, spec, 16u << 20, e);
    if (rc < 0) return rc;
    rc = hsdag_devices_parse(out, buf, len, spec, e);
    hsdag_free(buf);
    return rc;
}

int32_t hsdag_devices_find(const hsdag_devices *d, const char *name)
{
    if (!name) return -1;
    for (int32_t i = 0; i < d->n; i++)
        if (strcmp(d->dev[i].name, name) == 0) return i;
    for (int32_t i = 0; i < d->n; i++)
        if (strcasecmp(d->dev[i].name, name) == 0) return i;
    return -1;
}

int32_t hsdag_devices_first_of(const hsdag_devices *d, hsdag_devkind k)
{
    for (int32_t i = 0; i < d->n; i++)
        if (d->dev[i].kind == k) return i;
    return -1;
}

/* ---- JSON reader (on the shared helpers of jsonin.h) ---- */

typedef struct jctx {
    const char *what;
    hsdag_err *e;
} jctx;

/* A name-like string: present (if required), a string of 1..400 characters. 1 if absent, 0 if stored. */
static int j_str(const jctx *c, json_object *obj, const char *key, const char *where, int required,
                 const char **out)
{
    int rc = hsdag_jsonin_string(obj, key, required ? HSDAG_JI_REQUIRED : 0, out, c->what, where, c->e);
    if (rc != 0) return rc;
    size_t n = strlen(*out);
    if (n == 0 || n > 400)
        return hsdag_err_set(c->e, HSDAG_EPARSE, "%s: %s: %s must have 1..400 characters", c->what, where,
                             key);
    /* names end up in tables and messages on a terminal: no control characters (ESC, newline, ...): C0,
     * DEL or C1 (U+0080..U+009F, as UTF-8 C2 80..C2 9F); NUL is refused by hsdag_jsonin_string */
    const char *s = *out;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch < 0x20 || ch == 0x7f ||
            (ch == 0xc2 && i + 1 < n && (unsigned char)s[i + 1] >= 0x80 && (unsigned char)s[i + 1] <= 0x9f))
            return hsdag_err_set(c->e, HSDAG_EPARSE,
                                 "%s: %s: '%s' contains a control character (byte %zu is 0x%02x)", c->what,
                                 where, key, i, ch == 0xc2 ? (unsigned char)s[i + 1] : ch);
    }
    return 0;
}

static int j_num(const jctx *c, json_object *obj, const char *key, const char *where, int required, double lo,
                 double hi, double *out)
{
    int rc =
        hsdag_jsonin_number(obj, key, required ? HSDAG_JI_REQUIRED : 0, lo, hi, out, c->what, where, c->e);
    return rc < 0 ? rc : 0;
}

#define BIG 1e30

static int parse_device(const jctx *c, hsdag_devices *d, int32_t i, json_object *o)
{
    static const char *const keys[] = {
        "name",       "kind",     "peak_flops",  "mem_bandwidth",   "mem_capacity",     "launch_overhead_s",
        "efficiency", "openvino", "cache_bytes", "cache_bandwidth", "output_element_s", NULL};
    char where[64];
    snprintf(where, sizeof where, "devices[%d]", (int)i);
    if (!json_object_is_type(o, json_type_object))
        return hsdag_err_set(c->e, HSDAG_EPARSE, "%s: %s: not an object", c->what, where);
    const char *name = NULL, *kind = NULL, *ov = NULL;
    int rc;
    if ((rc = j_str(c, o, "name", where, 1, &name)) < 0) return rc;
    snprintf(where, sizeof where, "device '%.40s'", name);
    if ((rc = hsdag_jsonin_keys_allowed(o, keys, c->what, where, c->e)) < 0) return rc;
    for (int32_t j = 0; j < i; j++)
        if (strcmp(d->dev[j].name, name) == 0)
            return hsdag_err_set(c->e, HSDAG_EPARSE, "%s: %s: duplicate device name", c->what, where);
    if ((rc = j_str(c, o, "kind", where, 1, &kind)) < 0) return rc;
    if ((rc = j_str(c, o, "openvino", where, 0, &ov)) < 0) return rc;
    int k = -1;
    for (int j = 0; j < HSDAG_DEV_KIND_COUNT_; j++)
        if (strcmp(kind, kind_names[j]) == 0) k = j;
    if (k < 0)
        return hsdag_err_set(c->e, HSDAG_EPARSE, "%s: %s: kind '%.40s' is not cpu, gpu or accel", c->what,
                             where, kind);
    double peak = 0, bw = 0, cap = 0, launch = 0;
    if ((rc = j_num(c, o, "peak_flops", where, 1, 1e3, BIG, &peak)) < 0) return rc;
    if ((rc = j_num(c, o, "mem_bandwidth", where, 1, 1e3, BIG, &bw)) < 0) return rc;
    if ((rc = j_num(c, o, "mem_capacity", where, 0, 0, BIG, &cap)) < 0) return rc;
    if ((rc = j_num(c, o, "launch_overhead_s", where, 0, 0, 1e3, &launch)) < 0) return rc;
    double cache = 0, cache_bw = 0;
    if ((rc = j_num(c, o, "cache_bytes", where, 0, 0, BIG, &cache)) < 0) return rc;
    if ((rc = j_num(c, o, "cache_bandwidth", where, cache > 0, 1e3, BIG, &cache_bw)) < 0) return rc;
    dev_fill(d, i, name, ov, (hsdag_devkind)k, peak, bw, cap, launch);
    if (!d->dev[i].name || !d->dev[i].ov_name)
        return hsdag_err_set(c->e, HSDAG_ENOMEM, "%s: out of memory", c->what);
    d->dev[i].cache_bytes = cache;
    d->dev[i].cache_bw = cache > 0 ? cache_bw : 0;
    json_object *eff = NULL;
    if ((rc = hsdag_jsonin_object(o, "efficiency", 0, &eff, c->what, where, c->e)) < 0) return rc;
    if (eff) {
        double def = 1.0;
        if ((rc = j_num(c, eff, "default", where, 0, 1e-6, 1.0, &def)) < 0) return rc;
        for (int cl = 0; cl < HSDAG_OP_CLASS_COUNT_; cl++) d->dev[i].eff[cl] = def;
        json_object_object_foreach(eff, key, val)
        {
            (void)val;
            if (strcmp(key, "default") == 0) continue;
            int cl = -1;
            for (int j = 0; j < HSDAG_OP_CLASS_COUNT_; j++)
                if (strcmp(key, class_keys[j]) == 0) cl = j;
            if (cl < 0)
                return hsdag_err_set(c->e, HSDAG_EPARSE, "%s: %s: efficiency: unknown op class '%.40s'",
                                     c->what, where, key);
            char ew[96];
            snprintf(ew, sizeof ew, "%s: efficiency", where);
            if ((rc = j_num(c, eff, key, ew, 1, 1e-6, 1.0, &d->dev[i].eff[cl])) < 0) return rc;
        }
    }
    json_object *pe = NULL;
    if ((rc = hsdag_jsonin_object(o, "output_element_s", 0, &pe, c->what, where, c->e)) < 0) return rc;
    if (pe) {
        json_object_object_foreach(pe, key, val)
        {
            (void)val;
            int cl = -1;
            for (int j = 0; j < HSDAG_OP_CLASS_COUNT_; j++)
                if (strcmp(key, class_keys[j]) == 0) cl = j;
            if (cl < 0)
                return hsdag_err_set(c->e, HSDAG_EPARSE, "%s: %s: output_element_s: unknown op class '%.40s'",
                                     c->what, where, key);
            char ew[96];
            snprintf(ew, sizeof ew, "%s: output_element_s", where);
            if ((rc = j_num(c, pe, key, ew, 1, 0, 1.0, &d->dev[i].elem_s[cl])) < 0) return rc;
        }
    }
    return 0;
}

static int parse_link(const jctx *c, hsdag_devices *d, json_object *o, int32_t idx, int is_default,
                      uint8_t *seen)
{
    static const char *const keys[] = {"from", "to",        "latency_s",   "bandwidth",
                                       "bus",  "symmetric", "file_factor", NULL};
    char where[64];
    if (is_default)
        snprintf(where, sizeof where, "default_link");
    else
        snprintf(where, sizeof where, "links[%d]", (int)idx);
    if (!json_object_is_type(o, json_type_object))
        return hsdag_err_set(c->e, HSDAG_EPARSE, "%s: %s: not an object", c->what, where);
    int rc;
    if ((rc = hsdag_jsonin_keys_allowed(o, keys, c->what, where, c->e)) < 0) return rc;
    double lat = 0, bw = 0, ff = -1;
    const char *bus = NULL, *from = NULL, *to = NULL;
    if ((rc = j_num(c, o, "latency_s", where, 0, 0, 1e3, &lat)) < 0) return rc;
    if ((rc = j_num(c, o, "bandwidth", where, 1, 0, BIG, &bw)) < 0) return rc;
    if (bw > 0 && bw < 1.0)
        return hsdag_err_set(c->e, HSDAG_EPARSE, "%s: %s: 'bandwidth' below 1 byte/s", c->what, where);
    if ((rc = j_num(c, o, "file_factor", where, 0, 0, 1e3, &ff)) < 0) return rc;
    if ((rc = j_str(c, o, "bus", where, 0, &bus)) < 0) return rc;
    int sym = 1;
    if ((rc = hsdag_jsonin_bool(o, "symmetric", 0, &sym, c->what, where, c->e)) < 0) return rc;
    if (is_default) {
        for (int32_t a = 0; a < d->n; a++)
            for (int32_t b = 0; b < d->n; b++)
                if (a != b && !seen[a * d->n + b]) {
                    if (devs_set_link(d, a, b, lat, bw, bus, ff, 0) < 0) goto oom;
                    seen[a * d->n + b] = 1;
                }
        return 0;
    }
    if ((rc = j_str(c, o, "from", where, 1, &from)) < 0) return rc;
    if ((rc = j_str(c, o, "to", where, 1, &to)) < 0) return rc;
    int32_t a = -1, b = -1;
    for (int32_t i = 0; i < d->n; i++) {
        if (strcmp(d->dev[i].name, from) == 0) a = i;
        if (strcmp(d->dev[i].name, to) == 0) b = i;
    }
    if (a < 0)
        return hsdag_err_set(c->e, HSDAG_EPARSE, "%s: %s: unknown device '%.60s'", c->what, where, from);
    if (b < 0) return hsdag_err_set(c->e, HSDAG_EPARSE, "%s: %s: unknown device '%.60s'", c->what, where, to);
    if (a == b)
        return hsdag_err_set(c->e, HSDAG_EPARSE, "%s: %s: a link from '%.60s' to itself", c->what, where,
                             from);
    if (seen[a * d->n + b] || (sym && seen[b * d->n + a]))
        return hsdag_err_set(c->e, HSDAG_EPARSE, "%s: %s: link '%.60s' -> '%.60s' given twice", c->what,
                             where, from, to);
    if (devs_set_link(d, a, b, lat, bw, bus, ff, sym) < 0) goto oom;
    seen[a * d->n + b] = 1;
    if (sym) seen[b * d->n + a] = 1;
    return 0;
oom:
    return hsdag_err_set(c->e, HSDAG_ENOMEM, "%s: out of memory", c->what);
}

static int parse_root(const jctx *c, json_object *root, hsdag_devices **out)
{
    static const char *const keys[] = {"name",  "semantics",    "max_accels_used", "devices",
                                       "links", "default_link", "format",          NULL};
    hsdag_devices *d = NULL;
    uint8_t *seen = NULL;
    int rc;
    if (!json_object_is_type(root, json_type_object))
        return hsdag_err_set(c->e, HSDAG_EPARSE, "%s: the top level is not an object", c->what);
    if ((rc = hsdag_jsonin_keys_allowed(root, keys, c->what, "top level", c->e)) < 0) return rc;
    json_object *devs, *links = NULL, *deflink = NULL;
    size_t n = 0, m = 0;
    if ((rc = hsdag_jsonin_array(root, "devices", HSDAG_JI_REQUIRED, &devs, &n, c->what, "", c->e)) < 0)
        return rc;
    if (n < 1 || n > HSDAG_MAX_DEVICES)
        return hsdag_err_set(c->e, HSDAG_ELIMIT, "%s: 'devices' has %zu entries (want 1..%d)", c->what, n,
                             HSDAG_MAX_DEVICES);
    const char *name = "custom", *sem = NULL;
    if ((rc = j_str(c, root, "name", "top level", 0, &name)) < 0) return rc;
    if ((rc = j_str(c, root, "semantics", "top level", 0, &sem)) < 0) return rc;
    d = devs_new((int32_t)n, name);
    seen = hsdag_calloc(n * n, 1);
    if (!d || !seen) {
        rc = hsdag_err_set(c->e, HSDAG_ENOMEM, "%s: out of memory", c->what);
        goto fail;
    }
    if (sem) {
        hsdag_semantics s;
        if (hsdag_semantics_parse(&s, sem, NULL) < 0 || s == HSDAG_SEM_AUTO) {
            rc = hsdag_err_set(c->e, HSDAG_EPARSE,
                               "%s: semantics '%.40s' is not sequential, concurrent or tarnawski", c->what,
                               sem);
            goto fail;
        }
        d->semantics = s;
    }
    double mu = -1;
    if ((rc = j_num(c, root, "max_accels_used", "top level", 0, -1, HSDAG_MAX_DEVICES, &mu)) < 0) goto fail;
    d->max_accels_used = (int32_t)mu;
    for (size_t i = 0; i < n; i++)
        if ((rc = parse_device(c, d, (int32_t)i, json_object_array_get_idx(devs, i))) < 0) goto fail;
    if ((rc = hsdag_jsonin_array(root, "links", 0, &links, &m, c->what, "", c->e)) < 0) goto fail;
    if (links) {
        if (m > n * n) {
            rc = hsdag_err_set(c->e, HSDAG_ELIMIT, "%s: 'links' has %zu entries for %zu devices", c->what, m,
                               n);
            goto fail;
        }
        for (size_t i = 0; i < m; i++)
            if ((rc = parse_link(c, d, json_object_array_get_idx(links, i), (int32_t)i, 0, seen)) < 0)
                goto fail;
    }
    if ((rc = hsdag_jsonin_object(root, "default_link", 0, &deflink, c->what, "", c->e)) < 0) goto fail;
    if (deflink && (rc = parse_link(c, d, deflink, 0, 1, seen)) < 0) goto fail;
    for (int32_t a = 0; a < d->n; a++)
        for (int32_t b = 0; b < d->n; b++)
            if (a != b && !seen[a * d->n + b]) {
                rc = hsdag_err_set(c->e, HSDAG_EPARSE,
                                   "%s: no link from '%s' to '%s' (add it to 'links' or give a "
                                   "'default_link')",
                                   c->what, d->dev[a].name, d->dev[b].name);
                goto fail;
            }
    hsdag_free(seen);
    *out = d;
    return 0;
fail:
    hsdag_free(seen);
    hsdag_devices_free(d);
    return rc;
}

int hsdag_devices_parse(hsdag_devices **out, const void *buf, size_t len, const char *what, hsdag_err *e)
{
    *out = NULL;
    jctx c = {what ? what : "<buffer>", e};
    if (len > (16u << 20))
        return hsdag_err_set(e, HSDAG_ELIMIT, "%s: device file larger than 16 MiB", c.what);
    json_object *root = NULL;
    int rc = hsdag_jsonin_parse(buf, len, 32, c.what, &root, e);
    if (rc == 0) rc = parse_root(&c, root, out);
    json_object_put(root);
    return rc;
}

/* ---- JSON writer ---- */

int hsdag_devices_write_json(hsdag_buf *b, const hsdag_devices *d)
{
    hsdag_buf_printf(b, "{\n  \"format\": \"hsdag-devices\",\n  \"name\": ");
    hsdag_buf_json_str(b, d->name);
    hsdag_buf_printf(b, ",\n  \"semantics\": \"%s\",\n  \"max_accels_used\": %d,\n  \"devices\": [\n",
                     hsdag_semantics_name(d->semantics), (int)d->max_accels_used);
    for (int32_t i = 0; i < d->n; i++) {
        const hsdag_device *v = &d->dev[i];
        hsdag_buf_printf(b, "    {\"name\": ");
        hsdag_buf_json_str(b, v->name);
        hsdag_buf_printf(b, ", \"openvino\": ");
        hsdag_buf_json_str(b, v->ov_name);
        hsdag_buf_printf(b, ", \"kind\": \"%s\", \"peak_flops\": ", kind_names[v->kind]);
        hsdag_buf_double(b, v->peak_flops);
        hsdag_buf_printf(b, ", \"mem_bandwidth\": ");
        hsdag_buf_double(b, v->mem_bw);
        hsdag_buf_printf(b, ", \"mem_capacity\": ");
        hsdag_buf_double(b, v->mem_capacity);
        hsdag_buf_printf(b, ", \"launch_overhead_s\": ");
        hsdag_buf_double(b, v->launch_s);
        if (v->cache_bytes > 0) {
            hsdag_buf_printf(b, ", \"cache_bytes\": ");
            hsdag_buf_double(b, v->cache_bytes);
            hsdag_buf_printf(b, ", \"cache_bandwidth\": ");
            hsdag_buf_double(b, v->cache_bw);
        }
        int any_elem = 0;
        for (int cl = 0; cl < HSDAG_OP_CLASS_COUNT_; cl++) any_elem |= v->elem_s[cl] > 0;
        if (any_elem) {
            hsdag_buf_printf(b, ",\n     \"output_element_s\": {");
            for (int cl = 0; cl < HSDAG_OP_CLASS_COUNT_; cl++) {
                hsdag_buf_printf(b, "%s\"%s\": ", cl ? ", " : "", class_keys[cl]);
                hsdag_buf_double(b, v->elem_s[cl]);
            }
            hsdag_buf_printf(b, "}");
        }
        hsdag_buf_printf(b, ",\n     \"efficiency\": {");
        for (int cl = 0; cl < HSDAG_OP_CLASS_COUNT_; cl++) {
            hsdag_buf_printf(b, "%s\"%s\": ", cl ? ", " : "", class_keys[cl]);
            hsdag_buf_double(b, v->eff[cl]);
        }
        hsdag_buf_printf(b, "}}%s\n", i + 1 < d->n ? "," : "");
    }
    hsdag_buf_printf(b, "  ],\n  \"links\": [\n");
    int first = 1;
    for (int32_t a = 0; a < d->n; a++)
        for (int32_t c = 0; c < d->n; c++) {
            if (a == c) continue;
            const hsdag_link *l = &d->link[a * d->n + c];
            hsdag_buf_printf(b, "%s    {\"from\": ", first ? "" : ",\n");
            first = 0;
            hsdag_buf_json_str(b, d->dev[a].name);
            hsdag_buf_printf(b, ", \"to\": ");
            hsdag_buf_json_str(b, d->dev[c].name);
            hsdag_buf_printf(b, ", \"symmetric\": false, \"latency_s\": ");
            hsdag_buf_double(b, l->latency_s);
            hsdag_buf_printf(b, ", \"bandwidth\": ");
            hsdag_buf_double(b, l->bandwidth);
            hsdag_buf_printf(b, ", \"file_factor\": ");
            hsdag_buf_double(b, l->file_factor);
            hsdag_buf_printf(b, ", \"bus\": ");
            hsdag_buf_json_str(b, d->resource_name[l->resource]);
            hsdag_buf_printf(b, "}");
        }
    hsdag_buf_printf(b, "\n  ]\n}\n");
    return b->oom ? HSDAG_ENOMEM : 0;
}

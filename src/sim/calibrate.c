/* calibrate.c - fits one CPU's roofline parameters (compute rate per op class, bandwidth, launch overhead) to
 * measured per-op profiles by a robust, time-weighted least-squares fit on log time ratios; scores a device's
 * per-kernel predictions (rank correlation, relative errors).
 * Not here: measuring (tools/cmd_profile.c + scripts/ort-profile.js), the roofline itself (costs.c:
 * hsdag_roofline_s and hsdag_costs_node_work are the one home of the formula and the work of a node).
 * Entry points: hsdag_calib_config_default, hsdag_calibrate_fit, hsdag_calibrate_eval, hsdag_calibrate_devices,
 *   hsdag_calibrate_write_json.
 *
 * Method (docs/devices.md, "Calibration"): nodes are grouped into kernels (a measured node, the nodes the
 * profile says were fused into it, and the 0-ms nodes nearest it downstream); a kernel's prediction is the sum
 * of its nodes' roofline times. The objective is the sum over kernels of (measured + predicted) / 2 x
 * Huber(log(predicted / measured)), so every op counts with its share of the run time and a few odd kernels cannot
 * drag the fit (robust), plus the same term on each model's total, weighted by its measured time. The
 * parameters (log rates per class, log bandwidth, log launch overhead) are found by a deterministic pattern
 * search (the objective is not smooth: the roofline has a max). */
#include "hsdag/calibrate.h"
#include "hsdag/sim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define NC HSDAG_OP_CLASS_COUNT_
#define NP \
    (2 * NC + 4) /* per-class rates, bandwidth, launch, cache bandwidth, cache size, per-class s/elem */
#define ELEM_FIT(c) ((c) == HSDAG_OP_CONV) /* classes whose per-output-element cost is fitted */
#define XE (NC + 4)                        /* first per-class per-output-element cost */
#define CAL_EPS_S 1e-6                     /* added to both sides of the log ratio: 1 us */

hsdag_calib_config hsdag_calib_config_default(void)
{
    return (hsdag_calib_config){
        .device = "CPU", .huber_delta = 0.3, .max_sweeps = 400, .cache_bytes = 0, .labels = NULL};
}

/* One (graph, profile) pair reduced to kernels: members of kernel k are node[off[k] .. off[k+1]). */
typedef struct cal_set {
    int32_t nk, nn;
    int32_t *off, *node;
    double *meas_s;                /* [nk] */
    double *flops, *bytes, *elems; /* [nn] per member */
    uint8_t *cls, *bk;             /* [nn] */
    const hsdag_graph *g;
} cal_set;

static void cal_set_free(cal_set *s)
{
    hsdag_free(s->off);
    hsdag_free(s->node);
    hsdag_free(s->meas_s);
    hsdag_free(s->flops);
    hsdag_free(s->bytes);
    hsdag_free(s->elems);
    hsdag_free(s->cls);
    hsdag_free(s->bk);
    memset(s, 0, sizeof *s);
}

/* Splits "a,b" (names may hold commas) at the comma where both sides are node names. */
static int split_pair(const hsdag_strmap *m, const char *s, int32_t *a, int32_t *b)
{
    size_t n = strlen(s);
    for (size_t i = 0; i < n; i++) {
        if (s[i] != ',') continue;
        int32_t x = hsdag_strmap_get(m, s, i), y = hsdag_strmap_get(m, s + i + 1, n - i - 1);
        if (x >= 0 && y >= 0) {
            *a = x;
            *b = y;
            return 0;
        }
    }
    return -1;
}

static int cal_prepare(cal_set *s, const hsdag_graph *g, const hsdag_profile *p, const char *device,
                       hsdag_err *e)
{
    memset(s, 0, sizeof *s);
    s->g = g;
    const int32_t V = g->n_nodes;
    int rc = 0;
    hsdag_strmap *m = hsdag_strmap_create();
    double *meas = hsdag_malloc(((size_t)V + 1) * sizeof *meas);
    int32_t *grp = hsdag_malloc(((size_t)V + 1) * sizeof *grp),
            *anchor = hsdag_malloc(((size_t)V + 1) * sizeof *anchor);
    int32_t *cnt = NULL;
    if (!m || !meas || !grp || !anchor) goto oom;
    for (int32_t v = 0; v < V; v++) {
        meas[v] = NAN;
        grp[v] = -1;
        anchor[v] = -1;
        if (hsdag_strmap_put(m, g->name[v], strlen(g->name[v]), v) < 0) goto oom;
    }
    int32_t used = 0, np = 0;
    const hsdag_profile_entry *pe = hsdag_profile_entries(p, &np);
    for (int32_t i = 0; i < np; i++) {
        const char *nm = pe[i].node, *dv = pe[i].device;
        double ms = pe[i].ms;
        if (device && strcasecmp(dv, device) != 0) continue;
        int32_t v = hsdag_strmap_get(m, nm, strlen(nm));
        if (v < 0) {
            rc =
                hsdag_err_set(e, HSDAG_EINVAL, "entry %d: node '%.120s' is not in the model", (int)i + 1, nm);
            goto done;
        }
        meas[v] = ms * 1e-3;
        used++;
    }
    if (!used) {
        rc = hsdag_err_set(e, HSDAG_EINVAL, "profile has no entries for device '%s'", device ? device : "");
        goto done;
    }
    for (int32_t i = 0; i < hsdag_profile_fused_count(p); i++) {
        int32_t a, b;
        if (split_pair(m, hsdag_profile_fused(p, i), &a, &b) == 0) anchor[a] = b;
    }
    /* kernels: measured nodes with time > 0 that were not fused into another */
    int32_t nk = 0;
    for (int32_t v = 0; v < V; v++)
        if (anchor[v] < 0 && meas[v] > 0) grp[v] = nk++;
    for (int32_t v = 0; v < V; v++) { /* fused chains: follow anchors (at most V steps) */
        int32_t a = anchor[v], steps = 0;
        while (a >= 0 && grp[a] < 0 && anchor[a] >= 0 && steps++ < V) a = anchor[a];
        if (a >= 0 && grp[v] < 0) grp[v] = grp[a];
    }
    /* the rest: nearest consumer's kernel (reverse topological order), else the nearest producer's */
    for (int32_t v = V - 1; v >= 0; v--)
        for (int32_t k = g->out_off[v]; grp[v] < 0 && k < g->out_off[v + 1]; k++) grp[v] = grp[g->out_dst[k]];
    for (int32_t v = 0; v < V; v++)
        for (int32_t k = g->in_off[v]; grp[v] < 0 && k < g->in_off[v + 1]; k++) grp[v] = grp[g->in_src[k]];
    s->nk = nk;
    s->off = hsdag_calloc((size_t)nk + 1, sizeof *s->off);
    s->meas_s = hsdag_calloc((size_t)nk + 1, sizeof *s->meas_s);
    cnt = hsdag_calloc((size_t)nk + 1, sizeof *cnt);
    s->node = hsdag_malloc(((size_t)V + 1) * sizeof *s->node);
    s->flops = hsdag_malloc(((size_t)V + 1) * sizeof *s->flops);
    s->bytes = hsdag_malloc(((size_t)V + 1) * sizeof *s->bytes);
    s->elems = hsdag_malloc(((size_t)V + 1) * sizeof *s->elems);
    s->cls = hsdag_malloc((size_t)V + 1);
    s->bk = hsdag_malloc((size_t)V + 1);
    if (!s->off || !s->meas_s || !cnt || !s->node || !s->flops || !s->bytes || !s->elems || !s->cls || !s->bk)
        goto oom;
    for (int32_t v = 0; v < V; v++)
        if (grp[v] >= 0) {
            cnt[grp[v]]++;
            if (meas[v] > 0) s->meas_s[grp[v]] += meas[v];
        }
    for (int32_t k = 0; k < nk; k++) s->off[k + 1] = s->off[k] + cnt[k];
    memset(cnt, 0, (size_t)nk * sizeof *cnt);
    for (int32_t v = 0; v < V; v++) {
        if (grp[v] < 0) continue;
        int32_t at = s->off[grp[v]] + cnt[grp[v]]++;
        s->node[at] = v;
        s->bk[at] = (uint8_t)hsdag_costs_node_work(g, v, &s->flops[at], &s->bytes[at], &s->elems[at]);
        s->cls[at] = g->opclass[v];
    }
    s->nn = s->off[nk];
    goto done;
oom:
    rc = hsdag_err_set(e, HSDAG_ENOMEM, "calibrate: out of memory");
done:
    if (rc < 0) cal_set_free(s);
    hsdag_strmap_free(m);
    hsdag_free(meas);
    hsdag_free(grp);
    hsdag_free(anchor);
    hsdag_free(cnt);
    return rc;
}

static double kernel_pred(const cal_set *s, int32_t k, const hsdag_device *d)
{
    double t = 0;
    for (int32_t i = s->off[k]; i < s->off[k + 1]; i++)
        if (!s->bk[i])
            t += hsdag_roofline_elems_s(d, (hsdag_opclass)s->cls[i], s->flops[i], s->bytes[i], s->elems[i]);
    return t;
}

static double huber(double r, double d)
{
    double a = fabs(r);
    return a <= d ? 0.5 * r * r : d * (a - 0.5 * d);
}

/* Parameter vector -> device (peak 1 FLOP/s, eff[c] = the class's rate, so roofline_s gives flops / rate). */
static void params_dev(const double *x, hsdag_device *d)
{
    memset(d, 0, sizeof *d);
    d->name = "CPU";
    d->ov_name = "CPU";
    d->kind = HSDAG_DEV_CPU;
    d->peak_flops = 1.0;
    for (int c = 0; c < NC; c++) d->eff[c] = exp(x[c]);
    d->mem_bw = exp(x[NC]);
    d->launch_s = exp(x[NC + 1]);
    d->cache_bw = exp(x[NC + 2]);
    d->cache_bytes = exp(x[NC + 3]);
    for (int c = 0; c < NC; c++) d->elem_s[c] = exp(x[XE + c]);
}

/* Sum over kernels of w x Huber(log ratio) with w = (measured + predicted) / 2 (an over-predicted small kernel
 * weighs what it is predicted to cost, so a large launch overhead cannot hide in many tiny kernels), plus the
 * same term for each model's total (what the end-to-end latency depends on), weighted by the model's time. */
static double objective(const cal_set *sets, int32_t n, const double *x, double delta)
{
    hsdag_device d;
    params_dev(x, &d);
    double loss = 0;
    for (int32_t j = 0; j < n; j++) {
        double tm = 0, tp = 0;
        for (int32_t k = 0; k < sets[j].nk; k++) {
            double m = sets[j].meas_s[k], p = kernel_pred(&sets[j], k, &d);
            loss += 0.5 * (m + p) * huber(log((p + CAL_EPS_S) / (m + CAL_EPS_S)), delta);
            tm += m;
            tp += p;
        }
        loss += tm * huber(log((tp + CAL_EPS_S) / (tm + CAL_EPS_S)), delta);
    }
    return loss;
}

/* Average ranks (ties share their mean rank) of x[0..n) into r; idx is scratch. */
static void ranks(const double *x, int32_t n, double *r, int32_t *idx)
{
    for (int32_t i = 0; i < n; i++) idx[i] = i;
    /* shell sort of idx by (x, index): deterministic, O(n^1.5) */
    for (int32_t gap = n / 2; gap > 0; gap /= 2)
        for (int32_t i = gap; i < n; i++) {
            int32_t t = idx[i], j = i;
            while (j >= gap && (x[idx[j - gap]] > x[t] || (x[idx[j - gap]] == x[t] && idx[j - gap] > t))) {
                idx[j] = idx[j - gap];
                j -= gap;
            }
            idx[j] = t;
        }
    for (int32_t i = 0; i < n;) {
        int32_t j = i;
        while (j + 1 < n && x[idx[j + 1]] == x[idx[i]]) j++;
        double rk = 0.5 * (i + j) + 1;
        for (int32_t k = i; k <= j; k++) r[idx[k]] = rk;
        i = j + 1;
    }
}

static double pearson(const double *a, const double *b, int32_t n)
{
    double ma = 0, mb = 0, sab = 0, saa = 0, sbb = 0;
    for (int32_t i = 0; i < n; i++) ma += a[i], mb += b[i];
    ma /= n;
    mb /= n;
    for (int32_t i = 0; i < n; i++) {
        sab += (a[i] - ma) * (b[i] - mb);
        saa += (a[i] - ma) * (a[i] - ma);
        sbb += (b[i] - mb) * (b[i] - mb);
    }
    return (saa > 0 && sbb > 0) ? sab / sqrt(saa * sbb) : 0;
}

static int cal_score(hsdag_calib_model *m, const cal_set *s, const hsdag_device *d, hsdag_err *e)
{
    memset(m, 0, sizeof *m);
    int32_t n = s->nk;
    double *pr = hsdag_malloc(((size_t)n + 1) * sizeof *pr), *ms = hsdag_malloc(((size_t)n + 1) * sizeof *ms);
    double *ra = hsdag_malloc(((size_t)n + 1) * sizeof *ra), *rb = hsdag_malloc(((size_t)n + 1) * sizeof *rb);
    double *rel = hsdag_malloc(((size_t)n + 1) * sizeof *rel);
    int32_t *idx = hsdag_malloc(((size_t)n + 1) * sizeof *idx);
    int rc = 0;
    if (!pr || !ms || !ra || !rb || !rel || !idx) {
        rc = hsdag_err_set(e, HSDAG_ENOMEM, "calibrate: out of memory");
        goto done;
    }
    double wsum = 0, wrel = 0;
    for (int32_t k = 0; k < n; k++) {
        pr[k] = kernel_pred(s, k, d);
        ms[k] = s->meas_s[k];
        rel[k] = fabs(pr[k] / ms[k] - 1);
        wsum += ms[k];
        wrel += ms[k] * rel[k];
    }
    const hsdag_graph *g = s->g;
    double total = 0, meas_total = 0;
    for (int32_t v = 0; v < g->n_nodes; v++) {
        double f, b, el;
        if (!hsdag_costs_node_work(g, v, &f, &b, &el))
            total += hsdag_roofline_elems_s(d, (hsdag_opclass)g->opclass[v], f, b, el);
    }
    for (int32_t k = 0; k < n; k++) meas_total += ms[k];
    m->kernels = n;
    m->measured_ms = meas_total * 1e3;
    m->predicted_ms = total * 1e3;
    if (n > 1) {
        ranks(pr, n, ra, idx);
        ranks(ms, n, rb, idx);
        m->spearman = pearson(ra, rb, n);
    }
    qsort(rel, (size_t)n, sizeof *rel, hsdag_cmp_double);
    m->median_abs_rel = n ? (n % 2 ? rel[n / 2] : 0.5 * (rel[n / 2 - 1] + rel[n / 2])) : 0;
    m->weighted_abs_rel = wsum > 0 ? wrel / wsum : 0;
done:
    hsdag_free(pr);
    hsdag_free(ms);
    hsdag_free(ra);
    hsdag_free(rb);
    hsdag_free(rel);
    hsdag_free(idx);
    return rc;
}

/* Fitted parameters -> a schema device: peak = the best rate of the compute classes (conv, matmul) seen,
 * eff[c] = rate / peak clamped to [1e-6, 1]; classes without data get the median fitted efficiency. */
static void params_to_device(const double *x, const uint8_t *fitted, hsdag_device *d)
{
    double peak = 0;
    for (int c = 0; c < NC; c++)
        if (fitted[c] && (c == HSDAG_OP_CONV || c == HSDAG_OP_MATMUL) && exp(x[c]) > peak) peak = exp(x[c]);
    if (peak <= 0)
        for (int c = 0; c < NC; c++)
            if (fitted[c] && exp(x[c]) > peak) peak = exp(x[c]);
    if (peak <= 0) peak = 1e10;
    memset(d, 0, sizeof *d);
    d->name = "CPU";
    d->ov_name = "CPU";
    d->kind = HSDAG_DEV_CPU;
    d->peak_flops = peak;
    d->mem_bw = exp(x[NC]);
    d->launch_s = exp(x[NC + 1]);
    d->cache_bw = exp(x[NC + 2]);
    d->cache_bytes = exp(x[NC + 3]);
    if (d->cache_bw <= d->mem_bw || d->cache_bytes < 2)
        d->cache_bw = d->cache_bytes = 0; /* none, or no faster */
    for (int c = 0; c < NC; c++)
        d->elem_s[c] = fitted[c] && ELEM_FIT(c) && exp(x[XE + c]) > 1e-13 ? exp(x[XE + c]) : 0;
    double effs[NC];
    int ne = 0;
    for (int c = 0; c < NC; c++) {
        double f = exp(x[c]) / peak;
        d->eff[c] = f > 1 ? 1 : (f < 1e-6 ? 1e-6 : f);
        if (fitted[c]) effs[ne++] = d->eff[c];
    }
    qsort(effs, (size_t)ne, sizeof *effs, hsdag_cmp_double);
    double med = ne ? effs[ne / 2] : 1.0;
    for (int c = 0; c < NC; c++)
        if (!fitted[c]) d->eff[c] = med;
}

/* One pattern search from x (in place): per parameter, try +-step, grow a successful step, halve a failed one,
 * until every step is below 1e-4 or the sweep budget is spent. Returns the objective at x. */
static double cal_search(const cal_set *sets, int32_t n, double *x, const uint8_t *fitted,
                         const hsdag_calib_config *cfg, int cache, int32_t *sweeps)
{
    double step[NP], best = objective(sets, n, x, cfg->huber_delta);
    for (int i = 0; i < NP; i++)
        step[i] = ((i < NC && !fitted[i]) || (i >= XE && (!fitted[i - XE] || !ELEM_FIT(i - XE))) ||
                   i == NC + 3 || (i == NC + 2 && !cache))
                      ? 0
                      : log(2.0);
    for (; *sweeps < cfg->max_sweeps; (*sweeps)++) {
        int active = 0;
        for (int i = 0; i < NP; i++) {
            if (step[i] < 1e-4) continue;
            active = 1;
            double keep = x[i], bx = keep, bl = best;
            for (int sgn = -1; sgn <= 1; sgn += 2) {
                x[i] = keep + sgn * step[i];
                if (i == NC + 1 && x[i] < log(1e-9)) x[i] = log(1e-9); /* launch overhead >= 1 ns */
                double l = objective(sets, n, x, cfg->huber_delta);
                if (l < bl) bl = l, bx = x[i];
            }
            x[i] = bx;
            if (bl < best)
                best = bl, step[i] *= 1.5;
            else
                step[i] *= 0.5;
        }
        if (!active) break;
    }
    return best;
}

int hsdag_calibrate_fit(hsdag_calib_result *r, hsdag_calib_model *models, const hsdag_graph *const *graphs,
                        const hsdag_profile *const *profiles, int32_t n, const hsdag_calib_config *cfg,
                        hsdag_err *e)
{
    memset(r, 0, sizeof *r);
    hsdag_calib_config def = hsdag_calib_config_default();
    if (!cfg) cfg = &def;
    if (n < 1) return hsdag_err_set(e, HSDAG_EINVAL, "calibrate: no profiles");
    cal_set *sets = hsdag_calloc((size_t)n, sizeof *sets);
    if (!sets) return hsdag_err_set(e, HSDAG_ENOMEM, "calibrate: out of memory");
    int rc = 0;
    for (int32_t j = 0; j < n; j++)
        if ((rc = cal_prepare(&sets[j], graphs[j], profiles[j], cfg->device, e)) < 0) {
            if (cfg->labels && cfg->labels[j]) hsdag_err_prefix(e, cfg->labels[j]);
            goto done;
        }
    /* start: per class, total flops / total time of kernels with flops of that class; bandwidth from all bytes */
    double cf[NC] = {0}, ct[NC] = {0}, tb = 0, tt = 0;
    for (int32_t j = 0; j < n; j++)
        for (int32_t k = 0; k < sets[j].nk; k++) {
            double best = 0;
            int bc = -1;
            for (int32_t i = sets[j].off[k]; i < sets[j].off[k + 1]; i++) {
                tb += sets[j].bytes[i];
                if (sets[j].flops[i] > best) best = sets[j].flops[i], bc = sets[j].cls[i];
            }
            tt += sets[j].meas_s[k];
            if (bc >= 0) {
                cf[bc] += best;
                ct[bc] += sets[j].meas_s[k];
                r->class_kernels[bc]++;
            }
            r->n_kernels++;
        }
    double x[NP];
    for (int c = 0; c < NC; c++) {
        r->fitted[c] = cf[c] > 0 && ct[c] > 0 && c != HSDAG_OP_BOOKKEEPING;
        x[c] = log(r->fitted[c] ? cf[c] / ct[c] : 1e10);
    }
    x[NC] = log(tb > 0 && tt > 0 ? tb / tt : 1e10);
    x[NC + 1] = log(2e-6);
    x[NC + 2] = x[NC] + log(4.0);                        /* cache 4x faster than DRAM */
    x[NC + 3] = 0;                                       /* cache size: set by each start below */
    for (int c = 0; c < NC; c++) x[XE + c] = log(1e-12); /* s per output element: start negligible */
    /* pattern search, run until a restart with fresh steps no longer improves */
    int cache = cfg->cache_bytes > 0;
    double x0[NP], bestx[NP], best = INFINITY;
    memcpy(x0, x, sizeof x);
    int32_t sweep = 0;
    for (int s0 = 0; s0 < 1; s0++) {
        memcpy(x, x0, sizeof x);
        /* the cache size is the machine's (not fitted: with it free, one huge layer of one model can turn the
         * whole DRAM level into "cache"); without one, the cache level sits unused at 1 byte */
        x[NC + 3] = log(cache ? cfg->cache_bytes : 1.0);
        double l = objective(sets, n, x, cfg->huber_delta), prev;
        int32_t used = 0; /* sweeps of this start */
        do {
            prev = l;
            l = cal_search(sets, n, x, r->fitted, cfg, cache, &used);
        } while (l < prev * (1 - 1e-6) && used < cfg->max_sweeps);
        sweep += used;
        if (l < best) {
            best = l;
            memcpy(bestx, x, sizeof x);
        }
    }
    memcpy(x, bestx, sizeof x);
    r->sweeps = sweep;
    r->loss = best;
    params_to_device(x, r->fitted, &r->dev);
    if (models)
        for (int32_t j = 0; j < n && rc == 0; j++) rc = cal_score(&models[j], &sets[j], &r->dev, e);
done:
    for (int32_t j = 0; j < n; j++) cal_set_free(&sets[j]);
    hsdag_free(sets);
    return rc;
}

int hsdag_calibrate_eval(hsdag_calib_model *m, const hsdag_device *dev, const hsdag_graph *g,
                         const hsdag_profile *p, const hsdag_calib_config *cfg, hsdag_err *e)
{
    hsdag_calib_config def = hsdag_calib_config_default();
    if (!cfg) cfg = &def;
    cal_set s;
    int rc = cal_prepare(&s, g, p, cfg->device, e);
    if (rc < 0) return rc;
    rc = cal_score(m, &s, dev, e);
    cal_set_free(&s);
    return rc;
}

int hsdag_calibrate_kernels(hsdag_buf *out, const hsdag_device *dev, const hsdag_graph *g,
                            const hsdag_profile *p, const hsdag_calib_config *cfg, hsdag_err *e)
{
    hsdag_calib_config def = hsdag_calib_config_default();
    if (!cfg) cfg = &def;
    cal_set s;
    int rc = cal_prepare(&s, g, p, cfg->device, e);
    if (rc < 0) return rc;
    hsdag_buf_printf(out, "anchor,op,nodes,flops,bytes,measured_ms,predicted_ms\n");
    for (int32_t k = 0; k < s.nk; k++) {
        double f = 0, b = 0;
        int32_t anchor = s.node[s.off[k]];
        (void)0;
        for (int32_t i = s.off[k]; i < s.off[k + 1]; i++) {
            f += s.flops[i];
            b += s.bytes[i];
            if (g->flops[s.node[i]] >= g->flops[anchor] && s.cls[i] != HSDAG_OP_BOOKKEEPING)
                anchor = s.node[i];
        }
        hsdag_buf_printf(out, "%s,%s,%d,%.6g,%.6g,%.6g,%.6g\n", g->name[anchor], g->op[anchor],
                         (int)(s.off[k + 1] - s.off[k]), f, b, s.meas_s[k] * 1e3,
                         kernel_pred(&s, k, dev) * 1e3);
    }
    cal_set_free(&s);
    return out->oom ? hsdag_err_set(e, HSDAG_ENOMEM, "calibrate: out of memory") : 0;
}

int hsdag_calibrate_devices(hsdag_devices **out, const hsdag_device *dev, const char *name, const char *base,
                            hsdag_err *e)
{
    *out = NULL;
    hsdag_devices *d = NULL;
    int rc;
    if (base) {
        if ((rc = hsdag_devices_load(&d, base, NULL, e)) < 0) return rc;
    } else {
        static const char one[] = "{\"name\": \"x\", \"devices\": [{\"name\": \"CPU\", \"kind\": \"cpu\", "
                                  "\"peak_flops\": 1e9, \"mem_bandwidth\": 1e9}]}";
        if ((rc = hsdag_devices_parse(&d, one, sizeof one - 1, "calibrate", e)) < 0) return rc;
    }
    int32_t c = hsdag_devices_first_of(d, HSDAG_DEV_CPU);
    if (c < 0) {
        hsdag_devices_free(d);
        return hsdag_err_set(e, HSDAG_EINVAL, "calibrate: device set '%s' has no cpu device",
                             base ? base : "");
    }
    hsdag_device *t = &d->dev[c];
    t->peak_flops = dev->peak_flops;
    t->mem_bw = dev->mem_bw;
    t->launch_s = dev->launch_s;
    t->cache_bytes = dev->cache_bytes;
    t->cache_bw = dev->cache_bw;
    memcpy(t->elem_s, dev->elem_s, sizeof t->elem_s);
    memcpy(t->eff, dev->eff, sizeof t->eff);
    const char *nm = hsdag_arena_strdup(d->arena, name ? name : "this-cpu");
    if (!nm) {
        hsdag_devices_free(d);
        return hsdag_err_set(e, HSDAG_ENOMEM, "calibrate: out of memory");
    }
    d->name = nm;
    *out = d;
    return 0;
}

/* ---- result JSON ---- */

int hsdag_calibrate_write_json(hsdag_buf *out, const hsdag_device *dev, const hsdag_calib_result *r,
                               const hsdag_calib_model *models, const char *const *labels, int32_t n)
{
    hsdag_jw w;
    hsdag_jw_begin(&w, out, "hsdag-calibration/1");
    hsdag_jw_str(&w, "mode", r ? "fit" : "score");
    hsdag_jw_num(&w, "peak_flops", dev->peak_flops);
    hsdag_jw_num(&w, "mem_bandwidth", dev->mem_bw);
    hsdag_jw_num(&w, "launch_overhead_s", dev->launch_s);
    hsdag_jw_num(&w, "cache_bytes", dev->cache_bytes);
    hsdag_jw_num(&w, "cache_bandwidth", dev->cache_bw);
    hsdag_jw_object(&w, "output_element_s");
    for (int k = 0; k < HSDAG_OP_CLASS_COUNT_; k++)
        hsdag_jw_num(&w, hsdag_opclass_name((hsdag_opclass)k), dev->elem_s[k]);
    hsdag_jw_close(&w);
    hsdag_jw_object(&w, "efficiency");
    for (int k = 0; k < HSDAG_OP_CLASS_COUNT_; k++)
        hsdag_jw_num(&w, hsdag_opclass_name((hsdag_opclass)k), dev->eff[k]);
    hsdag_jw_close(&w);
    if (r) {
        hsdag_jw_int(&w, "kernels", r->n_kernels);
        hsdag_jw_int(&w, "sweeps", r->sweeps);
        hsdag_jw_num(&w, "loss", r->loss);
    } else {
        hsdag_jw_null(&w, "kernels");
        hsdag_jw_null(&w, "sweeps");
        hsdag_jw_null(&w, "loss");
    }
    hsdag_jw_array(&w, "models");
    for (int32_t i = 0; i < n; i++) {
        const hsdag_calib_model *m = &models[i];
        hsdag_jw_object(&w, NULL);
        hsdag_jw_str(&w, "model", labels[i]);
        hsdag_jw_int(&w, "kernels", m->kernels);
        hsdag_jw_num(&w, "measured_ms", m->measured_ms);
        hsdag_jw_num(&w, "predicted_ms", m->predicted_ms);
        hsdag_jw_num(&w, "relative_error", m->measured_ms > 0 ? m->predicted_ms / m->measured_ms - 1 : 0);
        hsdag_jw_num(&w, "spearman", m->spearman);
        hsdag_jw_num(&w, "median_abs_rel", m->median_abs_rel);
        hsdag_jw_num(&w, "weighted_abs_rel", m->weighted_abs_rel);
        hsdag_jw_close(&w);
    }
    hsdag_jw_close(&w);
    return hsdag_jw_end(&w);
}

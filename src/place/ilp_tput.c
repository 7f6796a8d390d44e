/* ilp_tput.c - the contiguous throughput (max-load) optimum as a MILP (GLPK): Tarnawski et al.'s throughput
 *              IP in a chain-of-ideals form, warm-started, time-limited, with its incumbent and bound.
 * Not here: the DP over ideals (pipeline.c, which shares the model), the latency IP (ilp_tw.c).
 * Start: the PipeDream-style chain DP (given 40% of the time), else the greedy if its split is a chain.
 * Entry points: place_ilp_throughput.
 *
 * Model (units u of the pipeline model, slots j = 0..S-1 with S = accelerators + CPUs, times in units of the
 * start's max-load): the split is a chain of ideals, slot j holding I_j \ I_(j-1), so the class is exactly the
 * DP's (contiguous sets whose devices form no cycle; Tarnawski et al.'s contig IP forces contiguity per set
 * instead, which admits a cycle of sets).
 *   Y[u,j] in {0,1}: u in I_j;  Y[u,j] <= Y[u,j+1];  Y[u,S-1] = 1;  Y[v,j] <= Y[u,j] for each unit edge u -> v;
 *   X[u,j] = Y[u,j] - Y[u,j-1] (u in slot j);  A[j] in {0,1}: slot j is an accelerator; sum A <= k,
 *   sum (1 - A) <= l;  XA[u,j] = X[u,j] A[j] (XA <= X, XA <= A, XA >= X + A - 1);
 *   IN[x,j] >= XA[unit(w),j] - X[unit(x),j], OUT[x,j] >= XA[unit(x),j] - X[unit(w),j] for each node edge x -> w
 *   across units (a node that feeds an accelerator slot from outside / leaves it);
 *   T >= sum_u w_acc(u) XA[u,j] + sum_x c(x) (IN[x,j] + OUT[x,j]);  T >= sum_u w_cpu(u) (X[u,j] - XA[u,j]);
 *   memory: sum_u bytes(u) XA[u,j] <= cap_acc, sum_u bytes(u) (X - XA) <= cap_cpu; units an accelerator (CPU)
 *   may not run: XA = 0 (X = XA); minimise T <= 1. */
#include "place_int.h"

#include <glpk.h>

#define TP_MAX_COLS 1500000

typedef struct tp_ilp {
    const place_pl_model *m;
    glp_prob *lp;
    int32_t S, nu, n;
    int32_t yc, xac, ac, ic, oc, tc; /* first columns */
    double ts;                       /* model units per second */
    int *ind;
    double *val;
    int32_t *device; /* the start until the solver beats it */
} tp_ilp;

#define YC(t, u, j) ((t)->yc + (u) * (t)->S + (j))
#define XAC(t, u, j) ((t)->xac + (u) * (t)->S + (j))
#define INC(t, x, j) ((t)->ic + (x) * (t)->S + (j))
#define OUTC(t, x, j) ((t)->oc + (x) * (t)->S + (j))

static int tp_row(tp_ilp *t, int type, double lo, double hi, int k)
{
    int r = glp_add_rows(t->lp, 1);
    glp_set_row_bnds(t->lp, r, type, lo, hi);
    glp_set_mat_row(t->lp, r, k, t->ind, t->val);
    return r;
}

/* X[u,j] as coefficients: +c Y[u,j] - c Y[u,j-1]. Appends to ind/val at *k. */
static void tp_x(tp_ilp *t, int32_t u, int32_t j, double c, int *k)
{
    ++*k, t->ind[*k] = YC(t, u, j), t->val[*k] = c;
    if (j > 0) ++*k, t->ind[*k] = YC(t, u, j - 1), t->val[*k] = -c;
}

/* The columns: Y, XA, A, IN, OUT and T (the objective). */
static void tp_columns(tp_ilp *t)
{
    const place_pl_model *m = t->m;
    const int32_t S = t->S;
    const int32_t nu = t->nu;
    const int32_t n = t->n;
    glp_prob *lp = t->lp;
    glp_set_obj_dir(lp, GLP_MIN);
    t->yc = glp_add_cols(lp, nu * S);
    t->xac = glp_add_cols(lp, nu * S);
    for (int32_t u = 0; u < nu; u++)
        for (int32_t j = 0; j < S; j++) {
            glp_set_col_kind(lp, YC(t, u, j), GLP_BV);
            if (j == S - 1) glp_set_col_bnds(lp, YC(t, u, j), GLP_FX, 1, 1);
            glp_set_col_bnds(lp, XAC(t, u, j), GLP_DB, 0, 1);
            if (!(m->ok[u] & PL_OK_ACC)) glp_set_col_bnds(lp, XAC(t, u, j), GLP_FX, 0, 0);
        }
    t->ac = glp_add_cols(lp, S);
    for (int32_t j = 0; j < S; j++) glp_set_col_kind(lp, t->ac + j, GLP_BV);
    t->ic = glp_add_cols(lp, n * S);
    t->oc = glp_add_cols(lp, n * S);
    for (int32_t i = 0; i < n * S; i++) {
        glp_set_col_bnds(lp, t->ic + i, GLP_DB, 0, 1);
        glp_set_col_bnds(lp, t->oc + i, GLP_DB, 0, 1);
    }
    t->tc = glp_add_cols(lp, 1);
    glp_set_col_bnds(lp, t->tc, GLP_DB, 0, 1 + 1e-7);
    glp_set_obj_coef(lp, t->tc, 1.0);
}

/* The chain of ideals, the slot types and XA = X * A. */
static void tp_rows_chain(tp_ilp *t)
{
    const place_pl_model *m = t->m;
    const int32_t S = t->S;
    const int32_t nu = t->nu;
    int *ind = t->ind;
    double *val = t->val;
    int k;
    /* the chain of ideals */
    for (int32_t u = 0; u < nu; u++)
        for (int32_t j = 0; j + 1 < S; j++) {
            ind[1] = YC(t, u, j + 1), val[1] = 1, ind[2] = YC(t, u, j), val[2] = -1;
            tp_row(t, GLP_LO, 0, 0, 2);
        }
    for (int32_t v = 0; v < nu; v++)
        for (int32_t q = m->pred_off[v]; q < m->pred_off[v + 1]; q++)
            for (int32_t j = 0; j + 1 < S; j++) {
                ind[1] = YC(t, m->pred[q], j), val[1] = 1, ind[2] = YC(t, v, j), val[2] = -1;
                tp_row(t, GLP_LO, 0, 0, 2);
            }
    /* slot types */
    k = 0;
    for (int32_t j = 0; j < S; j++) ++k, ind[k] = t->ac + j, val[k] = 1;
    tp_row(t, GLP_FX, m->k, m->k,
           k); /* S = k + l slots: exactly k of them accelerators (some may be empty) */
    /* XA = X * A; a unit a CPU may not run is all accelerator */
    for (int32_t u = 0; u < nu; u++)
        for (int32_t j = 0; j < S; j++) {
            k = 0;
            ++k, ind[k] = XAC(t, u, j), val[k] = 1;
            tp_x(t, u, j, -1, &k);
            tp_row(t, (m->ok[u] & PL_OK_CPU) ? GLP_UP : GLP_FX, 0, 0, k); /* XA <= X (= X off the CPU) */
            ind[1] = XAC(t, u, j), val[1] = 1, ind[2] = t->ac + j, val[2] = -1;
            tp_row(t, GLP_UP, 0, 0, 2);
            k = 0;
            ++k, ind[k] = XAC(t, u, j), val[k] = 1;
            tp_x(t, u, j, -1, &k);
            ++k, ind[k] = t->ac + j, val[k] = -1;
            tp_row(t, GLP_LO, -1, 0, k);
        }
}

/* Communication, per node edge across units. */
static void tp_rows_comm(tp_ilp *t)
{
    const place_pl_model *m = t->m;
    const hsdag_graph *g = m->p->g;
    const int32_t S = t->S;
    const int32_t n = t->n;
    int *ind = t->ind;
    double *val = t->val;
    int k;
    /* communication, per node edge across units */
    for (int32_t x = 0; x < n; x++)
        for (int32_t q = g->out_off[x]; q < g->out_off[x + 1]; q++) {
            int32_t w = g->out_dst[q], ux = m->unit_of[x], uw = m->unit_of[w];
            if (ux == uw) continue;
            for (int32_t j = 0; j < S; j++) {
                k = 0;
                ++k, ind[k] = INC(t, x, j), val[k] = 1;
                ++k, ind[k] = XAC(t, uw, j), val[k] = -1;
                tp_x(t, ux, j, 1, &k);
                tp_row(t, GLP_LO, 0, 0, k);
                k = 0;
                ++k, ind[k] = OUTC(t, x, j), val[k] = 1;
                ++k, ind[k] = XAC(t, ux, j), val[k] = -1;
                tp_x(t, uw, j, 1, &k);
                tp_row(t, GLP_LO, 0, 0, k);
            }
        }
}

/* Loads and memory per slot. */
static void tp_rows_load(tp_ilp *t)
{
    const place_pl_model *m = t->m;
    const hsdag_graph *g = m->p->g;
    const int32_t S = t->S;
    const int32_t nu = t->nu;
    const int32_t n = t->n;
    int *ind = t->ind;
    double *val = t->val;
    int k;
    /* loads and memory per slot */
    for (int32_t j = 0; j < S; j++) {
        k = 0;
        ++k, ind[k] = t->tc, val[k] = 1;
        for (int32_t u = 0; u < nu; u++)
            if (m->w_acc[u] > 0) ++k, ind[k] = XAC(t, u, j), val[k] = -m->w_acc[u] * t->ts;
        for (int32_t x = 0; x < n; x++) {
            double c = m->comm[x] * t->ts;
            if (c <= 0 || g->out_off[x + 1] == g->out_off[x]) continue;
            ++k, ind[k] = INC(t, x, j), val[k] = -c;
            ++k, ind[k] = OUTC(t, x, j), val[k] = -c;
        }
        tp_row(t, GLP_LO, 0, 0, k);
        if (m->l > 0) {
            k = 0;
            ++k, ind[k] = t->tc, val[k] = 1;
            for (int32_t u = 0; u < nu; u++) {
                double w = m->w_cpu[u] * t->ts;
                if (w <= 0) continue;
                tp_x(t, u, j, -w, &k);
                ++k, ind[k] = XAC(t, u, j), val[k] = w;
            }
            tp_row(t, GLP_LO, 0, 0, k);
        }
        if (m->cap_acc < INFINITY) {
            k = 0;
            for (int32_t u = 0; u < nu; u++)
                if (m->size[u] > 0) ++k, ind[k] = XAC(t, u, j), val[k] = m->size[u] / m->cap_acc;
            if (k) tp_row(t, GLP_UP, 0, 1, k);
        }
        if (m->l > 0 && m->cap_cpu < INFINITY) {
            k = 0;
            for (int32_t u = 0; u < nu; u++) {
                if (m->size[u] <= 0) continue;
                tp_x(t, u, j, m->size[u] / m->cap_cpu, &k);
                ++k, ind[k] = XAC(t, u, j), val[k] = -m->size[u] / m->cap_cpu;
            }
            if (k) tp_row(t, GLP_UP, 0, 1, k);
        }
    }
}

static int tp_build(tp_ilp *t, hsdag_err *e)
{
    const int32_t S = t->S, nu = t->nu, n = t->n;
    double cols = (double)nu * S * 2 + S + 2.0 * n * S + 1;
    if (cols > TP_MAX_COLS)
        return hsdag_err_set(e, HSDAG_EUNSUPPORTED, "ilp: %.0f variables is beyond this solver (limit %d)",
                             cols, TP_MAX_COLS);
    tp_columns(t);
    int cap = 2 * nu + 2 * n + S + 16;
    t->ind = hsdag_malloc((size_t)(cap + 1) * sizeof *t->ind);
    t->val = hsdag_malloc((size_t)(cap + 1) * sizeof *t->val);
    if (!t->ind || !t->val) return hsdag_err_set(e, HSDAG_ENOMEM, "ilp: out of memory");
    tp_rows_chain(t);
    tp_rows_comm(t);
    tp_rows_load(t);
    return 0;
}

/* The chain of a contiguous split: devices ordered topologically (Kahn over the units' edges), slot j = the
 * j-th device; slots beyond the devices used stay empty (accelerator type while accelerators remain). Fills
 * x[1..ncols]; returns 0, or -1 if dev is not a chain of ideals over the units. */
static int tp_fill(const tp_ilp *t, const int32_t *dev, double *x)
{
    const place_pl_model *m = t->m;
    const hsdag_place_problem *p = m->p;
    const hsdag_graph *g = p->g;
    int32_t S = t->S, nu = t->nu, D = p->k, ncols = glp_get_num_cols(t->lp);
    for (int32_t i = 1; i <= ncols; i++) x[i] = 0;
    int32_t slot_of[HSDAG_MAX_DEVICES], nslot = 0;
    uint64_t succ[HSDAG_MAX_DEVICES] = {0}, present = 0;
    for (int32_t u = 0; u < nu; u++) {
        int32_t d = dev[m->unode[m->unode_off[u]]];
        for (int32_t q = m->unode_off[u]; q < m->unode_off[u + 1]; q++)
            if (dev[m->unode[q]] != d) return -1;
        present |= (uint64_t)1 << d;
        for (int32_t q = m->pred_off[u]; q < m->pred_off[u + 1]; q++) {
            int32_t e = dev[m->unode[m->unode_off[m->pred[q]]]];
            if (e != d) succ[e] |= (uint64_t)1 << d;
        }
    }
    for (int32_t d = 0; d < D; d++) slot_of[d] = -1;
    for (uint64_t left = present; left;) {
        int32_t pick = -1;
        for (uint64_t a = left; a && pick < 0; a &= a - 1) {
            int32_t d = __builtin_ctzll(a), pointed = 0;
            for (uint64_t b = left; b && !pointed; b &= b - 1) pointed = (succ[__builtin_ctzll(b)] >> d) & 1u;
            if (!pointed) pick = d;
        }
        if (pick < 0 || nslot >= S) return -1;
        slot_of[pick] = nslot++;
        left &= ~((uint64_t)1 << pick);
    }
    int32_t accs = 0, cpus = 0;
    for (int32_t d = 0; d < D; d++) {
        if (slot_of[d] < 0) continue;
        int acc = p->devs->dev[d].kind != HSDAG_DEV_CPU;
        x[t->ac + slot_of[d]] = acc;
        accs += acc, cpus += !acc;
    }
    for (int32_t j = nslot; j < S; j++) { /* empty slots: accelerators while any is left, then CPUs */
        int acc = accs < m->k;
        x[t->ac + j] = acc;
        accs += acc, cpus += !acc;
    }
    if (accs > m->k || cpus > m->l) return -1;
    for (int32_t u = 0; u < nu; u++) {
        int32_t d = dev[m->unode[m->unode_off[u]]], j0 = slot_of[d];
        for (int32_t j = 0; j < S; j++) x[YC(t, u, j)] = j >= j0;
        x[XAC(t, u, j0)] = x[t->ac + j0];
    }
    for (int32_t xn = 0; xn < t->n; xn++)
        for (int32_t q = g->out_off[xn]; q < g->out_off[xn + 1]; q++) {
            int32_t w = g->out_dst[q], ux = m->unit_of[xn], uw = m->unit_of[w];
            if (ux == uw) continue;
            int32_t jx = slot_of[dev[xn]], jw = slot_of[dev[w]];
            if (jx == jw) continue;
            if (x[t->ac + jw] > 0.5) x[INC(t, xn, jw)] = 1;
            if (x[t->ac + jx] > 0.5) x[OUTC(t, xn, jx)] = 1;
        }
    double T = 0;
    for (int32_t j = 0; j < S; j++) {
        double la = 0, lc = 0;
        for (int32_t u = 0; u < nu; u++) {
            double xa = x[XAC(t, u, j)], xu = x[YC(t, u, j)] - (j ? x[YC(t, u, j - 1)] : 0);
            la += m->w_acc[u] * xa * t->ts;
            lc += m->w_cpu[u] * (xu - xa) * t->ts;
        }
        for (int32_t xn = 0; xn < t->n; xn++)
            la += m->comm[xn] * t->ts * (x[INC(t, xn, j)] + x[OUTC(t, xn, j)]);
        if (la > T) T = la;
        if (lc > T) T = lc;
    }
    x[t->tc] = T;
    return 0;
}

/* place_milp_run's callbacks; ctx is the tp_ilp */
static int tp_build_cb(void *ctx, glp_prob *lp, hsdag_err *e)
{
    tp_ilp *t = ctx;
    t->lp = lp;
    return tp_build(t, e);
}

static int tp_fill_cb(void *ctx, double *x)
{
    tp_ilp *t = ctx;
    return tp_fill(t, t->device, x);
}

static void tp_decode_cb(void *ctx, const double *x)
{
    tp_ilp *t = ctx;
    const place_pl_model *m = t->m;
    int32_t na = 0, nc = 0, slot_dev[2 * HSDAG_MAX_DEVICES];
    for (int32_t j = 0; j < t->S; j++) slot_dev[j] = x[t->ac + j] > 0.5 ? m->acc_dev[na++] : m->cpu_dev[nc++];
    for (int32_t u = 0; u < m->nu; u++) {
        int32_t j = 0;
        while (j < t->S - 1 && x[YC(t, u, j)] < 0.5) j++;
        for (int32_t q = m->unode_off[u]; q < m->unode_off[u + 1]; q++) t->device[m->unode[q]] = slot_dev[j];
    }
}

int place_ilp_throughput(hsdag_place_problem *p, const hsdag_place_opts *o, int32_t *device,
                         hsdag_place_report *r, hsdag_err *e)
{
    place_pl_model m;
    int rc = place_pl_model_create(p, &m, e);
    if (rc < 0) return rc;
    tp_ilp t = {.m = &m, .nu = m.nu, .n = p->n, .S = m.k + m.l, .device = device};
    /* no cuts: they cost more time than they gain here */
    place_milp mr = {.build = tp_build_cb, .fill = tp_fill_cb, .decode = tp_decode_cb, .ctx = &t, .r = r};
    mr.tl = o->time_limit_s > 0 ? o->time_limit_s : 10.0;
    mr.cpu = o->time_limit_cpu;
    mr.t0 = place_clock(mr.cpu);
    /* the start: the PipeDream-style chain DP (a chain of ideals, so in the model's class) */
    hsdag_place_opts so = hsdag_place_opts_default();
    so.time_limit_s = 0.4 * mr.tl;
    so.time_limit_cpu = mr.cpu;
    hsdag_place_report srep = {.bound_s = NAN, .objective_s = NAN};
    if (place_pipedream(p, &so, device, &srep, NULL) < 0) {
        /* no chain split in time: the greedy's, when it is a chain of ideals (nothing spilled to the CPU) */
        if ((rc = place_greedy_tarnawski(p, &so, device, &srep, e)) < 0) goto done;
        if (!hsdag_place_contiguous(p, device)) {
            rc = hsdag_err_set(e, HSDAG_ESOLVER,
                               "ilp: no contiguous split to start from within the time limit");
            goto done;
        }
    }
    place_score ss = place_evaluate(p, device);
    mr.ub = ss.latency_s;
    if (t.S < 1 || !(mr.ub > 0)) {
        r->objective_s = mr.ub;
        r->bound_s = mr.ub;
        r->optimal = 1;
        r->bound_contiguous = 1;
        snprintf(r->note, sizeof r->note, "trivial: max-load %.6g ms", mr.ub * 1e3);
        goto done;
    }
    t.ts = 1 / mr.ub;
    rc = place_milp_run(&mr, e);
done:
    hsdag_free(t.ind);
    hsdag_free(t.val);
    place_pl_model_free(&m);
    return rc;
}

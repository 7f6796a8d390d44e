/* ilp_conc.c - a disjunctive MILP for concurrent semantics on small graphs: placement and schedule together,
 *              with transfers that never wait for a link (a relaxation of the simulator's FIFO links).
 * Not here: link contention or priority rules (so its optimum is a lower bound on the simulated concurrent
 * latency
 *           of every placement, and its placement is then scored by the simulator like any other); memory
 * rows
 *           count static + activation bytes only (received copies are not reserved, unlike the sequential
 * ILP).
 * Entry points: place_ilp_concurrent (called by place_ilp for concurrent semantics on small graphs).
 *
 * Formulation (times in ms; c(v) = v's colour class; p_v = sum_d node_s[v, d] X[c(v), d]):
 *   X[c, d] binary, sum_d X = 1, X = 0 where a member may not run on d;
 *   T_uv >= xfer(u, a, b) (X[c(u), a] + X[c(v), b] - 1) for every edge (u, v) between classes, a != b;
 *   S_v >= S_u + p_u + T_uv for every edge;  C >= S_v + p_v;  min C;
 *   for two ops u, v with non-zero cost and no path between them, Y_uv binary, and on every device d:
 *     S_v >= S_u + p_u - M (1 - Y_uv) - M (2 - X[c(u), d] - X[c(v), d])
 *     S_u >= S_v + p_v - M Y_uv       - M (2 - X[c(u), d] - X[c(v), d])   (one op at a time per device);
 *   sum_c mem(c) X[c, d] <= capacity(d).
 * M = the sum over ops of their largest cost plus their largest transfer: no schedule without idling is
 * longer. */
#include "place_int.h"

#include <glpk.h>

#define ILPC_MAX_NODES 30

/* reach[u * n + v] = 1 if there is a path u -> v (u < v in topological order). */
static void ilpc_reach(const hsdag_graph *g, uint8_t *reach)
{
    int32_t n = g->n_nodes;
    for (int32_t u = n - 1; u >= 0; u--)
        for (int32_t j = g->out_off[u]; j < g->out_off[u + 1]; j++) {
            int32_t w = g->out_dst[j];
            reach[(size_t)u * n + w] = 1;
            for (int32_t x = w + 1; x < n; x++) reach[(size_t)u * n + x] |= reach[(size_t)w * n + x];
        }
}

/* Adds coef * column to a row under construction, merging a column already there (GLPK refuses
 * duplicates). */
static void ilpc_add(int *ind, double *val, int *cnt, int col, double coef)
{
    for (int i = 1; i <= *cnt; i++)
        if (ind[i] == col) {
            val[i] += coef;
            return;
        }
    ++*cnt;
    ind[*cnt] = col;
    val[*cnt] = coef;
}

/* A row sum_i val[i] * col[i] (>=|<=|==) rhs. */
static void ilpc_row(glp_prob *lp, int type, double rhs, int cnt, const int *ind, const double *val)
{
    int row = glp_add_rows(lp, 1);
    glp_set_row_bnds(lp, row, type, type == GLP_UP ? 0 : rhs, type == GLP_UP ? rhs : 0);
    if (type == GLP_FX) glp_set_row_bnds(lp, row, GLP_FX, rhs, rhs);
    glp_set_mat_row(lp, row, cnt, ind, val);
}

/* Scratch comes from glp_alloc (zeroed here): a GLPK failure inside (place_glpk_call) frees it with the model. */
static void *ilpc_zalloc(size_t n, size_t size)
{
    void *q = glp_alloc((int)n, (int)size);
    memset(q, 0, n * size);
    return q;
}

/* The model under construction: problem, GLPK problem, column offsets, row scratch. */
typedef struct ilpc {
    hsdag_place_problem *p;
    glp_prob *lp;
    int xc, sc, cc;        /* first X column, first S column, the C column */
    int32_t *tcol, *ycol;  /* T column per cross edge, Y column per incomparable costly pair (0 = none) */
    uint8_t *reach;        /* [n * n] */
    int *ind;              /* row scratch */
    double *val, bigm, ms; /* times in ms */
} ilpc;

/* M = the sum over ops of their largest cost plus their largest transfer (ms): no schedule without idling
 * is longer. */
static double ilpc_bigm(const hsdag_place_problem *p, double ms)
{
    double bigm = 0;
    for (int32_t v = 0; v < p->n; v++) {
        double mc = 0, mx = 0;
        for (int32_t d = 0; d < p->k; d++) {
            mc = fmax(mc, place_cost(p, v, d));
            for (int32_t b = 0; b < p->k; b++) mx = fmax(mx, hsdag_costs_xfer_s(p->c, v, d, b));
        }
        bigm += (mc + mx) * ms;
    }
    return bigm * 1.01 + 1e-6;
}

/* Columns: X (ng * k), S (n), C (1), T (cross edges), Y (incomparable costly pairs). */
static void ilpc_columns(ilpc *m)
{
    hsdag_place_problem *p = m->p;
    const hsdag_graph *g = p->g;
    int32_t n = p->n, k = p->k, ng = p->n_groups;
    m->xc = glp_add_cols(m->lp, ng * k);
    for (int32_t gi = 0; gi < ng; gi++)
        for (int32_t d = 0; d < k; d++) {
            glp_set_col_kind(m->lp, m->xc + gi * k + d, GLP_BV);
            if (!place_group_ok(p, gi, d)) glp_set_col_bnds(m->lp, m->xc + gi * k + d, GLP_FX, 0, 0);
        }
    m->sc = glp_add_cols(m->lp, n + 1);
    m->cc = m->sc + n;
    for (int32_t v = 0; v <= n; v++) glp_set_col_bnds(m->lp, m->sc + v, GLP_LO, 0, 0);
    glp_set_obj_coef(m->lp, m->cc, 1.0);
    for (int32_t q = 0; q < g->n_edges; q++)
        if (p->group[g->edge_src[q]] != p->group[g->out_dst[q]]) {
            m->tcol[q] = glp_add_cols(m->lp, 1);
            glp_set_col_bnds(m->lp, m->tcol[q], GLP_LO, 0, 0);
        }
    for (int32_t u = 0; u < n; u++)
        for (int32_t v = u + 1; v < n; v++) {
            int costly_u = 0, costly_v = 0;
            for (int32_t d = 0; d < k; d++)
                costly_u |= place_cost(p, u, d) > 0, costly_v |= place_cost(p, v, d) > 0;
            if (!m->reach[(size_t)u * n + v] && costly_u && costly_v) {
                m->ycol[(size_t)u * n + v] = glp_add_cols(m->lp, 1);
                glp_set_col_kind(m->lp, m->ycol[(size_t)u * n + v], GLP_BV);
            }
        }
}

/* One device per class; precedence with the transfer of every cross edge; the makespan. */
static void ilpc_flow_rows(ilpc *m)
{
    hsdag_place_problem *p = m->p;
    const hsdag_graph *g = p->g;
    int32_t n = p->n, k = p->k, ng = p->n_groups, xc = m->xc, sc = m->sc;
    int *ind = m->ind;
    double *val = m->val, ms = m->ms;
    for (int32_t gi = 0; gi < ng; gi++) {
        for (int32_t d = 0; d < k; d++) ind[d + 1] = xc + gi * k + d, val[d + 1] = 1;
        ilpc_row(m->lp, GLP_FX, 1, k, ind, val);
    }
    for (int32_t q = 0; q < g->n_edges; q++) {
        int32_t u = g->edge_src[q], v = g->out_dst[q], cu = p->group[u], cv = p->group[v];
        int cnt = 0;
        /* S_v - S_u - p_u - T_uv >= 0 */
        ind[++cnt] = sc + v, val[cnt] = 1;
        ind[++cnt] = sc + u, val[cnt] = -1;
        for (int32_t d = 0; d < k; d++) ind[++cnt] = xc + cu * k + d, val[cnt] = -place_cost(p, u, d) * ms;
        if (m->tcol[q]) ind[++cnt] = m->tcol[q], val[cnt] = -1;
        ilpc_row(m->lp, GLP_LO, 0, cnt, ind, val);
        if (!m->tcol[q]) continue;
        for (int32_t a = 0; a < k; a++)
            for (int32_t b = 0; b < k; b++) {
                double t = a == b ? 0 : hsdag_costs_xfer_s(p->c, u, a, b) * ms;
                if (t <= 0) continue;
                /* T - t X[cu,a] - t X[cv,b] >= -t */
                ind[1] = m->tcol[q], val[1] = 1;
                ind[2] = xc + cu * k + a, val[2] = -t;
                ind[3] = xc + cv * k + b, val[3] = -t;
                ilpc_row(m->lp, GLP_LO, -t, 3, ind, val);
            }
    }
    for (int32_t v = 0; v < n; v++) {
        int cnt = 0; /* C - S_v - p_v >= 0 */
        ind[++cnt] = m->cc, val[cnt] = 1;
        ind[++cnt] = sc + v, val[cnt] = -1;
        for (int32_t d = 0; d < k; d++)
            ind[++cnt] = xc + p->group[v] * k + d, val[cnt] = -place_cost(p, v, d) * ms;
        ilpc_row(m->lp, GLP_LO, 0, cnt, ind, val);
    }
}

/* One op at a time per device (the disjunctive pairs), and the memory rows. */
static void ilpc_device_rows(ilpc *m)
{
    hsdag_place_problem *p = m->p;
    int32_t n = p->n, k = p->k, ng = p->n_groups, xc = m->xc, sc = m->sc;
    int *ind = m->ind;
    double *val = m->val, ms = m->ms, bigm = m->bigm;
    for (int32_t u = 0; u < n; u++)
        for (int32_t v = u + 1; v < n; v++) {
            int y = m->ycol[(size_t)u * n + v];
            if (!y) continue;
            int32_t cu = p->group[u], cv = p->group[v];
            for (int32_t d = 0; d < k; d++) {
                if (!place_group_ok(p, cu, d) || !place_group_ok(p, cv, d)) continue;
                for (int dir = 0; dir < 2; dir++) {
                    /* dir 0: S_v - S_u - p_u - M Y - M X_ud - M X_vd >= -3M   (u before v when Y = 1)
                     * dir 1: S_u - S_v - p_v + M Y - M X_ud - M X_vd >= -2M   (v before u when Y = 0) */
                    int32_t a = dir ? v : u, b = dir ? u : v;
                    int cnt = 0;
                    ilpc_add(ind, val, &cnt, sc + b, 1);
                    ilpc_add(ind, val, &cnt, sc + a, -1);
                    for (int32_t dd = 0; dd < k; dd++)
                        ilpc_add(ind, val, &cnt, xc + p->group[a] * k + dd, -place_cost(p, a, dd) * ms);
                    ilpc_add(ind, val, &cnt, y, dir ? bigm : -bigm);
                    ilpc_add(ind, val, &cnt, xc + cu * k + d, -bigm);
                    ilpc_add(ind, val, &cnt, xc + cv * k + d, -bigm);
                    ilpc_row(m->lp, GLP_LO, dir ? -2 * bigm : -3 * bigm, cnt, ind, val);
                }
            }
        }
    for (int32_t d = 0; d < k; d++) {
        if (!(p->cap[d] < INFINITY)) continue;
        int cnt = 0;
        for (int32_t gi = 0; gi < ng; gi++)
            if (p->grp_mem[gi] > 0) ind[++cnt] = xc + gi * k + d, val[cnt] = p->grp_mem[gi] / p->cap[d];
        if (cnt) ilpc_row(m->lp, GLP_UP, 1.0, cnt, ind, val);
    }
}

/* The start placement with a schedule, as the MILP's first feasible point (x[ncols + 1]): a topological
 * list schedule gives S, T and Y. */
static void ilpc_start(const ilpc *m, const int32_t *start, double *x)
{
    const hsdag_place_problem *p = m->p;
    const hsdag_graph *g = p->g;
    int32_t n = p->n, k = p->k, ng = p->n_groups;
    double avail[HSDAG_MAX_DEVICES] = {0}, mk = 0, ms = m->ms;
    double *fin = ilpc_zalloc((size_t)n + 1, sizeof *fin), *stt = ilpc_zalloc((size_t)n + 1, sizeof *stt);
    for (int32_t gi = 0; gi < ng; gi++) x[m->xc + gi * k + start[p->grp_node[p->grp_off[gi]]]] = 1;
    for (int32_t v = 0; v < n; v++) {
        int32_t d = start[p->grp_node[p->grp_off[p->group[v]]]];
        double rdy = avail[d];
        for (int32_t j = g->in_off[v]; j < g->in_off[v + 1]; j++) {
            int32_t u = g->in_src[j], du = start[p->grp_node[p->grp_off[p->group[u]]]];
            double t = hsdag_costs_xfer_s(p->c, u, du, d) * ms;
            if (m->tcol[g->in_eid[j]]) x[m->tcol[g->in_eid[j]]] = t;
            rdy = fmax(rdy, fin[u] + t);
        }
        stt[v] = rdy;
        fin[v] = rdy + place_cost(p, v, d) * ms;
        if (place_cost(p, v, d) > 0) avail[d] = fin[v];
        x[m->sc + v] = rdy;
        mk = fmax(mk, fin[v]);
    }
    x[m->cc] = mk;
    for (int32_t u = 0; u < n; u++)
        for (int32_t v = u + 1; v < n; v++)
            if (m->ycol[(size_t)u * n + v]) x[m->ycol[(size_t)u * n + v]] = stt[u] <= stt[v] ? 1 : 0;
    glp_free(fin);
    glp_free(stt);
}

static int ilpc_model(hsdag_place_problem *p, const hsdag_place_opts *o, const int32_t *start,
                      int32_t *device, hsdag_place_report *r, hsdag_err *e)
{
    const hsdag_graph *g = p->g;
    int32_t n = p->n, k = p->k, ng = p->n_groups;
    if (n > ILPC_MAX_NODES)
        return hsdag_err_set(e, HSDAG_EUNSUPPORTED, "ilp: the concurrent model is for graphs up to %d ops",
                             ILPC_MAX_NODES);
    const double ms = 1e3;
    int cpu = o->time_limit_cpu;
    double tl = o->time_limit_s > 0 ? o->time_limit_s : 10.0, t0 = place_clock(cpu);
    int rc = 0, cap = ng + 2 * k + 2 * n + 16;
    double *x = NULL;
    ilpc m = {.p = p, .lp = glp_create_prob(), .bigm = ilpc_bigm(p, ms), .ms = ms};
    m.reach = ilpc_zalloc((size_t)n * (size_t)n + 1, 1);
    m.ycol = ilpc_zalloc((size_t)n * (size_t)n + 1, sizeof *m.ycol);
    m.ind = ilpc_zalloc((size_t)(cap + 1), sizeof *m.ind);
    m.val = ilpc_zalloc((size_t)(cap + 1), sizeof *m.val);
    m.tcol = ilpc_zalloc((size_t)g->n_edges + 1, sizeof *m.tcol);
    ilpc_reach(g, m.reach);
    glp_set_obj_dir(m.lp, GLP_MIN);
    ilpc_columns(&m);
    ilpc_flow_rows(&m);
    ilpc_device_rows(&m);
    if ((rc = place_glpk_prepare(m.lp, "ilp", e)) < 0) goto done;
    int ncols = glp_get_num_cols(m.lp);
    x = ilpc_zalloc((size_t)ncols + 1, sizeof *x);
    ilpc_start(&m, start, x);
    /* the LP relaxation first (its optimum is a bound), then branch and cut from the start placement */
    glp_prob *lp = m.lp;
    double c0 = hsdag_cpu_now();
    glp_scale_prob(lp, GLP_SF_AUTO);
    int sr = place_ilp_simplex(lp, place_clock(cpu) + 0.5 * tl, cpu), ir = -1, st = GLP_UNDEF;
    r->lp_cpu_s = hsdag_cpu_now() - c0;
    place_ilp_cb cb = {.bound = -INFINITY, .heur = x};
    if (sr == 0 && glp_get_status(lp) == GLP_OPT) {
        cb.bound = glp_get_obj_val(lp);
        double left = tl - (place_clock(cpu) - t0);
        if (left > 0) {
            double c1 = hsdag_cpu_now();
            ir = place_ilp_intopt(lp, 0.9 * left, cpu, 0, &cb);
            r->branch_and_cut_cpu_s = hsdag_cpu_now() - c1;
            st = glp_mip_status(lp);
        }
    }
    if (st == GLP_OPT || st == GLP_FEAS) {
        /* each class on its allowed device of largest X (not X > 0.5: with extreme costs GLPK's integrality
         * tolerance can leave a class with no X above it); the start's device when none is allowed */
        for (int32_t gi = 0; gi < ng; gi++) {
            int32_t bd = -1;
            double bx = -INFINITY;
            for (int32_t d = 0; d < k; d++) {
                double xv = glp_mip_col_val(lp, m.xc + gi * k + d);
                if (place_group_ok(p, gi, d) && xv > bx) bx = xv, bd = d;
            }
            place_group_set(p, device, gi, bd >= 0 ? bd : start[p->grp_node[p->grp_off[gi]]]);
        }
        double obj = glp_mip_obj_val(lp);
        int opt = st == GLP_OPT && ir == 0;
        double bound = opt ? obj : fmin(obj, cb.bound);
        r->objective_s = obj / ms;
        r->bound_s = bound / ms;
        r->optimal = opt;
        snprintf(r->note, sizeof r->note,
                 "concurrent model without link contention: %s, schedule %.6g ms, bound %.6g ms (for every "
                 "placement within its memory rows), gap %.3g%%",
                 opt ? "optimal" : "time limit", obj, bound, obj > 0 ? 100 * (obj - bound) / obj : 0.0);
    } else {
        memcpy(device, start, (size_t)n * sizeof *device);
        r->bound_s = cb.bound > -INFINITY ? cb.bound / ms : NAN;
        snprintf(r->note, sizeof r->note,
                 "concurrent model: no integer solution within %.3g s (glpk %d/%d): "
                 "returned the start placement",
                 tl, sr ? sr : ir, st);
    }
done:
    glp_delete_prob(m.lp);
    glp_free(m.reach);
    glp_free(m.ycol);
    glp_free(m.tcol);
    glp_free(m.ind);
    glp_free(m.val);
    if (x) glp_free(x);
    return rc;
}

typedef struct ilpc_args {
    hsdag_place_problem *p;
    const hsdag_place_opts *o;
    const int32_t *start;
    int32_t *device;
    hsdag_place_report *r;
} ilpc_args;

static int ilpc_solve(void *ctx, hsdag_err *e)
{
    ilpc_args *a = ctx;
    return ilpc_model(a->p, a->o, a->start, a->device, a->r, e);
}

int place_ilp_concurrent(hsdag_place_problem *p, const hsdag_place_opts *o, const int32_t *start,
                         int32_t *device, hsdag_place_report *r, hsdag_err *e)
{
    ilpc_args a = {p, o, start, device, r};
    return place_glpk_call(ilpc_solve, &a, "ilp", e);
}

/* ilp_tw.c - Tarnawski et al.'s latency IP on an open solver (GLPK): the exact optimum of the tarnawski
 *            latency over contiguous splits (each accelerator one contiguous subgraph), warm-started,
 *            time-limited, with its incumbent and proven bound.
 * Not here: the sequential and concurrent MILPs (ilp.c, ilp_conc.c), the throughput MILP (ilp_tput.c);
 *           more than one subgraph per accelerator (their q > 1: not formulated).
 * Entry points: place_ilp_tarnawski.
 *
 * Model (times in units of the start's latency; groups b (colour classes), accelerators a):
 *   X[b,a], Y[b] in {0,1}: b on accelerator a / on the CPU; sum_a X[b,a] + Y[b] = 1 (forbidden ones fixed 0);
 *   memory: sum_b bytes(b) X[b,a] <= cap(a); at most max_accels_used accelerators hold blocks (U[a]);
 *   contiguity (their formulation, per node): R[v,a] >= X[b(v),a]; R[w,a] >= R[v,a] for each edge v -> w (R: v in
 *     a's set or after it); R[b,a] - X[b,a] + X[w,a] <= 1 (a path that left a's set never comes back);
 *   communication: IN[u,a] >= X[w,a] - X[u,a] and OUT[u,a] >= X[u,a] - X[w,a] for every edge u -> w (node
 *     level: u is an outside node with an edge into a's set / a node of the set with an edge leaving it);
 *   timing (the simulator's formula, the bilinear "node on a => ..." terms by big-M, M = the incumbent):
 *     G[a] = T[a] + sum_v fpga_a(v) X[b(v),a] + sum_u c_a(u) (IN[u,a] + OUT[u,a])   (a's finish);
 *     T[a] >= F[u] - M (1 - X[b(w),a] + X[b(u),a]) for every edge u -> w            (a's start);
 *     F[v] >= G[a] - M (1 - X[b(v),a]);  F[v] >= F[u] + cpu(v) - M (1 - Y[b(v)]);  F[v] >= cpu(v) Y[b(v)];
 *     valid without M: F[v] >= F[u] + cpu(v) Y[b(v)] (a node on an accelerator finishes with its set, after
 *     every outside predecessor and with its inside ones);  L >= F[v];  minimise L <= M.
 *   Identical accelerators are interchangeable: the first group of a's set comes before the first group of
 *   a+1's (P[b,a] = sum of X[b',a] over b' <= b; X[b,a+1] <= P[b-1,a]).
 * Not blocks: a cycle of colour classes through a class on the CPU breaks no accelerator's contiguity (CPU
 * nodes are not contracted), so a block may be split here (found by the brute-force test).
 * A split whose sets are contiguous but whose blocks form a cycle (docs/simulator.md) cannot satisfy the timing
 * rows with positive costs, so the model's class is exactly the contiguous splits Tarnawski et al.'s tool
 * accepts, and on them its L is the simulated latency. */
#include "place_int.h"

#include <glpk.h>

#define TW_MAX_COLS 2000000

typedef struct tw_ilp {
    const hsdag_place_problem *p;
    glp_prob *lp;
    int32_t na, acc[HSDAG_MAX_DEVICES];                 /* accelerators in the model */
    int32_t nb;                                         /* units: the groups (colour classes) */
    int32_t xc, yc, rc, ic, oc, fc, tc, gc, lc, uc, pc; /* first column of each family (0 = none) */
    int32_t hc, dc;  /* path potentials PHI[v], per cross-block edge and accelerator D[e,a] */
    int32_t *ecross; /* [n_edges] index of a cross-block edge among them, -1 for an edge inside a block */
    int32_t ne;
    int identical;
    double ts; /* model time units per second: 1 / the start's latency, so every time is O(1) */
    double M;  /* big-M (model units): the start's latency, plus a hair */
    double lb; /* model units: the path-blocks bound (every feasible placement, hsdag_bound), at most 1 */
    int *ind;  /* row buffers */
    double *val;
    int cap;
    const int32_t *st; /* the start, one CPU, relabelled */
    int32_t *device;   /* the placement: the start until the solver beats it */
} tw_ilp;

#define XCOL(m, b, a) ((m)->xc + (b) * (m)->na + (a))
#define RCOL(m, b, a) ((m)->rc + (b) * (m)->na + (a))
#define PCOL(m, b, a) ((m)->pc + (b) * (m)->na + (a))
#define ICOL(m, v, a) ((m)->ic + (v) * (m)->na + (a))
#define OCOL(m, v, a) ((m)->oc + (v) * (m)->na + (a))

static int tw_row(tw_ilp *m, int type, double lo, double hi, int n)
{
    int r = glp_add_rows(m->lp, 1);
    glp_set_row_bnds(m->lp, r, type, lo, hi);
    glp_set_mat_row(m->lp, r, n, m->ind, m->val);
    return r;
}

/* A row of the n terms val[i] * column col[i] (i < n), through the row buffers. */
static int tw_rowc(tw_ilp *m, int type, double lo, double hi, int n, const int *col, const double *val)
{
    for (int i = 0; i < n; i++) m->ind[i + 1] = col[i], m->val[i + 1] = val[i];
    return tw_row(m, type, lo, hi, n);
}

static inline int32_t tw_blk(const hsdag_place_problem *p, int32_t v)
{
    return p->group[v];
}

/* Are the accelerators of the model interchangeable (same costs, transfers, capacity, allowed ops)? */
static int tw_identical(const tw_ilp *m)
{
    const hsdag_place_problem *p = m->p;
    for (int32_t i = 1; i < m->na; i++) {
        int32_t a = m->acc[0], b = m->acc[i];
        if (p->cap[a] != p->cap[b]) return 0;
        for (int32_t v = 0; v < p->n; v++)
            if (place_cost(p, v, a) != place_cost(p, v, b) ||
                p->c->allowed[(size_t)v * p->k + a] != p->c->allowed[(size_t)v * p->k + b] ||
                hsdag_costs_host_xfer_s(p->c, v, a) != hsdag_costs_host_xfer_s(p->c, v, b))
                return 0;
    }
    return 1;
}

/* The columns of every family, with bounds and kinds; the objective is L. */
static void tw_columns(tw_ilp *m)
{
    const hsdag_place_problem *p = m->p;
    const int32_t na = m->na;
    const int32_t nb = m->nb;
    const int32_t n = p->n;
    const double M = m->M;
    glp_prob *lp = m->lp;
    glp_set_obj_dir(lp, GLP_MIN);
    m->xc = glp_add_cols(lp, nb * na);
    for (int32_t b = 0; b < nb; b++)
        for (int32_t a = 0; a < na; a++) {
            int c = XCOL(m, b, a);
            glp_set_col_kind(lp, c, GLP_BV);
            if (!((p->group_allowed[b] >> m->acc[a]) & 1u)) glp_set_col_bnds(lp, c, GLP_FX, 0, 0);
        }
    m->yc = glp_add_cols(lp, nb);
    for (int32_t b = 0; b < nb; b++) {
        glp_set_col_kind(lp, m->yc + b, GLP_BV);
        if (p->cpu < 0 || !((p->group_allowed[b] >> p->cpu) & 1u))
            glp_set_col_bnds(lp, m->yc + b, GLP_FX, 0, 0);
    }
    m->rc = glp_add_cols(lp, n * na);
    for (int32_t i = 0; i < n * na; i++) glp_set_col_bnds(lp, m->rc + i, GLP_DB, 0, 1);
    m->ic = glp_add_cols(lp, n * na);
    m->oc = glp_add_cols(lp, n * na);
    for (int32_t i = 0; i < n * na; i++) {
        glp_set_col_bnds(lp, m->ic + i, GLP_DB, 0, 1);
        glp_set_col_bnds(lp, m->oc + i, GLP_DB, 0, 1);
    }
    m->fc = glp_add_cols(lp, n);
    for (int32_t v = 0; v < n; v++) glp_set_col_bnds(lp, m->fc + v, GLP_DB, 0, M);
    m->tc = glp_add_cols(lp, na);
    for (int32_t a = 0; a < na; a++) glp_set_col_bnds(lp, m->tc + a, GLP_DB, 0, M);
    m->gc = glp_add_cols(lp, na);
    for (int32_t a = 0; a < na; a++) glp_set_col_bnds(lp, m->gc + a, GLP_DB, 0, M);
    m->hc = glp_add_cols(lp, n);
    for (int32_t v = 0; v < n; v++) glp_set_col_bnds(lp, m->hc + v, GLP_DB, 0, M);
    if (m->ne) {
        m->dc = glp_add_cols(lp, m->ne * na);
        for (int32_t i = 0; i < m->ne * na; i++) glp_set_col_bnds(lp, m->dc + i, GLP_DB, 0, 1);
    }
    m->lc = glp_add_cols(lp, 1);
    glp_set_col_bnds(lp, m->lc, GLP_DB, m->lb, M);
    glp_set_obj_coef(lp, m->lc, 1.0);
    int limit = p->devs->max_accels_used >= 0 && p->devs->max_accels_used < na;
    if (limit) {
        m->uc = glp_add_cols(lp, na);
        for (int32_t a = 0; a < na; a++) glp_set_col_kind(lp, m->uc + a, GLP_BV);
    }
    if (m->identical && na > 1) {
        m->pc = glp_add_cols(lp, nb * na);
        for (int32_t i = 0; i < nb * na; i++) glp_set_col_bnds(lp, m->pc + i, GLP_DB, 0, nb);
    }
}

/* Assignment, the memory knapsacks and the accelerator count. */
static void tw_rows_assign(tw_ilp *m)
{
    const hsdag_place_problem *p = m->p;
    const int32_t na = m->na;
    const int32_t nb = m->nb;
    int *ind = m->ind;
    double *val = m->val;
    /* assignment */
    for (int32_t b = 0; b < nb; b++) {
        int k = 0;
        for (int32_t a = 0; a < na; a++) ++k, ind[k] = XCOL(m, b, a), val[k] = 1;
        ++k, ind[k] = m->yc + b, val[k] = 1;
        tw_row(m, GLP_FX, 1, 1, k);
    }
    /* memory, in units of the capacity */
    for (int32_t a = 0; a < na; a++) {
        double cap = p->cap[m->acc[a]];
        if (!(cap < INFINITY)) continue;
        int k = 0;
        for (int32_t b = 0; b < nb; b++)
            if (p->grp_mem[b] > 0) ++k, ind[k] = XCOL(m, b, a), val[k] = p->grp_mem[b] / cap;
        if (k) tw_row(m, GLP_UP, 0, 1, k);
    }
    /* accelerator count */
    if (m->uc) {
        for (int32_t a = 0; a < na; a++) {
            int k = 0;
            for (int32_t b = 0; b < nb; b++) ++k, ind[k] = XCOL(m, b, a), val[k] = 1;
            ++k, ind[k] = m->uc + a, val[k] = -(double)nb;
            tw_row(m, GLP_UP, 0, 0, k);
        }
        int k = 0;
        for (int32_t a = 0; a < na; a++) ++k, ind[k] = m->uc + a, val[k] = 1;
        tw_row(m, GLP_UP, 0, p->devs->max_accels_used, k);
    }
}

/* Contiguity of each accelerator's set and the symmetry of identical accelerators. */
static void tw_rows_contiguity(tw_ilp *m)
{
    const hsdag_place_problem *p = m->p;
    const hsdag_graph *g = p->g;
    const int32_t na = m->na;
    const int32_t nb = m->nb;
    const int32_t n = p->n;
    int *ind = m->ind;
    double *val = m->val;
    /* contiguity, node by node (a colour class on the CPU may have nodes before and after a set) */
    for (int32_t v = 0; v < n; v++)
        for (int32_t a = 0; a < na; a++) {
            int32_t bv = tw_blk(p, v);
            tw_rowc(m, GLP_LO, 0, 0, 2, (int[]){RCOL(m, v, a), XCOL(m, bv, a)}, (double[]){1, -1});
            for (int32_t k = g->out_off[v]; k < g->out_off[v + 1]; k++) {
                int32_t w = g->out_dst[k], bw = tw_blk(p, w);
                tw_rowc(m, GLP_LO, 0, 0, 2, (int[]){RCOL(m, w, a), RCOL(m, v, a)}, (double[]){1, -1});
                if (bw == bv) continue;
                tw_rowc(m, GLP_UP, 0, 1, 3, (int[]){RCOL(m, v, a), XCOL(m, bv, a), XCOL(m, bw, a)},
                        (double[]){1, -1, 1});
            }
        }
    /* symmetry of identical accelerators: a+1's first block comes after a's */
    if (m->pc) {
        for (int32_t i = 0; i < nb; i++) {
            int32_t b = i;
            for (int32_t a = 0; a < na; a++) {
                int k = 0;
                ++k, ind[k] = PCOL(m, i, a), val[k] = 1;
                ++k, ind[k] = XCOL(m, b, a), val[k] = -1;
                if (i > 0) ++k, ind[k] = PCOL(m, i - 1, a), val[k] = -1;
                tw_row(m, GLP_FX, 0, 0, k);
                if (a + 1 < na) {
                    k = 0;
                    ++k, ind[k] = XCOL(m, b, a + 1), val[k] = 1;
                    if (i > 0) ++k, ind[k] = PCOL(m, i - 1, a), val[k] = -1;
                    tw_row(m, GLP_UP, 0, 0, k);
                }
            }
        }
    }
}

/* Communication, the start and finish of each set, node finish times, L. */
static void tw_rows_timing(tw_ilp *m)
{
    const hsdag_place_problem *p = m->p;
    const hsdag_graph *g = p->g;
    const int32_t na = m->na;
    const int32_t nb = m->nb;
    const int32_t n = p->n;
    const double ms = m->ts;
    const double M = m->M;
    int *ind = m->ind;
    double *val = m->val;
    /* communication and the start of each set, per edge u -> w */
    for (int32_t u = 0; u < n; u++)
        for (int32_t j = g->out_off[u]; j < g->out_off[u + 1]; j++) {
            int32_t w = g->out_dst[j], bu = tw_blk(p, u), bw = tw_blk(p, w);
            if (bu == bw) continue; /* one device in every split of the model */
            for (int32_t a = 0; a < na; a++) {
                tw_rowc(m, GLP_LO, 0, 0, 3, (int[]){ICOL(m, u, a), XCOL(m, bw, a), XCOL(m, bu, a)},
                        (double[]){1, -1, 1});
                tw_rowc(m, GLP_LO, 0, 0, 3, (int[]){OCOL(m, u, a), XCOL(m, bu, a), XCOL(m, bw, a)},
                        (double[]){1, -1, 1});
                /* T[a] - F[u] - M X[bw,a] + M X[bu,a] >= -M */
                tw_rowc(m, GLP_LO, -M, 0, 4, (int[]){m->tc + a, m->fc + u, XCOL(m, bw, a), XCOL(m, bu, a)},
                        (double[]){1, -1, -M, M});
            }
        }
    /* each set's finish: G[a] = T[a] + its compute + its communication */
    for (int32_t a = 0; a < na; a++) {
        int k = 0;
        ++k, ind[k] = m->gc + a, val[k] = 1;
        ++k, ind[k] = m->tc + a, val[k] = -1;
        for (int32_t x = 0; x < n; x++) {
            double c = hsdag_costs_host_xfer_s(p->c, x, m->acc[a]) * ms;
            if (c > 0 && g->out_off[x + 1] > g->out_off[x]) {
                ++k, ind[k] = ICOL(m, x, a), val[k] = -c;
                ++k, ind[k] = OCOL(m, x, a), val[k] = -c;
            }
        }
        for (int32_t b = 0; b < nb; b++) {
            double wsum = place_group_cost(p, b, m->acc[a]) * ms;
            if (wsum > 0) ++k, ind[k] = XCOL(m, b, a), val[k] = -wsum;
        }
        HSDAG_ASSERT(k <= m->cap);
        tw_row(m, GLP_FX, 0, 0, k);
    }
    /* node finish times */
    for (int32_t v = 0; v < n; v++) {
        int32_t bv = tw_blk(p, v);
        double cpu = p->cpu >= 0 ? place_cost(p, v, p->cpu) * ms : 0;
        for (int32_t a = 0; a < na; a++) { /* F[v] - G[a] - M X[bv,a] >= -M */
            tw_rowc(m, GLP_LO, -M, 0, 3, (int[]){m->fc + v, m->gc + a, XCOL(m, bv, a)},
                    (double[]){1, -1, -M});
        }
        /* CPU: the valid F[v] >= F[u] + cpu(v) Y[bv] (a node on an accelerator finishes with its set, after
         * every outside predecessor and with its inside ones) and F[v] >= cpu(v) Y[bv] */
        tw_rowc(m, GLP_LO, 0, 0, 2, (int[]){m->fc + v, m->yc + bv}, (double[]){1, -cpu});
        for (int32_t k2 = g->in_off[v]; k2 < g->in_off[v + 1]; k2++) {
            tw_rowc(m, GLP_LO, 0, 0, 3, (int[]){m->fc + v, m->fc + g->in_src[k2], m->yc + bv},
                    (double[]){1, -1, -cpu});
        }
        tw_rowc(m, GLP_LO, 0, 0, 2, (int[]){m->lc, m->fc + v}, (double[]){1, -1});
    }
    /* L >= G[a]: a used set finishes no later than the request (an empty one can take T[a] = 0) */
    for (int32_t a = 0; a < na; a++) {
        tw_rowc(m, GLP_LO, 0, 0, 2, (int[]){m->lc, m->gc + a}, (double[]){1, -1});
    }
}

/* The valid inequalities: path potentials and the per-edge finish rows. */
static void tw_rows_paths(tw_ilp *m)
{
    const hsdag_place_problem *p = m->p;
    const hsdag_graph *g = p->g;
    const int32_t na = m->na;
    const int32_t n = p->n;
    const double ms = m->ts;
    int *ind = m->ind;
    double *val = m->val;
    /* path potentials, valid without M (the critical path of the placement, docs/simulator.md): PHI[v] >= own
     * cost, PHI[v] >= PHI[u] + cpu(v) Y[bv] + sum_a fpga_a(v) X[bv,a] + sum_a c_a(u) D[uv,a] with
     * D[uv,a] >= |X[bv,a] - X[bu,a]| (the path enters or leaves a's set over this edge: one transfer), and
     * L >= PHI[v] */
    for (int32_t v = 0; v < n; v++) {
        int32_t bv = tw_blk(p, v);
        double cpu = p->cpu >= 0 ? place_cost(p, v, p->cpu) * ms : 0;
        int k = 0;
        ++k, ind[k] = m->hc + v, val[k] = 1;
        ++k, ind[k] = m->yc + bv, val[k] = -cpu;
        for (int32_t a = 0; a < na; a++)
            ++k, ind[k] = XCOL(m, bv, a), val[k] = -place_cost(p, v, m->acc[a]) * ms;
        tw_row(m, GLP_LO, 0, 0, k);
        tw_rowc(m, GLP_LO, 0, 0, 2, (int[]){m->lc, m->hc + v}, (double[]){1, -1});
        for (int32_t q = g->in_off[v]; q < g->in_off[v + 1]; q++) {
            int32_t u = g->in_src[q], ei = m->ecross[g->in_eid[q]];
            k = 0;
            ++k, ind[k] = m->hc + v, val[k] = 1;
            ++k, ind[k] = m->hc + u, val[k] = -1;
            ++k, ind[k] = m->yc + bv, val[k] = -cpu;
            for (int32_t a = 0; a < na; a++) {
                ++k, ind[k] = XCOL(m, bv, a), val[k] = -place_cost(p, v, m->acc[a]) * ms;
                if (ei >= 0) {
                    double c = hsdag_costs_host_xfer_s(p->c, u, m->acc[a]) * ms;
                    if (c > 0) ++k, ind[k] = m->dc + ei * na + a, val[k] = -c;
                }
            }
            tw_row(m, GLP_LO, 0, 0, k);
        }
    }
    for (int32_t u = 0; u < n; u++)
        for (int32_t j = g->out_off[u]; j < g->out_off[u + 1]; j++) {
            int32_t ei = m->ecross[j], bu = tw_blk(p, u), bv = tw_blk(p, g->out_dst[j]);
            if (ei < 0) continue;
            for (int32_t a = 0; a < na; a++) {
                int32_t dcol = m->dc + ei * na + a;
                tw_rowc(m, GLP_LO, 0, 0, 3, (int[]){dcol, XCOL(m, bv, a), XCOL(m, bu, a)},
                        (double[]){1, -1, 1});
                tw_rowc(m, GLP_LO, 0, 0, 3, (int[]){dcol, XCOL(m, bu, a), XCOL(m, bv, a)},
                        (double[]){1, -1, 1});
            }
        }
    /* valid per edge and accelerator: v in a's set and u outside it => v finishes after u + its own
     * accelerator time + u's transfer into the set: F[v] >= F[u] + cpu(v) Y[bv] + (fpga_a(v) + c_a(u))
     * (X[bv,a] - X[bu,a]) (the bracket is <= 0 in every other case) */
    for (int32_t u = 0; u < n; u++)
        for (int32_t j = g->out_off[u]; j < g->out_off[u + 1]; j++) {
            int32_t v = g->out_dst[j], bu = tw_blk(p, u), bv = tw_blk(p, v);
            if (bu == bv) continue;
            double cpu = p->cpu >= 0 ? place_cost(p, v, p->cpu) * ms : 0;
            for (int32_t a = 0; a < na; a++) {
                double t = (place_cost(p, v, m->acc[a]) + hsdag_costs_host_xfer_s(p->c, u, m->acc[a])) * ms;
                tw_rowc(m, GLP_LO, 0, 0, 5,
                        (int[]){m->fc + v, m->fc + u, m->yc + bv, XCOL(m, bv, a), XCOL(m, bu, a)},
                        (double[]){1, -1, -cpu, -t, t});
            }
        }
}

static int tw_build(tw_ilp *m, hsdag_err *e)
{
    const int32_t na = m->na, nb = m->nb, n = m->p->n;
    double cols = (double)nb * na * 2 + nb + 3.0 * n * na + 2.0 * n + 2.0 * na + 1 + na + (double)m->ne * na;
    if (cols > TW_MAX_COLS)
        return hsdag_err_set(e, HSDAG_EUNSUPPORTED, "ilp: %.0f variables is beyond this solver (limit %d)",
                             cols, TW_MAX_COLS);
    tw_columns(m);
    /* the longest row: memory (nb + 1) or G[a]'s expansion (n + 2n + 1) or U's (nb + 1) */
    m->cap = 3 * n + nb + 4 * na + 16;
    m->ind = hsdag_malloc((size_t)(m->cap + 1) * sizeof *m->ind);
    m->val = hsdag_malloc((size_t)(m->cap + 1) * sizeof *m->val);
    if (!m->ind || !m->val) return hsdag_err_set(e, HSDAG_ENOMEM, "ilp: out of memory");
    tw_rows_assign(m);
    tw_rows_contiguity(m);
    tw_rows_timing(m);
    tw_rows_paths(m);
    return 0;
}

/* ---- the warm start: every column's value for a contiguous split ---- */

/* Relabels the accelerators of dev (in place) so that a set's first group comes before the next set's, as
 * the symmetry rows want; only for interchangeable accelerators. */
static void tw_relabel(const tw_ilp *m, int32_t *dev)
{
    const hsdag_place_problem *p = m->p;
    int32_t first[HSDAG_MAX_DEVICES], order[HSDAG_MAX_DEVICES], map[HSDAG_MAX_DEVICES];
    for (int32_t a = 0; a < m->na; a++) first[a] = INT32_MAX, order[a] = a;
    for (int32_t i = 0; i < m->nb; i++) {
        int32_t v = p->grp_node[p->grp_off[i]];
        for (int32_t a = 0; a < m->na; a++)
            if (dev[v] == m->acc[a] && first[a] == INT32_MAX) first[a] = i;
    }
    for (int32_t i = 1; i < m->na; i++) /* insertion sort by first block */
        for (int32_t j = i; j > 0 && first[order[j]] < first[order[j - 1]]; j--) {
            int32_t t = order[j];
            order[j] = order[j - 1], order[j - 1] = t;
        }
    for (int32_t d = 0; d < p->k; d++) map[d] = d;
    for (int32_t a = 0; a < m->na; a++) map[m->acc[order[a]]] = m->acc[a];
    for (int32_t v = 0; v < p->n; v++) dev[v] = map[dev[v]];
}

/* tw_fill's D columns and path potentials for the split bdev (group -> accelerator slot, -1 = CPU; nodes are
 * in topological order). */
static void tw_fill_paths(const tw_ilp *m, const int32_t *bdev, double *x)
{
    const hsdag_place_problem *p = m->p;
    const hsdag_graph *g = p->g;
    int32_t na = m->na, n = p->n;
    const double ms = m->ts;
    for (int32_t k = 0; k < g->n_edges; k++) {
        int32_t ei = m->ecross[k];
        if (ei < 0) continue;
        int32_t au = bdev[tw_blk(p, g->edge_src[k])], av = bdev[tw_blk(p, g->out_dst[k])];
        for (int32_t a = 0; a < na; a++) x[m->dc + ei * na + a] = (au == a) != (av == a);
    }
    for (int32_t v = 0; v < n; v++) {
        int32_t a = bdev[tw_blk(p, v)];
        double own =
            a >= 0 ? place_cost(p, v, m->acc[a]) * ms : (p->cpu >= 0 ? place_cost(p, v, p->cpu) * ms : 0);
        double h = own;
        for (int32_t q = g->in_off[v]; q < g->in_off[v + 1]; q++) {
            int32_t u = g->in_src[q], ei = m->ecross[g->in_eid[q]];
            double t = x[m->hc + u] + own;
            if (ei >= 0)
                for (int32_t b = 0; b < na; b++)
                    t += x[m->dc + ei * na + b] * hsdag_costs_host_xfer_s(p->c, u, m->acc[b]) * ms;
            if (t > h) h = t;
        }
        x[m->hc + v] = h;
    }
}

/* x[1..ncols] for placement dev (contiguous, classes whole): the model's own timing, solved by passes. */
static void tw_fill(const tw_ilp *m, const int32_t *dev, double *x)
{
    const hsdag_place_problem *p = m->p;
    const hsdag_graph *g = p->g;
    int32_t na = m->na, nb = m->nb, n = p->n, ncols = glp_get_num_cols(m->lp);
    const double ms = m->ts;
    for (int32_t j = 1; j <= ncols; j++) x[j] = 0;
    int32_t slot[HSDAG_MAX_DEVICES];
    for (int32_t d = 0; d < p->k; d++) slot[d] = -1;
    for (int32_t a = 0; a < na; a++) slot[m->acc[a]] = a;
    int32_t *bdev = hsdag_malloc((size_t)(nb ? nb : 1) * sizeof *bdev);
    if (!bdev) return;
    for (int32_t b = 0; b < nb; b++) {
        int32_t v = p->grp_node[p->grp_off[b]];
        bdev[b] = slot[dev[v]]; /* -1 = CPU */
        if (bdev[b] >= 0)
            x[XCOL(m, b, bdev[b])] = 1;
        else
            x[m->yc + b] = 1;
        if (m->uc && bdev[b] >= 0) x[m->uc + bdev[b]] = 1;
    }
    /* R: in the set or reachable from it (nodes are in topological order) */
    for (int32_t v = 0; v < n; v++)
        for (int32_t a = 0; a < na; a++) {
            double r = bdev[tw_blk(p, v)] == a;
            for (int32_t k = g->in_off[v]; k < g->in_off[v + 1] && !r; k++) r = x[RCOL(m, g->in_src[k], a)];
            x[RCOL(m, v, a)] = r;
        }
    if (m->pc)
        for (int32_t i = 0; i < nb; i++)
            for (int32_t a = 0; a < na; a++)
                x[PCOL(m, i, a)] = (i ? x[PCOL(m, i - 1, a)] : 0) + (bdev[i] == a);
    double work[HSDAG_MAX_DEVICES] = {0}, comm[HSDAG_MAX_DEVICES] = {0};
    for (int32_t u = 0; u < n; u++) {
        int32_t bu = tw_blk(p, u);
        if (bdev[bu] >= 0) work[bdev[bu]] += place_cost(p, u, m->acc[bdev[bu]]) * ms;
        for (int32_t j = g->out_off[u]; j < g->out_off[u + 1]; j++) {
            int32_t bw = tw_blk(p, g->out_dst[j]);
            if (bw == bu) continue;
            if (bdev[bw] >= 0 && bdev[bw] != bdev[bu]) x[ICOL(m, u, bdev[bw])] = 1;
            if (bdev[bu] >= 0 && bdev[bw] != bdev[bu]) x[OCOL(m, u, bdev[bu])] = 1;
        }
    }
    for (int32_t u = 0; u < n; u++)
        for (int32_t a = 0; a < na; a++)
            comm[a] +=
                (x[ICOL(m, u, a)] + x[OCOL(m, u, a)]) * hsdag_costs_host_xfer_s(p->c, u, m->acc[a]) * ms;
    /* timing: longest paths over the contracted graph, by passes until nothing changes */
    double *F = x + m->fc, *T = x + m->tc, *G = x + m->gc;
    for (int pass = 0, changed = 1; changed && pass <= n + 1; pass++) {
        changed = 0;
        for (int32_t a = 0; a < na; a++) {
            double t = 0;
            for (int32_t w = 0; w < n; w++) {
                if (bdev[tw_blk(p, w)] != a) continue;
                for (int32_t k = g->in_off[w]; k < g->in_off[w + 1]; k++) {
                    int32_t u = g->in_src[k];
                    if (bdev[tw_blk(p, u)] != a && F[u] > t) t = F[u];
                }
            }
            if (t != T[a] || G[a] != t + work[a] + comm[a]) changed = 1;
            T[a] = t;
            G[a] = t + work[a] + comm[a];
        }
        for (int32_t v = 0; v < n; v++) {
            int32_t a = bdev[tw_blk(p, v)];
            double f;
            if (a >= 0) {
                f = G[a];
            } else {
                f = 0;
                for (int32_t k = g->in_off[v]; k < g->in_off[v + 1]; k++)
                    if (F[g->in_src[k]] > f) f = F[g->in_src[k]];
                f += p->cpu >= 0 ? place_cost(p, v, p->cpu) * ms : 0;
            }
            if (f != F[v]) changed = 1, F[v] = f;
        }
    }
    double L = 0;
    for (int32_t v = 0; v < n; v++)
        if (F[v] > L) L = F[v];
    x[m->lc] = L;
    tw_fill_paths(m, bdev, x);
    hsdag_free(bdev);
}

/* Is dev a contiguous split: every accelerator set one piece and the contracted graph acyclic (the simulator
 * says so: one block per used accelerator, no cycle cut)? */
int place_tw_in_class(hsdag_place_problem *p, const int32_t *dev)
{
    hsdag_sim_result r;
    hsdag_semantics keep = hsdag_sim_semantics(p->sim);
    hsdag_sim_set_semantics(p->sim, HSDAG_SEM_TARNAWSKI);
    int ok = hsdag_sim_run(p->sim, dev, &r) == 0 && r.n_cycle_cuts == 0 && r.n_blocks == r.accels_used;
    hsdag_sim_set_semantics(p->sim, keep);
    return ok;
}

/* Moves every CPU node of dev to p->cpu (the model has one CPU: CPUs are never a bottleneck here). */
static void tw_one_cpu(const hsdag_place_problem *p, int32_t *dev)
{
    for (int32_t v = 0; v < p->n; v++)
        if (p->devs->dev[dev[v]].kind == HSDAG_DEV_CPU) dev[v] = p->cpu;
}

/* place_milp_run's callbacks; ctx is the tw_ilp, whose start and placement are set by place_ilp_tarnawski */
static int tw_build_cb(void *ctx, glp_prob *lp, hsdag_err *e)
{
    tw_ilp *m = ctx;
    m->lp = lp;
    return tw_build(m, e);
}

static int tw_fill_cb(void *ctx, double *x)
{
    tw_ilp *m = ctx;
    tw_fill(m, m->st, x);
    return 0;
}

static void tw_decode_cb(void *ctx, const double *x)
{
    tw_ilp *m = ctx;
    for (int32_t b = 0; b < m->nb; b++) {
        int32_t d = m->p->cpu;
        for (int32_t a = 0; a < m->na; a++)
            if (x[XCOL(m, b, a)] > 0.5) d = m->acc[a];
        place_group_set(m->p, m->device, b, d);
    }
}

/* The lower bound of every feasible placement (hsdag_place_lower_bound: the critical path or path-blocks)
 * holds for the contiguous splits too: the proven bound is the larger one, and an incumbent that meets it is
 * optimal. The note says so. */
static void tw_global_bound(hsdag_place_report *r, double lb_s, const char *rule)
{
    if (!(lb_s > 0) || !(isnan(r->bound_s) || lb_s > r->bound_s)) return;
    r->bound_s = fmin(lb_s, r->objective_s);
    r->bound_contiguous = 1;
    if (r->objective_s <= lb_s * (1 + 1e-9)) r->optimal = 1;
    size_t len = strlen(r->note);
    snprintf(r->note + len, sizeof r->note - len, "; %s bound %.6g ms (every feasible placement): gap %.3g%%",
             rule, lb_s * 1e3,
             r->objective_s > 0 ? 100 * (r->objective_s - r->bound_s) / r->objective_s : 0.0);
}

int place_ilp_tarnawski(hsdag_place_problem *p, const hsdag_place_opts *o, const int32_t *start,
                        int32_t *device, hsdag_place_report *r, hsdag_err *e)
{
    tw_ilp m = {.p = p, .device = device};
    place_milp mr = {
        .build = tw_build_cb, .fill = tw_fill_cb, .decode = tw_decode_cb, .ctx = &m, .cuts = 1, .r = r};
    mr.tl = o->time_limit_s > 0 ? o->time_limit_s : 10.0;
    mr.cpu = o->time_limit_cpu;
    mr.t0 = place_clock(mr.cpu);
    int32_t *st = hsdag_malloc((size_t)(p->n ? p->n : 1) * sizeof *st);
    int rc = 0;
    if (!st) return hsdag_err_set(e, HSDAG_ENOMEM, "ilp: out of memory");
    memcpy(st, start, (size_t)p->n * sizeof *st);
    if (p->cpu >= 0) tw_one_cpu(p, st);
    for (int32_t d = 0; d < p->k; d++)
        if (p->devs->dev[d].kind != HSDAG_DEV_CPU) m.acc[m.na++] = d;
    m.nb = p->n_groups;
    m.identical = tw_identical(&m);
    m.ecross = hsdag_malloc((size_t)(p->g->n_edges ? p->g->n_edges : 1) * sizeof *m.ecross);
    if (!m.ecross) {
        rc = hsdag_err_set(e, HSDAG_ENOMEM, "ilp: out of memory");
        goto done;
    }
    for (int32_t k = 0; k < p->g->n_edges; k++)
        m.ecross[k] = tw_blk(p, p->g->edge_src[k]) != tw_blk(p, p->g->out_dst[k]) ? m.ne++ : -1;
    if (m.identical) tw_relabel(&m, st);
    place_score ss = place_evaluate(p, st);
    if (!place_tw_in_class(p, st) || !ss.feasible) {
        rc = hsdag_err_set(e, HSDAG_EINVAL, "ilp: the start placement is not a feasible contiguous split");
        goto done;
    }
    mr.ub = ss.latency_s;
    m.ts = mr.ub > 0 ? 1 / mr.ub : 1;
    m.M = 1 + 1e-7;
    m.st = st;
    hsdag_bound lb;
    if (hsdag_place_lower_bound(p, &lb, NULL) < 0 || !(lb.lower_s > 0)) lb.lower_s = 0;
    m.lb = fmin(lb.lower_s * m.ts, 1);
    memcpy(device, st, (size_t)p->n * sizeof *device);
    if ((rc = place_milp_run(&mr, e)) == 0) tw_global_bound(r, lb.lower_s, lb.rule);
done:
    hsdag_free(m.ind);
    hsdag_free(m.val);
    hsdag_free(m.ecross);
    hsdag_free(st);
    return rc;
}

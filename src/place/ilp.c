/* ilp.c - the "ilp" method: the exact sequential-latency optimum on any number of devices as a MILP solved by
 *         GLPK, time-limited (on coarsened groups when the op-level model is too large); its dispatch to the
 *         concurrent (ilp_conc.c), tarnawski latency (ilp_tw.c) and throughput (ilp_tput.c) models; the GLPK
 *         run they share (place_ilp_solve, place_milp_run).
 * Not here: the other models themselves; the simulator's liveness-based memory (the cap here is sufficient).
 * Entry points: place_ilp, place_milp_run, place_ilp_solve, place_ilp_report, hsdag_place_bound_contiguous
 *               (the bound over contiguous splits by the objective's exact solver).
 *
 * Formulation (one binary per colour class and allowed device; times in milliseconds):
 *   X[c,d] in {0,1},  sum_d X[c,d] = 1,  X[c,d] = 0 where a member may not run on d;
 *   Z[u,a,b] >= X[c(u),a] + X[c(w),b] - 1 for each consumer w of u in another class, a != b, Z in [0,1]:
 *     tensor u is copied a -> b once however many consumers it has on b;
 *   min  sum node_s[v,d] X[c(v),d] + sum xfer(u,a,b) Z[u,a,b];
 *   memory, sequential semantics (ilp_live_rows, a relaxation of the simulator's memory): S[d] = sum_v static(v)
 *     X[c(v),d], and at every step t of the sequential order S[d] + the activations live on d at t <=
 *     capacity(d), a tensor counting on the device of its last consumer; the simulator checks the solution
 *     (ilp_sequential: when it overflows, the conservative rows below, with the relaxation's bound kept);
 *   memory, otherwise: sum_c mem(c) X[c,d] + sum_{u,a} xfer_bytes(u) Z[u,a,d] <= capacity(d) (static +
 *     activation + received copies all counted as resident: an upper bound of the simulator's peak, so every
 *     solution fits);
 *   accelerator count (Tarnawski maxFPGAs): X[c,d] <= U[d], sum over non-CPU d of U[d] <= limit. */
#include "place_int.h"

#include <glpk.h>
#include <limits.h>

#define ILP_MAX_COLS 400000
/* Simplex iterations per slice on the CPU clock (place_ilp_simplex). Measured on Layer GNMT's LP (8,806 x
 * 3,913): 8 slices, 7,925 iterations, 6.11 CPU s, against 7,696 and 5.87 s in one call; a slice is 0.8 CPU s
 * there and 2 s on Layer Inception-V3's 52,562 x 24,919 model, the most a solve runs past its limit. */
#define ILP_SLICE_ITERATIONS 1000
/* What one branch-and-cut callback call counts for on an iteration budget (o->ilp_iterations): one simplex
 * iteration per ILP_CALL_ROWS rows of the model. Measured on ViT-B/16 with the GPU at 50% (9,235 rows): 6,127
 * iterations in 1.5 CPU s, 0.25 ms each; then about 8 ms and 1.3 iterations per callback call. */
#define ILP_CALL_ROWS 300

/* GLPK branch-and-cut callback shared by both MILP models (place_int.h): records the best bound and hands
 * GLPK the warm start once, at its first heuristic point. */
void place_ilp_callback(glp_tree *tree, void *info)
{
    place_ilp_cb *cb = info;
    int best = glp_ios_best_node(tree);
    if (best) {
        double b = glp_ios_node_bound(tree, best);
        if (b > cb->bound) cb->bound = b;
    }
    if (glp_ios_reason(tree) == GLP_IHEUR && cb->heur && !cb->heur_given) {
        cb->heur_given = 1;
        glp_ios_heur_sol(tree, cb->heur);
    }
    if (cb->cpu_end > 0 && hsdag_cpu_now() > cb->cpu_end) glp_ios_terminate(tree);
    if (cb->it_end > 0) {
        /* the work so far in simplex iterations, each call here (a node's selection, cuts, heuristic,
         * branching) charged rows / ILP_CALL_ROWS more: a node re-solves its LP in a few iterations but
         * costs about that many in refactorisation and cut generation */
        glp_prob *lp = glp_ios_get_prob(tree);
        cb->calls++;
        double per_call = fmax(1, (double)glp_get_num_rows(lp) / ILP_CALL_ROWS);
        if (glp_get_it_cnt(lp) + (double)cb->calls * per_call >= cb->it_end) glp_ios_terminate(tree);
    }
}

int place_ilp_simplex(glp_prob *lp, double end, int cpu)
{
    glp_smcp sp;
    glp_init_smcp(&sp);
    sp.msg_lev = GLP_MSG_OFF;
    for (;;) {
        double left = end - place_clock(cpu);
        sp.tm_lim = (int)fmax(1, fmin(left * 1e3, 2e9));
        if (cpu) sp.it_lim = ILP_SLICE_ITERATIONS, sp.tm_lim = INT_MAX;
        int sr = glp_simplex(lp, &sp);
        if (!cpu || (sr != GLP_EITLIM && sr != GLP_ETMLIM)) return sr;
        if (end - place_clock(cpu) < 0.01) return GLP_ETMLIM;
    }
}

int place_ilp_intopt(glp_prob *lp, double left, int cpu, unsigned cuts, place_ilp_cb *cb)
{
    glp_iocp ip;
    glp_init_iocp(&ip);
    ip.msg_lev = GLP_MSG_OFF;
    ip.tm_lim = (int)fmax(1, fmin(left * 1e3, 2e9));
    if (cpu) ip.tm_lim = INT_MAX, cb->cpu_end = hsdag_cpu_now() + left;
    if (cb->it_end > 0) ip.tm_lim = INT_MAX, cb->cpu_end = 0;
    ip.cb_func = place_ilp_callback;
    ip.cb_info = cb;
    if (cuts & PLACE_ILP_MIR) ip.mir_cuts = GLP_ON;
    if (cuts & PLACE_ILP_GMI) ip.gmi_cuts = GLP_ON;
    return glp_intopt(lp, &ip);
}

void place_ilp_solve(glp_prob *lp, double deadline, int cpu, int cuts, place_ilp_cb *cb, place_ilp_run *out)
{
    memset(out, 0, sizeof *out);
    out->ir = -1;
    out->mip_status = GLP_UNDEF;
    out->obj = out->bound = out->mip_cpu_s = NAN;
    double c0 = hsdag_cpu_now();
    double lp_s = 0.7 * (deadline - place_clock(cpu));
    /* GLPK's iterative scaling costs more than it gains on big models (23 s of a 30 s limit on a 10,000-op
     * graph) and the objective is already O(1): only small ones get it */
    if (glp_get_num_nz(lp) < 200000) glp_scale_prob(lp, GLP_SF_AUTO);
    out->sr = place_ilp_simplex(lp, place_clock(cpu) + lp_s, cpu);
    out->lp_cpu_s = hsdag_cpu_now() - c0;
    out->lp_status = glp_get_status(lp);
    out->lp_ok = out->sr == 0 && out->lp_status == GLP_OPT;
    if (!out->lp_ok) return;
    cb->bound = glp_get_obj_val(lp);
    double left = deadline - place_clock(cpu);
    if (left > 0) {
        out->ir = place_ilp_intopt(lp, 0.95 * left, cpu, cuts ? PLACE_ILP_MIR | PLACE_ILP_GMI : 0, cb);
        out->mip_status = glp_mip_status(lp);
        out->mip_cpu_s = hsdag_cpu_now() - c0 - out->lp_cpu_s;
    }
    if (out->mip_status == GLP_OPT || out->mip_status == GLP_FEAS) out->obj = glp_mip_obj_val(lp);
    out->bound = out->mip_status == GLP_OPT && out->ir == 0 ? out->obj : cb->bound;
}

void place_ilp_report(hsdag_place_report *r, const place_ilp_run *run, double start_s, double obj_s)
{
    r->objective_s = obj_s;
    r->bound_s = run->lp_ok ? fmin(run->bound * start_s, obj_s) : NAN;
    r->bound_contiguous = 1;
    r->optimal = run->mip_status == GLP_OPT && run->ir == 0;
    r->lp_cpu_s = run->lp_cpu_s;
    r->branch_and_cut_cpu_s = run->mip_cpu_s;
    /* no seconds in the note: it is the same for the same input and seed (the timings are r's fields) */
    if (run->lp_ok)
        snprintf(
            r->note, sizeof r->note,
            "%s: incumbent %.6g ms, bound %.6g ms (contiguous splits), proven gap %.3g%%; start %.6g ms%s",
            r->optimal ? "optimal" : "time limit", obj_s * 1e3, r->bound_s * 1e3,
            obj_s > 0 ? 100 * (obj_s - r->bound_s) / obj_s : 0.0, start_s * 1e3,
            obj_s < start_s * (1 - 1e-9) ? "" : " (kept)");
    else
        snprintf(r->note, sizeof r->note,
                 "LP relaxation not solved within the time limit (glpk %d/%d): the start, %.6g ms, no bound",
                 run->sr, run->lp_status, start_s * 1e3);
}

int hsdag_place_bound_contiguous(double *bound_s, const char **method, char *note, size_t note_len,
                                 hsdag_place_problem *p, double time_limit_s, hsdag_err *e)
{
    *bound_s = NAN;
    *method = p->obj == HSDAG_OBJ_THROUGHPUT ? "dp" : "ilp";
    if (note_len) note[0] = 0;
    if (p->sem != HSDAG_SEM_TARNAWSKI)
        return hsdag_err_set(e, HSDAG_EUNSUPPORTED,
                             "the contiguous bound applies to tarnawski semantics only");
    hsdag_place_opts po = hsdag_place_opts_default();
    po.time_limit_s = time_limit_s;
    int32_t *dev = hsdag_malloc(((size_t)p->n + 1) * sizeof *dev);
    if (!dev) return hsdag_err_set(e, HSDAG_ENOMEM, "bound: out of memory");
    hsdag_place_result pr;
    int rc = hsdag_place_run(p, *method, &po, dev, &pr, e);
    hsdag_free(dev);
    if (rc < 0) return rc;
    /* the exact solver of the objective over contiguous splits: its bound holds for every such split */
    if (pr.rep.bound_contiguous) *bound_s = pr.rep.bound_s;
    if (note_len) snprintf(note, note_len, "%s", pr.rep.note);
    return 0;
}

/* place_milp_run's state: the buffers outlive a GLPK failure inside milp_body (place_glpk_call). */
typedef struct milp_state {
    const place_milp *mr;
    double *x, *sol; /* [ncols + 1] the start's and the solver's column values */
} milp_state;

static int milp_body(void *ctx, hsdag_err *e)
{
    milp_state *s = ctx;
    const place_milp *mr = s->mr;
    hsdag_place_report *r = mr->r;
    glp_prob *lp = glp_create_prob();
    int rc = 0;
    if ((rc = mr->build(mr->ctx, lp, e)) < 0 || (rc = place_glpk_prepare(lp, "ilp", e)) < 0) goto done;
    if (place_clock(mr->cpu) - mr->t0 >
        0.5 * mr->tl) { /* building alone took half the time: no point in solving */
        snprintf(r->note, sizeof r->note,
                 "model of %d rows x %d columns too large for the time limit: the start",
                 glp_get_num_rows(lp), glp_get_num_cols(lp));
        r->objective_s = mr->ub;
        goto done;
    }
    int ncols = glp_get_num_cols(lp);
    s->x = hsdag_malloc((size_t)(ncols + 1) * sizeof *s->x);
    s->sol = hsdag_malloc((size_t)(ncols + 1) * sizeof *s->sol);
    if (!s->x || !s->sol) {
        rc = hsdag_err_set(e, HSDAG_ENOMEM, "ilp: out of memory");
        goto done;
    }
    place_ilp_cb cb = {.bound = -INFINITY, .heur = mr->fill(mr->ctx, s->x) == 0 ? s->x : NULL};
    place_ilp_run run;
    place_ilp_solve(lp, mr->t0 + mr->tl, mr->cpu, mr->cuts, &cb, &run);
    if (isfinite(run.obj))
        for (int j = 1; j <= ncols; j++) s->sol[j] = glp_mip_col_val(lp, j);
    double obj = mr->ub;      /* seconds */
    if (run.obj < 1 - 1e-9) { /* the solver found a better solution than the start */
        mr->decode(mr->ctx, s->sol);
        obj = run.obj * mr->ub;
    }
    /* the bound holds below the start's value (M), for every solution better than the start */
    place_ilp_report(r, &run, mr->ub, obj);
    size_t len = strlen(r->note);
    snprintf(r->note + len, sizeof r->note - len, "; %d x %d model", glp_get_num_rows(lp), ncols);
done:
    glp_delete_prob(lp);
    return rc;
}

int place_milp_run(const place_milp *mr, hsdag_err *e)
{
    milp_state s = {.mr = mr};
    int rc = place_glpk_call(milp_body, &s, "ilp", e);
    if (rc == HSDAG_ESOLVER) { /* GLPK gave up on the model: the start stands, without a bound */
        hsdag_place_report *r = mr->r;
        r->objective_s = mr->ub;
        r->bound_s = NAN;
        r->optimal = 0;
        snprintf(r->note, sizeof r->note, "%.200s: returned the start, %.6g ms", e ? e->msg : "GLPK failed",
                 mr->ub * 1e3);
        rc = 0;
    }
    hsdag_free(s.x);
    hsdag_free(s.sol);
    return rc;
}

typedef struct ilp_model {
    glp_prob *lp;
    int32_t *xcol; /* [n_groups * k] column of X[c,d] */
    int32_t zbase; /* first Z column; Z columns are laid out per (u, a, b) in zlist order */
    int32_t nz_cols;
    int32_t *zu; /* [nz_cols / (k*(k-1)) entries] nodes u that have a Z block */
    int32_t nzu;
    int32_t ucol;                    /* first U column or 0 */
    int live;                        /* memory by ilp_live_rows (else the conservative rows) */
    int32_t scol[HSDAG_MAX_DEVICES]; /* live: S[d]'s column (static bytes on d / capacity), 0 if uncapped */
    int32_t *ycol;                   /* live: [n * k] the first Y[u,d,.] column, 0 if none */
    int32_t *wcol;                   /* live: [n * k] the first W (or V) [u,d,.] column, 0 if none */
} ilp_model;

/* Writes the column values of placement dev into x[1..ncols] (Z from the placement, U = used). */
static void ilp_fill(const hsdag_place_problem *p, const ilp_model *m, const int32_t *dev, double *x)
{
    const hsdag_graph *g = p->g;
    int32_t k = p->k, ncols = glp_get_num_cols(m->lp);
    for (int32_t j = 1; j <= ncols; j++) x[j] = 0;
    for (int32_t gi = 0; gi < p->n_groups; gi++)
        x[m->xcol[(size_t)gi * k + dev[p->grp_node[p->grp_off[gi]]]]] = 1;
    for (int32_t i = 0; i < m->nzu; i++) {
        int32_t u = m->zu[i], a = dev[u];
        for (int32_t j = g->out_off[u]; j < g->out_off[u + 1]; j++) {
            int32_t b = dev[g->out_dst[j]];
            if (b == a) continue;
            int32_t slot = a * (k - 1) + (b < a ? b : b - 1);
            x[m->zbase + i * k * (k - 1) + slot] = 1;
        }
    }
    if (m->ucol)
        for (int32_t v = 0; v < p->n; v++)
            if (p->devs->dev[dev[v]].kind != HSDAG_DEV_CPU) x[m->ucol + dev[v]] = 1;
    for (int32_t v = 0; v < p->n && m->live; v++) {
        if (m->scol[dev[v]] && p->c->static_bytes[v] > 0)
            x[m->scol[dev[v]]] += p->c->static_bytes[v] / p->cap[dev[v]];
        const int32_t *w = g->out_dst + g->out_off[v], nw = g->out_off[v + 1] - g->out_off[v];
        for (int32_t d = 0; d < k; d++) {
            int32_t base = m->ycol[(size_t)v * k + d], on = 0;
            int32_t wb = m->wcol[(size_t)v * k + d];
            int bigger_out = p->c->act_bytes[v] > p->c->xfer_bytes[v];
            for (int32_t j = nw - 1; j >= 0 && (base || wb); j--) {
                on |= dev[w[j]] == d;
                if (base && j < nw - 1) x[base + j] = on;
                if (wb) x[wb + j] = bigger_out ? on && dev[v] == d : on && dev[v] != d;
            }
        }
    }
}

/* Start placements for the solver: each device for every class that may run there (else its fallback), the
 * min cut on two devices, Tarnawski's greedy and HEFT. The best one that meets the memory rows (ilp_fits:
 * live, the simulator's verdict, which implies the relaxation's rows; else the conservative rows, and the
 * accelerator count) is handed to GLPK. */
static int ilp_fits(hsdag_place_problem *p, const int32_t *dev, int live)
{
    if (live) return place_evaluate(p, dev).feasible; /* the simulator's memory meets the relaxation's rows */
    double used[HSDAG_MAX_DEVICES];
    const hsdag_graph *g = p->g;
    place_memory_used(p, dev, used);
    for (int32_t u = 0; u < p->n; u++) {
        uint64_t seen = 0;
        for (int32_t j = g->out_off[u]; j < g->out_off[u + 1]; j++) {
            int32_t b = dev[g->out_dst[j]];
            if (b == dev[u] || ((seen >> b) & 1u)) continue;
            seen |= (uint64_t)1 << b;
            used[b] += p->c->xfer_bytes[u];
        }
    }
    for (int32_t d = 0; d < p->k; d++)
        if (used[d] > p->cap[d]) return 0;
    if (p->devs->max_accels_used >= 0) {
        int32_t na = 0;
        for (int32_t d = 0; d < p->k; d++) {
            if (p->devs->dev[d].kind == HSDAG_DEV_CPU) continue;
            int any = 0;
            for (int32_t v = 0; v < p->n && !any; v++) any = dev[v] == d;
            na += any;
        }
        if (na > p->devs->max_accels_used) return 0;
    }
    return 1;
}

/* ---- start placements: each model's candidates, one search for the best ---- */

/* A model's start candidates. make(ctx, i, dev, e) writes candidate i (0 <= i < n) into dev[n] and returns 1,
 * 0 when there is none (skipped), or < 0: an error that ends the search. judge(ctx, dev, &sc) may adjust dev,
 * scores it and returns 0 when it may not start the model. */
typedef struct ilp_starts {
    int n;
    int (*make)(void *ctx, int i, int32_t *dev, hsdag_err *e);
    int (*judge)(void *ctx, int32_t *dev, place_score *sc);
    void *ctx;
} ilp_starts;

/* The best candidate into *best ([p->n], hsdag_malloc'ed: the caller frees it, on error too): the first one
 * judged fit, then each one better (place_score_better), or any while the best has no finite latency.
 * Returns 1, 0 when none was fit, or an error (make's, or HSDAG_ENOMEM). */
static int ilp_best_start(const hsdag_place_problem *p, const ilp_starts *s, int32_t **best, hsdag_err *e)
{
    int32_t *tmp = hsdag_alloc_n((size_t)p->n, sizeof *tmp, "ilp", e);
    *best = tmp ? hsdag_alloc_n((size_t)p->n, sizeof **best, "ilp", e) : NULL;
    if (!*best) {
        hsdag_free(tmp);
        return HSDAG_ENOMEM;
    }
    place_score bs = {0, INFINITY, INFINITY}, sc;
    int have = 0, rc = 0;
    for (int i = 0; i < s->n; i++) {
        if ((rc = s->make(s->ctx, i, tmp, e)) < 0) break;
        if (rc == 0 || !s->judge(s->ctx, tmp, &sc)) continue;
        if (have && bs.latency_s < INFINITY && !place_score_better(sc, bs)) continue;
        bs = sc, have = 1;
        memcpy(*best, tmp, (size_t)p->n * sizeof *tmp);
    }
    hsdag_free(tmp);
    return rc < 0 ? rc : have;
}

/* Every group on device d where it may run, else on its fallback. */
static void ilp_single_start(const hsdag_place_problem *p, int32_t d, int32_t *dev)
{
    for (int32_t gi = 0; gi < p->n_groups; gi++)
        place_group_set(p, dev, gi, place_group_ok(p, gi, d) ? d : place_group_fallback(p, gi));
}

/* The sequential model's candidates: each device, the min cut on two devices, Tarnawski's greedy and HEFT,
 * judged by ilp_fits and the sequential cost. p: the model's problem (orig itself, or orig on coarsened
 * groups); the heuristics run on orig and their placements are moved onto p's groups (each group to its first
 * member's device). */
typedef struct seq_starts {
    hsdag_place_problem *p, *orig;
    int live; /* the model's memory rows: ilp_fits */
} seq_starts;

static int seq_make(void *ctx, int i, int32_t *tmp, hsdag_err *e)
{
    (void)e;
    seq_starts *s = ctx;
    hsdag_place_problem *p = s->p, *orig = s->orig;
    hsdag_place_opts o = hsdag_place_opts_default();
    hsdag_place_report rep = {.bound_s = NAN, .objective_s = NAN};
    if (i < p->k) {
        ilp_single_start(p, i, tmp);
        return 1;
    }
    if (i == p->k) {
        if (p->k != 2 || hsdag_place_mincut_solve(p->c, tmp, NULL, NULL) < 0) return 0;
    } else if ((i == p->k + 1 ? place_greedy_tarnawski(orig, &o, tmp, &rep, NULL)
                              : place_heft(orig, &o, tmp, &rep, NULL)) < 0) {
        return 0;
    }
    for (int32_t gi = 0; gi < p->n_groups && p != orig; gi++) {
        int32_t dd = tmp[p->grp_node[p->grp_off[gi]]];
        place_group_set(p, tmp, gi, place_group_ok(p, gi, dd) ? dd : place_group_fallback(p, gi));
    }
    return 1;
}

static int seq_judge(void *ctx, int32_t *dev, place_score *sc)
{
    seq_starts *s = ctx;
    if (!ilp_fits(s->p, dev, s->live)) return 0;
    *sc = (place_score){1, 0, hsdag_place_sequential_cost(s->p->c, dev)};
    return sc->latency_s < INFINITY;
}

/* The sequential model's column count on p's groups: X per group and device, Z per tensor with a consumer
 * in another group and ordered device pair, U per device. */
static double ilp_cols(const hsdag_place_problem *p)
{
    const hsdag_graph *g = p->g;
    int32_t k = p->k, nzu = 0;
    for (int32_t u = 0; u < p->n && k > 1; u++) {
        int cross = 0;
        for (int32_t j = g->out_off[u]; j < g->out_off[u + 1] && !cross; j++)
            cross = p->group[g->out_dst[j]] != p->group[u];
        nzu += cross;
    }
    return (double)p->n_groups * k + (double)nzu * k * (k - 1) + k;
}

/* The sequential semantics' memory as rows that every placement's simulation meets (a relaxation: a solution
 * may still overflow, ilp_sequential checks it). The simulator (sim_sequential.c) runs the ops in index order;
 * device d's peak is its static bytes plus the largest live activation total it reaches, and at step t the
 * live bytes on d include every tensor u < t with a consumer w >= t on d (on d when u is: its output, until its
 * last reader there; else the copy d received, until its last consumer there), every output without
 * consumers whose producer u < t is on d, and t's own output when t is on d. "A consumer from the j-th on is
 * on d" is Y[u,d,j] >= X[w_j,d], Y[u,d,j+1] (a column per tensor with several consumers, but for the last
 * one, which is X itself); a tensor counts at the smaller of its output and copy bytes. The static bytes go
 * through one column S[d] per capped device. Rows are in units of the capacity. */
static int ilp_live_rows(const hsdag_place_problem *p, ilp_model *m, hsdag_err *e)
{
    const hsdag_graph *g = p->g;
    const hsdag_costs *c = p->c;
    glp_prob *lp = m->lp;
    int32_t n = p->n, k = p->k, ng = p->n_groups, *act = NULL, *seen = NULL, na = 0;
    double *acc = NULL;
    act = hsdag_malloc(((size_t)n + 1) * sizeof *act);    /* the tensors live at the current step */
    seen = hsdag_malloc(((size_t)ng + 1) * sizeof *seen); /* groups with a coefficient in the current row */
    acc = hsdag_calloc((size_t)ng + 1, sizeof *acc);
    m->ycol = hsdag_calloc((size_t)n * (size_t)k + 1, sizeof *m->ycol);
    m->wcol = hsdag_calloc((size_t)n * (size_t)k + 1, sizeof *m->wcol);
    /* from GLPK's allocator, as ilp_build's buffers: freed with the problem if GLPK fails */
    int *ind = glp_alloc(ng + n + 3, sizeof *ind); /* a row: S[d], the groups, the Y columns, t's own */
    double *val = glp_alloc(ng + n + 3, sizeof *val);
    if (!act || !seen || !acc || !m->ycol || !m->wcol) {
        hsdag_free(act), hsdag_free(seen), hsdag_free(acc);
        glp_free(ind), glp_free(val);
        return hsdag_err_set(e, HSDAG_ENOMEM, "ilp: out of memory");
    }
    for (int32_t d = 0; d < k; d++) {
        m->scol[d] = 0;
        if (!(p->cap[d] < INFINITY)) continue;
        double cap = p->cap[d];
        int scol = m->scol[d] = glp_add_cols(m->lp, 1), cnt = 0, row;
        glp_set_col_bnds(lp, scol, GLP_LO, 0, 0);
        for (int32_t v = 0; v < n; v++)
            if (c->static_bytes[v] > 0) acc[p->group[v]] += c->static_bytes[v] / cap;
        for (int32_t gi = 0; gi < ng; gi++)
            if (acc[gi] > 0) ++cnt, ind[cnt] = m->xcol[(size_t)gi * k + d], val[cnt] = acc[gi], acc[gi] = 0;
        ++cnt, ind[cnt] = scol, val[cnt] = -1;
        row = glp_add_rows(lp, 1);
        glp_set_row_bnds(lp, row, GLP_FX, 0, 0);
        glp_set_mat_row(lp, row, cnt, ind, val);
        /* Y[u,d,j] for j below the last consumer: Y[j] - X[w_j] >= 0, Y[j] - Y[j+1] >= 0 */
        for (int32_t u = 0; u < n; u++) {
            int32_t nw = g->out_off[u + 1] - g->out_off[u];
            const int32_t *w = g->out_dst + g->out_off[u];
            if (nw < 2) continue;
            int base = m->ycol[(size_t)u * k + d] = glp_add_cols(lp, nw - 1);
            for (int32_t j = 0; j < nw - 1; j++) {
                int next = j + 1 < nw - 1 ? base + j + 1 : m->xcol[(size_t)p->group[w[nw - 1]] * k + d];
                int xj = m->xcol[(size_t)p->group[w[j]] * k + d];
                glp_set_col_bnds(lp, base + j, GLP_DB, 0, 1);
                row = glp_add_rows(lp, 2);
                ind[1] = base + j, val[1] = 1, ind[2] = xj, val[2] = -1;
                glp_set_row_bnds(lp, row, GLP_LO, 0, 0);
                glp_set_mat_row(lp, row, 2, ind, val);
                ind[2] = next;
                glp_set_row_bnds(lp, row + 1, GLP_LO, 0, 0);
                glp_set_mat_row(lp, row + 1, 2, ind, val);
            }
        }
        /* the bytes beyond the smaller of the two: W[u,d,j] >= X[u,d] + I[j] - 1 when the output is the larger
         * (u on d), V[u,d,j] >= I[j] - X[u,d] when the copy is (u elsewhere), I[j] the suffix's indicator */
        for (int32_t u = 0; u < n; u++) {
            int32_t nw = g->out_off[u + 1] - g->out_off[u];
            const int32_t *w = g->out_dst + g->out_off[u];
            double a = c->act_bytes[u] > 0 ? c->act_bytes[u] : 0,
                   x = c->xfer_bytes[u] > 0 ? c->xfer_bytes[u] : 0;
            if (nw == 0 || a == x) continue;
            int base = m->wcol[(size_t)u * k + d] = glp_add_cols(lp, nw),
                xu = m->xcol[(size_t)p->group[u] * k + d];
            for (int32_t j = 0; j < nw; j++) {
                int ij = j < nw - 1 ? m->ycol[(size_t)u * k + d] + j
                                    : m->xcol[(size_t)p->group[w[nw - 1]] * k + d];
                glp_set_col_bnds(lp, base + j, GLP_DB, 0, 1);
                row = glp_add_rows(lp, 1);
                ind[1] = base + j, val[1] = 1, ind[2] = ij, val[2] = -1, ind[3] = xu, val[3] = a > x ? -1 : 1;
                cnt = 3;
                if (ij == xu)
                    cnt = a > x ? 2 : 1, val[2] = -2; /* u and the suffix together: W >= X, V >= 0 */
                glp_set_row_bnds(lp, row, GLP_LO, a > x ? -1 : 0, 0);
                glp_set_mat_row(lp, row, cnt, ind, val);
            }
        }
        na = 0;
        for (int32_t t = 0; t < n; t++) {
            int32_t ns = 0, keep = 0, gt = p->group[t];
            double own = c->act_bytes[t] > 0 ? c->act_bytes[t] : 0;
            cnt = 1;
            ind[1] = scol, val[1] = 1;
            for (int32_t i = 0; i < na; i++) { /* the tensors of earlier steps still live at t */
                int32_t u = act[i], nw = g->out_off[u + 1] - g->out_off[u], j = 0;
                const int32_t *w = g->out_dst + g->out_off[u]; /* u's consumers: distinct, ascending */
                if (nw > 0 && w[nw - 1] < t) continue;
                act[keep++] = u;
                double b = nw == 0 ? c->act_bytes[u] : fmin(c->act_bytes[u], c->xfer_bytes[u]);
                if (!(b > 0) && !m->wcol[(size_t)u * k + d]) continue;
                while (j < nw && w[j] < t) j++;
                if (m->wcol[(size_t)u * k + d]) {
                    double extra = fabs((c->act_bytes[u] > 0 ? c->act_bytes[u] : 0) -
                                        (c->xfer_bytes[u] > 0 ? c->xfer_bytes[u] : 0));
                    ++cnt, ind[cnt] = m->wcol[(size_t)u * k + d] + j, val[cnt] = extra / cap;
                }
                if (!(b > 0)) continue;
                if (j < nw - 1) { /* several consumers left: the suffix's Y */
                    ++cnt, ind[cnt] = m->ycol[(size_t)u * k + d] + j, val[cnt] = b / cap;
                    continue;
                }
                int32_t gw = p->group[nw == 0 ? u : w[nw - 1]];
                if (gw == gt) {
                    own += b;
                    continue;
                }
                if (acc[gw] == 0) seen[ns++] = gw;
                acc[gw] += b / cap;
            }
            na = keep;
            act[na++] = t;
            for (int32_t i = 0; i < ns; i++)
                ++cnt, ind[cnt] = m->xcol[(size_t)seen[i] * k + d], val[cnt] = acc[seen[i]], acc[seen[i]] = 0;
            if (own > 0) ++cnt, ind[cnt] = m->xcol[(size_t)gt * k + d], val[cnt] = own / cap;
            if (cnt == 1) continue;
            row = glp_add_rows(lp, 1);
            glp_set_row_bnds(lp, row, GLP_UP, 0, 1.0);
            glp_set_mat_row(lp, row, cnt, ind, val);
        }
    }
    hsdag_free(act), hsdag_free(seen), hsdag_free(acc);
    glp_free(ind), glp_free(val);
    return 0;
}

static int ilp_build(const hsdag_place_problem *p, ilp_model *m, hsdag_err *e)
{
    const hsdag_graph *g = p->g;
    int32_t k = p->k, ng = p->n_groups, pairs = k * (k - 1);
    glp_prob *lp = m->lp;
    m->xcol = hsdag_malloc((size_t)ng * (size_t)k * sizeof *m->xcol);
    m->zu = hsdag_malloc((size_t)(p->n ? p->n : 1) * sizeof *m->zu);
    if (!m->xcol || !m->zu) return hsdag_err_set(e, HSDAG_ENOMEM, "ilp: out of memory");
    for (int32_t u = 0; u < p->n && pairs; u++) {
        int cross = 0;
        for (int32_t j = g->out_off[u]; j < g->out_off[u + 1] && !cross; j++)
            cross = p->group[g->out_dst[j]] != p->group[u];
        if (cross) m->zu[m->nzu++] = u;
    }
    double ncols = (double)ng * k + (double)m->nzu * pairs + k;
    if (ncols > ILP_MAX_COLS)
        return hsdag_err_set(e, HSDAG_EUNSUPPORTED,
                             "ilp: %.0f variables is beyond this solver (limit %d); use "
                             "mincut or local-search",
                             ncols, ILP_MAX_COLS);
    const double ms = 1e3;
    glp_set_obj_dir(lp, GLP_MIN);
    int32_t col = glp_add_cols(lp, ng * k);
    for (int32_t gi = 0; gi < ng; gi++)
        for (int32_t d = 0; d < k; d++, col++) {
            m->xcol[(size_t)gi * k + d] = col;
            glp_set_col_kind(lp, col, GLP_BV);
            if (!place_group_ok(p, gi, d)) glp_set_col_bnds(lp, col, GLP_FX, 0, 0);
            glp_set_obj_coef(lp, col, place_group_cost(p, gi, d) * ms);
        }
    m->zbase = m->nzu ? glp_add_cols(lp, m->nzu * pairs) : 0;
    for (int32_t i = 0; i < m->nzu; i++)
        for (int32_t a = 0, s = 0; a < k; a++)
            for (int32_t b = 0; b < k; b++) {
                if (a == b) continue;
                int32_t zc = m->zbase + i * pairs + s++;
                glp_set_col_bnds(lp, zc, GLP_DB, 0, 1);
                glp_set_obj_coef(lp, zc, hsdag_costs_xfer_s(p->c, m->zu[i], a, b) * ms);
            }
    int32_t accels = 0;
    for (int32_t d = 0; d < k; d++) accels += p->devs->dev[d].kind != HSDAG_DEV_CPU;
    int limit = p->devs->max_accels_used >= 0 && p->devs->max_accels_used < accels;
    if (limit) {
        m->ucol = glp_add_cols(lp, k);
        for (int32_t d = 0; d < k; d++) glp_set_col_kind(lp, m->ucol + d, GLP_BV);
    }
    /* rows: one at a time (GLPK copies them), through small index buffers */
    /* the longest row is a memory row: every class plus (k - 1) copies per tensor */
    /* from GLPK's allocator, so that a GLPK failure while building frees them too (place_glpk_call) */
    int cap = ng + m->nzu * (k - 1) + 2 * k + 16;
    int *ind = glp_alloc(cap + 1, sizeof *ind);
    double *val = glp_alloc(cap + 1, sizeof *val);
    for (int32_t gi = 0; gi < ng; gi++) {
        int row = glp_add_rows(lp, 1);
        for (int32_t d = 0; d < k; d++) ind[d + 1] = m->xcol[(size_t)gi * k + d], val[d + 1] = 1;
        glp_set_row_bnds(lp, row, GLP_FX, 1, 1);
        glp_set_mat_row(lp, row, k, ind, val);
    }
    for (int32_t i = 0; i < m->nzu; i++) {
        int32_t u = m->zu[i], cu = p->group[u];
        for (int32_t j = g->out_off[u]; j < g->out_off[u + 1]; j++) {
            int32_t cw = p->group[g->out_dst[j]];
            if (cw == cu) continue;
            int dup = 0; /* one row set per distinct consumer class */
            for (int32_t j2 = g->out_off[u]; j2 < j && !dup; j2++) dup = p->group[g->out_dst[j2]] == cw;
            if (dup) continue;
            for (int32_t a = 0, s = 0; a < k; a++)
                for (int32_t b = 0; b < k; b++) {
                    if (a == b) continue;
                    int32_t zc = m->zbase + i * pairs + s++;
                    int row = glp_add_rows(lp, 1);
                    ind[1] = zc, val[1] = 1;
                    ind[2] = m->xcol[(size_t)cu * k + a], val[2] = -1;
                    ind[3] = m->xcol[(size_t)cw * k + b], val[3] = -1;
                    glp_set_row_bnds(lp, row, GLP_LO, -1, 0);
                    glp_set_mat_row(lp, row, 3, ind, val);
                }
        }
    }
    for (int32_t d = 0; d < k && !m->live; d++) {
        if (!(p->cap[d] < INFINITY)) continue;
        int cnt = 0, row = glp_add_rows(lp, 1);
        for (int32_t gi = 0; gi < ng; gi++)
            if (p->grp_mem[gi] > 0)
                ++cnt, ind[cnt] = m->xcol[(size_t)gi * k + d], val[cnt] = p->grp_mem[gi] / p->cap[d];
        for (int32_t i = 0; i < m->nzu; i++)
            for (int32_t a = 0, s = 0; a < k; a++)
                for (int32_t b = 0; b < k; b++) {
                    if (a == b) continue;
                    if (b == d && p->c->xfer_bytes[m->zu[i]] > 0)
                        ++cnt, ind[cnt] = m->zbase + i * pairs + s,
                               val[cnt] = p->c->xfer_bytes[m->zu[i]] / p->cap[d];
                    s++;
                }
        HSDAG_ASSERT(cnt <= cap);
        glp_set_row_bnds(lp, row, GLP_UP, 0, 1.0); /* in units of the capacity, for the simplex's sake */
        glp_set_mat_row(lp, row, cnt, ind, val);
    }
    if (limit) {
        for (int32_t d = 0; d < k; d++) {
            if (p->devs->dev[d].kind == HSDAG_DEV_CPU) continue;
            int row = glp_add_rows(lp, 1), cnt = 0;
            for (int32_t gi = 0; gi < ng; gi++) ++cnt, ind[cnt] = m->xcol[(size_t)gi * k + d], val[cnt] = 1;
            ++cnt, ind[cnt] = m->ucol + d, val[cnt] = -(double)ng;
            glp_set_row_bnds(lp, row, GLP_UP, 0, 0);
            glp_set_mat_row(lp, row, cnt, ind, val);
        }
        int row = glp_add_rows(lp, 1), cnt = 0;
        for (int32_t d = 0; d < k; d++)
            if (p->devs->dev[d].kind != HSDAG_DEV_CPU) ++cnt, ind[cnt] = m->ucol + d, val[cnt] = 1;
        glp_set_row_bnds(lp, row, GLP_UP, 0, p->devs->max_accels_used);
        glp_set_mat_row(lp, row, cnt, ind, val);
    }
    glp_free(ind);
    glp_free(val);
    return m->live ? ilp_live_rows(p, m, e) : 0;
}

/* Concurrent semantics on a small graph: the disjunctive model of ilp_conc.c, started from the best (by
 * simulation) of each single device, HEFT, m-ETF and the greedy. */
static int conc_make(void *ctx, int i, int32_t *tmp, hsdag_err *e)
{
    hsdag_place_problem *p = ctx;
    hsdag_place_opts so = hsdag_place_opts_default();
    hsdag_place_report rep = {.bound_s = NAN, .objective_s = NAN};
    if (i < p->k) {
        ilp_single_start(p, i, tmp);
        return 1;
    }
    int rc = i == p->k       ? place_heft(p, &so, tmp, &rep, e)
             : i == p->k + 1 ? place_metf(p, &so, tmp, &rep, e)
                             : place_greedy_tarnawski(p, &so, tmp, &rep, e);
    return rc < 0 ? rc : 1;
}

static int conc_judge(void *ctx, int32_t *dev, place_score *sc)
{
    *sc = place_evaluate(ctx, dev);
    return 1;
}

static int ilp_concurrent(hsdag_place_problem *p, const hsdag_place_opts *o, int32_t *device,
                          hsdag_place_report *r, hsdag_err *e)
{
    ilp_starts st = {.n = p->k + 3, .make = conc_make, .judge = conc_judge, .ctx = p};
    int32_t *best = NULL;
    int rc = ilp_best_start(p, &st, &best, e);
    if (rc > 0) rc = place_ilp_concurrent(p, o, best, device, r, e);
    hsdag_free(best);
    return rc;
}

/* Tarnawski latency: their IP (ilp_tw.c), started from the best contiguous split among --init, the greedy,
 * the PipeDream-style chain DP, CPU-only and local search (given a fifth of the time; its result is often
 * contiguous, and used only then). A candidate that fails is skipped. */
typedef struct tw_starts {
    hsdag_place_problem *p;
    const hsdag_place_opts *o;
} tw_starts;

static int tw_make(void *ctx, int i, int32_t *tmp, hsdag_err *e)
{
    (void)e;
    tw_starts *s = ctx;
    hsdag_place_problem *p = s->p;
    const hsdag_place_opts *o = s->o;
    hsdag_place_opts so = hsdag_place_opts_default();
    so.time_limit_s = o->time_limit_s > 0 ? 0.1 * o->time_limit_s : 1.0;
    so.time_limit_cpu = o->time_limit_cpu;
    hsdag_place_report rep = {.bound_s = NAN, .objective_s = NAN};
    if (i == 0) {
        if (!o->init) return 0;
        memcpy(tmp, o->init, (size_t)p->n * sizeof *tmp);
        return 1;
    }
    if (i == 3) {
        if (p->cpu < 0) return 0;
        for (int32_t v = 0; v < p->n; v++) tmp[v] = p->cpu;
        return 1;
    }
    if (i == 4) {
        hsdag_place_opts lo = hsdag_place_opts_default();
        lo.seed = o->seed;
        lo.time_limit_cpu = o->time_limit_cpu;
        lo.time_limit_s = o->time_limit_s > 0 ? 0.2 * o->time_limit_s : 2.0;
        return place_local_search(p, &lo, tmp, &rep, NULL) < 0 ? 0 : 1;
    }
    int rc =
        i == 1 ? place_greedy_tarnawski(p, &so, tmp, &rep, NULL) : place_pipedream(p, &so, tmp, &rep, NULL);
    return rc < 0 ? 0 : 1;
}

/* Every CPU node on p->cpu (the model has one CPU), then: feasible and a contiguous split? */
static int tw_judge(void *ctx, int32_t *tmp, place_score *sc)
{
    hsdag_place_problem *p = ((tw_starts *)ctx)->p;
    if (p->cpu >= 0)
        for (int32_t v = 0; v < p->n; v++)
            if (p->devs->dev[tmp[v]].kind == HSDAG_DEV_CPU) tmp[v] = p->cpu;
    *sc = place_evaluate(p, tmp);
    return sc->feasible && place_tw_in_class(p, tmp);
}

static int ilp_tarnawski(hsdag_place_problem *p, const hsdag_place_opts *o, int32_t *device,
                         hsdag_place_report *r, hsdag_err *e)
{
    double t_start = place_clock(o->time_limit_cpu);
    tw_starts ts = {.p = p, .o = o};
    ilp_starts st = {.n = 5, .make = tw_make, .judge = tw_judge, .ctx = &ts};
    int32_t *best = NULL;
    int rc = ilp_best_start(p, &st, &best, e);
    if (rc == 0) rc = hsdag_err_set(e, HSDAG_EINFEASIBLE, "ilp: no feasible contiguous split to start from");
    if (rc > 0) {
        /* the MILP gets what the starts left of the time limit (a tenth at least) */
        hsdag_place_opts left = *o;
        double tl = o->time_limit_s > 0 ? o->time_limit_s : 10.0;
        left.time_limit_s = fmax(0.1 * tl, tl - (place_clock(o->time_limit_cpu) - t_start));
        rc = place_ilp_tarnawski(p, &left, best, device, r, e);
    }
    hsdag_free(best);
    return rc;
}

/* The sequential MILP's state; everything but GLPK's own objects is freed by place_ilp, so a GLPK failure
 * inside ilp_solve (run through place_glpk_call) leaks nothing. */
typedef struct ilp_run {
    hsdag_place_problem *p, *orig; /* the model's problem (orig, or orig on coarsened groups), the caller's */
    const hsdag_place_opts *o;
    int32_t *device;
    hsdag_place_report *r;
    ilp_model m;
    int32_t *start; /* the best start (ilp_best_start) */
    double *x;
    int live;        /* memory rows: the relaxation (ilp_live_rows), else the conservative ones */
    int64_t it_left; /* o->ilp_iterations > 0: the simplex iterations left (ilp_solve spends them) */
} ilp_run;

/* The LP relaxation within it_lim simplex iterations and no clock (o->ilp_iterations). */
static int ilp_simplex_iterations(glp_prob *lp, int64_t it_lim)
{
    glp_smcp sp;
    glp_init_smcp(&sp);
    sp.msg_lev = GLP_MSG_OFF;
    sp.it_lim = (int)(it_lim < INT_MAX ? (it_lim > 1 ? it_lim : 1) : INT_MAX);
    return glp_simplex(lp, &sp);
}

static int ilp_solve(void *ctx, hsdag_err *e)
{
    ilp_run *c = ctx;
    hsdag_place_problem *p = c->p;
    const hsdag_place_opts *o = c->o;
    int32_t *device = c->device;
    hsdag_place_report *r = c->r;
    ilp_model *m = &c->m;
    place_ilp_cb cb = {.bound = -INFINITY};
    int cpu = o->time_limit_cpu, work = o->ilp_iterations > 0;
    double tl = o->time_limit_s > 0 ? o->time_limit_s : 10.0, t0 = place_clock(cpu);
    int rc = 0, have_start = 0;
    m->lp = glp_create_prob();
    m->live = c->live;
    if ((rc = ilp_build(p, m, e)) < 0) goto done;
    if ((rc = place_glpk_prepare(m->lp, "ilp", e)) < 0) goto done;
    int ncols = glp_get_num_cols(m->lp);
    if (!(c->x = hsdag_malloc((size_t)(ncols + 1) * sizeof *c->x))) {
        rc = hsdag_err_set(e, HSDAG_ENOMEM, "ilp: out of memory");
        goto done;
    }
    seq_starts ss = {.p = p, .orig = c->orig, .live = c->live};
    ilp_starts starts = {.n = p->k + 3, .make = seq_make, .judge = seq_judge, .ctx = &ss};
    if ((have_start = ilp_best_start(p, &starts, &c->start, e)) < 0) {
        rc = have_start;
        goto done;
    }
    if (have_start) {
        ilp_fill(p, m, c->start, c->x);
        cb.heur = c->x;
    }
    /* GLPK checks its clock coarsely: give each stage a margin so the whole call stays within the limit */
    double now = place_clock(cpu), lp_end = now + 0.8 * (tl - (now - t0)), c0 = hsdag_cpu_now();
    glp_scale_prob(m->lp, GLP_SF_AUTO);
    /* on the iteration budget the same split: the LP at most 80% of it, branch-and-cut the rest */
    int sr = work ? ilp_simplex_iterations(m->lp, c->it_left * 4 / 5) : place_ilp_simplex(m->lp, lp_end, cpu);
    r->lp_cpu_s = hsdag_cpu_now() - c0;
    int lp_ok = sr == 0 && glp_get_status(m->lp) == GLP_OPT;
    if (sr == 0 && glp_get_status(m->lp) == GLP_NOFEAS) {
        rc = hsdag_err_set(e, HSDAG_EINFEASIBLE,
                           "ilp: no placement meets the memory capacities and colour classes");
        goto done;
    }
    if (lp_ok) cb.bound = glp_get_obj_val(m->lp);
    int ir = -1, st = GLP_UNDEF;
    double left = work ? (double)(c->it_left - glp_get_it_cnt(m->lp)) : tl - (place_clock(cpu) - t0);
    if (lp_ok && left > 0) {
        double c1 = hsdag_cpu_now();
        if (work) cb.it_end = (int)fmin(c->it_left, INT_MAX);
        ir = place_ilp_intopt(m->lp, 0.9 * left, cpu, PLACE_ILP_MIR, &cb);
        r->branch_and_cut_cpu_s = hsdag_cpu_now() - c1;
        st = glp_mip_status(m->lp);
    }
    char lim[48]; /* the limit, for the notes */
    if (work)
        snprintf(lim, sizeof lim, "%lld simplex iterations", (long long)o->ilp_iterations);
    else
        snprintf(lim, sizeof lim, "%.3g s", tl);
    if (st == GLP_OPT || st == GLP_FEAS) {
        /* the largest X of each class, not X > 0.5: on a badly scaled model GLPK's integer tolerance can
         * leave a class with no X above one half */
        for (int32_t gi = 0; gi < p->n_groups; gi++) {
            int32_t bd = place_group_fallback(p, gi);
            double bx = -INFINITY;
            for (int32_t d = 0; d < p->k; d++) {
                double xv = glp_mip_col_val(m->lp, m->xcol[(size_t)gi * p->k + d]);
                if (place_group_ok(p, gi, d) && xv > bx) bx = xv, bd = d;
            }
            place_group_set(p, device, gi, bd);
        }
        double obj = glp_mip_obj_val(m->lp) / 1e3;
        double bound = st == GLP_OPT && ir == 0 ? obj : fmin(obj, cb.bound / 1e3);
        r->objective_s = hsdag_place_sequential_cost(p->c, device);
        r->bound_s = bound;
        r->optimal = st == GLP_OPT && ir == 0;
        if (r->optimal && p->sem == HSDAG_SEM_SEQUENTIAL)
            snprintf(r->note, sizeof r->note, "proven optimal (sequential)");
        else
            snprintf(
                r->note, sizeof r->note, "%s: objective %.6g ms, best bound %.6g ms, proven gap %.3g%%%s%s",
                r->optimal ? "optimal"
                : work     ? "iteration limit"
                           : "time limit",
                obj * 1e3, bound * 1e3, obj > 0 ? 100 * (obj - bound) / obj : 0.0,
                p->sem == HSDAG_SEM_SEQUENTIAL ? "" : "; objective is ",
                p->sem == HSDAG_SEM_SEQUENTIAL ? "" : "sequential latency (heuristic under this semantics)");
    } else if (have_start) {
        memcpy(device, c->start, (size_t)p->n * sizeof *device);
        r->objective_s = hsdag_place_sequential_cost(p->c, device);
        r->bound_s = lp_ok ? cb.bound / 1e3 : NAN;
        snprintf(r->note, sizeof r->note,
                 "no integer solution within %s (%s; glpk %d/%d): returned the best start placement", lim,
                 lp_ok ? "branch and bound" : "LP relaxation", lp_ok ? ir : sr,
                 lp_ok ? st : glp_get_status(m->lp));
    } else {
        rc = hsdag_err_set(e, HSDAG_ESOLVER, "ilp: no solution within %s (glpk %d/%d)", lim, ir, st);
    }
done:
    if (work) c->it_left = c->it_left > glp_get_it_cnt(m->lp) ? c->it_left - glp_get_it_cnt(m->lp) : 0;
    glp_delete_prob(m->lp);
    return rc;
}

/* p's groups merged into runs of consecutive groups (group ids follow the topological order), at most per
 * groups each, a run also closing where no device could host all of its groups: the problem on those groups
 * in pc (a copy of p whose group tables are hsdag_malloc'ed: ilp_coarse_free). */
static int ilp_coarsen(const hsdag_place_problem *p, int32_t per, hsdag_place_problem *pc)
{
    *pc = *p;
    int32_t ng = p->n_groups, n = p->n, *chunk = hsdag_malloc((size_t)(ng ? ng : 1) * sizeof *chunk);
    pc->group = hsdag_malloc((size_t)(n ? n : 1) * sizeof *pc->group);
    pc->grp_off = hsdag_calloc((size_t)ng + 2, sizeof *pc->grp_off);
    pc->grp_node = hsdag_malloc((size_t)(n ? n : 1) * sizeof *pc->grp_node);
    pc->grp_mem = hsdag_calloc((size_t)ng + 1, sizeof *pc->grp_mem);
    pc->group_allowed = hsdag_calloc((size_t)ng + 1, sizeof *pc->group_allowed);
    if (!chunk || !pc->group || !pc->grp_off || !pc->grp_node || !pc->grp_mem || !pc->group_allowed) {
        hsdag_free(chunk);
        return HSDAG_ENOMEM;
    }
    int32_t nc = 0, in = 0;
    for (int32_t gi = 0; gi < ng; gi++) {
        if (nc == 0 || in >= per || !(pc->group_allowed[nc - 1] & p->group_allowed[gi])) {
            pc->group_allowed[nc++] = p->group_allowed[gi];
            in = 0;
        }
        chunk[gi] = nc - 1, in++;
        pc->group_allowed[nc - 1] &= p->group_allowed[gi];
        pc->grp_mem[nc - 1] += p->grp_mem[gi];
    }
    pc->n_groups = nc;
    for (int32_t v = 0; v < n; v++) pc->group[v] = chunk[p->group[v]], pc->grp_off[pc->group[v] + 1]++;
    for (int32_t c = 0; c < nc; c++) pc->grp_off[c + 1] += pc->grp_off[c];
    for (int32_t c = 0; c < nc; c++) chunk[c] = pc->grp_off[c]; /* fill cursors (nc <= ng) */
    for (int32_t v = 0; v < n; v++) pc->grp_node[chunk[pc->group[v]]++] = v;
    hsdag_free(chunk);
    return 0;
}

static void ilp_coarse_free(hsdag_place_problem *pc)
{
    hsdag_free(pc->group);
    hsdag_free(pc->grp_off);
    hsdag_free(pc->grp_node);
    hsdag_free(pc->grp_mem);
    hsdag_free(pc->group_allowed);
}

static int ilp_sequential_once(ilp_run *c, hsdag_err *e)
{
    memset(&c->m, 0, sizeof c->m);
    c->x = NULL, c->start = NULL;
    int rc = place_glpk_call(ilp_solve, c, "ilp", e);
    hsdag_free(c->m.xcol);
    hsdag_free(c->m.zu);
    hsdag_free(c->m.ycol);
    hsdag_free(c->m.wcol);
    hsdag_free(c->x);
    hsdag_free(c->start);
    return rc;
}

/* Sequential semantics with a memory cap: the relaxation first (its bound holds for every placement the
 * simulator accepts, so a solution the simulator accepts is the optimum); when its solution overflows, the
 * conservative rows in the time left, reported against the relaxation's bound. */
static int ilp_sequential(ilp_run *c, hsdag_err *e)
{
    hsdag_place_problem *p = c->p;
    const hsdag_place_opts *o = c->o;
    hsdag_place_report *r = c->r;
    int capped = 0;
    for (int32_t d = 0; d < p->k; d++) capped |= p->cap[d] < INFINITY;
    c->live = capped && p->sem == HSDAG_SEM_SEQUENTIAL;
    double tl = o->time_limit_s > 0 ? o->time_limit_s : 10.0, t0 = place_clock(o->time_limit_cpu);
    c->it_left = o->ilp_iterations;
    int rc = ilp_sequential_once(c, e);
    if (rc < 0 || !c->live || place_evaluate(p, c->device).feasible) return rc;
    double bound = r->bound_s, relax = r->objective_s;
    hsdag_place_opts left = *o;
    left.time_limit_s = fmax(0.1 * tl, tl - (place_clock(o->time_limit_cpu) - t0));
    c->o = &left;
    c->live = 0;
    rc = ilp_sequential_once(c, e);
    c->o = o;
    if (rc < 0) return rc;
    char keep[sizeof r->note];
    snprintf(keep, sizeof keep, "%s", r->note);
    r->bound_s = isnan(bound) ? NAN : fmin(bound, r->objective_s);
    r->optimal = !isnan(bound) && r->objective_s <= bound * (1 + 1e-9);
    snprintf(
        r->note, sizeof r->note,
        "the memory relaxation's solution (%.6g ms) overflows: every activation counted resident, %.120s; "
        "bound %.6g ms",
        relax * 1e3, keep, r->bound_s * 1e3);
    return 0;
}

/* The op-level model is beyond ILP_MAX_COLS: the same MILP on coarsened groups (ilp_coarsen, twice as coarse
 * until it fits). Its bound holds for the coarsened model only, so it is not reported as the method's bound
 * (only in the note), and optimality is not claimed. */
static int ilp_coarse(hsdag_place_problem *p, const hsdag_place_opts *o, int32_t *device,
                      hsdag_place_report *r, hsdag_err *e)
{
    hsdag_place_problem pc;
    double cols = ilp_cols(p);
    int rc = 0;
    for (int32_t per = 2;; per *= 2) {
        if ((rc = ilp_coarsen(p, per, &pc)) < 0) {
            ilp_coarse_free(&pc);
            return hsdag_err_set(e, rc, "ilp: out of memory");
        }
        if (ilp_cols(&pc) <= ILP_MAX_COLS || pc.n_groups <= 1) break;
        ilp_coarse_free(&pc);
    }
    ilp_run c = {.p = &pc, .orig = p, .o = o, .device = device, .r = r};
    rc = ilp_sequential(&c, e);
    if (rc == 0) {
        char keep[sizeof r->note], b[64] = "none";
        snprintf(keep, sizeof keep, "%s", r->note);
        if (!isnan(r->bound_s)) snprintf(b, sizeof b, "%.6g ms", r->bound_s * 1e3);
        snprintf(r->note, sizeof r->note,
                 "solved on %d groups (coarsened from %d: %.0f variables, limit %d); bound for the coarsened "
                 "model only: %s; %.100s",
                 (int)pc.n_groups, (int)p->n_groups, cols, ILP_MAX_COLS, b, keep);
        r->bound_s = NAN;
        r->optimal = 0;
    }
    ilp_coarse_free(&pc);
    return rc;
}

int place_ilp(hsdag_place_problem *p, const hsdag_place_opts *o, int32_t *device, hsdag_place_report *r,
              hsdag_err *e)
{
    if (o->ilp_iterations > 0 &&
        (p->sem == HSDAG_SEM_TARNAWSKI || (p->sem == HSDAG_SEM_CONCURRENT && p->n <= 30)))
        return hsdag_err_set(
            e, HSDAG_EINVAL,
            "ilp: an iteration budget (--ilp-iterations) applies to the sequential model only; "
            "the %s model takes --time-limit",
            p->sem == HSDAG_SEM_TARNAWSKI ? "tarnawski" : "concurrent");
    if (p->sem == HSDAG_SEM_TARNAWSKI && p->obj == HSDAG_OBJ_LATENCY)
        return ilp_tarnawski(p, o, device, r, e);
    if (p->sem == HSDAG_SEM_TARNAWSKI && p->obj == HSDAG_OBJ_THROUGHPUT)
        return place_ilp_throughput(p, o, device, r, e);
    if (p->sem == HSDAG_SEM_CONCURRENT && p->n <= 30) return ilp_concurrent(p, o, device, r, e);
    if (ilp_cols(p) > ILP_MAX_COLS) return ilp_coarse(p, o, device, r, e);
    ilp_run c = {.p = p, .orig = p, .o = o, .device = device, .r = r};
    return ilp_sequential(&c, e);
}

/* local.c - local search on the simulator: move one colour class, a run of consecutive classes in topological
 *           order, or a whole "light component" (ops with tiny outputs connected by tiny tensors, e.g. the
 *           shape arithmetic of transformer exports) to another device while the simulated latency improves;
 *           seeded restarts from perturbations.
 * Not here: any cost model of its own (every candidate is scored by p->sim under p->sem).
 * Entry points: place_local_search.
 * Deterministic for a seed while the evaluation budget (max_evals), not the time limit, ends the search. */
#include "place_int.h"

typedef struct ls_state {
    hsdag_place_problem *p;
    int32_t *cur;       /* [n] current placement */
    int32_t *save_node; /* [n] undo buffer */
    int32_t *save_dev;
    int32_t nsave;
    place_score score;
    int64_t evals, max_evals;
    double deadline;
    int32_t n_comp;     /* light components of 2..LS_COMP_MAX nodes */
    int32_t *comp_off;  /* [n_comp + 1] CSR into comp_node */
    int32_t *comp_node; /* [n] at most */
    double noise;       /* o->noise: every score is a noisy measurement (latency x exp(noise z)) */
    hsdag_rng nrng;     /* its stream */
} ls_state;

/* One scoring of dev: the simulator's, with the measurement noise of o->noise when asked for. */
static place_score ls_eval(ls_state *s, const int32_t *dev)
{
    place_score sc = place_evaluate(s->p, dev);
    if (s->noise > 0) sc.latency_s *= exp(s->noise * hsdag_rng_normal(&s->nrng));
    return sc;
}

#define LS_LIGHT_BYTES 4096.0 /* an op whose outputs total at most this is "light" */
#define LS_COMP_MAX 512       /* larger light components are left to the other moves */

static int ls_out_of_budget(const ls_state *s)
{
    return s->evals >= s->max_evals || ((s->evals & 63) == 0 && hsdag_now() > s->deadline);
}

/* Moves classes [g0, g1) that may run on d to d; returns how many nodes changed (undo kept in save_*). */
static int32_t ls_apply(ls_state *s, int32_t g0, int32_t g1, int32_t d)
{
    const hsdag_place_problem *p = s->p;
    s->nsave = 0;
    for (int32_t gi = g0; gi < g1; gi++) {
        if (!place_group_ok(p, gi, d)) continue;
        for (int32_t i = p->grp_off[gi]; i < p->grp_off[gi + 1]; i++) {
            int32_t v = p->grp_node[i];
            if (s->cur[v] == d) continue;
            s->save_node[s->nsave] = v;
            s->save_dev[s->nsave++] = s->cur[v];
            s->cur[v] = d;
        }
    }
    return s->nsave;
}

static int32_t uf_find(int32_t *par, int32_t x)
{
    while (par[x] != x) x = par[x] = par[par[x]];
    return x;
}

/* Light components: connected components (edge direction ignored) of the subgraph of light ops, i.e. ops
 * whose
 * outputs total at most LS_LIGHT_BYTES. Moving one op of such a chain pays a transfer on each side, moving
 * the
 * whole component pays only where it meets heavy ops, so single moves get stuck where component moves do not.
 * Components are numbered by their first node in topological order; members ascend. Returns 0 or ENOMEM. */
static int ls_comps_build(ls_state *s)
{
    const hsdag_graph *g = s->p->g;
    int32_t n = g->n_nodes, nc = 0;
    int32_t *par = hsdag_malloc(((size_t)n + 1) * sizeof *par),
            *size = hsdag_calloc((size_t)n + 1, sizeof *size);
    int32_t *id = hsdag_malloc(((size_t)n + 1) * sizeof *id);
    s->comp_off = hsdag_malloc(((size_t)n + 2) * sizeof *s->comp_off);
    s->comp_node = hsdag_malloc(((size_t)n + 1) * sizeof *s->comp_node);
    int rc = (!par || !size || !id || !s->comp_off || !s->comp_node) ? HSDAG_ENOMEM : 0;
    if (rc == 0) {
        for (int32_t v = 0; v < n; v++) par[v] = v;
        for (int32_t u = 0; u < n; u++) {
            if (g->out_bytes[u] > LS_LIGHT_BYTES) continue;
            for (int32_t k = g->out_off[u]; k < g->out_off[u + 1]; k++) {
                int32_t v = g->out_dst[k];
                if (g->out_bytes[v] > LS_LIGHT_BYTES) continue;
                int32_t a = uf_find(par, u), b = uf_find(par, v);
                if (a != b) par[a > b ? a : b] = a < b ? a : b; /* root = smallest node: deterministic */
            }
        }
        for (int32_t v = 0; v < n; v++) size[uf_find(par, v)]++;
        for (int32_t v = 0; v < n; v++) id[v] = -1;
        for (int32_t v = 0; v < n; v++) {
            int32_t r = uf_find(par, v);
            if (size[r] >= 2 && size[r] <= LS_COMP_MAX && r == v) id[r] = nc++;
        }
        /* counting sort of members by component; size[] is reused as each component's fill cursor */
        for (int32_t c = 0; c <= nc; c++) s->comp_off[c] = 0;
        for (int32_t v = 0; v < n; v++) {
            int32_t c = id[uf_find(par, v)];
            if (c >= 0) s->comp_off[c + 1]++;
        }
        for (int32_t c = 0; c < nc; c++) s->comp_off[c + 1] += s->comp_off[c];
        for (int32_t c = 0; c < nc; c++) size[c] = s->comp_off[c];
        for (int32_t v = 0; v < n; v++) {
            int32_t c = id[uf_find(par, v)];
            if (c >= 0) s->comp_node[size[c]++] = v;
        }
        s->n_comp = nc;
    }
    hsdag_free(par);
    hsdag_free(size);
    hsdag_free(id);
    return rc;
}

/* Moves the classes of the members of light component c that may run on d to d (undo kept in save_*). */
static int32_t ls_apply_comp(ls_state *s, int32_t c, int32_t d)
{
    const hsdag_place_problem *p = s->p;
    s->nsave = 0;
    for (int32_t i = s->comp_off[c]; i < s->comp_off[c + 1]; i++) {
        int32_t gi = p->group[s->comp_node[i]];
        if (!place_group_ok(p, gi, d)) continue;
        for (int32_t j = p->grp_off[gi]; j < p->grp_off[gi + 1]; j++) {
            int32_t u = p->grp_node[j];
            if (s->cur[u] == d) continue;
            s->save_node[s->nsave] = u;
            s->save_dev[s->nsave++] = s->cur[u];
            s->cur[u] = d;
        }
    }
    return s->nsave;
}

static void ls_undo(ls_state *s)
{
    for (int32_t i = 0; i < s->nsave; i++) s->cur[s->save_node[i]] = s->save_dev[i];
    s->nsave = 0;
}

/* Scores the move just applied (save_* holds its undo); keeps it if it improves the score. */
static int ls_keep_if_better(ls_state *s, int32_t moved)
{
    if (!moved) return 0;
    place_score sc = ls_eval(s, s->cur);
    s->evals++;
    if (place_score_better(sc, s->score)) {
        s->score = sc;
        return 1;
    }
    ls_undo(s);
    return 0;
}

/* Tries moving classes [g0, g1) to d. */
static int ls_try(ls_state *s, int32_t g0, int32_t g1, int32_t d)
{
    return ls_keep_if_better(s, ls_apply(s, g0, g1, d));
}

/* First-improvement descent over windows of 1, 4 and 16 consecutive classes and over light components,
 * starting each pass at a seeded offset, until a whole pass improves nothing or the budget runs out. */
static void ls_descend(ls_state *s, hsdag_rng *rng)
{
    static const int32_t widths[] = {1, 4, 16};
    const hsdag_place_problem *p = s->p;
    int32_t ng = p->n_groups;
    for (int improved = 1; improved && !ls_out_of_budget(s);) {
        improved = 0;
        int32_t off = ng ? (int32_t)hsdag_rng_below(rng, (uint32_t)ng) : 0;
        for (int32_t t = 0; t < ng && !ls_out_of_budget(s); t++) {
            int32_t g0 = (off + t) % ng;
            for (size_t w = 0; w < sizeof widths / sizeof widths[0]; w++) {
                if (widths[w] > 1 && (g0 % widths[w]) != 0) continue; /* windows aligned to their width */
                int32_t g1 = g0 + widths[w] > ng ? ng : g0 + widths[w];
                if (widths[w] > 1 && g1 - g0 < 2) continue;
                for (int32_t d = 0; d < p->k && !ls_out_of_budget(s); d++) improved |= ls_try(s, g0, g1, d);
            }
        }
        int32_t nc = s->n_comp, coff = nc ? (int32_t)hsdag_rng_below(rng, (uint32_t)nc) : 0;
        for (int32_t t = 0; t < nc && !ls_out_of_budget(s); t++)
            for (int32_t d = 0; d < p->k && !ls_out_of_budget(s); d++)
                improved |= ls_keep_if_better(s, ls_apply_comp(s, (coff + t) % nc, d));
    }
}

/* The start when no --init is given: the best of every single device (classes a device may not run go to
 * their
 * first allowed device), HEFT, Tarnawski's greedy and, on two devices, the min cut. */
static int ls_start(hsdag_place_problem *p, int32_t *best, int32_t *tmp, ls_state *s, hsdag_err *e)
{
    place_score bs = {0, INFINITY, INFINITY};
    hsdag_place_opts o = hsdag_place_opts_default();
    for (int32_t d = 0; d < p->k + 3; d++) {
        hsdag_place_report rep = {.bound_s = NAN, .objective_s = NAN};
        int rc = 0;
        if (d < p->k) {
            for (int32_t gi = 0; gi < p->n_groups; gi++)
                place_group_set(p, tmp, gi, place_group_ok(p, gi, d) ? d : place_group_fallback(p, gi));
        } else if (d == p->k) {
            rc = place_heft(p, &o, tmp, &rep, e);
        } else if (d == p->k + 1) {
            rc = place_greedy_tarnawski(p, &o, tmp, &rep, e);
        } else {
            if (p->k != 2) continue;
            rc = hsdag_place_mincut_solve(p->c, tmp, NULL, NULL);
            if (rc < 0) continue;
        }
        if (rc < 0) return rc;
        place_score sc = ls_eval(s, tmp);
        s->evals++;
        if (place_score_better(sc, bs) || bs.latency_s == INFINITY) {
            bs = sc;
            memcpy(best, tmp, (size_t)p->n * sizeof *tmp);
        }
    }
    return 0;
}

int place_local_search(hsdag_place_problem *p, const hsdag_place_opts *o, int32_t *device,
                       hsdag_place_report *r, hsdag_err *e)
{
    size_t n1 = (size_t)(p->n ? p->n : 1);
    ls_state s = {.p = p, .noise = o->noise > 0 ? o->noise : 0};
    hsdag_rng_seed(&s.nrng, o->seed ^ 0x6e6f697365ull); /* the oracle's noise stream (blackbox.c) */
    int32_t *best = hsdag_malloc(n1 * sizeof *best);
    s.cur = hsdag_malloc(n1 * sizeof *s.cur);
    s.save_node = hsdag_malloc(n1 * sizeof *s.save_node);
    s.save_dev = hsdag_malloc(n1 * sizeof *s.save_dev);
    int rc = 0;
    if (!best || !s.cur || !s.save_node || !s.save_dev || ls_comps_build(&s) < 0) {
        rc = hsdag_err_set(e, HSDAG_ENOMEM, "local-search: out of memory");
        goto done;
    }
    s.max_evals = o->max_evals > 0 ? o->max_evals : 20000;
    s.deadline = hsdag_now() + (o->time_limit_s > 0 ? o->time_limit_s : 10.0);
    if (o->init) {
        for (int32_t v = 0; v < p->n; v++)
            if (o->init[v] < 0 || o->init[v] >= p->k) {
                rc = hsdag_err_set(e, HSDAG_EINVAL, "local-search: init: node '%s': device %d out of range",
                                   p->g->name[v], (int)o->init[v]);
                goto done;
            }
        memcpy(best, o->init, n1 * sizeof *best);
    } else if ((rc = ls_start(p, best, s.cur, &s, e)) < 0) {
        goto done;
    }
    hsdag_rng rng;
    hsdag_rng_seed(&rng, o->seed);
    memcpy(s.cur, best, (size_t)p->n * sizeof *best);
    s.score = ls_eval(&s, s.cur);
    s.evals++;
    ls_descend(&s, &rng);
    place_score bscore = s.score;
    memcpy(best, s.cur, (size_t)p->n * sizeof *best);
    int restarts = 0;
    while (!ls_out_of_budget(&s) && p->k > 1 && p->n_groups > 0) {
        /* perturb the best: about 5% of the classes (at least one) to a random allowed device */
        memcpy(s.cur, best, (size_t)p->n * sizeof *best);
        for (int32_t gi = 0; gi < p->n_groups; gi++) {
            if (hsdag_rng_uniform(&rng) >= 0.05) continue;
            int32_t d = (int32_t)hsdag_rng_below(&rng, (uint32_t)p->k);
            if (place_group_ok(p, gi, d)) place_group_set(p, s.cur, gi, d);
        }
        s.score = ls_eval(&s, s.cur);
        s.evals++;
        ls_descend(&s, &rng);
        restarts++;
        if (place_score_better(s.score, bscore)) {
            bscore = s.score;
            memcpy(best, s.cur, (size_t)p->n * sizeof *best);
        }
    }
    memcpy(device, best, (size_t)p->n * sizeof *best);
    r->evals = s.evals;
    r->objective_s = bscore.latency_s;
    snprintf(r->note, sizeof r->note, "%lld simulator evaluations, %d restarts%s", (long long)s.evals,
             restarts, s.evals < s.max_evals ? " (stopped by the time limit: not reproducible)" : "");
done:
    hsdag_free(s.comp_off);
    hsdag_free(s.comp_node);
    hsdag_free(best);
    hsdag_free(s.cur);
    hsdag_free(s.save_node);
    hsdag_free(s.save_dev);
    return rc;
}

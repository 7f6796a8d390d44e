/* list.c - list schedulers: HEFT (Topcuoglu 2002) and Baechi's memory-constrained m-ETF and m-SCT (SoCC
 * 2020).
 * Not here: the final latency (the simulator scores every placement); these build their own schedule only to
 *           decide devices. Under sequential semantics the schedule has one shared clock (ops run one at a
 *           time and pay their incoming copies), otherwise each device has its own timeline.
 * Entry points: place_heft, place_metf, place_msct. */
#include "place_int.h"

#include <limits.h>
#include <glpk.h>

/* ---- the shared engine ----
 * Invariants: dev[v] == -1 until v is committed; gdev[group] is the device of the group's first committed
 * member (colour classes follow it); used[d] counts a group's whole memory from its first member on. */
typedef struct lsched {
    hsdag_place_problem *p;
    int serial;        /* sequential semantics: one clock for every device */
    int32_t *dev;      /* [n] */
    double *fin;       /* [n] finish time, seconds */
    uint64_t *present; /* [n] serial: devices already holding v's output */
    int32_t *gdev;     /* [n_groups] */
    double avail[HSDAG_MAX_DEVICES];
    double used[HSDAG_MAX_DEVICES];
    double clock;
    int mem_overflow; /* a node had to go where it does not fit */
} lsched;

static int ls_init(lsched *s, hsdag_place_problem *p, int32_t *device)
{
    memset(s, 0, sizeof *s);
    s->p = p;
    s->serial = p->sem == HSDAG_SEM_SEQUENTIAL;
    s->dev = device;
    size_t n1 = (size_t)(p->n ? p->n : 1);
    s->fin = hsdag_calloc(n1, sizeof *s->fin);
    s->present = hsdag_calloc(n1, sizeof *s->present);
    s->gdev = hsdag_malloc((size_t)(p->n_groups ? p->n_groups : 1) * sizeof *s->gdev);
    if (!s->fin || !s->present || !s->gdev) return HSDAG_ENOMEM;
    for (int32_t v = 0; v < p->n; v++) device[v] = -1;
    for (int32_t gi = 0; gi < p->n_groups; gi++) s->gdev[gi] = -1;
    return 0;
}

static void ls_free(lsched *s)
{
    hsdag_free(s->fin);
    hsdag_free(s->present);
    hsdag_free(s->gdev);
}

static int ls_eligible(const lsched *s, int32_t v, int32_t d)
{
    const hsdag_place_problem *p = s->p;
    int32_t gi = p->group[v];
    if (s->gdev[gi] >= 0) return s->gdev[gi] == d;
    return place_group_ok(p, gi, d) && s->used[d] + p->grp_mem[gi] <= p->cap[d];
}

/* The device v must take when no device is eligible: its class's device, else the roomiest allowed one. */
static int32_t ls_fallback(lsched *s, int32_t v)
{
    const hsdag_place_problem *p = s->p;
    int32_t gi = p->group[v], best = -1;
    if (s->gdev[gi] >= 0) return s->gdev[gi];
    for (int32_t d = 0; d < p->k; d++)
        if (place_group_ok(p, gi, d) && (best < 0 || p->cap[d] - s->used[d] > p->cap[best] - s->used[best]))
            best = d;
    return best >= 0 ? best : place_group_fallback(p, gi);
}

/* Earliest time v's inputs can be on d. Serial: the shared clock plus the copies d still lacks. */
static double ls_ready(const lsched *s, int32_t v, int32_t d)
{
    const hsdag_place_problem *p = s->p;
    const hsdag_graph *g = p->g;
    double t = s->serial ? s->clock : 0.0;
    for (int32_t j = g->in_off[v]; j < g->in_off[v + 1]; j++) {
        int32_t u = g->in_src[j], a = s->dev[u];
        if (s->serial) {
            if (!((s->present[u] >> d) & 1u)) t += hsdag_costs_xfer_s(p->c, u, a, d);
        } else {
            double arr = s->fin[u] + hsdag_costs_xfer_s(p->c, u, a, d);
            if (arr > t) t = arr;
        }
    }
    return t;
}

static void ls_commit(lsched *s, int32_t v, int32_t d, double start, double finish)
{
    const hsdag_place_problem *p = s->p;
    const hsdag_graph *g = p->g;
    int32_t gi = p->group[v];
    (void)start;
    s->dev[v] = d;
    s->fin[v] = finish;
    if (s->gdev[gi] < 0) {
        s->gdev[gi] = d;
        s->used[d] += p->grp_mem[gi];
    }
    s->present[v] = (uint64_t)1 << d;
    if (s->serial) {
        for (int32_t j = g->in_off[v]; j < g->in_off[v + 1]; j++)
            s->present[g->in_src[j]] |= (uint64_t)1 << d;
        s->clock = finish;
    } else if (finish > s->avail[d]) {
        s->avail[d] = finish;
    }
}

/* HEFT's upward rank (the simulator's, on the problem's mean costs): rank[n]. */
static void upward_rank(const hsdag_place_problem *p, double *rank)
{
    hsdag_costs_upward_rank(rank, p->g, p->mean_cost, p->mean_xfer);
}

static void ls_note(const lsched *s, hsdag_place_report *r)
{
    if (s->mem_overflow && !r->note[0])
        snprintf(r->note, sizeof r->note, "memory: some ops fit on no allowed device and were placed anyway");
}

/* ---- HEFT ---- */

typedef struct heft_iv {
    double s, e;
} heft_iv;

typedef struct heft_key {
    double rank;
    int32_t v;
} heft_key;

/* rank descending, then topological index: a topological order, since rank never grows along an edge */
static int heft_order_cmp(const void *a, const void *b)
{
    const heft_key *x = a, *y = b;
    if (x->rank != y->rank) return x->rank > y->rank ? -1 : 1;
    return (x->v > y->v) - (x->v < y->v);
}

/* Earliest start >= ready of a slot of length w among the busy intervals iv[0..m) (sorted by start, disjoint:
 * each ends at or before the next one starts, so the ends ascend too). The scan starts at the first interval
 * that ends after ready, found by binary search: every interval before it would be skipped with t == ready, so
 * the slot is the one the full scan from 0 finds (issue 15: the full scan made HEFT on four GPUs quadratic). */
static double heft_slot(const heft_iv *iv, int32_t m, double ready, double w, int32_t *pos)
{
    double t = ready;
    int32_t lo = 0, hi = m;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (iv[mid].e <= ready)
            lo = mid + 1;
        else
            hi = mid;
    }
    int32_t i = lo;
    for (; i < m; i++) {
        if (iv[i].e <= t) continue;
        if (t + w <= iv[i].s) break;
        if (iv[i].e > t) t = iv[i].e;
    }
    *pos = i;
    return t;
}

int place_heft(hsdag_place_problem *p, const hsdag_place_opts *o, int32_t *device, hsdag_place_report *r,
               hsdag_err *e)
{
    (void)o;
    lsched s;
    int rc = ls_init(&s, p, device);
    size_t n1 = (size_t)(p->n ? p->n : 1);
    double *rank = hsdag_malloc(n1 * sizeof *rank);
    heft_key *order = hsdag_malloc(n1 * sizeof *order);
    heft_iv *iv[HSDAG_MAX_DEVICES] = {0};
    int32_t ivn[HSDAG_MAX_DEVICES] = {0};
    size_t ivcap[HSDAG_MAX_DEVICES] = {0};
    if (rc < 0 || !rank || !order) {
        rc = HSDAG_ENOMEM;
        goto done;
    }
    upward_rank(p, rank);
    for (int32_t v = 0; v < p->n; v++) order[v] = (heft_key){rank[v], v};
    qsort(order, (size_t)p->n, sizeof *order, heft_order_cmp);
    for (int32_t i = 0; i < p->n; i++) {
        int32_t v = order[i].v, bd = -1, bpos = 0;
        double bs = 0, bf = INFINITY;
        for (int pass = 0; pass < 2 && bd < 0; pass++)
            for (int32_t d = 0; d < p->k; d++) {
                if (pass == 0 ? !ls_eligible(&s, v, d) : d != ls_fallback(&s, v)) continue;
                double w = place_cost(p, v, d), ready = ls_ready(&s, v, d), st;
                int32_t pos = ivn[d];
                st = s.serial ? ready : heft_slot(iv[d], ivn[d], ready, w, &pos);
                if (st + w < bf || (st + w == bf && bd >= 0 && p->dev_rank[d] < p->dev_rank[bd])) {
                    bf = st + w;
                    bs = st;
                    bd = d;
                    bpos = pos;
                }
            }
        if (!s.serial) {
            if (hsdag_grow((void **)&iv[bd], &ivcap[bd], (size_t)ivn[bd] + 1, sizeof(heft_iv)) < 0) {
                rc = HSDAG_ENOMEM;
                goto done;
            }
            memmove(iv[bd] + bpos + 1, iv[bd] + bpos, (size_t)(ivn[bd] - bpos) * sizeof(heft_iv));
            iv[bd][bpos] = (heft_iv){bs, bf};
            ivn[bd]++;
        }
        if (!ls_eligible(&s, v, bd)) s.mem_overflow = 1;
        ls_commit(&s, v, bd, bs, bf);
    }
    r->objective_s = NAN;
    ls_note(&s, r);
done:
    for (int32_t d = 0; d < HSDAG_MAX_DEVICES; d++) hsdag_free(iv[d]);
    hsdag_free(rank);
    hsdag_free(order);
    ls_free(&s);
    if (rc < 0) return hsdag_err_set(e, rc, "place: heft: out of memory");
    return 0;
}

/* ---- m-ETF and m-SCT ----
 * Each step takes, among ready ops and the devices with room, the pair with the earliest start (ties:
 * earliest
 * finish, then the device with less total work over the graph, then higher upward rank, then lower index).
 * With
 * favparent (m-SCT), an op whose favourite parent sits on a device with room may only go there.
 * rt caches, per ready op and device, the input-arrival time (concurrent) or the copies still missing
 * (serial:
 * refreshed when a copy lands, so a step costs O(ready x devices) plus the degrees it touches). */
/* One ready op's best (device, start, finish); times relative to the clock in serial mode. */
typedef struct etf_cand {
    double st, f;
    int32_t d;
    int fallback; /* no device had room: d is ls_fallback's choice */
} etf_cand;

/* The order every choice follows: start, finish, the device with less total work, higher rank, lower
 * index. */
static int etf_less(const hsdag_place_problem *p, const double *rank, const etf_cand *a, int32_t va,
                    const etf_cand *b, int32_t vb)
{
    if (a->st != b->st) return a->st < b->st;
    if (a->f != b->f) return a->f < b->f;
    if (a->d != b->d) return p->dev_rank[a->d] < p->dev_rank[b->d];
    if (rank[va] != rank[vb]) return rank[va] > rank[vb];
    return va < vb;
}

static etf_cand etf_at(const lsched *s, const double *rt, int32_t v, int32_t d)
{
    double rd = rt[(size_t)v * s->p->k + d];
    double st = s->serial ? rd : fmax(s->avail[d], rd);
    return (etf_cand){st, st + place_cost(s->p, v, d), d, 0};
}

/* The device v may be restricted to (m-SCT: its favourite parent's, while that one has room), else -1. */
static int32_t etf_only(const lsched *s, const int32_t *favparent, int32_t v)
{
    if (!favparent || favparent[v] < 0) return -1;
    int32_t fd = s->dev[favparent[v]];
    return ls_eligible(s, v, fd) ? fd : -1;
}

static etf_cand etf_full(lsched *s, const double *rt, const double *rank, const int32_t *favparent, int32_t v)
{
    const hsdag_place_problem *p = s->p;
    int32_t only = etf_only(s, favparent, v);
    etf_cand best = {INFINITY, INFINITY, -1, 0};
    for (int32_t d = 0; d < p->k; d++) {
        if ((only >= 0 && d != only) || !ls_eligible(s, v, d)) continue;
        etf_cand c = etf_at(s, rt, v, d);
        if (best.d < 0 || etf_less(p, rank, &c, v, &best, v)) best = c;
    }
    if (best.d < 0) {
        best = etf_at(s, rt, v, ls_fallback(s, v));
        best.fallback = 1;
    }
    return best;
}

/* ---- the ETF queue: the core heap of (candidate, op, version), stale entries skipped on pop ---- */
typedef struct etf_ent {
    etf_cand c;
    int32_t v, ver;
} etf_ent;

typedef struct etf_order {
    const hsdag_place_problem *p;
    const double *rank;
} etf_order;

static int eh_less(const void *a, const void *b, void *ctx)
{
    const etf_order *o = ctx;
    const etf_ent *x = a, *y = b;
    return etf_less(o->p, o->rank, &x->c, x->v, &y->c, y->v);
}

static int eh_push(hsdag_heap *h, etf_cand c, int32_t v, int32_t ver)
{
    etf_ent x = {c, v, ver};
    return hsdag_heap_push(h, &x);
}

static int etf_same(const etf_cand *a, const etf_cand *b)
{
    return a->st == b->st && a->f == b->f && a->d == b->d && a->fallback == b->fallback;
}

/* Lazy greedy: between two refreshes an op's best start can only get later (devices fill up and become busy;
 * its class gets pinned), so a popped entry whose recomputed candidate is unchanged is the true minimum. The
 * two
 * ways a candidate improves are pushed explicitly: copies landing on bd (serial) and a favourite parent's
 * device
 * filling up (m-SCT's restriction lifts). */
static int etf_run(hsdag_place_problem *p, int32_t *device, const int32_t *favparent, hsdag_place_report *r)
{
    const hsdag_graph *g = p->g;
    const int32_t k = p->k;
    lsched s;
    int rc = ls_init(&s, p, device);
    size_t n1 = (size_t)(p->n ? p->n : 1);
    int32_t *cnt = hsdag_malloc(n1 * sizeof *cnt), *ver = hsdag_calloc(n1, sizeof *ver);
    double *rank = hsdag_malloc(n1 * sizeof *rank);
    double *rt = hsdag_malloc(n1 * (size_t)k * sizeof *rt);
    etf_cand *cand = hsdag_malloc(n1 * sizeof *cand);
    int32_t *favkids = NULL; /* ready ops currently restricted to their favourite parent's device */
    size_t nfav = 0, favcap = 0;
    etf_order ord = {p, rank};
    hsdag_heap h;
    hsdag_heap_init(&h, sizeof(etf_ent), NULL, 0, eh_less, &ord);
    if (rc < 0 || !cnt || !ver || !rank || !rt || !cand) goto oom;
    upward_rank(p, rank);
    for (int32_t v = 0; v < p->n; v++) {
        cnt[v] = g->in_off[v + 1] - g->in_off[v];
        if (cnt[v]) continue;
        for (int32_t d = 0; d < k; d++) rt[(size_t)v * k + d] = 0;
        cand[v] = etf_full(&s, rt, rank, favparent, v);
        if (eh_push(&h, cand[v], v, 0) < 0) goto oom;
    }
    for (int32_t step = 0; step < p->n;) {
        HSDAG_ASSERT(h.n > 0);
        etf_ent top;
        hsdag_heap_pop(&h, &top);
        int32_t v = top.v;
        if (top.ver != ver[v] || device[v] >= 0) continue;
        etf_cand now = etf_full(&s, rt, rank, favparent, v);
        if (!etf_same(&now, &top.c)) {
            cand[v] = now;
            if (eh_push(&h, now, v, ++ver[v]) < 0) goto oom;
            continue;
        }
        step++;
        int32_t bd = now.d;
        double st = s.serial ? s.clock + now.st : now.st, fin = st + place_cost(p, v, bd);
        if (now.fallback) s.mem_overflow = 1;
        /* serial: the inputs of v that land on bd make bd cheaper for their other ready consumers */
        for (int32_t j = s.serial ? g->in_off[v] : g->in_off[v + 1]; j < g->in_off[v + 1]; j++) {
            int32_t u = g->in_src[j];
            if ((s.present[u] >> bd) & 1u) continue;
            double x = hsdag_costs_xfer_s(p->c, u, s.dev[u], bd);
            for (int32_t q = g->out_off[u]; q < g->out_off[u + 1]; q++) {
                int32_t w = g->out_dst[q];
                if (w == v || cnt[w] != 0 || device[w] >= 0) continue;
                double *slot = &rt[(size_t)w * k + bd];
                *slot = *slot - x > 0 ? *slot - x : 0;
                if (!ls_eligible(&s, w, bd) ||
                    (etf_only(&s, favparent, w) >= 0 && etf_only(&s, favparent, w) != bd))
                    continue;
                etf_cand c = etf_at(&s, rt, w, bd);
                if (etf_less(p, rank, &c, w, &cand[w], w)) {
                    cand[w] = c;
                    if (eh_push(&h, c, w, ++ver[w]) < 0) goto oom;
                }
            }
        }
        ls_commit(&s, v, bd, st, fin);
        /* restrictions that lifted because bd filled up */
        size_t keep = 0;
        for (size_t i = 0; i < nfav; i++) {
            int32_t w = favkids[i];
            if (device[w] >= 0) continue;
            if (device[favparent[w]] == bd && !ls_eligible(&s, w, bd)) {
                cand[w] = etf_full(&s, rt, rank, favparent, w);
                if (eh_push(&h, cand[w], w, ++ver[w]) < 0) goto oom;
                continue;
            }
            favkids[keep++] = w;
        }
        nfav = keep;
        for (int32_t j = g->out_off[v]; j < g->out_off[v + 1]; j++) {
            int32_t w = g->out_dst[j];
            if (--cnt[w]) continue;
            for (int32_t d = 0; d < k; d++)
                rt[(size_t)w * k + d] = s.serial ? ls_ready(&s, w, d) - s.clock : ls_ready(&s, w, d);
            cand[w] = etf_full(&s, rt, rank, favparent, w);
            if (eh_push(&h, cand[w], w, ++ver[w]) < 0) goto oom;
            if (etf_only(&s, favparent, w) >= 0) {
                if (hsdag_grow((void **)&favkids, &favcap, nfav + 1, sizeof *favkids) < 0) goto oom;
                favkids[nfav++] = w;
            }
        }
    }
    ls_note(&s, r);
    goto done;
oom:
    rc = HSDAG_ENOMEM;
done:
    hsdag_free(cnt);
    hsdag_free(ver);
    hsdag_free(rank);
    hsdag_free(rt);
    hsdag_free(cand);
    hsdag_free(favkids);
    hsdag_heap_free(&h);
    ls_free(&s);
    return rc;
}

int place_metf(hsdag_place_problem *p, const hsdag_place_opts *o, int32_t *device, hsdag_place_report *r,
               hsdag_err *e)
{
    (void)o;
    int rc = etf_run(p, device, NULL, r);
    return rc < 0 ? hsdag_err_set(e, rc, "place: m-etf: out of memory") : 0;
}

/* ---- m-SCT's favourite children ----
 * The Hanen-Munier LP relaxation Baechi uses: minimise W subject to
 *   s_v >= s_u + w_u + c_u x_uv          for every edge (u, v)   (x_uv = 1: the edge pays its transfer)
 *   sum_{v in succ(u)} x_uv >= |succ(u)| - 1                      (at most one favourite child)
 *   sum_{u in pred(v)} x_uv >= |pred(v)| - 1                      (at most one favourite parent)
 *   W >= s_v + w_v,  0 <= x <= 1,  s >= 0
 * with w = mean cost and c = mean transfer time; an edge with x < 1/2 makes v the favourite child of u.
 * Solved by GLPK's interior-point method (~80 ms on BERT-base), the simplex when that does not converge. */
typedef struct sct_lp {
    hsdag_place_problem *p;
    int32_t *favparent;
    int *ia, *ja; /* [nz_cap + 1] the constraint matrix, owned by sct_favourites */
    double *ar;
    int nz_cap;
} sct_lp;

/* The GLPK part, run through place_glpk_call: builds, checks and solves the LP, reads the favourites. */
static int sct_solve(void *ctx, hsdag_err *e)
{
    sct_lp *c = ctx;
    hsdag_place_problem *p = c->p;
    const hsdag_graph *g = p->g;
    int32_t n = p->n, m = g->n_edges, *favparent = c->favparent;
    int *ia = c->ia, *ja = c->ja, nz = 0;
    double *ar = c->ar;
    glp_prob *lp = glp_create_prob();
    int rc = 0;
    /* columns: s_v = 1..n, x_e = n+1..n+m, W = n+m+1 */
    glp_set_obj_dir(lp, GLP_MIN);
    glp_add_cols(lp, n + m + 1);
    for (int32_t v = 0; v < n; v++) glp_set_col_bnds(lp, v + 1, GLP_LO, 0, 0);
    for (int32_t k = 0; k < m; k++) glp_set_col_bnds(lp, n + k + 1, GLP_DB, 0, 1);
    glp_set_col_bnds(lp, n + m + 1, GLP_LO, 0, 0);
    glp_set_obj_coef(lp, n + m + 1, 1.0);
    /* scale to milliseconds so the simplex sees numbers near 1 */
    const double sc = 1e3;
    int row = 0;
    for (int32_t k = 0; k < m; k++) {
        int32_t u = g->edge_src[k], v = g->out_dst[k];
        row = glp_add_rows(lp, 1);
        glp_set_row_bnds(lp, row, GLP_LO, p->mean_cost[u] * sc, 0);
        ia[++nz] = row, ja[nz] = v + 1, ar[nz] = 1;
        ia[++nz] = row, ja[nz] = u + 1, ar[nz] = -1;
        ia[++nz] = row, ja[nz] = n + k + 1, ar[nz] = -p->mean_xfer[u] * sc;
    }
    for (int32_t u = 0; u < n; u++) {
        int32_t deg = g->out_off[u + 1] - g->out_off[u];
        if (deg >= 2) {
            row = glp_add_rows(lp, 1);
            glp_set_row_bnds(lp, row, GLP_LO, deg - 1, 0);
            for (int32_t k = g->out_off[u]; k < g->out_off[u + 1]; k++)
                ia[++nz] = row, ja[nz] = n + k + 1, ar[nz] = 1;
        }
        deg = g->in_off[u + 1] - g->in_off[u];
        if (deg >= 2) {
            row = glp_add_rows(lp, 1);
            glp_set_row_bnds(lp, row, GLP_LO, deg - 1, 0);
            for (int32_t j = g->in_off[u]; j < g->in_off[u + 1]; j++)
                ia[++nz] = row, ja[nz] = n + g->in_eid[j] + 1, ar[nz] = 1;
        }
        if (g->out_off[u + 1] == g->out_off[u]) {
            row = glp_add_rows(lp, 1);
            glp_set_row_bnds(lp, row, GLP_LO, p->mean_cost[u] * sc, 0);
            ia[++nz] = row, ja[nz] = n + m + 1, ar[nz] = 1;
            ia[++nz] = row, ja[nz] = u + 1, ar[nz] = -1;
        }
    }
    HSDAG_ASSERT(nz <= c->nz_cap);
    glp_load_matrix(lp, nz, ia, ja, ar);
    if ((rc = place_glpk_prepare(lp, "place: m-sct", e)) < 0) goto done;
    /* interior point: on BERT-base (1.5k ops) several times faster than the simplex; only x is rounded */
    glp_iptcp parm;
    glp_init_iptcp(&parm);
    parm.msg_lev = GLP_MSG_OFF;
    int sr = glp_interior(lp, &parm), ipt = sr == 0 && glp_ipt_status(lp) == GLP_OPT;
    if (!ipt) { /* the interior point did not converge: the simplex is slower but robust */
        glp_smcp sp;
        glp_init_smcp(&sp);
        sp.msg_lev = GLP_MSG_OFF;
        sp.presolve = GLP_ON;
        /* a deterministic stop: on badly scaled inputs (1e18-byte tensors next to 1e-300 ms costs) GLPK's
         * simplex ran for minutes on 7 ops; normally it needs far fewer than rows + columns iterations */
        sp.it_lim = 20 * (glp_get_num_rows(lp) + glp_get_num_cols(lp)) + 10000;
        sr = glp_simplex(lp, &sp);
        if (sr != 0 || glp_get_status(lp) != GLP_OPT) {
            rc = hsdag_err_set(e, HSDAG_ESOLVER, "place: m-sct: LP not solved (glpk code %d, status %d)", sr,
                               glp_get_status(lp));
            goto done;
        }
    }
    for (int32_t v = 0; v < n; v++) {
        int32_t best = -1;
        double bx = 0.5;
        for (int32_t j = g->in_off[v]; j < g->in_off[v + 1]; j++) {
            double x =
                ipt ? glp_ipt_col_prim(lp, n + g->in_eid[j] + 1) : glp_get_col_prim(lp, n + g->in_eid[j] + 1);
            if (x < bx) {
                bx = x;
                best = g->in_src[j];
            }
        }
        favparent[v] = best;
    }
    /* a parent keeps only its favourite child with the smallest x (the LP allows one below 1/2 anyway) */
    for (int32_t u = 0; u < n; u++) {
        int32_t keep = -1;
        double bx = 2;
        for (int32_t k = g->out_off[u]; k < g->out_off[u + 1]; k++) {
            int32_t v = g->out_dst[k];
            if (favparent[v] != u) continue;
            double x = ipt ? glp_ipt_col_prim(lp, n + k + 1) : glp_get_col_prim(lp, n + k + 1);
            if (x < bx) {
                bx = x;
                keep = v;
            }
        }
        for (int32_t k = g->out_off[u]; k < g->out_off[u + 1]; k++)
            if (favparent[g->out_dst[k]] == u && g->out_dst[k] != keep) favparent[g->out_dst[k]] = -1;
    }
done:
    glp_delete_prob(lp);
    return rc;
}

static int sct_favourites(hsdag_place_problem *p, int32_t *favparent, hsdag_err *e)
{
    const hsdag_graph *g = p->g;
    int32_t n = p->n, m = g->n_edges;
    /* nonzeros, counted from the graph: 3 per edge (s_v, s_u, x_uv), one per edge in each degree row (an
     * edge counts at most once as an out-edge and once as an in-edge), 2 per sink (W, s_v); 17 isolated
     * nodes overran the old estimate 5m + n + 16 */
    size_t nz_need = 5 * (size_t)m;
    for (int32_t u = 0; u < n; u++) nz_need += g->out_off[u + 1] == g->out_off[u] ? 2 : 0;
    if (nz_need >= (size_t)INT_MAX / 2 || (size_t)n + (size_t)m + 1 >= (size_t)INT_MAX / 2)
        return hsdag_err_set(e, HSDAG_ELIMIT, "place: m-sct: an LP of %zu nonzeros is beyond GLPK", nz_need);
    sct_lp c = {.p = p, .favparent = favparent, .nz_cap = (int)nz_need};
    c.ia = hsdag_malloc((nz_need + 1) * sizeof *c.ia);
    c.ja = hsdag_malloc((nz_need + 1) * sizeof *c.ja);
    c.ar = hsdag_malloc((nz_need + 1) * sizeof *c.ar);
    int rc = (c.ia && c.ja && c.ar) ? place_glpk_call(sct_solve, &c, "place: m-sct", e)
                                    : hsdag_err_set(e, HSDAG_ENOMEM, "place: m-sct: out of memory");
    hsdag_free(c.ia);
    hsdag_free(c.ja);
    hsdag_free(c.ar);
    return rc;
}

/* Fallback favourites when the LP fails: each op's heaviest transfer edge, one child per parent. */
static void sct_greedy_favourites(const hsdag_place_problem *p, int32_t *favparent)
{
    const hsdag_graph *g = p->g;
    for (int32_t v = 0; v < p->n; v++) favparent[v] = -1;
    for (int32_t u = 0; u < p->n; u++) {
        if (p->mean_xfer[u] <= 0) continue;
        for (int32_t k = g->out_off[u]; k < g->out_off[u + 1]; k++)
            if (favparent[g->out_dst[k]] < 0) {
                favparent[g->out_dst[k]] = u;
                break;
            }
    }
}

int place_msct(hsdag_place_problem *p, const hsdag_place_opts *o, int32_t *device, hsdag_place_report *r,
               hsdag_err *e)
{
    int32_t *fav = hsdag_alloc_n((size_t)p->n, sizeof *fav, "place: m-sct", e);
    if (!fav) return HSDAG_ENOMEM;
    hsdag_err le = {0};
    (void)o;
    if (sct_favourites(p, fav, &le) < 0) {
        if (le.status == HSDAG_ENOMEM) {
            hsdag_free(fav);
            *e = le;
            return HSDAG_ENOMEM;
        }
        sct_greedy_favourites(p, fav);
        snprintf(r->note, sizeof r->note, "LP failed (%.180s); favourites from the heaviest edges", le.msg);
    }
    int rc = etf_run(p, device, fav, r);
    hsdag_free(fav);
    return rc < 0 ? hsdag_err_set(e, rc, "place: m-sct: out of memory") : 0;
}

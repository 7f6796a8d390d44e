/* parse.c - Graph Parsing Network's discrete step: dominant edges, clusters by union-find with
 * deterministic ids, intra-cluster edge counts and the binarised pooled adjacency.
 * Not here: edge scores (the learned MLP in model.c) or cluster features.
 * Entry points: hsdag_gpn_parse, hsdag_gpn_parse_free. */
#include "hsdag/features.h"

#include <math.h>
#include <string.h>

void hsdag_gpn_parse_free(hsdag_gpn_parse_result *r)
{
    if (!r) return;
    hsdag_free(r->cluster);
    hsdag_free(r->intra);
    hsdag_free(r->intra_count);
    hsdag_free(r->pu);
    hsdag_free(r->pv);
    memset(r, 0, sizeof *r);
}

typedef struct {
    float s;
    int32_t k;
} dom_item;

static int dom_cmp(const void *a, const void *b)
{
    const dom_item *p = a, *q = b;
    if (p->s != q->s) return p->s > q->s ? -1 : 1;
    return p->k < q->k ? -1 : (p->k > q->k);
}

static int pair_cmp(const void *a, const void *b)
{
    const int32_t *p = a, *q = b;
    if (p[0] != q[0]) return p[0] < q[0] ? -1 : 1;
    return p[1] < q[1] ? -1 : (p[1] > q[1]);
}

static int32_t uf_find(int32_t *par, int32_t x)
{
    while (par[x] != x) {
        par[x] = par[par[x]];
        x = par[x];
    }
    return x;
}

int hsdag_gpn_parse(hsdag_gpn_parse_result *r, int32_t n, int32_t m, const int32_t *u, const int32_t *v,
                    const float *s, hsdag_err *e)
{
    memset(r, 0, sizeof *r);
    if (n <= 0 || m < 0)
        return hsdag_err_set(e, HSDAG_EINVAL, "gpn parse: %d nodes, %d edges", (int)n, (int)m);
    for (int32_t k = 0; k < m; k++)
        if (u[k] < 0 || u[k] >= n || v[k] < 0 || v[k] >= n || u[k] == v[k])
            return hsdag_err_set(e, HSDAG_EINVAL,
                                 "gpn parse: edge %d (%d, %d) is out of range or a self-loop", (int)k,
                                 (int)u[k], (int)v[k]);
    size_t ns = (size_t)n, ms = (size_t)(m ? m : 1);
    int32_t *best = hsdag_malloc(sizeof(int32_t) * ns), *par = hsdag_malloc(sizeof(int32_t) * ns);
    int32_t *id = hsdag_malloc(sizeof(int32_t) * ns);
    uint8_t *isdom = hsdag_calloc(ms, 1);
    dom_item *dom = hsdag_malloc(sizeof(dom_item) * ms);
    int32_t *pairs = hsdag_malloc(sizeof(int32_t) * 2 * ms);
    r->cluster = hsdag_malloc(sizeof(int32_t) * ns);
    r->intra = hsdag_calloc(ms, 1);
    int rc = 0;
    if (!best || !par || !id || !isdom || !dom || !pairs || !r->cluster || !r->intra) goto oom;

    /* dominant edge per node: highest score, ties by lower edge index (edges visited in index order); a NaN
     * score takes the edge out of the running */
    for (int32_t x = 0; x < n; x++) best[x] = -1, par[x] = x, id[x] = -1;
    for (int32_t k = 0; k < m; k++) {
        if (isnan(s[k])) continue;
        float sk = s[k];
        int32_t ends[2] = {u[k], v[k]};
        for (int j = 0; j < 2; j++) {
            int32_t x = ends[j];
            if (best[x] < 0 || sk > s[best[x]]) best[x] = k;
        }
    }
    int32_t nd = 0;
    for (int32_t x = 0; x < n; x++)
        if (best[x] >= 0 && !isdom[best[x]]) {
            isdom[best[x]] = 1;
            dom[nd].s = s[best[x]];
            dom[nd].k = best[x];
            nd++;
        }
    qsort(dom, (size_t)nd, sizeof *dom, dom_cmp);
    for (int32_t i = 0; i < nd; i++) {
        int32_t a = uf_find(par, u[dom[i].k]), b = uf_find(par, v[dom[i].k]);
        if (a != b) par[a < b ? b : a] = a < b ? a : b;
    }
    /* ids: components in order of their first dominant edge, then isolated nodes in node order */
    int32_t nc = 0;
    for (int32_t i = 0; i < nd; i++) {
        int32_t root = uf_find(par, u[dom[i].k]);
        if (id[root] < 0) id[root] = nc++;
    }
    for (int32_t x = 0; x < n; x++) {
        if (best[x] >= 0)
            r->cluster[x] = id[uf_find(par, x)];
        else
            r->cluster[x] = nc++;
    }
    r->n_clusters = nc;
    r->intra_count = hsdag_calloc((size_t)nc, sizeof(int32_t));
    if (!r->intra_count) goto oom;
    int32_t np = 0;
    for (int32_t k = 0; k < m; k++) {
        int32_t a = r->cluster[u[k]], b = r->cluster[v[k]];
        if (a == b) {
            r->intra[k] = 1;
            r->intra_count[a]++;
        } else {
            pairs[2 * np] = a < b ? a : b;
            pairs[2 * np + 1] = a < b ? b : a;
            np++;
        }
    }
    qsort(pairs, (size_t)np, 2 * sizeof(int32_t), pair_cmp);
    int32_t mp = 0;
    for (int32_t i = 0; i < np; i++)
        if (mp == 0 || pairs[2 * i] != pairs[2 * (mp - 1)] || pairs[2 * i + 1] != pairs[2 * (mp - 1) + 1]) {
            pairs[2 * mp] = pairs[2 * i];
            pairs[2 * mp + 1] = pairs[2 * i + 1];
            mp++;
        }
    r->m_pooled = mp;
    r->pu = hsdag_malloc(sizeof(int32_t) * (size_t)(mp ? mp : 1));
    r->pv = hsdag_malloc(sizeof(int32_t) * (size_t)(mp ? mp : 1));
    if (!r->pu || !r->pv) goto oom;
    for (int32_t i = 0; i < mp; i++) r->pu[i] = pairs[2 * i], r->pv[i] = pairs[2 * i + 1];
    goto done;
oom:
    hsdag_gpn_parse_free(r);
    rc = hsdag_err_set(e, HSDAG_ENOMEM, "gpn parse: out of memory (%d nodes, %d edges)", (int)n, (int)m);
done:
    hsdag_free(best);
    hsdag_free(par);
    hsdag_free(id);
    hsdag_free(isdom);
    hsdag_free(dom);
    hsdag_free(pairs);
    return rc;
}

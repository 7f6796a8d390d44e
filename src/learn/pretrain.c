/* pretrain.c - one policy for many graphs: multi-graph training of the HSDAG and Placeto policies (episodes
 * round-robin over the graphs, one parameter set and Adam state carried from graph to graph), policy files,
 * and placement of an unseen graph in one forward pass or by fine-tuning with a budget.
 * Not here: the learners (train.c, model.c, placeto.c; used through their interfaces only).
 * Entry points: hsdag_pretrain_*, hsdag_policy_* (pretrain.h), hsdag_pretrain_run_write_json. */
#include "hsdag/pretrain.h"

#include "hsdag/codec.h"

#include "lnodes.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define POL_MAGIC "HSDAGPOL"
#define POL_VERSION 2u

struct hsdag_policy {
    hsdag_policy_method method;
    int32_t K;
    hsdag_learn_config hcfg;
    hsdag_placeto_config pcfg;
    char *preset, *note;
    /* the network's parameter values (no optimiser state: fine-tuning starts a fresh Adam), and a
     * fingerprint of its tensor table (names and shapes in order) that the receiving network must match */
    float *values;
    size_t count;
    int32_t n_tensors;
    uint64_t table;
};

static const char *const method_names[] = {"hsdag", "placeto"};

const char *hsdag_policy_method_name(hsdag_policy_method m)
{
    return (m >= 0 && m <= HSDAG_POLICY_PLACETO) ? method_names[m] : "?";
}

int hsdag_policy_method_parse(hsdag_policy_method *out, const char *s, hsdag_err *e)
{
    for (int i = 0; i < 2; i++)
        if (s && strcmp(s, method_names[i]) == 0) {
            *out = (hsdag_policy_method)i;
            return 0;
        }
    return hsdag_err_set(e, HSDAG_EINVAL, "policy method '%.40s': hsdag or placeto", s ? s : "");
}

hsdag_pretrain_config hsdag_pretrain_config_default(void)
{
    hsdag_pretrain_config c = {.method = HSDAG_POLICY_HSDAG,
                               .hsdag = hsdag_learn_config_default(),
                               .placeto = hsdag_placeto_config_default(),
                               .rounds = 1,
                               .warm_start = 1,
                               .imitate_rounds = 50,
                               .imitate_steps = 2,
                               .seed = 1};
    /* one decision per group: a network shared by many graphs cannot fit their good placements through
     * pooled clusters (imitating the MILP's placements of eight models it reaches a mean target probability
     * of 0.79 with one parsing level, 0.97 without: docs/baselines.md) */
    c.hsdag.levels = 0;
    c.hsdag.min_clusters = 0;
    /* the cost kind: a policy that places with nothing measured has no other word on costs and caps, and
     * with it the held-out placements under a memory cap are closer to the best known (docs/baselines.md) */
    c.hsdag.features |= HSDAG_LEARN_FEAT_COST;
    return c;
}

void hsdag_policy_free(hsdag_policy *pol)
{
    if (!pol) return;
    hsdag_free(pol->preset);
    hsdag_free(pol->note);
    hsdag_free(pol->values);
    hsdag_free(pol);
}

hsdag_policy_method hsdag_policy_method_of(const hsdag_policy *pol)
{
    return pol->method;
}
int32_t hsdag_policy_devices(const hsdag_policy *pol)
{
    return pol->K;
}
const char *hsdag_policy_preset(const hsdag_policy *pol)
{
    return pol->preset ? pol->preset : "";
}
const char *hsdag_policy_note(const hsdag_policy *pol)
{
    return pol->note ? pol->note : "";
}

static char *dup_(const char *s)
{
    size_t n = strlen(s);
    char *d = hsdag_malloc(n + 1);
    if (d) memcpy(d, s, n + 1);
    return d;
}

int hsdag_policy_set_meta(hsdag_policy *pol, const char *preset, const char *note, hsdag_err *e)
{
    char *p = preset ? dup_(preset) : NULL, *n = note ? dup_(note) : NULL;
    if ((preset && !p) || (note && !n)) {
        hsdag_free(p);
        hsdag_free(n);
        return hsdag_err_set(e, HSDAG_ENOMEM, "policy: out of memory");
    }
    if (preset) {
        hsdag_free(pol->preset);
        pol->preset = p;
    }
    if (note) {
        hsdag_free(pol->note);
        pol->note = n;
    }
    return 0;
}

/* ---- multi-graph training ---- */

static void shuffle_(int32_t *a, int32_t n, hsdag_rng *r)
{
    for (int32_t i = 0; i < n; i++) a[i] = i;
    for (int32_t i = n - 1; i > 0; i--) {
        int32_t j = (int32_t)hsdag_rng_below(r, (uint32_t)(i + 1)), t = a[i];
        a[i] = a[j];
        a[j] = t;
    }
}

static uint64_t table_of(const hsdag_nn_params *P)
{
    uint64_t h = HSDAG_FNV64_BASIS;
    for (int32_t t = 0; t < hsdag_nn_params_n_tensors(P); t++) {
        const char *nm = hsdag_nn_params_name(P, t);
        int32_t rc[2] = {hsdag_nn_params_rows(P, t), hsdag_nn_params_cols(P, t)};
        h = (h ^ hsdag_fnv1a64(HSDAG_FNV64_BASIS, nm, strlen(nm))) * HSDAG_FNV64_PRIME;
        h = (h ^ hsdag_fnv1a64(HSDAG_FNV64_BASIS, rc, sizeof rc)) * HSDAG_FNV64_PRIME;
    }
    return h;
}

/* pol <- the values of P */
static int take_values(hsdag_policy *pol, hsdag_nn_params *P, hsdag_err *e)
{
    size_t n = hsdag_nn_params_count(P);
    float *v = hsdag_malloc(sizeof(float) * (n ? n : 1));
    if (!v) return hsdag_err_set(e, HSDAG_ENOMEM, "policy: out of memory");
    memcpy(v, hsdag_nn_params_value(P, -1), sizeof(float) * n);
    hsdag_free(pol->values);
    pol->values = v;
    pol->count = n;
    pol->n_tensors = hsdag_nn_params_n_tensors(P);
    pol->table = table_of(P);
    return 0;
}

/* P's values <- pol (P must be built with the policy's settings: the same tensors) */
static int put_values(const hsdag_policy *pol, hsdag_nn_params *P, hsdag_err *e)
{
    if (hsdag_nn_params_n_tensors(P) != pol->n_tensors || hsdag_nn_params_count(P) != pol->count ||
        table_of(P) != pol->table)
        return hsdag_err_set(
            e, HSDAG_EINVAL, "policy: its network (%d tensors, %zu floats) does not match this one (%d, %zu)",
            (int)pol->n_tensors, pol->count, (int)hsdag_nn_params_n_tensors(P), hsdag_nn_params_count(P));
    memcpy(hsdag_nn_params_value(P, -1), pol->values, sizeof(float) * pol->count);
    return 0;
}

/* The imitation rounds of cfg->warm_start on the shared parameters in image (with their Adam state): each
 * graph's target first (hsdag_learn_warm_start), then imitate_rounds shuffled passes of imitate_steps steps
 * per graph. Interleaved, not graph after graph: run one graph at a time, the last one's placement wins. */
static int imitation_rounds(hsdag_learn **L, hsdag_place_problem *const *probs, int32_t n,
                            const hsdag_pretrain_config *cfg, int32_t *order, hsdag_rng *r, hsdag_buf *image,
                            hsdag_pretrain_progress_fn progress, void *pctx, hsdag_err *e)
{
    int32_t **warm = hsdag_calloc((size_t)n, sizeof *warm);
    int rc = warm ? 0 : hsdag_err_set(e, HSDAG_ENOMEM, "pretrain: out of memory");
    for (int32_t i = 0; i < n && rc == 0; i++) {
        hsdag_place_oracle orc;
        hsdag_place_oracle_init(&orc, probs[i], 0.0, cfg->hsdag.seed);
        hsdag_place_opts o = hsdag_place_opts_default();
        o.seed = cfg->hsdag.seed;
        double lat;
        int feas;
        const char *from;
        if (!(warm[i] = hsdag_alloc_n((size_t)probs[i]->n, sizeof(int32_t), "pretrain", e)))
            rc = HSDAG_ENOMEM;
        else if ((rc = hsdag_learn_warm_start(probs[i], &orc, &o, warm[i], &lat, &feas, &from, e)) == 0) {
            if (feas)
                hsdag_learn_offer(L[i], warm[i], lat);
            else { /* nothing feasible to imitate: this graph only takes part in the rounds */
                hsdag_free(warm[i]);
                warm[i] = NULL;
            }
            if (progress && progress(pctx, -1, i, feas ? lat : INFINITY)) rc = 1;
        }
    }
    for (int32_t round = 0; round < cfg->imitate_rounds && rc == 0; round++) { /* quick: not reported */
        shuffle_(order, n, r);
        for (int32_t j = 0; j < n && rc == 0; j++) {
            int32_t i = order[j], steps;
            if (!warm[i]) continue;
            double prob;
            hsdag_nn_params *P = hsdag_learn_params(L[i]);
            if ((rc = hsdag_nn_params_load(P, image->data, image->len, NULL, e)) == 0 &&
                (rc = hsdag_learn_imitate(L[i], warm[i], &steps, &prob, e)) == 0) {
                image->len = 0;
                rc = hsdag_nn_params_save(P, image, e);
            }
        }
    }
    for (int32_t i = 0; warm && i < n; i++) hsdag_free(warm[i]);
    hsdag_free(warm);
    return rc;
}

static int train_hsdag(hsdag_policy *pol, hsdag_place_problem *const *probs, int32_t n,
                       const hsdag_pretrain_config *cfg, hsdag_pretrain_progress_fn progress, void *pctx,
                       hsdag_err *e)
{
    hsdag_learn **L = hsdag_calloc((size_t)n, sizeof *L);
    int32_t *order = hsdag_malloc(sizeof(int32_t) * (size_t)n);
    hsdag_buf image = {0}; /* the shared parameters with Adam state, between graphs */
    int rc = 0;
    if (!L || !order) {
        rc = hsdag_err_set(e, HSDAG_ENOMEM, "pretrain: out of memory");
        goto done;
    }
    for (int32_t i = 0; i < n && rc == 0; i++) {
        hsdag_learn_config c = cfg->hsdag;
        c.episodes = 0;
        c.seed = cfg->hsdag.seed + (uint64_t)i; /* each graph its own sampling and dropout stream */
        c.offset_lr =
            0; /* per-graph offsets would learn what the shared network should (kept for fine-tuning) */
        c.imitate_steps = cfg->imitate_steps; /* per visit of an imitation round, to the end */
        c.imitate_prob = 1.0;
        rc = hsdag_learn_create_problem(&L[i], probs[i], &c, e);
    }
    if (rc < 0) goto done;
    /* the shared parameters and Adam state start as graph 0's initial ones */
    if ((rc = hsdag_nn_params_save(hsdag_learn_params(L[0]), &image, e)) < 0) goto done;
    hsdag_rng r;
    hsdag_rng_seed(&r, cfg->seed);
    if (cfg->warm_start) rc = imitation_rounds(L, probs, n, cfg, order, &r, &image, progress, pctx, e);
    if (rc < 0) goto done; /* stopped by progress (1): no rounds, the parameters so far */
    for (int32_t round = 0; round < cfg->rounds && rc == 0; round++) {
        shuffle_(order, n, &r);
        for (int32_t j = 0; j < n; j++) {
            int32_t i = order[j];
            hsdag_nn_params *P = hsdag_learn_params(L[i]);
            if ((rc = hsdag_nn_params_load(P, image.data, image.len, NULL, e)) < 0) break;
            hsdag_learn_set_episodes(L[i], round + 1);
            if ((rc = hsdag_learn_train(L[i], hsdag_learn_sim_eval, probs[i]->sim, NULL, NULL, e)) < 0) break;
            image.len = 0;
            if ((rc = hsdag_nn_params_save(P, &image, e)) < 0) break;
            double lat;
            hsdag_learn_best(L[i], NULL, &lat, NULL);
            if (progress && progress(pctx, round, i, lat)) {
                rc = 1;
                break;
            }
        }
    }
    if (rc >= 0) { /* the final parameters, through graph 0's network */
        int rl = hsdag_nn_params_load(hsdag_learn_params(L[0]), image.data, image.len, NULL, e);
        if (rl == 0) rl = take_values(pol, hsdag_learn_params(L[0]), e);
        if (rl < 0) rc = rl;
    }
done:
    hsdag_buf_free(&image);
    for (int32_t i = 0; L && i < n; i++) hsdag_learn_free(L[i]);
    hsdag_free(L);
    hsdag_free(order);
    return rc;
}

static int train_placeto(hsdag_policy *pol, hsdag_place_problem *const *probs, int32_t n,
                         const hsdag_pretrain_config *cfg, hsdag_pretrain_progress_fn progress, void *pctx,
                         hsdag_err *e)
{
    hsdag_placeto **P = hsdag_calloc((size_t)n, sizeof *P);
    int32_t *order = hsdag_malloc(sizeof(int32_t) * (size_t)n);
    hsdag_placeto_policy *pp = NULL;
    int rc = 0;
    if (!P || !order) {
        rc = hsdag_err_set(e, HSDAG_ENOMEM, "pretrain: out of memory");
        goto done;
    }
    if ((rc = hsdag_placeto_policy_create(&pp, pol->K, &cfg->placeto, e)) < 0) goto done;
    for (int32_t i = 0; i < n && rc == 0; i++) {
        hsdag_placeto_config c = cfg->placeto;
        c.seed = cfg->placeto.seed + (uint64_t)i;
        rc = hsdag_placeto_create(&P[i], probs[i], &c, e);
    }
    if (rc < 0) goto done;
    hsdag_rng r;
    hsdag_rng_seed(&r, cfg->seed);
    for (int32_t round = 0; round < cfg->rounds && rc == 0; round++) {
        shuffle_(order, n, &r);
        for (int32_t j = 0; j < n; j++) {
            int32_t i = order[j];
            if ((rc = hsdag_placeto_train(P[i], pp, hsdag_learn_sim_eval, probs[i]->sim, INT64_MAX / 2, 1,
                                          e)) < 0)
                break;
            double lat;
            hsdag_placeto_best(P[i], NULL, &lat, NULL, NULL);
            if (progress && progress(pctx, round, i, lat)) {
                rc = 1;
                break;
            }
        }
    }
    if (rc >= 0) {
        int rs = take_values(pol, hsdag_placeto_policy_params(pp), e);
        if (rs < 0) rc = rs;
    }
done:
    for (int32_t i = 0; P && i < n; i++) hsdag_placeto_free(P[i]);
    hsdag_free(P);
    hsdag_free(order);
    hsdag_placeto_policy_free(pp);
    return rc;
}

int hsdag_pretrain_train(hsdag_policy **out, hsdag_place_problem *const *probs, int32_t n,
                         const hsdag_pretrain_config *cfg, hsdag_pretrain_progress_fn progress, void *pctx,
                         hsdag_err *e)
{
    *out = NULL;
    if (n < 1) return hsdag_err_set(e, HSDAG_EINVAL, "pretrain: no graphs");
    if (cfg->rounds < 0 || cfg->rounds > 1000000)
        return hsdag_err_set(e, HSDAG_EINVAL, "pretrain: rounds %d out of range", (int)cfg->rounds);
    if (cfg->imitate_rounds < 0 || cfg->imitate_rounds > 1000000 || cfg->imitate_steps < 0 ||
        cfg->imitate_steps > 100000)
        return hsdag_err_set(e, HSDAG_EINVAL, "pretrain: imitation rounds %d or steps %d out of range",
                             (int)cfg->imitate_rounds, (int)cfg->imitate_steps);
    for (int32_t i = 1; i < n; i++)
        if (probs[i]->k != probs[0]->k)
            return hsdag_err_set(e, HSDAG_EINVAL, "pretrain: graph %d has %d devices, graph 0 has %d", (int)i,
                                 (int)probs[i]->k, (int)probs[0]->k);
    hsdag_policy *pol = hsdag_calloc(1, sizeof *pol);
    if (!pol) return hsdag_err_set(e, HSDAG_ENOMEM, "pretrain: out of memory");
    pol->method = cfg->method;
    pol->K = probs[0]->k;
    pol->hcfg = cfg->hsdag;
    pol->pcfg = cfg->placeto;
    hsdag_nn_set_threads(1);
    int rc = cfg->method == HSDAG_POLICY_PLACETO ? train_placeto(pol, probs, n, cfg, progress, pctx, e)
                                                 : train_hsdag(pol, probs, n, cfg, progress, pctx, e);
    if (rc < 0) {
        hsdag_policy_free(pol);
        return rc;
    }
    *out = pol;
    return rc;
}

/* ---- the settings of a policy, as text: one "name value" line per field ---- */

typedef enum { F_I32, F_U32, F_I64, F_U64, F_INT, F_F32, F_F64 } ftype;
typedef struct field {
    const char *name;
    int which; /* 0 = hsdag_learn_config, 1 = hsdag_placeto_config */
    size_t off;
    ftype t;
} field;

#define HF(n, t)                                           \
    {                                                      \
        "hsdag." #n, 0, offsetof(hsdag_learn_config, n), t \
    }
#define PF(n, t)                                               \
    {                                                          \
        "placeto." #n, 1, offsetof(hsdag_placeto_config, n), t \
    }
static const field fields[] = {
    HF(steps, F_I32),
    HF(samples, F_I32),
    HF(seed, F_U64),
    HF(lr, F_F32),
    HF(gamma, F_F64),
    HF(hidden, F_I32),
    HF(embed, F_I32),
    HF(dropout, F_F32),
    HF(gnn, F_INT),
    HF(features, F_U32),
    HF(no_coarsen, F_INT),
    HF(min_groups, F_I32),
    HF(group_mem_frac, F_F64),
    HF(levels, F_I32),
    HF(min_clusters, F_I32),
    HF(fixed_clusters, F_INT),
    HF(state_update, F_INT),
    HF(inherit, F_INT),
    HF(inherit_init, F_F64),
    HF(memory_mask, F_INT),
    HF(update, F_INT),
    HF(baseline, F_INT),
    HF(baseline_decay, F_F64),
    HF(reward, F_INT),
    HF(normalize, F_INT),
    HF(epochs, F_I32),
    HF(clip, F_F64),
    HF(entropy, F_F64),
    HF(entropy_end, F_F64),
    HF(entropy_decay, F_I64),
    HF(infeasible_penalty, F_F64),
    HF(sil, F_F64),
    HF(sil_elite, F_I32),
    HF(offset_lr, F_F64),
    HF(weight_unit_frac, F_F64),
    PF(seed, F_U64),
    PF(hidden, F_I32),
    PF(max_units, F_I32),
    PF(no_coarsen, F_INT),
    PF(lr, F_F32),
    PF(gamma, F_F64),
    PF(baseline_window, F_I32),
    PF(entropy, F_F64),
    PF(init, F_INT),
    PF(infeasible_penalty, F_F64),
};
#undef HF
#undef PF
#define N_FIELDS (sizeof fields / sizeof fields[0])

static void *field_ptr(hsdag_policy *pol, const field *f)
{
    return (char *)(f->which ? (void *)&pol->pcfg : (void *)&pol->hcfg) + f->off;
}

static void settings_write(hsdag_buf *b, const hsdag_policy *pol)
{
    for (size_t i = 0; i < N_FIELDS; i++) {
        const field *f = &fields[i];
        const void *v = field_ptr((hsdag_policy *)pol, f);
        hsdag_buf_printf(b, "%s ", f->name);
        switch (f->t) {
        case F_I32:
            hsdag_buf_printf(b, "%d", (int)*(const int32_t *)v);
            break;
        case F_U32:
            hsdag_buf_printf(b, "%u", *(const unsigned *)v);
            break;
        case F_INT:
            hsdag_buf_printf(b, "%d", *(const int *)v);
            break;
        case F_I64:
            hsdag_buf_printf(b, "%lld", (long long)*(const int64_t *)v);
            break;
        case F_U64:
            hsdag_buf_printf(b, "%llu", (unsigned long long)*(const uint64_t *)v);
            break;
        case F_F32:
            hsdag_buf_double(b, *(const float *)v);
            break;
        case F_F64:
            hsdag_buf_double(b, *(const double *)v);
            break;
        }
        hsdag_buf_printf(b, "\n");
    }
}

/* 0, or -(line number) of a line that is not "known-name number" */
static int settings_read(hsdag_policy *pol, char *txt)
{
    int line = 0;
    for (char *s = txt, *ln; (ln = strsep(&s, "\n"));) {
        line++;
        if (!*ln) continue;
        char *sp = strchr(ln, ' ');
        if (!sp) return -line;
        *sp = 0;
        const field *f = NULL;
        for (size_t i = 0; i < N_FIELDS && !f; i++)
            if (strcmp(fields[i].name, ln) == 0) f = &fields[i];
        if (!f) return -line;
        char *end;
        void *v = field_ptr(pol, f);
        errno = 0;
        if (f->t == F_F32 || f->t == F_F64) {
            double d = strtod(sp + 1, &end);
            if (f->t == F_F32)
                *(float *)v = (float)d;
            else
                *(double *)v = d;
        } else {
            long long x = strtoll(sp + 1, &end, 10);
            if (f->t == F_U64) x = (long long)strtoull(sp + 1, &end, 10);
            if (f->t == F_I32) *(int32_t *)v = (int32_t)x;
            if (f->t == F_U32) *(unsigned *)v = (unsigned)x;
            if (f->t == F_INT) *(int *)v = (int)x;
            if (f->t == F_I64) *(int64_t *)v = (int64_t)x;
            if (f->t == F_U64) *(uint64_t *)v = (uint64_t)x;
        }
        if (*end || end == sp + 1 || errno) return -line;
    }
    return 0;
}

/* ---- policy files ---- */

/* A u32-length string of at most 65536 bytes, copied to the heap; NULL when short, too long or out of memory. */
static char *get_str(hsdag_rd *r)
{
    uint32_t n = hsdag_get_u32(r);
    const char *v = n <= 65536 ? hsdag_get_view(r, n) : NULL;
    if (!v) {
        r->bad = 1;
        return NULL;
    }
    char *str = hsdag_malloc((size_t)n + 1);
    if (!str) return NULL;
    memcpy(str, v, n);
    str[n] = 0;
    return str;
}

int hsdag_policy_save(const hsdag_policy *pol, hsdag_buf *out, hsdag_err *e)
{
    size_t start = out->len;
    hsdag_buf_append(out, POL_MAGIC, 8);
    hsdag_put_u32(out, POL_VERSION);
    hsdag_put_u32(out, (uint32_t)pol->method);
    hsdag_put_u32(out, (uint32_t)pol->K);
    /* the settings, as "name value" lines (a field added later reads back as its default) */
    hsdag_buf cfgtxt = {0};
    settings_write(&cfgtxt, pol);
    hsdag_put_str(out, cfgtxt.oom || !cfgtxt.data ? "" : cfgtxt.data);
    hsdag_buf_free(&cfgtxt);
    hsdag_put_str(out, pol->preset ? pol->preset : "");
    hsdag_put_str(out, pol->note ? pol->note : "");
    hsdag_put_u32(out, (uint32_t)pol->n_tensors);
    hsdag_put_u64(out, pol->table);
    hsdag_put_u64(out, (uint64_t)pol->count);
    hsdag_put_f32s(out, pol->values, pol->count);
    if (out->oom) return hsdag_err_set(e, HSDAG_ENOMEM, "policy: out of memory");
    hsdag_put_u64(out, hsdag_fnv1a64(HSDAG_FNV64_BASIS, out->data + start, out->len - start));
    if (out->oom) return hsdag_err_set(e, HSDAG_ENOMEM, "policy: out of memory");
    return 0;
}

int hsdag_policy_load(hsdag_policy **out, const void *buf, size_t len, const char *what, hsdag_err *e)
{
    *out = NULL;
    if (!what) what = "<buffer>";
    if (len < 16 || memcmp(buf, POL_MAGIC, 8) != 0)
        return hsdag_err_set(e, HSDAG_EPARSE, "%s: not an hsdag policy file (bad magic)", what);
    hsdag_rd r = hsdag_rd_make((const char *)buf + 8, len - 16),
             tail = hsdag_rd_make((const char *)buf + len - 8, 8);
    if (hsdag_get_u64(&tail) != hsdag_fnv1a64(HSDAG_FNV64_BASIS, buf, len - 8))
        return hsdag_err_set(e, HSDAG_EPARSE, "%s: checksum mismatch", what);
    if (hsdag_get_u32(&r) != POL_VERSION)
        return hsdag_err_set(e, HSDAG_EPARSE, "%s: unsupported version", what);
    hsdag_policy *pol = hsdag_calloc(1, sizeof *pol);
    if (!pol) return hsdag_err_set(e, HSDAG_ENOMEM, "policy: out of memory");
    pol->method = (hsdag_policy_method)hsdag_get_u32(&r);
    pol->K = (int32_t)hsdag_get_u32(&r);
    pol->hcfg = hsdag_learn_config_default();
    pol->hcfg.weight_unit_frac = 0; /* files from before the field were trained without weight units */
    pol->pcfg = hsdag_placeto_config_default();
    char *cfgtxt = get_str(&r);
    int srd = cfgtxt ? settings_read(pol, cfgtxt) : -1;
    hsdag_free(cfgtxt);
    pol->preset = get_str(&r);
    pol->note = get_str(&r);
    pol->n_tensors = (int32_t)hsdag_get_u32(&r);
    pol->table = hsdag_get_u64(&r);
    uint64_t cnt = hsdag_get_u64(&r);
    int rc = 0;
    if (r.bad || !pol->preset || !pol->note || cnt > hsdag_rd_left(&r) / 4 || cnt * 4 != hsdag_rd_left(&r))
        rc = hsdag_err_set(e, HSDAG_EPARSE, "%s: truncated or inconsistent policy file", what);
    else if (srd < 0)
        rc = hsdag_err_set(e, HSDAG_EPARSE, "%s: bad settings line %d", what, -srd);
    else if (pol->method > HSDAG_POLICY_PLACETO || pol->K < 1 || pol->K > 64 ||
             pol->hcfg.gnn > HSDAG_NN_GNN_SAGE || pol->pcfg.init > HSDAG_PLACETO_INIT_BEST)
        rc = hsdag_err_set(e, HSDAG_EPARSE, "%s: bad method, device count or setting", what);
    else if (!(pol->values = hsdag_malloc(sizeof(float) * (size_t)(cnt ? cnt : 1))))
        rc = hsdag_err_set(e, HSDAG_ENOMEM, "policy: out of memory");
    else {
        pol->count = (size_t)cnt;
        hsdag_get_f32s(&r, pol->values, pol->count);
    }
    if (rc < 0) {
        hsdag_policy_free(pol);
        return rc;
    }
    *out = pol;
    return 0;
}

int hsdag_policy_read_file(hsdag_policy **out, const char *path, hsdag_err *e)
{
    char *buf = NULL;
    size_t len = 0;
    *out = NULL;
    int rc = hsdag_read_file(&buf, &len, path, 0, e);
    if (rc < 0) return rc;
    rc = hsdag_policy_load(out, buf, len, path, e);
    hsdag_free(buf);
    return rc;
}

int hsdag_policy_find(char *path, size_t cap, hsdag_policy_method m, const char *preset, hsdag_err *e)
{
    char rel[256], what[320];
    snprintf(rel, sizeof rel, "policies/%s/%s.bin", hsdag_policy_method_name(m), preset ? preset : "");
    snprintf(what, sizeof what, "shipped %s policy for device preset '%s'", hsdag_policy_method_name(m),
             preset ? preset : "");
    if (preset && (strchr(preset, '/') || strcmp(preset, "..") == 0)) /* a device file's name, not a preset */
        return hsdag_err_set(e, HSDAG_EIO, "no %s: not a file name", what);
    return hsdag_data_find(path, cap, rel, what, e);
}

int hsdag_policy_find_shipped(char *list, size_t cap, int32_t *n, int *capped, hsdag_policy_method m,
                              hsdag_place_problem *p, hsdag_err *e)
{
    const char *preset = p->devs->name ? p->devs->name : "";
    char one[4096], path[4096];
    *n = 0;
    if (capped) *capped = 0;
    int st = hsdag_policy_find(one, sizeof one, m, preset, e); /* its directory is the preset's */
    uint64_t bound = 0;
    if (st == 0) st = hsdag_place_caps_bind(&bound, p, e);
    if (st < 0) return st;
    int accel = 0; /* the capped ensembles are trained with the accelerators capped */
    for (int32_t d = 0; d < p->k; d++)
        if (((bound >> d) & 1u) && p->devs->dev[d].kind != HSDAG_DEV_CPU) accel = 1;
    const char *sl = strrchr(one, '/');
    size_t used = 0, dl = sl ? (size_t)(sl - one + 1) : 0;
    /* DIR/<preset>.capped.<i>.bin up to the first gap */
    for (int32_t i = 0; accel && i < HSDAG_POLICY_MAX_ENSEMBLE; i++) {
        int w = snprintf(path, sizeof path, "%.*s%s.capped.%d.bin", (int)dl, one, preset, (int)i);
        if (w < 0 || (size_t)w >= sizeof path)
            return hsdag_err_set(e, HSDAG_EINVAL, "shipped policies for '%.100s': path too long", preset);
        if (access(path, F_OK) != 0) {
            if (errno == ENOENT) break;
            return hsdag_err_set(e, HSDAG_EIO, "%s: %s", path, strerror(errno));
        }
        if (used + (size_t)w + 1 > cap)
            return hsdag_err_set(e, HSDAG_EINVAL, "shipped policies for '%.100s': list too long", preset);
        memcpy(list + used, path, (size_t)w + 1);
        used += (size_t)w + 1;
        ++*n;
    }
    if (capped) *capped = *n > 0 ? 1 : accel ? -1 : 0;
    if (*n > 0) return 0;
    if (strlen(one) + 1 > cap) return hsdag_err_set(e, HSDAG_EINVAL, "%s: path too long", one);
    memcpy(list, one, strlen(one) + 1);
    *n = 1;
    return 0;
}

/* ---- placing an unseen graph ---- */

/* The measurement wrapper: every placement of a fine-tuning run passes through one ltrack, so the best and
 * the measurement that found it are counted the same way for both methods. */
static int track_eval(void *ctx, const int32_t *device, double *latency_s, int *feasible, hsdag_err *e)
{
    double cost;
    return ltrack_eval(ctx, device, latency_s, feasible, &cost, e);
}

/* The HSDAG learner for p with the policy's settings and parameters (seed: sampling and dropout). */
static int hsdag_learner(const hsdag_policy *pol, hsdag_place_problem *p, uint64_t seed, int32_t episodes,
                         hsdag_learn **out, hsdag_err *e)
{
    hsdag_learn_config cfg = pol->hcfg;
    cfg.seed = seed;
    cfg.episodes = episodes;
    int rc = hsdag_learn_create_problem(out, p, &cfg, e);
    if (rc == 0) rc = put_values(pol, hsdag_learn_params(*out), e);
    if (rc < 0) {
        hsdag_learn_free(*out);
        *out = NULL;
    }
    return rc;
}

/* Whole fine-tuning episodes leave up to steps x samples - 1 measurements of the budget unspent: they are
 * drawn from the fine-tuned policy (its own seeded stream), so a budget of N measures exactly N. */
static int sample_rest(hsdag_learn *L, ltrack *t, int64_t budget, uint64_t seed, int32_t n, hsdag_err *e)
{
    int32_t *dev = hsdag_alloc_n((size_t)n, sizeof(int32_t), "hsdag", e);
    if (!dev) return HSDAG_ENOMEM;
    hsdag_rng rng;
    hsdag_rng_seed(&rng, seed ^ 0x72657374ull);
    int rc = 0, feas;
    double lat, cost;
    while (rc == 0 && t->evals < budget)
        if ((rc = hsdag_learn_sample(L, &rng, dev, e)) == 0) rc = ltrack_eval(t, dev, &lat, &feas, &cost, e);
    hsdag_free(dev);
    return rc;
}

int hsdag_policy_place(const hsdag_policy *pol, hsdag_place_problem *p, int64_t budget, uint64_t seed,
                       hsdag_learn_eval_fn eval, void *ctx, int32_t *device, hsdag_policy_result *r,
                       hsdag_err *e)
{
    return hsdag_policy_place_ensemble(&pol, 1, p, budget, seed, eval, ctx, device, r, e);
}

int hsdag_policy_place_ensemble(const hsdag_policy *const *pols, int32_t m, hsdag_place_problem *p,
                                int64_t budget, uint64_t seed, hsdag_learn_eval_fn eval, void *ctx,
                                int32_t *device, hsdag_policy_result *r, hsdag_err *e)
{
    memset(r, 0, sizeof *r);
    r->greedy_s = r->best_s = NAN;
    if (m < 1 || m > 64) return hsdag_err_set(e, HSDAG_EINVAL, "policy: an ensemble of %d (1 to 64)", (int)m);
    const hsdag_policy *pol = pols[0];
    for (int32_t i = 1; i < m; i++)
        if (pols[i]->method != HSDAG_POLICY_HSDAG || pol->method != HSDAG_POLICY_HSDAG)
            return hsdag_err_set(e, HSDAG_EINVAL, "policy: only HSDAG policies make an ensemble");
        else if (pols[i]->K != pol->K || pols[i]->count != pol->count || pols[i]->table != pol->table ||
                 pols[i]->hcfg.features != pol->hcfg.features || pols[i]->hcfg.levels != pol->hcfg.levels)
            return hsdag_err_set(e, HSDAG_EINVAL,
                                 "policy: the ensemble's policy #%d has another network (devices, features, "
                                 "levels or tensors) than #1",
                                 (int)i + 1);
    if (pol->K != p->k)
        return hsdag_err_set(e, HSDAG_EINVAL, "policy: made for %d devices, the problem has %d", (int)pol->K,
                             (int)p->k);
    const float *vals[64];
    for (int32_t i = 0; i < m; i++) vals[i] = pols[i]->values;
    hsdag_nn_set_threads(1);
    hsdag_placeto *P = NULL;
    hsdag_placeto_policy *pp = NULL;
    hsdag_learn *L = NULL;
    hsdag_placeto_config pc = pol->pcfg;
    pc.seed = seed;
    /* HSDAG fine-tuning: whole episodes of steps x samples measurements after the one-pass placement */
    int64_t per = (int64_t)pol->hcfg.steps * (pol->hcfg.samples > 0 ? pol->hcfg.samples : 1);
    int32_t episodes = budget > 1 ? (int32_t)((budget - 1) / per) : 0;
    int rc;
    if (pol->method == HSDAG_POLICY_PLACETO) {
        if ((rc = hsdag_placeto_policy_create(&pp, p->k, &pc, e)) < 0 ||
            (rc = put_values(pol, hsdag_placeto_policy_params(pp), e)) < 0 ||
            (rc = hsdag_placeto_create(&P, p, &pc, e)) < 0 ||
            (rc = hsdag_placeto_greedy_fit(P, pp, p->sim, device, &r->fit_moved, e)) < 0)
            goto done;
    } else if ((rc = hsdag_learner(pol, p, seed, episodes, &L, e)) < 0 ||
               (rc = hsdag_learn_greedy_fit_mean(L, vals, m > 1 ? m : 0, p->sim, device, &r->fit_moved, e)) <
                   0)
        goto done;
    if (budget <= 0) goto done;
    /* fine-tuning: the one-pass placement is the first measurement */
    ltrack t;
    if ((rc = ltrack_init(&t, p->n, eval, ctx, 1.0, e)) < 0) goto done;
    double cost;
    if ((rc = ltrack_eval(&t, device, &r->greedy_s, &r->greedy_feasible, &cost, e)) == 0) {
        if (pol->method == HSDAG_POLICY_PLACETO)
            rc = hsdag_placeto_train(P, pp, track_eval, &t, budget - 1, -1, e);
        else if (episodes > 0)
            rc = hsdag_learn_train(L, track_eval, &t, NULL, NULL, e);
        if (rc > 0) rc = 0;
        if (rc == 0 && pol->method != HSDAG_POLICY_PLACETO) rc = sample_rest(L, &t, budget, seed, p->n, e);
    }
    if (rc == 0) {
        r->evals = t.evals;
        if (isfinite(t.best_lat)) {
            memcpy(device, t.best, sizeof(int32_t) * (size_t)p->n);
            r->best_s = t.best_lat;
            r->best_at = t.best_at;
        } else /* nothing feasible measured: keep the one-pass placement (the caller's scoring says so) */
            r->best_s = r->greedy_s;
    }
    ltrack_free(&t);
done:
    hsdag_learn_free(L);
    hsdag_placeto_free(P);
    hsdag_placeto_policy_free(pp);
    return rc;
}

/* ---- result JSON ---- */

int hsdag_pretrain_run_write_json(hsdag_buf *out, const hsdag_pretrain_json_info *info)
{
    hsdag_jw w;
    hsdag_jw_begin(&w, out, "hsdag-pretraining-run/1");
    hsdag_jw_str(&w, "method", info->method);
    hsdag_jw_str(&w, "devices", info->devices);
    hsdag_jw_int(&w, "seed", info->seed);
    hsdag_jw_int(&w, "rounds", info->rounds);
    hsdag_jw_str(&w, "policy", info->policy);
    hsdag_jw_str(&w, "out_dir", info->out_dir);
    hsdag_jw_num(&w, "wall_s", info->wall_s);
    hsdag_jw_array(&w, "graphs");
    for (int32_t i = 0; i < info->n; i++) {
        hsdag_jw_object(&w, NULL);
        hsdag_jw_str(&w, "model", info->models[i]);
        hsdag_jw_num(&w, "best_latency_ms", info->best_s[i] * 1e3); /* infinity: null */
        hsdag_jw_close(&w);
    }
    hsdag_jw_close(&w);
    return hsdag_jw_end(&w);
}

/* policy.c - the built-in partitioning policies of `hsdag cluster` and the one-episode runner.
 * Not here: the learned GNN policy (src/learn/pacml_*.c; "learned[:DIR]" episodes run through
 *   pacml_env.c, since its network acts on whole episodes, not through hsdag_cluster_policy_act).
 * Entry points: hsdag_cluster_policies, hsdag_cluster_policy_parse, hsdag_cluster_policy_name,
 * hsdag_cluster_policy_act, hsdag_cluster_run. */
#include "cluster_internal.h"

#include <math.h>
#include <string.h>

/* The policies in display order, one line each (for --help); hsdag_cluster_policy_parse accepts these. */
static const hsdag_cluster_policy_info policy_table[] = {
    {"para-max", "the largest valid degree (the paper's Para_max)"},
    {"para-min", "the smallest valid degree"},
    {"random", "uniform over the valid non-zero degrees (the paper's Random)"},
    {"fixed:K", "always degree K (0 if not valid)"},
    {"acceptable-jct", "the smallest valid degree whose cached lookahead JCT meets the deadline"},
    {"sequential", "always degree 1 (no partitioning)"},
    {"lookahead[:H:F]", "our heuristic: looks H arrivals ahead, prefers degrees >= F (docs/pacml.md)"},
    {"learned[:DIR]", "a learned GNN policy: DIR/policy.bin from 'hsdag cluster train', or the shipped one "
                      "for the run's beta"},
};

const hsdag_cluster_policy_info *hsdag_cluster_policies(int32_t *n)
{
    *n = (int32_t)(sizeof policy_table / sizeof policy_table[0]);
    return policy_table;
}

int hsdag_cluster_policy_parse(hsdag_cluster_policy *p, const char *s, hsdag_err *e)
{
    memset(p, 0, sizeof *p);
    if (!s) return hsdag_err_set(e, HSDAG_EINVAL, "policy: missing");
    if (!strcmp(s, "para-max"))
        p->kind = HSDAG_POL_PARA_MAX;
    else if (!strcmp(s, "para-min"))
        p->kind = HSDAG_POL_PARA_MIN;
    else if (!strcmp(s, "random"))
        p->kind = HSDAG_POL_RANDOM;
    else if (!strcmp(s, "acceptable-jct"))
        p->kind = HSDAG_POL_ACCEPTABLE_JCT;
    else if (!strcmp(s, "sequential"))
        p->kind = HSDAG_POL_SEQUENTIAL;
    else if (!strcmp(s, "lookahead")) {
        p->kind = HSDAG_POL_LOOKAHEAD;
        p->fixed = 3;  /* arrivals looked ahead */
        p->floor_ = 4; /* preferred minimum degree */
    } else if (!strncmp(s, "lookahead:", 10)) {
        int h = 0, f = 0, used = 0;
        if (sscanf(s + 10, "%d:%d%n", &h, &f, &used) != 2 || s[10 + used] || h < 1 || h > 100 || f < 1 ||
            f > HSDAG_CLUSTER_MAX_DEGREE)
            return hsdag_err_set(e, HSDAG_EINVAL,
                                 "policy '%s': expected lookahead:H:F (H 1..100 arrivals, F 1..%d)", s,
                                 HSDAG_CLUSTER_MAX_DEGREE);
        p->kind = HSDAG_POL_LOOKAHEAD;
        p->fixed = h;
        p->floor_ = f;
    } else if (!strncmp(s, "fixed:", 6)) {
        char *end = NULL;
        long k = strtol(s + 6, &end, 10);
        if (!s[6] || *end || k < 0 || k > HSDAG_CLUSTER_MAX_DEGREE)
            return hsdag_err_set(e, HSDAG_EINVAL, "policy '%s': K of fixed:K must be 0..%d", s,
                                 HSDAG_CLUSTER_MAX_DEGREE);
        p->kind = HSDAG_POL_FIXED;
        p->fixed = (int)k;
    } else if (!strcmp(s, "learned") || !strncmp(s, "learned:", 8)) {
        p->kind = HSDAG_POL_LEARNED;
        if (s[7] == ':') {
            if (strlen(s + 8) >= sizeof p->dir)
                return hsdag_err_set(e, HSDAG_EINVAL, "policy '%s': directory too long", s);
            strcpy(p->dir, s + 8);
        }
    } else {
        return hsdag_err_set(
            e, HSDAG_EINVAL,
            "policy '%s': unknown (para-max, para-min, random, fixed:K, acceptable-jct, sequential, "
            "lookahead[:H:F], learned[:DIR])",
            s);
    }
    return 0;
}

const char *hsdag_cluster_policy_name(const hsdag_cluster_policy *p, char *buf, size_t cap)
{
    static const char *names[] = {"para-max",       "para-min",   "random",    "fixed",
                                  "acceptable-jct", "sequential", "lookahead", "learned"};
    if (p->kind == HSDAG_POL_FIXED)
        snprintf(buf, cap, "fixed:%d", p->fixed);
    else if (p->kind == HSDAG_POL_LOOKAHEAD && (p->fixed != 3 || p->floor_ != 4))
        snprintf(buf, cap, "lookahead:%d:%d", p->fixed, p->floor_);
    else if (p->kind == HSDAG_POL_LEARNED && p->dir[0])
        snprintf(buf, cap, "learned:%s", p->dir);
    else
        snprintf(buf, cap, "%s", names[p->kind]);
    return buf;
}

int hsdag_cluster_policy_act(const hsdag_cluster_policy *p, const hsdag_cluster *env, hsdag_rng *rng,
                             int *action, hsdag_err *e)
{
    const hsdag_cluster_obs *o = hsdag_cluster_observe(env);
    if (!o) return hsdag_err_set(e, HSDAG_EINVAL, "cluster: episode is done");
    int a = 0;
    switch (p->kind) {
    case HSDAG_POL_PARA_MAX:
        for (int k = HSDAG_CLUSTER_N_ACTIONS - 1; k > 0 && !a; k--)
            if (o->mask[k]) a = k;
        break;
    case HSDAG_POL_PARA_MIN:
        for (int k = 1; k < HSDAG_CLUSTER_N_ACTIONS && !a; k++)
            if (o->mask[k]) a = k;
        break;
    case HSDAG_POL_SEQUENTIAL:
        a = o->mask[1] ? 1 : 0;
        break;
    case HSDAG_POL_FIXED:
        a = o->mask[p->fixed] ? p->fixed : 0;
        break;
    case HSDAG_POL_RANDOM: {
        int valid[HSDAG_CLUSTER_N_ACTIONS], nv = 0;
        for (int k = 1; k < HSDAG_CLUSTER_N_ACTIONS; k++)
            if (o->mask[k]) valid[nv++] = k;
        a = nv ? valid[hsdag_rng_below(rng, (uint32_t)nv)] : 0;
        break;
    }
    case HSDAG_POL_ACCEPTABLE_JCT:
        for (int k = 1; k < HSDAG_CLUSTER_N_ACTIONS && !a; k++)
            if (o->mask[k] && o->m->jct[k] <= o->max_jct) a = k;
        break;
    case HSDAG_POL_LOOKAHEAD:
        a = cl_env_lookahead_action(env, p->fixed, p->floor_);
        break;
    case HSDAG_POL_LEARNED:
        return hsdag_err_set(
            e, HSDAG_EUNSUPPORTED,
            "policy 'learned%s%s': the learned policy runs whole episodes (hsdag_cluster_run)",
            p->dir[0] ? ":" : "", p->dir);
    }
    *action = a;
    return 0;
}

int hsdag_cluster_run(hsdag_cluster *env, const hsdag_cluster_policy *p, uint64_t seed,
                      hsdag_cluster_metrics *m, hsdag_err *e)
{
    if (p->kind == HSDAG_POL_LEARNED) return cl_pacml_run(env, p->dir, seed, m, e);
    hsdag_rng rng;
    hsdag_rng_seed(&rng, seed ^ 0x5DEECE66Dull);
    hsdag_cluster_reset(env, seed);
    while (!hsdag_cluster_done(env)) {
        int a = 0;
        int rc = hsdag_cluster_policy_act(p, env, &rng, &a, e);
        if (rc < 0) return rc;
        hsdag_cluster_step(env, a, NULL);
    }
    hsdag_cluster_metrics_get(env, m);
    return 0;
}

/* result_json.c - the result documents of the PAC-ML cluster commands: one episode
 * ("hsdag-cluster-episode/1"), a comparison of policies x beta distributions over seeds
 * ("hsdag-cluster-comparison/1", also as a markdown table) and the job models ("hsdag-cluster-models/1").
 * Not here: running episodes (policy.c), the key list (docs/formats.md, "Result JSON").
 * Entry points: hsdag_cluster_episode_write_json, hsdag_cluster_compare_write_json,
 *   hsdag_cluster_compare_write_markdown, hsdag_cluster_models_write_json.
 */
#include "cluster_internal.h"

#include <math.h>
#include <string.h>

static void rj_beta(hsdag_jw *w, char beta)
{
    char s[2] = {beta, 0};
    hsdag_jw_str(w, "beta", s);
}

static void rj_metrics(hsdag_jw *w, const hsdag_cluster_metrics *m)
{
    hsdag_jw_num(w, "blocking_rate", m->blocking_rate);
    hsdag_jw_num(w, "acceptance_rate", m->acceptance_rate);
    hsdag_jw_num(w, "throughput", m->throughput);
    hsdag_jw_num(w, "mean_jct", m->mean_jct);
    hsdag_jw_num(w, "mean_speedup", m->mean_speedup);
    hsdag_jw_num(w, "utilisation", m->utilisation);
    hsdag_jw_int(w, "jobs_arrived", (long long)m->jobs_arrived);
    hsdag_jw_int(w, "jobs_decided", (long long)m->jobs_decided);
    hsdag_jw_int(w, "jobs_blocked", (long long)m->jobs_blocked);
    hsdag_jw_int(w, "jobs_completed", (long long)m->jobs_completed);
    hsdag_jw_int(w, "blocked_action0", (long long)m->blocked_action0);
    hsdag_jw_int(w, "blocked_placement", (long long)m->blocked_placement);
    hsdag_jw_int(w, "blocked_jct", (long long)m->blocked_jct);
    hsdag_jw_int(w, "blocked_horizon", (long long)m->blocked_horizon);
    hsdag_jw_int(w, "refused_no_worker", (long long)m->refused_no_worker);
    hsdag_jw_int(w, "refused_no_fit", (long long)m->refused_no_fit);
    hsdag_jw_int(w, "refused_by_choice", (long long)m->refused_by_choice);
    hsdag_jw_array(w, "decisions_per_degree");
    for (int a = 0; a < HSDAG_CLUSTER_N_ACTIONS; a++)
        hsdag_jw_int(w, NULL, (long long)m->decisions_per_degree[a]);
    hsdag_jw_close(w);
    hsdag_jw_num(w, "return", m->return_);
}

int hsdag_cluster_episode_write_json(hsdag_buf *out, const hsdag_cluster_config *c, const char *policy,
                                     uint64_t seed, const hsdag_cluster_metrics *m, double wall_s,
                                     double cpu_s, int32_t repeat)
{
    hsdag_jw w;
    hsdag_jw_begin(&w, out, "hsdag-cluster-episode/1");
    hsdag_jw_str(&w, "policy", policy);
    rj_beta(&w, c->beta);
    hsdag_jw_int(&w, "seed", (long long)seed);
    hsdag_jw_bool(&w, "time_unit_fix", c->time_unit_fix);
    rj_metrics(&w, m);
    hsdag_jw_num(&w, "wall_s", wall_s);
    hsdag_jw_num(&w, "cpu_s", cpu_s);
    hsdag_jw_int(&w, "repeat", repeat);
    return hsdag_jw_end(&w);
}

/* mean and sample standard deviation (0 for one value) */
static void rj_mean_std(const double *x, int32_t n, double *mean, double *sd)
{
    double s = 0, q = 0;
    for (int32_t i = 0; i < n; i++) s += x[i];
    *mean = n ? s / n : NAN;
    for (int32_t i = 0; i < n; i++) q += (x[i] - *mean) * (x[i] - *mean);
    *sd = n > 1 ? sqrt(q / (n - 1)) : 0.0;
}

/* arrivals of one episode: t = 0, T, ..., up to the horizon */
static long long rj_arrivals(const hsdag_cluster_config *c)
{
    return (long long)(floor(c->horizon / c->interarrival * (1 + 1e-12)) + 1);
}

int hsdag_cluster_compare_write_json(hsdag_buf *out, const hsdag_cluster_config *c,
                                     const hsdag_cluster_comparison *cmp)
{
    int32_t nb = (int32_t)strlen(cmp->betas), ns = cmp->n_seeds;
    hsdag_jw w;
    hsdag_jw_begin(&w, out, "hsdag-cluster-comparison/1");
    hsdag_jw_bool(&w, "time_unit_fix", c->time_unit_fix);
    hsdag_jw_int(&w, "jobs_arrived", rj_arrivals(c));
    hsdag_jw_array(&w, "seeds");
    for (int32_t i = 0; i < ns; i++) hsdag_jw_int(&w, NULL, (long long)cmp->seeds[i]);
    hsdag_jw_close(&w);
    hsdag_jw_array(&w, "results");
    for (int32_t pi = 0; pi < cmp->n_policies; pi++)
        for (int32_t bi = 0; bi < nb; bi++) {
            size_t k = ((size_t)pi * nb + bi) * ns;
            hsdag_jw_object(&w, NULL);
            hsdag_jw_str(&w, "policy", cmp->policies[pi]);
            rj_beta(&w, cmp->betas[bi]);
            const double *vals[2] = {cmp->blocking + k, cmp->throughput + k};
            const char *key[2] = {"blocking_rate", "throughput"};
            for (int q = 0; q < 2; q++) {
                double mu, sd;
                char k_mean[40], k_std[40], k_seed[40];
                rj_mean_std(vals[q], ns, &mu, &sd);
                snprintf(k_mean, sizeof k_mean, "%s_mean", key[q]);
                snprintf(k_std, sizeof k_std, "%s_std", key[q]);
                snprintf(k_seed, sizeof k_seed, "%s_per_seed", key[q]);
                hsdag_jw_num(&w, k_mean, mu);
                hsdag_jw_num(&w, k_std, sd);
                hsdag_jw_array(&w, k_seed);
                for (int32_t si = 0; si < ns; si++) hsdag_jw_num(&w, NULL, vals[q][si]);
                hsdag_jw_close(&w);
            }
            hsdag_jw_close(&w);
        }
    hsdag_jw_close(&w);
    hsdag_jw_num(&w, "wall_s", cmp->median_wall_s);
    return hsdag_jw_end(&w);
}

int hsdag_cluster_compare_write_markdown(hsdag_buf *b, const hsdag_cluster_config *c,
                                         const hsdag_cluster_comparison *cmp)
{
    int32_t nb = (int32_t)strlen(cmp->betas), ns = cmp->n_seeds;
    long long arr = rj_arrivals(c);
    long long dec = (double)(arr - 1) * c->interarrival >= c->horizon ? arr - 1 : arr;
    hsdag_buf_printf(
        b,
        "PAC-ML cluster, %s: blocking_rate (jobs_blocked / jobs_arrived; lower is better) and "
        "throughput (mean demand total throughput, B per time unit; higher is better), mean ± std "
        "over seeds",
        c->time_unit_fix ? "--time-unit-fix (communication in ms)" : "reference units");
    for (int32_t si = 0; si < ns; si++)
        hsdag_buf_printf(b, "%s%llu", si ? "," : " ", (unsigned long long)cmp->seeds[si]);
    hsdag_buf_printf(b, ". Each episode has %lld arrivals (t = 0, %g, ..., %g)", arr, c->interarrival,
                     (double)(arr - 1) * c->interarrival);
    if (dec < arr)
        hsdag_buf_printf(b,
                         "; the one at t = horizon is counted in jobs_arrived but gets no decision, so %lld "
                         "jobs are decided",
                         dec);
    hsdag_buf_printf(b, ".\n\n| policy |");
    for (int32_t bi = 0; bi < nb; bi++)
        hsdag_buf_printf(b, " blocking_rate %c | throughput %c |", cmp->betas[bi], cmp->betas[bi]);
    hsdag_buf_printf(b, "\n|---|");
    for (int32_t bi = 0; bi < nb; bi++) hsdag_buf_printf(b, "---|---|");
    hsdag_buf_printf(b, "\n");
    for (int32_t pi = 0; pi < cmp->n_policies; pi++) {
        hsdag_buf_printf(b, "| %s |", cmp->policies[pi]);
        for (int32_t bi = 0; bi < nb; bi++) {
            double mb, sb, mt, st;
            size_t k = ((size_t)pi * nb + bi) * ns;
            rj_mean_std(cmp->blocking + k, ns, &mb, &sb);
            rj_mean_std(cmp->throughput + k, ns, &mt, &st);
            hsdag_buf_printf(b, " %.3f ± %.3f | %.3g ± %.2g |", mb, sb, mt, st);
        }
        hsdag_buf_printf(b, "\n");
    }
    hsdag_buf_printf(b, "\n%lld episodes; median wall time per episode %.2f ms\n",
                     (long long)cmp->n_policies * nb * ns, cmp->median_wall_s * 1e3);
    return b->oom ? HSDAG_ENOMEM : 0;
}

int hsdag_cluster_models_write_json(hsdag_buf *out, const hsdag_cluster *env)
{
    hsdag_jw w;
    hsdag_jw_begin(&w, out, "hsdag-cluster-models/1");
    hsdag_jw_array(&w, "models");
    for (int32_t i = 0; i < hsdag_cluster_n_models(env); i++) {
        const hsdag_cluster_model *m = hsdag_cluster_model_get(env, i);
        hsdag_jw_object(&w, NULL);
        hsdag_jw_str(&w, "name", m->name);
        hsdag_jw_int(&w, "fwd_nodes", m->n_fwd);
        hsdag_jw_int(&w, "nodes", m->job->n_nodes);
        hsdag_jw_int(&w, "edges", m->job->n_edges);
        hsdag_jw_num(&w, "jct_seq", m->jct_seq);
        hsdag_jw_num(&w, "total_op_mem", m->total_op_mem);
        hsdag_jw_num(&w, "total_dep_size", m->total_dep_size);
        hsdag_jw_int(&w, "depth", m->max_depth);
        hsdag_jw_object(&w, "jct");
        for (int a = 1; a <= HSDAG_CLUSTER_MAX_DEGREE; a++) {
            if (!isfinite(m->jct[a])) continue;
            char k[8];
            snprintf(k, sizeof k, "%d", a);
            hsdag_jw_num(&w, k, m->jct[a]);
        }
        hsdag_jw_close(&w);
        hsdag_jw_close(&w);
    }
    hsdag_jw_close(&w);
    return hsdag_jw_end(&w);
}

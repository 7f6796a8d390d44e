/* run_json.c - the training-run documents of both learners: "hsdag-training-run/1" (`hsdag train`: the best
 * placement found, its measured and simulated latency, the bound, the budget and the run's files) and
 * "hsdag-cluster-training-run/1" (`hsdag cluster train`: PPO iterations and the best greedy evaluation).
 * Not here: training (train.c, pacml_ppo.c), the key list (docs/formats.md, "Result JSON").
 * Entry points: hsdag_learn_run_write_json, hsdag_pacml_run_write_json, hsdag_pacml_dqn_run_write_json.
 */
#include "hsdag/learn.h"
#include "hsdag/pacml.h"

#include <math.h>

int hsdag_learn_run_write_json(hsdag_buf *out, const hsdag_learn *L, const hsdag_place_problem *p,
                               const hsdag_place_result *best, const hsdag_learn_json_info *info)
{
    const int32_t *dev;
    double lat;
    int32_t best_ep;
    hsdag_learn_best(L, &dev, &lat, &best_ep);
    hsdag_jw w;
    hsdag_jw_begin(&w, out, "hsdag-training-run/1");
    hsdag_costs_write_json_head(&w, p->c, p->sem, p->obj, info->model);
    const hsdag_learn_config *c = info->cfg;
    long long learned = (long long)hsdag_learn_evals(L);
    hsdag_jw_str(&w, "method", "hsdag");
    hsdag_jw_str(&w, "mode", c->update == HSDAG_LEARN_EPISODE ? "paper" : "default");
    hsdag_jw_int(&w, "seed", (long long)c->seed);
    hsdag_jw_num(&w, "latency_ms", info->latency_s * 1e3);
    hsdag_jw_num(&w, "measured_ms", lat * 1e3);
    hsdag_jw_num(&w, "simulated_ms", best->latency_s * 1e3);
    hsdag_jw_num(&w, "learned_ms", info->learned_s * 1e3);
    hsdag_jw_num(&w, "polished_ms", info->polished_s * 1e3);
    hsdag_jw_str(&w, "warm_start", info->warm_start);
    hsdag_jw_num(&w, "warm_start_ms", info->warm_start ? info->warm_start_s * 1e3 : NAN);
    hsdag_jw_num(&w, "lower_bound_ms", best->lower_bound_s * 1e3);
    hsdag_jw_str(&w, "lower_bound_rule", best->lower_bound_rule);
    hsdag_jw_num(&w, "gap", best->gap);
    hsdag_jw_bool(&w, "feasible", best->feasible);
    hsdag_jw_bool(&w, "measured", info->measured);
    hsdag_jw_int(&w, "best_episode", best_ep);
    hsdag_jw_int(&w, "placements_evaluated",
                 learned + (long long)info->warm_evals + (long long)info->polish_evals);
    hsdag_jw_int(&w, "learned_placements", learned);
    if (info->measured)
        hsdag_jw_int(&w, "measure_runs", (long long)info->measure_runs);
    else
        hsdag_jw_null(&w, "measure_runs");
    hsdag_jw_int(&w, "polish_evals", (long long)info->polish_evals);
    hsdag_jw_int(&w, "episodes", c->episodes);
    hsdag_jw_int(&w, "steps", c->steps);
    hsdag_jw_int(&w, "samples", c->samples);
    hsdag_jw_int(&w, "groups", hsdag_learn_groups(L));
    hsdag_jw_int(&w, "params", (long long)hsdag_learn_param_count(L));
    hsdag_jw_num(&w, "noise", info->noise);
    hsdag_jw_num(&w, "wall_s", info->wall_s);
    hsdag_jw_str(&w, "out_dir", info->out_dir);
    hsdag_jw_str(&w, "out", info->out);
    return hsdag_jw_end(&w);
}

int hsdag_pacml_run_write_json(hsdag_buf *out, const hsdag_pacml_trainer *t, char beta,
                               const hsdag_pacml_iter_stats *last, const char *out_dir)
{
    int32_t bi = 0;
    double best = hsdag_pacml_trainer_best(t, &bi);
    char b[2] = {beta, 0};
    hsdag_jw w;
    hsdag_jw_begin(&w, out, "hsdag-cluster-training-run/1");
    hsdag_jw_str(&w, "algo", "ppo");
    hsdag_jw_str(&w, "beta", b);
    hsdag_jw_int(&w, "seed", (long long)hsdag_pacml_trainer_config(t)->seed);
    hsdag_jw_int(&w, "iterations", hsdag_pacml_trainer_iteration(t));
    hsdag_jw_int(&w, "episodes",
                 (long long)hsdag_pacml_trainer_iteration(t) *
                     hsdag_pacml_trainer_config(t)->episodes_per_iter);
    hsdag_jw_int(&w, "decisions", (long long)last->steps);
    hsdag_jw_int(&w, "best_iteration", bi);
    hsdag_jw_num(&w, "best_eval_blocking", best);
    hsdag_jw_num(&w, "wall_s", last->wall_s);
    hsdag_jw_str(&w, "out_dir", out_dir);
    return hsdag_jw_end(&w);
}

int hsdag_pacml_dqn_run_write_json(hsdag_buf *out, const hsdag_pacml_dqn *t, const hsdag_pacml_dqn_config *c,
                                   char beta, const hsdag_pacml_dqn_stats *last, const char *out_dir)
{
    int32_t bi = 0;
    double best = hsdag_pacml_dqn_best(t, &bi);
    char b[2] = {beta, 0};
    hsdag_jw w;
    hsdag_jw_begin(&w, out, "hsdag-cluster-training-run/1");
    hsdag_jw_str(&w, "algo", "dqn");
    hsdag_jw_str(&w, "beta", b);
    hsdag_jw_int(&w, "seed", (long long)c->seed);
    hsdag_jw_int(&w, "iterations", hsdag_pacml_dqn_iteration(t));
    hsdag_jw_int(&w, "episodes", (long long)last->episodes);
    hsdag_jw_int(&w, "decisions", (long long)last->steps);
    hsdag_jw_int(&w, "best_iteration", bi);
    hsdag_jw_num(&w, "best_eval_blocking", best);
    hsdag_jw_num(&w, "wall_s", last->wall_s);
    hsdag_jw_str(&w, "out_dir", out_dir);
    return hsdag_jw_end(&w);
}

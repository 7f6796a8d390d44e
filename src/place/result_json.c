/* result_json.c - the JSON documents of placement results: one placement ("hsdag-placement-result/1", for
 * place, simulate and the learned placers), a comparison of methods ("hsdag-comparison/1") and of a
 * benchmark suite's instances ("hsdag-suite-comparison/1").
 * Not here: the key list and meanings (docs/formats.md, "Result JSON", checked by tests/cli/schema.sh),
 * the writer itself (src/core/jsonw.c) or printing (tools/).
 * Entry points: hsdag_place_result_write_json, hsdag_place_compare_write_json,
 *   hsdag_place_rows_contiguous_bound, hsdag_place_rows_apply_contiguous_bound,
 *   hsdag_place_suite_json_begin/instance.
 */
#include "place_int.h"

/* One {device name: value} object. */
static void rj_per_device(hsdag_jw *w, const char *key, const hsdag_devices *d, const double *v)
{
    hsdag_jw_object(w, key);
    for (int32_t k = 0; k < d->n; k++) hsdag_jw_num(w, d->dev[k].name, v[k]);
    hsdag_jw_close(w);
}

static void rj_seed(hsdag_jw *w, const hsdag_place_json_info *info)
{
    if (info && info->seed >= 0)
        hsdag_jw_int(w, "seed", (long long)info->seed);
    else
        hsdag_jw_null(w, "seed");
}

/* A learned placer's best episode (0-based), null for every other method. */
static void rj_episode(hsdag_jw *w, int32_t best_episode)
{
    if (best_episode >= 0)
        hsdag_jw_int(w, "best_episode", best_episode);
    else
        hsdag_jw_null(w, "best_episode");
}

int hsdag_place_result_write_json(hsdag_buf *out, const hsdag_place_problem *p, const int32_t *device,
                                  const hsdag_place_result *r, const hsdag_place_json_info *info)
{
    const hsdag_devices *d = p->devs;
    const hsdag_sim_result *s = &r->sim;
    int64_t ops[HSDAG_MAX_DEVICES] = {0};
    double cap[HSDAG_MAX_DEVICES];
    for (int32_t v = 0; v < p->n; v++) ops[device[v]]++;
    for (int32_t k = 0; k < d->n; k++) cap[k] = d->dev[k].mem_capacity;
    double busy[HSDAG_MAX_DEVICES];
    for (int32_t k = 0; k < d->n; k++) busy[k] = s->busy_s[k] * 1e3;
    hsdag_jw w;
    hsdag_jw_begin(&w, out, "hsdag-placement-result/1");
    hsdag_costs_write_json_head(&w, p->c, p->sem, p->obj, info ? info->model : NULL);
    hsdag_jw_str(&w, "method", info ? info->method : NULL);
    rj_seed(&w, info);
    hsdag_jw_str(&w, "placement", info ? info->placement : NULL);
    hsdag_jw_str(&w, "placement_format", info ? info->placement_format : NULL);
    hsdag_jw_num(&w, "objective_ms", r->objective_s * 1e3);
    hsdag_jw_num(&w, "latency_ms", r->latency_s * 1e3);
    hsdag_jw_bool(&w, "feasible", r->feasible);
    hsdag_jw_bool(&w, "contiguous", r->contiguous);
    hsdag_jw_num(&w, "lower_bound_ms", r->lower_bound_s * 1e3);
    hsdag_jw_str(&w, "lower_bound_rule", r->lower_bound_rule);
    hsdag_jw_num(&w, "gap", r->gap);
    hsdag_jw_num(&w, "wall_s", r->place_s);
    hsdag_jw_num(&w, "cpu_s", r->cpu_s);
    hsdag_jw_bool(&w, "optimal", r->rep.optimal);
    hsdag_jw_num(&w, "method_bound_ms", r->rep.bound_s * 1e3);
    hsdag_jw_bool(&w, "method_bound_contiguous", r->rep.bound_contiguous);
    hsdag_jw_int(&w, "placements_evaluated", (long long)r->rep.evals);
    rj_episode(&w, r->rep.best_episode);
    hsdag_jw_num(&w, "lp_cpu_s", r->rep.lp_cpu_s);
    hsdag_jw_num(&w, "branch_and_cut_cpu_s", r->rep.branch_and_cut_cpu_s);
    hsdag_jw_str(&w, "note", r->rep.note);
    hsdag_jw_num(&w, "max_excess_bytes", s->max_excess_bytes);
    hsdag_jw_int(&w, "unsupported_ops", s->n_unsupported);
    hsdag_jw_int(&w, "color_violations", s->n_color_violations);
    hsdag_jw_int(&w, "accelerators_used", s->accels_used);
    hsdag_jw_int(&w, "max_accelerators", d->max_accels_used);
    hsdag_jw_int(&w, "transfers", (long long)s->n_xfers);
    hsdag_jw_num(&w, "transfer_bytes", s->xfer_bytes);
    hsdag_jw_num(&w, "transfer_ms", s->xfer_s * 1e3);
    if (s->semantics == HSDAG_SEM_TARNAWSKI) {
        hsdag_jw_int(&w, "blocks", s->n_blocks);
        hsdag_jw_int(&w, "cycle_cuts", s->n_cycle_cuts);
    } else {
        hsdag_jw_null(&w, "blocks");
        hsdag_jw_null(&w, "cycle_cuts");
    }
    hsdag_jw_object(&w, "ops_per_device");
    for (int32_t k = 0; k < d->n; k++) hsdag_jw_int(&w, d->dev[k].name, (long long)ops[k]);
    hsdag_jw_close(&w);
    rj_per_device(&w, "busy_ms", d, busy);
    rj_per_device(&w, "peak_memory_bytes", d, s->peak_mem_bytes);
    rj_per_device(&w, "excess_bytes", d, s->excess_bytes);
    rj_per_device(&w, "capacity_bytes", d, cap);
    if (s->load_s) {
        double load[HSDAG_MAX_DEVICES];
        for (int32_t k = 0; k < d->n; k++) load[k] = s->load_s[k] * 1e3;
        rj_per_device(&w, "load_ms", d, load);
    } else {
        hsdag_jw_null(&w, "load_ms");
    }
    hsdag_jw_num(&w, "evals_per_s", info ? info->evals_per_s : NAN);
    return hsdag_jw_end(&w);
}

double hsdag_place_rows_contiguous_bound(const hsdag_place_compare_row *rows, int32_t n_rows)
{
    double cb = NAN;
    for (int32_t i = 0; i < n_rows; i++) {
        const hsdag_place_report *rep = &rows[i].r.rep;
        if (rows[i].status == 0 && rep->bound_contiguous && isfinite(rep->bound_s) &&
            (isnan(cb) || rep->bound_s > cb))
            cb = rep->bound_s;
    }
    return cb;
}

double hsdag_place_rows_apply_contiguous_bound(hsdag_place_compare_row *rows, int32_t n_rows)
{
    double cb = hsdag_place_rows_contiguous_bound(rows, n_rows);
    for (int32_t i = 0; i < n_rows && !isnan(cb); i++) {
        hsdag_place_result *r = &rows[i].r;
        if (rows[i].status != 0 || !r->contiguous || !(cb > r->lower_bound_s)) continue;
        r->lower_bound_s = cb;
        r->lower_bound_rule = "contiguous";
        r->gap = cb > 0 ? (r->objective_s - cb) / cb : (r->objective_s > 0 ? NAN : 0.0);
    }
    return cb;
}

/* The members of one comparison after its head: seed, bound, capacities, one object per method. */
static void rj_compare(hsdag_jw *w, const hsdag_place_problem *p, const hsdag_bound *b,
                       const hsdag_place_compare_row *rows, int32_t n_rows, const hsdag_place_json_info *info)
{
    double cap[HSDAG_MAX_DEVICES];
    for (int32_t k = 0; k < p->devs->n; k++) cap[k] = p->devs->dev[k].mem_capacity;
    rj_seed(w, info);
    hsdag_jw_num(w, "lower_bound_ms", b->lower_s * 1e3);
    hsdag_jw_str(w, "lower_bound_rule", b->rule);
    hsdag_jw_num(w, "contiguous_bound_ms", hsdag_place_rows_contiguous_bound(rows, n_rows) * 1e3);
    rj_per_device(w, "capacity_bytes", p->devs, cap);
    hsdag_jw_array(w, "methods");
    for (int32_t i = 0; i < n_rows; i++) {
        const hsdag_place_compare_row *row = &rows[i];
        int ok = row->status == 0;
        const hsdag_place_result *r = &row->r;
        hsdag_jw_object(w, NULL);
        hsdag_jw_str(w, "method", row->method);
        hsdag_jw_str(w, "error", ok ? NULL : row->error ? row->error : hsdag_status_str(row->status));
        hsdag_jw_num(w, "objective_ms", ok ? r->objective_s * 1e3 : NAN);
        hsdag_jw_num(w, "latency_ms", ok ? r->latency_s * 1e3 : NAN);
        hsdag_jw_bool(w, "feasible", ok && r->feasible);
        hsdag_jw_bool(w, "contiguous", ok && r->contiguous);
        hsdag_jw_num(w, "gap", ok ? r->gap : NAN);
        hsdag_jw_num(w, "wall_s", r->place_s);
        hsdag_jw_num(w, "cpu_s", r->cpu_s);
        hsdag_jw_bool(w, "optimal", ok && r->rep.optimal);
        hsdag_jw_num(w, "method_bound_ms", ok ? r->rep.bound_s * 1e3 : NAN);
        hsdag_jw_bool(w, "method_bound_contiguous", ok && r->rep.bound_contiguous);
        hsdag_jw_int(w, "placements_evaluated", ok ? (long long)r->rep.evals : 0);
        rj_episode(w, ok ? r->rep.best_episode : -1);
        hsdag_jw_num(w, "lp_cpu_s", ok ? r->rep.lp_cpu_s : NAN);
        hsdag_jw_num(w, "branch_and_cut_cpu_s", ok ? r->rep.branch_and_cut_cpu_s : NAN);
        hsdag_jw_str(w, "note", ok ? r->rep.note : "");
        hsdag_jw_close(w);
    }
    hsdag_jw_close(w);
}

int hsdag_place_compare_write_json(hsdag_buf *out, const hsdag_place_problem *p, const hsdag_bound *b,
                                   const hsdag_place_compare_row *rows, int32_t n_rows,
                                   const hsdag_place_json_info *info)
{
    hsdag_jw w;
    hsdag_jw_begin(&w, out, "hsdag-comparison/1");
    hsdag_costs_write_json_head(&w, p->c, p->sem, p->obj, info ? info->model : NULL);
    rj_compare(&w, p, b, rows, n_rows, info);
    return hsdag_jw_end(&w);
}

void hsdag_place_suite_json_begin(hsdag_jw *w, hsdag_buf *out, const char *suite, int64_t seed,
                                  int64_t budget, double noise)
{
    hsdag_jw_begin(w, out, "hsdag-suite-comparison/1");
    hsdag_jw_str(w, "suite", suite);
    hsdag_jw_int(w, "seed", (long long)seed);
    hsdag_jw_int(w, "budget", (long long)budget);
    hsdag_jw_num(w, "noise", noise);
    hsdag_jw_array(w, "instances");
}

void hsdag_place_suite_json_instance(hsdag_jw *w, const char *name, double best_known_ms, const char *how,
                                     const hsdag_place_problem *p, const hsdag_bound *b,
                                     const hsdag_place_compare_row *rows, int32_t n_rows,
                                     const hsdag_place_json_info *info)
{
    hsdag_jw_object(w, NULL);
    hsdag_jw_str(w, "name", name);
    hsdag_jw_num(w, "best_known_ms", best_known_ms);
    hsdag_jw_str(w, "best_known_how", how);
    hsdag_costs_write_json_head(w, p->c, p->sem, p->obj, info ? info->model : NULL);
    rj_compare(w, p, b, rows, n_rows, info);
    hsdag_jw_close(w);
}

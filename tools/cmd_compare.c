/* cmd_compare.c - the 'hsdag compare' subcommand: every placement method on one model, one table; or every
 *                 instance of a benchmark suite (--suite NAME: bench/NAME.suite), one table each and a summary
 *                 against each instance's best known latency; with --save-dir every method's placement in
 *                 every output format.
 * Not here: any placement logic (src/place, src/learn); a method that does not apply (mincut on three
 *           devices) is a row with its reason, not a failure of the command.
 * Entry points: cmd_compare. */
#include "simcli.h"

#include <errno.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CMP_MAX_METHODS 128

typedef struct cmp_row {
    char name[64];
    char err[256];
} cmp_row;

/* In a suite, a single-device name that this instance's set lacks (gpu-only on Tarnawski accelerators) is a
 * row marked n/a instead of an error. */
static int split_methods(const char *cmd, const char *list, const hsdag_devices *devs, cmp_row *rows, int *n,
                         int in_suite)
{
    const char *s = list;
    *n = 0;
    while (*s) {
        const char *c = strchr(s, ',');
        size_t len = c ? (size_t)(c - s) : strlen(s);
        if (len == 0 || len >= sizeof rows[0].name)
            return cli_usage_error(cmd, "--methods: empty or overlong name in '%s'", list);
        if (*n >= CMP_MAX_METHODS) return cli_usage_error(cmd, "--methods: more than %d", CMP_MAX_METHODS);
        memcpy(rows[*n].name, s, len);
        rows[*n].name[len] = 0;
        rows[*n].err[0] = 0;
        if (!hsdag_place_method_find(rows[*n].name) && hsdag_place_single_device(devs, rows[*n].name) < 0) {
            if (!in_suite) return cli_usage_error(cmd, "--methods: unknown method '%s'", rows[*n].name);
            snprintf(rows[*n].err, sizeof rows[*n].err, "no such device in this set");
        }
        (*n)++;
        s += len + (c ? 1 : 0);
    }
    if (*n == 0) return cli_usage_error(cmd, "--methods: empty list");
    return 0;
}

static void default_methods(const hsdag_devices *devs, cmp_row *rows, int *n)
{
    *n = 0;
    /* one single-device row per device kind (identical GPUs or Tarnawski accelerators would repeat the
     * row) */
    for (int kind = 0; kind < HSDAG_DEV_KIND_COUNT_; kind++)
        if (hsdag_devices_first_of(devs, (hsdag_devkind)kind) >= 0)
            snprintf(rows[(*n)++].name, sizeof rows[0].name, "%s-only",
                     hsdag_devkind_name((hsdag_devkind)kind));
    int32_t cnt;
    const hsdag_place_method *m = hsdag_place_methods(&cnt);
    for (int32_t i = 0; i < cnt && *n < CMP_MAX_METHODS; i++)
        if (m[i].in_compare) snprintf(rows[(*n)++].name, sizeof rows[0].name, "%s", m[i].name);
    for (int i = 0; i < *n; i++) rows[i].err[0] = 0;
}

/* One instance of a suite (NULL outside a suite). */
typedef struct cmp_inst {
    const hsdag_suite_entry *en;
} cmp_inst;

static void print_table(const cmp_inst *in, const hsdag_place_problem *p, const hsdag_bound *b, double cb,
                        const hsdag_place_compare_row *rows, int n)
{
    int tp = p->obj == HSDAG_OBJ_THROUGHPUT;
    if (in->en) {
        printf("== %s: %s", in->en->name, in->en->model);
        for (int i = 0; i < in->en->n_mem; i++) printf(" --mem %s", in->en->mem[i]);
        if (isnan(in->en->best_ms))
            printf("; best known: none\n");
        else
            printf("; best known %.6g ms (%s)\n", in->en->best_ms, in->en->how ? in->en->how : "");
    }
    printf("devices %s, %s semantics, %s objective, %d ops; lower bound %.6g ms (%s)\n\n",
           p->devs->name ? p->devs->name : "", hsdag_semantics_name(p->sem), hsdag_objective_name(p->obj),
           (int)p->n, b->lower_s * 1e3, b->rule ? b->rule : "");
    if (!isnan(cb))
        printf(
            "bound over contiguous splits %.6g ms (from the exact solvers; the gap of a row marked 'c' uses "
            "it)\n\n",
            cb * 1e3);
    printf("%-18s %12s%s %9s %-10s %11s  %s\n", "method", tp ? "max_load_ms" : "latency_ms",
           tp ? "   latency_ms" : "", "gap", "feasible", "place_ms", "note");
    for (int i = 0; i < n; i++) {
        const hsdag_place_result *r = &rows[i].r;
        if (rows[i].status < 0) {
            printf("%-18s %12s%s %9s %-10s %11.3f  %s\n", rows[i].method, "-", tp ? "             " : "", "-",
                   "n/a", r->place_s * 1e3, rows[i].error);
            continue;
        }
        char gap[32];
        if (isnan(r->gap))
            snprintf(gap, sizeof gap, "n/a");
        else
            snprintf(gap, sizeof gap, "%.2f%%", 100 * r->gap);
        if (r->contiguous && !isnan(cb)) snprintf(gap + strlen(gap), sizeof gap - strlen(gap), " c");
        char lat[32] = "";
        if (tp) snprintf(lat, sizeof lat, " %12.6g", r->latency_s * 1e3);
        printf("%-18s %12.6g%s %9s %-10s %11.3f  %s\n", rows[i].method, r->objective_s * 1e3, lat, gap,
               r->feasible ? "yes" : "NO", r->place_s * 1e3, r->rep.note);
    }
    /* one line per method saying what it is */
    printf("\n");
    for (int i = 0; i < n; i++) {
        const hsdag_place_method *m = hsdag_place_method_find(rows[i].method);
        printf("  %-16s %s\n", rows[i].method,
               m ? m->summary : "every op on one device (the paper's single-device baselines)");
    }
}

/* name kept to [A-Za-z0-9._-] (no leading '.') so that a method, device or instance name cannot leave DIR */
static void safe_name(char *out, size_t cap, const char *name)
{
    size_t i = 0;
    for (; name[i] && i + 1 < cap; i++) {
        char c = name[i];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                 c == '_' || (c == '.' && i > 0);
        out[i] = ok ? c : '_';
    }
    out[i] = 0;
}

/* DIR/METHOD.json, .affinity.json, .split.json, .dot and .trace.json for one method's placement. */
static int save_method(const simcli *s, const hsdag_place_problem *p, const int32_t *dev, const char *dir,
                       const char *method)
{
    char base[80], paths[5][4200];
    safe_name(base, sizeof base, method);
    static const char *const ext[] = {".json", ".affinity.json", ".split.json", ".dot", ".trace.json"};
    for (int k = 0; k < 5; k++) snprintf(paths[k], sizeof paths[k], "%s/%s%s", dir, base, ext[k]);
    simcli_outputs o = {
        .out = paths[0], .affinity = paths[1], .split = paths[2], .dot = paths[3], .trace = paths[4]};
    return simcli_write_outputs(s, p, dev, &o);
}

static int make_dir(const char *cmd, const char *dir)
{
    if (mkdir(dir, 0777) < 0 && errno != EEXIST)
        return cli_usage_error(cmd, "--save-dir: %s: cannot create: %s", dir, strerror(errno));
    return CLI_OK;
}

/* The suite's summary over instances. */
typedef struct sum_col {
    char name[64];
    double log_ratio; /* sum over instances of log(latency / best known) */
    int n, infeasible, best;
} sum_col;

/* Loads one instance (a: its model, devices, semantics, costs and --mem) and runs every method on it; prints
 * its table, or adds it to the suite's JSON (sw) or writes the comparison JSON. rows/names get the results
 * (*n_rows of them) for the suite's summary. CLI_OK or an exit code (error printed). */
static int run_instance(const cli_args *a, const cmp_inst *in, cmp_row *names, hsdag_place_compare_row *rows,
                        int *n_rows, hsdag_jw *sw, const char *save_dir)
{
    simcli s = {0};
    hsdag_place_problem *p = NULL;
    int32_t *dev = NULL;
    hsdag_err e = {0};
    hsdag_bound bd;
    int n = 0, st, rc;
    *n_rows = 0;
    memset(rows, 0, sizeof *rows * CMP_MAX_METHODS);
    if ((rc = simcli_load(a, &s)) != CLI_OK) goto done;
    if (a->methods) {
        if ((rc = split_methods(a->name, a->methods, s.devs, names, &n, in->en != NULL)) != 0) goto done;
    } else {
        default_methods(s.devs, names, &n);
    }
    if ((rc = simcli_problem(&s, &p)) != CLI_OK) goto done;
    if ((st = hsdag_place_lower_bound(p, &bd, &e)) < 0 ||
        !(dev = hsdag_malloc((size_t)(s.g->n_nodes ? s.g->n_nodes : 1) * sizeof *dev))) {
        rc = cli_fail(a->name, dev ? st : HSDAG_ENOMEM, &e);
        goto done;
    }
    if (save_dir && (rc = make_dir(a->name, save_dir)) != CLI_OK) goto done;
    hsdag_place_opts po = hsdag_place_opts_default();
    po.seed = (uint64_t)a->seed;
    po.time_limit_s = a->time_limit;
    po.time_limit_cpu = a->cpu_time;
    po.max_evals = a->max_evals;
    po.ilp_iterations = a->ilp_iterations;
    po.budget = a->budget;
    po.noise = a->noise;
    cli_progress pr;
    cli_progress_start(&pr, in->en ? in->en->name : "compare", n, a->json || a->quiet);
    for (int i = 0; i < n && rc == CLI_OK; i++) {
        hsdag_err me = {0};
        cli_progress_update(&pr, i, names[i].name);
        rows[i].method = names[i].name;
        if (names[i].err[0]) { /* not applicable here (already says why) */
            rows[i].status = HSDAG_EUNSUPPORTED;
            rows[i].error = names[i].err;
            continue;
        }
        rows[i].status = hsdag_place_run(p, names[i].name, &po, dev, &rows[i].r, &me);
        if (rows[i].status == HSDAG_ENOMEM) {
            cli_progress_end(&pr);
            rc = cli_fail(a->name, HSDAG_ENOMEM, &me);
            goto done;
        }
        if (rows[i].status < 0) {
            snprintf(names[i].err, sizeof names[i].err, "%.250s",
                     me.msg[0] ? me.msg : hsdag_status_str(rows[i].status));
            rows[i].error = names[i].err;
        } else if (save_dir) {
            rc = save_method(&s, p, dev, save_dir, names[i].name);
        }
    }
    cli_progress_update(&pr, n, "");
    cli_progress_end(&pr);
    if (rc != CLI_OK) goto done;
    double cb = hsdag_place_rows_apply_contiguous_bound(rows, n);
    hsdag_place_json_info info = {.model = s.model, .seed = a->seed, .evals_per_s = NAN};
    if (sw) {
        hsdag_place_suite_json_instance(sw, in->en->name, in->en->best_ms, in->en->how, p, &bd, rows, n,
                                        &info);
    } else if (a->json) {
        hsdag_buf b = {0};
        hsdag_place_compare_write_json(&b, p, &bd, rows, n, &info);
        rc = cli_write_out(a->name, "-", &b);
        hsdag_buf_free(&b);
    } else {
        print_table(in, p, &bd, cb, rows, n);
    }
    *n_rows = n;
done:
    hsdag_free(dev);
    hsdag_place_problem_free(p);
    simcli_free(&s);
    return rc;
}

/* The suite file: NAME itself when it is a path (a '/' or ".suite" in it), else bench/NAME.suite found by
 * hsdag_data_find (the build tree, $HSDAG_DATA or the installed data; any working directory). root (cap
 * bytes) gets the tree it was found in, "" for a path. 0 or a status (e says where it looked). */
static int suite_path(char *path, char *root, size_t cap, const char *name, hsdag_err *e)
{
    root[0] = 0;
    if (strchr(name, '/') || strstr(name, ".suite")) {
        if (strlen(name) >= cap) return hsdag_err_set(e, HSDAG_EINVAL, "--suite: path too long");
        strcpy(path, name);
        return 0;
    }
    char rel[600];
    snprintf(rel, sizeof rel, "bench/%.500s.suite", name);
    int st = hsdag_data_find(path, cap, rel, "benchmark suite", e);
    if (st == 0) snprintf(root, cap, "%.*s", (int)(strlen(path) - strlen(rel)), path);
    return st;
}

/* A suite's relative file name (a model, a device file), as the suite file writes it, relative to the tree
 * it came from: read from the working directory when it is there (the tree's root), else from root. */
static const char *entry_file(char *buf, size_t cap, const char *root, const char *file)
{
    if (!root[0] || file[0] == '/' || access(file, R_OK) == 0) return file;
    snprintf(buf, cap, "%s%s", root, file);
    return buf;
}

/* The arguments of one suite entry: its model, and its own --devices, --semantics, --costs and --mem over
 * the command line's; files relative to root (entry_file: buf holds 2 x 4200 bytes). CLI_OK or 2 (a bad
 * value, with the file and line). */
static int entry_args(cli_args *ia, const cli_args *a, const hsdag_suite_entry *en, const char *path,
                      const char *root, char *buf)
{
    *ia = *a;
    ia->pos[0] = entry_file(buf, 4200, root, en->model);
    ia->n_pos = 1;
    if (en->devices)
        ia->devices = strchr(en->devices, '/') ? entry_file(buf + 4200, 4200, root, en->devices)
                                               : en->devices; /* a preset name */
    char where[4200];
    snprintf(where, sizeof where, "%s:%d: %s", path, (int)en->line, en->name);
    if (en->semantics) {
        if (cli_check_choice(a->name, where, "semantics", en->semantics) != CLI_OK) return CLI_BADINPUT;
        ia->semantics = en->semantics;
    }
    if (en->costs) {
        if (cli_check_choice(a->name, where, "costs", en->costs) != CLI_OK) return CLI_BADINPUT;
        ia->costs = en->costs;
    }
    ia->mem.n = 0;
    for (int i = 0; i < en->n_mem; i++) ia->mem.v[ia->mem.n++] = en->mem[i];
    return CLI_OK;
}

static void summary_add(sum_col *cols, int *ncols, const hsdag_suite_entry *en,
                        const hsdag_place_compare_row *rows, int n)
{
    /* the best latency of this run, so "best" counts rows that tie the best row */
    double best_run = INFINITY;
    for (int i = 0; i < n; i++)
        if (rows[i].status == 0 && rows[i].r.feasible && rows[i].r.objective_s < best_run)
            best_run = rows[i].r.objective_s;
    for (int i = 0; i < n; i++) {
        int c = 0;
        while (c < *ncols && strcmp(cols[c].name, rows[i].method) != 0) c++;
        if (c == *ncols) {
            if (*ncols == CMP_MAX_METHODS) continue;
            snprintf(cols[(*ncols)++].name, sizeof cols[0].name, "%s", rows[i].method);
        }
        if (rows[i].status < 0 || !rows[i].r.feasible) {
            cols[c].infeasible++;
            continue;
        }
        double ref = isnan(en->best_ms) ? best_run * 1e3 : en->best_ms;
        cols[c].log_ratio += log(rows[i].r.objective_s * 1e3 / ref);
        cols[c].n++;
        if (rows[i].r.objective_s <= best_run * (1 + 1e-9)) cols[c].best++;
    }
}

static void summary_print(const cli_args *a, int32_t n_inst, const sum_col *cols, int ncols)
{
    printf("== summary: %s, %d instances (seed %ld, budget %ld, noise %g)\n\n", a->suite, (int)n_inst,
           a->seed, a->budget, a->noise);
    printf("%-18s %22s %10s %14s\n", "method", "geomean vs best known", "best row", "infeasible/n/a");
    for (int c = 0; c < ncols; c++) {
        char gm[32];
        if (cols[c].n)
            snprintf(gm, sizeof gm, "%+.2f%%", 100 * (exp(cols[c].log_ratio / cols[c].n) - 1));
        else
            snprintf(gm, sizeof gm, "-");
        printf("%-18s %22s %10d %14d\n", cols[c].name, gm, cols[c].best, cols[c].infeasible);
    }
    printf("\ngeomean over the instances where the method is feasible; best row = ties the best latency of "
           "this run.\n");
}

static int run_suite(const cli_args *a, cmp_row *names, hsdag_place_compare_row *rows)
{
    char path[4096], root[4096], files[2 * 4200];
    hsdag_err e = {0};
    hsdag_suite *S = NULL;
    int st = suite_path(path, root, sizeof path, a->suite, &e);
    if (st == 0) st = hsdag_suite_read_file(&S, path, &e);
    if (st < 0) return cli_fail(a->name, st, &e);
    sum_col *cols = hsdag_calloc(CMP_MAX_METHODS, sizeof *cols);
    cli_args *ia = hsdag_malloc(sizeof *ia);
    hsdag_buf js = {0};
    hsdag_jw w;
    int ncols = 0, rc = CLI_OK;
    if (!cols || !ia) {
        rc = cli_fail(a->name, HSDAG_ENOMEM, NULL);
        goto done;
    }
    if (a->save_dir && (rc = make_dir(a->name, a->save_dir)) != CLI_OK) goto done;
    if (a->json) hsdag_place_suite_json_begin(&w, &js, a->suite, a->seed, a->budget, a->noise);
    for (int32_t k = 0; k < S->n && rc == CLI_OK; k++) {
        const hsdag_suite_entry *en = &S->entry[k];
        cmp_inst in = {.en = en};
        char sub[4200], base[80];
        const char *save = NULL;
        if (a->save_dir) { /* DIR/INSTANCE/METHOD.* */
            safe_name(base, sizeof base, en->name);
            snprintf(sub, sizeof sub, "%s/%s", a->save_dir, base);
            save = sub;
        }
        int n = 0;
        if ((rc = entry_args(ia, a, en, path, root, files)) != CLI_OK) break;
        if ((rc = run_instance(ia, &in, names, rows, &n, a->json ? &w : NULL, save)) != CLI_OK) break;
        if (!a->json) printf("\n");
        summary_add(cols, &ncols, en, rows, n);
    }
    if (rc == CLI_OK && a->json) {
        if (hsdag_jw_end(&w) < 0) js.oom = 1;
        rc = cli_write_out(a->name, "-", &js);
    } else if (rc == CLI_OK) {
        summary_print(a, S->n, cols, ncols);
    }
done:
    hsdag_buf_free(&js);
    hsdag_free(ia);
    hsdag_free(cols);
    hsdag_suite_free(S);
    return rc;
}

int cmd_compare(int argc, char **argv)
{
    cli_args a;
    cli_args_init(&a, CMD_COMPARE);
    int rc = cli_parse(&a, argc, argv);
    if (rc != CLI_CONTINUE) return rc;
    cmp_row *names = hsdag_calloc(CMP_MAX_METHODS, sizeof *names);
    hsdag_place_compare_row *rows = hsdag_calloc(CMP_MAX_METHODS, sizeof *rows);
    if ((rc = simcli_check_method_opts(&a, a.methods)) != CLI_OK) {
        /* printed */
    } else if (!names || !rows) {
        rc = cli_fail(a.name, HSDAG_ENOMEM, NULL);
    } else if (a.suite) {
        rc = run_suite(&a, names, rows);
    } else {
        cmp_inst in = {0};
        int n;
        rc = run_instance(&a, &in, names, rows, &n, NULL, a.save_dir);
    }
    hsdag_free(rows);
    hsdag_free(names);
    return rc;
}

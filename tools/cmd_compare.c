/* cmd_compare.c - the 'hsdag compare' subcommand: every placement method on one model, one table; with
 * --save-dir every method's placement in every output format.
 * Not here: any placement logic (src/place); a method that does not apply (mincut on three devices) is a row
 *           with its reason, not a failure of the command.
 * Entry points: cmd_compare. */
#include "simcli.h"

#include <errno.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>

#define CMP_MAX_METHODS 128

typedef struct cmp_row {
    char name[64];
    char err[256];
} cmp_row;

static int split_methods(const char *cmd, const char *list, const hsdag_devices *devs, cmp_row *rows, int *n)
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
        if (!hsdag_place_method_find(rows[*n].name) && hsdag_place_single_device(devs, rows[*n].name) < 0)
            return cli_usage_error(cmd, "--methods: unknown method '%s'", rows[*n].name);
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
}

static void print_table(const hsdag_place_problem *p, const hsdag_bound *b,
                        const hsdag_place_compare_row *rows, int n)
{
    printf("devices %s, %s semantics, %d ops; lower bound %.6g ms (%s)\n\n",
           p->devs->name ? p->devs->name : "", hsdag_semantics_name(p->sem), (int)p->n, b->lower_s * 1e3,
           b->rule ? b->rule : "");
    printf("%-18s %12s %9s %-10s %11s  %s\n", "method", "latency_ms", "gap", "feasible", "place_ms", "note");
    for (int i = 0; i < n; i++) {
        const hsdag_place_result *r = &rows[i].r;
        if (rows[i].status < 0) {
            printf("%-18s %12s %9s %-10s %11.3f  %s\n", rows[i].method, "-", "-", "n/a", r->place_s * 1e3,
                   rows[i].error);
            continue;
        }
        char gap[32];
        if (isnan(r->gap))
            snprintf(gap, sizeof gap, "n/a");
        else
            snprintf(gap, sizeof gap, "%.2f%%", 100 * r->gap);
        printf("%-18s %12.6g %9s %-10s %11.3f  %s\n", rows[i].method, r->latency_s * 1e3, gap,
               r->feasible ? "yes" : "NO", r->place_s * 1e3, r->rep.note);
    }
}

/* DIR/METHOD.json, .affinity.json, .split.json, .dot and .trace.json for one method's placement; the
 * method name is kept to [A-Za-z0-9._-] so that a device name cannot leave DIR. */
static int save_method(const simcli *s, const hsdag_place_problem *p, const int32_t *dev, const char *dir,
                       const char *method)
{
    char base[80], paths[5][4200];
    size_t i = 0;
    for (; method[i] && i + 1 < sizeof base; i++) {
        char c = method[i];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                 c == '_' || (c == '.' && i > 0);
        base[i] = ok ? c : '_';
    }
    base[i] = 0;
    static const char *const ext[] = {".json", ".affinity.json", ".split.json", ".dot", ".trace.json"};
    for (int k = 0; k < 5; k++) snprintf(paths[k], sizeof paths[k], "%s/%s%s", dir, base, ext[k]);
    simcli_outputs o = {
        .out = paths[0], .affinity = paths[1], .split = paths[2], .dot = paths[3], .trace = paths[4]};
    return simcli_write_outputs(s, p, dev, &o);
}

int cmd_compare(int argc, char **argv)
{
    cli_args a;
    cli_args_init(&a, CMD_COMPARE);
    int rc = cli_parse(&a, argc, argv);
    if (rc != CLI_CONTINUE) return rc;
    simcli s = {0};
    hsdag_place_problem *p = NULL;
    int32_t *dev = NULL;
    cmp_row *names = hsdag_calloc(CMP_MAX_METHODS, sizeof *names);
    hsdag_place_compare_row *rows = hsdag_calloc(CMP_MAX_METHODS, sizeof *rows);
    hsdag_err e = {0};
    hsdag_bound bd;
    int n = 0, st;
    if (!names || !rows) {
        rc = cli_fail(a.name, HSDAG_ENOMEM, NULL);
        goto done;
    }
    if ((rc = simcli_load(&a, &s)) != CLI_OK) goto done;
    if (a.methods) {
        if ((rc = split_methods(a.name, a.methods, s.devs, names, &n)) != 0) goto done;
    } else {
        default_methods(s.devs, names, &n);
    }
    if ((rc = simcli_problem(&s, &p)) != CLI_OK) goto done;
    if ((st = hsdag_place_lower_bound(p, &bd, &e)) < 0 ||
        !(dev = hsdag_malloc((size_t)(s.g->n_nodes ? s.g->n_nodes : 1) * sizeof *dev))) {
        rc = cli_fail(a.name, dev ? st : HSDAG_ENOMEM, &e);
        goto done;
    }
    if (a.save_dir && mkdir(a.save_dir, 0777) < 0 && errno != EEXIST) {
        rc = cli_usage_error(a.name, "--save-dir: %s: cannot create: %s", a.save_dir, strerror(errno));
        goto done;
    }
    hsdag_place_opts po = hsdag_place_opts_default();
    po.seed = (uint64_t)a.seed;
    po.time_limit_s = a.time_limit;
    po.max_evals = a.max_evals;
    cli_progress pr;
    cli_progress_start(&pr, "compare", n, a.json || a.quiet);
    for (int i = 0; i < n && rc == CLI_OK; i++) {
        hsdag_err me = {0};
        cli_progress_update(&pr, i, names[i].name);
        rows[i].method = names[i].name;
        rows[i].status = hsdag_place_run(p, names[i].name, &po, dev, &rows[i].r, &me);
        if (rows[i].status == HSDAG_ENOMEM) {
            cli_progress_end(&pr);
            rc = cli_fail(a.name, HSDAG_ENOMEM, &me);
            goto done;
        }
        if (rows[i].status < 0) {
            snprintf(names[i].err, sizeof names[i].err, "%.250s",
                     me.msg[0] ? me.msg : hsdag_status_str(rows[i].status));
            rows[i].error = names[i].err;
        } else if (a.save_dir) {
            rc = save_method(&s, p, dev, a.save_dir, names[i].name);
        }
    }
    cli_progress_update(&pr, n, "");
    cli_progress_end(&pr);
    if (rc != CLI_OK) goto done;
    if (a.json) {
        hsdag_buf b = {0};
        hsdag_place_json_info info = {.model = s.model, .seed = a.seed, .evals_per_s = NAN};
        hsdag_place_compare_write_json(&b, p, &bd, rows, n, &info);
        rc = cli_write_out(a.name, "-", &b);
        hsdag_buf_free(&b);
    } else {
        print_table(p, &bd, rows, n);
    }
done:
    hsdag_free(dev);
    hsdag_free(rows);
    hsdag_free(names);
    hsdag_place_problem_free(p);
    simcli_free(&s);
    return rc;
}

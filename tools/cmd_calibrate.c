/* cmd_calibrate.c - 'hsdag calibrate': fits a CPU device to per-op profiles of `hsdag profile` and writes it in
 * the device schema; with --devices it scores an existing device on profiles instead (held-out models).
 * Not here: the fit (the library, hsdag/calibrate.h) or measuring (cmd_profile.c).
 * Entry points: cmd_calibrate. */
#include "cli.h"
#include "hsdag/calibrate.h"
#include "hsdag/io.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#define CAL_MAX 256

static void calibrate_usage(FILE *f)
{
    fprintf(
        f,
        "usage: hsdag calibrate PROFILE.csv... --model MODEL... [options]\n\n"
        "Fits one CPU of the device schema (docs/devices.md) to measured per-op profiles: a compute rate "
        "per\n"
        "op class (peak FLOP/s x efficiency), memory bandwidth and per-op launch overhead, by a robust\n"
        "time-weighted least-squares fit of log(predicted / measured) per kernel. The i-th --model is the\n"
        "graph of the i-th profile. Prints the fit quality per model.\n"
        "With --devices D, fits nothing: scores D's CPU on the profiles (e.g. models it was not fitted "
        "on).\n\n"
        "options:\n"
        "  --model FILE      graph of the next profile (once per profile, same order)\n"
        "  --out FILE        write the fitted device set (JSON) here\n"
        "  --name NAME       name of the written set (default this-cpu)\n"
        "  --base SET        write SET (preset or file) with its CPU replaced by the fitted one, e.g.\n"
        "                    cpu-gpu for this CPU + the preset's GPU\n"
        "  --devices D       score D's first CPU instead of fitting\n"
        "  --device NAME     profile device name to use (default CPU)\n"
        "  --json            print JSON\n"
        "  -h, --help        this help\n");
}

static void model_row(hsdag_buf *b, const char *name, const hsdag_calib_model *m, int json, int first)
{
    double err = m->measured_ms > 0 ? m->predicted_ms / m->measured_ms - 1 : 0;
    if (json) {
        hsdag_buf_printf(b, "%s{\"model\": ", first ? "" : ", ");
        hsdag_buf_json_str(b, name);
        hsdag_buf_printf(b, ", \"kernels\": %d, \"measured_ms\": ", (int)m->kernels);
        hsdag_buf_double(b, m->measured_ms);
        hsdag_buf_printf(b, ", \"predicted_ms\": ");
        hsdag_buf_double(b, m->predicted_ms);
        hsdag_buf_printf(b, ", \"error\": ");
        hsdag_buf_double(b, err);
        hsdag_buf_printf(b, ", \"spearman\": ");
        hsdag_buf_double(b, m->spearman);
        hsdag_buf_printf(b, ", \"median_abs_rel\": ");
        hsdag_buf_double(b, m->median_abs_rel);
        hsdag_buf_printf(b, ", \"weighted_abs_rel\": ");
        hsdag_buf_double(b, m->weighted_abs_rel);
        hsdag_buf_printf(b, "}");
    } else {
        hsdag_buf_printf(b, "  %-36s %7d %12.3f %12.3f %+8.1f%% %9.3f %9.1f%% %9.1f%%\n", name,
                         (int)m->kernels, m->measured_ms, m->predicted_ms, 100 * err, m->spearman,
                         100 * m->median_abs_rel, 100 * m->weighted_abs_rel);
    }
}

static void device_text(hsdag_buf *b, const hsdag_device *d, const uint8_t *fitted)
{
    hsdag_buf_printf(b, "device        CPU: peak %.2f GFLOP/s, bandwidth %.2f GB/s, launch overhead %.2f us",
                     d->peak_flops / 1e9, d->mem_bw / 1e9, d->launch_s * 1e6);
    if (d->cache_bytes > 0)
        hsdag_buf_printf(b, ", cache %.2f MiB at %.2f GB/s", d->cache_bytes / 1048576.0, d->cache_bw / 1e9);
    hsdag_buf_printf(b, "\n");
    hsdag_buf_printf(b, "efficiency   ");
    for (int c = 0; c < HSDAG_OP_CLASS_COUNT_; c++) {
        if (c == HSDAG_OP_BOOKKEEPING) continue;
        hsdag_buf_printf(b, " %s %.3g%s", hsdag_opclass_name((hsdag_opclass)c), d->eff[c],
                         fitted && !fitted[c] ? "*" : "");
    }
    hsdag_buf_printf(b, "%s\nns per output element",
                     fitted ? "  (* = no data: median of the fitted classes)" : "");
    for (int c = 0; c < HSDAG_OP_CLASS_COUNT_; c++)
        if (d->elem_s[c] > 0)
            hsdag_buf_printf(b, " %s %.3g", hsdag_opclass_name((hsdag_opclass)c), d->elem_s[c] * 1e9);
    hsdag_buf_printf(b, "\n");
}

/* This machine's last-level cache in bytes (the highest /sys cache index of cpu0), 0 if unknown. */
static double llc_bytes(void)
{
    double best = 0;
    for (int i = 0; i < 8; i++) {
        char path[96], buf[64];
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        if (fgets(buf, sizeof buf, f)) {
            char *end;
            double v = strtod(buf, &end);
            if (*end == 'K')
                v *= 1024;
            else if (*end == 'M')
                v *= 1048576;
            if (v > best) best = v;
        }
        fclose(f);
    }
    return best;
}

int cmd_calibrate(int argc, char **argv)
{
    static const struct option opts[] = {{"model", required_argument, 0, 'm'},
                                         {"out", required_argument, 0, 'o'},
                                         {"name", required_argument, 0, 'n'},
                                         {"base", required_argument, 0, 'b'},
                                         {"devices", required_argument, 0, 'D'},
                                         {"device", required_argument, 0, 'd'},
                                         {"json", no_argument, 0, 'j'},
                                         {"kernels", required_argument, 0, 'K'},
                                         {"cache-bytes", required_argument, 0, 'c'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    const char *models[CAL_MAX], *out = NULL, *name = "this-cpu", *base = NULL, *score = NULL,
                                 *device = "CPU", *kernels = NULL;
    int nm = 0, json = 0, c;
    double cache = -1; /* -1 = this machine's */
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "hm:o:n:b:D:d:jK:c:", opts, NULL)) != -1) {
        switch (c) {
        case 'm':
            if (nm == CAL_MAX) return cli_usage_error("calibrate", "more than %d models", CAL_MAX);
            models[nm++] = optarg;
            break;
        case 'o':
            out = optarg;
            break;
        case 'n':
            name = optarg;
            break;
        case 'b':
            base = optarg;
            break;
        case 'D':
            score = optarg;
            break;
        case 'd':
            device = optarg;
            break;
        case 'j':
            json = 1;
            break;
        case 'K':
            kernels = optarg;
            break;
        case 'c':
            if (cli_parse_double(optarg, 0, 1e12, &cache) < 0)
                return cli_usage_error("calibrate", "bad --cache-bytes '%s'", optarg);
            break;
        case 'h':
            calibrate_usage(stdout);
            return CLI_OK;
        default:
            return cli_usage_error("calibrate", "unknown or incomplete option '%s'", argv[optind - 1]);
        }
    }
    int np = argc - optind;
    if (np < 1) return cli_usage_error("calibrate", "expected at least one PROFILE.csv");
    if (np != nm)
        return cli_usage_error("calibrate", "%d profiles but %d --model files (one per profile)", np, nm);
    if (score && (out || base))
        return cli_usage_error("calibrate", "--devices scores a device: no --out/--base");
    hsdag_graph *gs[CAL_MAX] = {0};
    hsdag_profile *ps[CAL_MAX] = {0};
    hsdag_calib_model ms[CAL_MAX];
    hsdag_devices *d = NULL;
    hsdag_err e = {0};
    hsdag_buf b = {0};
    int rc = CLI_OK, st;
    for (int i = 0; i < np; i++) {
        if ((st = hsdag_load_file(&gs[i], models[i], HSDAG_FMT_UNKNOWN, &e)) < 0 ||
            (st = hsdag_profile_read_file(&ps[i], argv[optind + i], &e)) < 0) {
            rc = cli_fail("calibrate", st, &e);
            goto done;
        }
    }
    hsdag_calib_config cc = hsdag_calib_config_default();
    cc.device = device;
    cc.cache_bytes = cache >= 0 ? cache : llc_bytes();
    cc.labels = (const char *const *)(argv + optind);
    hsdag_calib_result r;
    const hsdag_device *dev;
    if (score) {
        if ((st = hsdag_devices_load(&d, score, gs[0], &e)) < 0) {
            rc = cli_fail("calibrate", st, &e);
            goto done;
        }
        int32_t k = hsdag_devices_first_of(d, HSDAG_DEV_CPU);
        if (k < 0) {
            fprintf(stderr, "hsdag calibrate: %s: no cpu device\n", score);
            rc = CLI_BADINPUT;
            goto done;
        }
        dev = &d->dev[k];
        for (int i = 0; i < np; i++)
            if ((st = hsdag_calibrate_eval(&ms[i], dev, gs[i], ps[i], &cc, &e)) < 0) {
                hsdag_err_prefix(&e, argv[optind + i]);
                rc = cli_fail("calibrate", st, &e);
                goto done;
            }
    } else {
        if ((st = hsdag_calibrate_fit(&r, ms, (const hsdag_graph *const *)gs,
                                      (const hsdag_profile *const *)ps, np, &cc, &e)) < 0) {
            rc = cli_fail("calibrate", st, &e);
            goto done;
        }
        dev = &r.dev;
        if ((st = hsdag_calibrate_devices(&d, dev, name, base, &e)) < 0) {
            rc = cli_fail("calibrate", st, &e);
            goto done;
        }
        if (out) {
            hsdag_buf jb = {0};
            hsdag_devices_write_json(&jb, d);
            rc = cli_write_out("calibrate", out, &jb);
            hsdag_buf_free(&jb);
            if (rc != CLI_OK) goto done;
        }
    }
    if (kernels) {
        hsdag_buf kb = {0};
        if ((st = hsdag_calibrate_kernels(&kb, dev, gs[0], ps[0], &cc, &e)) < 0) {
            hsdag_buf_free(&kb);
            rc = cli_fail("calibrate", st, &e);
            goto done;
        }
        rc = cli_write_out("calibrate", kernels, &kb);
        hsdag_buf_free(&kb);
        if (rc != CLI_OK) goto done;
    }
    if (json) {
        hsdag_buf_printf(&b, "{\"mode\": \"%s\", \"peak_flops\": ", score ? "score" : "fit");
        hsdag_buf_double(&b, dev->peak_flops);
        hsdag_buf_printf(&b, ", \"mem_bandwidth\": ");
        hsdag_buf_double(&b, dev->mem_bw);
        hsdag_buf_printf(&b, ", \"launch_overhead_s\": ");
        hsdag_buf_double(&b, dev->launch_s);
        hsdag_buf_printf(&b, ", \"cache_bytes\": ");
        hsdag_buf_double(&b, dev->cache_bytes);
        hsdag_buf_printf(&b, ", \"cache_bandwidth\": ");
        hsdag_buf_double(&b, dev->cache_bw);
        hsdag_buf_printf(&b, ", \"output_element_s\": {");
        for (int k = 0; k < HSDAG_OP_CLASS_COUNT_; k++) {
            hsdag_buf_printf(&b, "%s\"%s\": ", k ? ", " : "", hsdag_opclass_name((hsdag_opclass)k));
            hsdag_buf_double(&b, dev->elem_s[k]);
        }
        hsdag_buf_printf(&b, "}");
        hsdag_buf_printf(&b, ", \"efficiency\": {");
        for (int k = 0; k < HSDAG_OP_CLASS_COUNT_; k++) {
            hsdag_buf_printf(&b, "%s\"%s\": ", k ? ", " : "", hsdag_opclass_name((hsdag_opclass)k));
            hsdag_buf_double(&b, dev->eff[k]);
        }
        hsdag_buf_printf(&b, "}");
        if (!score) {
            hsdag_buf_printf(&b, ", \"kernels\": %d, \"sweeps\": %d, \"loss\": ", (int)r.n_kernels,
                             (int)r.sweeps);
            hsdag_buf_double(&b, r.loss);
        }
        hsdag_buf_printf(&b, ", \"models\": [");
        for (int i = 0; i < np; i++) model_row(&b, models[i], &ms[i], 1, i == 0);
        hsdag_buf_printf(&b, "]}\n");
    } else {
        device_text(&b, dev, score ? NULL : r.fitted);
        if (!score)
            hsdag_buf_printf(&b, "fit           %d kernels from %d profiles, %d sweeps, loss %.4g\n",
                             (int)r.n_kernels, np, (int)r.sweeps, r.loss);
        hsdag_buf_printf(&b, "  %-36s %7s %12s %12s %9s %9s %10s %10s\n", "model", "kernels", "measured ms",
                         "predicted ms", "error", "spearman", "med |err|", "wtd |err|");
        for (int i = 0; i < np; i++) model_row(&b, models[i], &ms[i], 0, i == 0);
        if (out) hsdag_buf_printf(&b, "wrote %s\n", out);
    }
    rc = cli_write_out("calibrate", "-", &b);
done:
    hsdag_buf_free(&b);
    hsdag_devices_free(d);
    for (int i = 0; i < np; i++) {
        hsdag_graph_free(gs[i]);
        hsdag_profile_free(ps[i]);
    }
    return rc;
}

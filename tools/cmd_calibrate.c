/* cmd_calibrate.c - 'hsdag calibrate': fits a CPU device to per-op profiles of `hsdag profile` and writes it in
 * the device schema; with --devices it scores an existing device on profiles instead (held-out models).
 * Not here: the fit (the library, hsdag/calibrate.h) or measuring (cmd_profile.c).
 * Entry points: cmd_calibrate. */
#include "cli.h"
#include "hsdag/calibrate.h"
#include "hsdag/io.h"
#include "opt.h"

#include <stdlib.h>
#include <string.h>

#define CAL_MAX 256

static void model_row(hsdag_buf *b, const char *name, const hsdag_calib_model *m)
{
    double err = m->measured_ms > 0 ? m->predicted_ms / m->measured_ms - 1 : 0;
    hsdag_buf_printf(b, "  %-36s %7d %12.3f %12.3f %+8.1f%% %9.3f %9.1f%% %9.1f%%\n", name, (int)m->kernels,
                     m->measured_ms, m->predicted_ms, 100 * err, m->spearman, 100 * m->median_abs_rel,
                     100 * m->weighted_abs_rel);
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
    cli_args a;
    cli_args_init(&a, CMD_CALIBRATE);
    int rc = cli_parse(&a, argc, argv);
    if (rc != CLI_CONTINUE) return rc;
    const char *const *models = a.models.v;
    const char *out = a.device_set, *name = a.set_name, *base = a.base, *score = a.devices,
               *device = a.device, *kernels = a.kernels;
    int nm = a.models.n, json = a.json;
    double cache = a.cache_bytes;
    int np = a.n_pos;
    if (np > CAL_MAX) return cli_usage_error(a.name, "more than %d profiles", CAL_MAX);
    if (np != nm)
        return cli_usage_error(a.name, "%d profiles but %d --model files (one per profile)", np, nm);
    if (score && (out || base))
        return cli_usage_error(a.name, "--devices scores a device: --device-set and --base do not apply");
    hsdag_graph *gs[CAL_MAX] = {0};
    hsdag_profile *ps[CAL_MAX] = {0};
    hsdag_calib_model ms[CAL_MAX];
    hsdag_devices *d = NULL;
    hsdag_err e = {0};
    hsdag_buf b = {0};
    int st;
    rc = CLI_OK;
    for (int i = 0; i < np; i++) {
        if ((st = hsdag_load_file(&gs[i], models[i], HSDAG_FMT_UNKNOWN, &e)) < 0 ||
            (st = hsdag_profile_read_file(&ps[i], a.pos[i], &e)) < 0) {
            rc = cli_fail("calibrate", st, &e);
            goto done;
        }
    }
    hsdag_calib_config cc = hsdag_calib_config_default();
    cc.device = device;
    cc.cache_bytes = cache >= 0 ? cache : llc_bytes();
    cc.labels = a.pos;
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
                hsdag_err_prefix(&e, a.pos[i]);
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
        hsdag_calibrate_write_json(&b, dev, score ? NULL : &r, ms, models, np);
    } else {
        device_text(&b, dev, score ? NULL : r.fitted);
        if (!score)
            hsdag_buf_printf(&b, "fit           %d kernels from %d profiles, %d sweeps, loss %.4g\n",
                             (int)r.n_kernels, np, (int)r.sweeps, r.loss);
        hsdag_buf_printf(&b, "  %-36s %7s %12s %12s %9s %9s %10s %10s\n", "model", "kernels", "measured ms",
                         "predicted ms", "error", "spearman", "med |err|", "wtd |err|");
        for (int i = 0; i < np; i++) model_row(&b, models[i], &ms[i]);
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

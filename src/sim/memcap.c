/* memcap.c - memory-capacity overrides of a device set ("GPU=8G", "GPU=50%"), so one preset gives the
 *            memory-capped instances of the hard benchmark suite (a GPU that holds about half of a model).
 * Not here: the memory model itself (sim.c) or device-set files (devices.c).
 * Entry points: hsdag_devices_mem_override. */
#include "hsdag/sim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Peak memory the simulator reports on device d when every op runs there (the model's whole need). */
static int whole_need(const hsdag_graph *g, const hsdag_devices *devs, const hsdag_sim_config *cfg, int32_t d,
                      double *bytes, hsdag_err *e)
{
    hsdag_sim *s = NULL;
    int32_t *dev = hsdag_alloc_n((size_t)g->n_nodes, sizeof *dev, "--mem", e);
    if (!dev) return HSDAG_ENOMEM;
    int rc = hsdag_sim_create(&s, g, devs, cfg, e);
    if (rc == 0) {
        for (int32_t v = 0; v < g->n_nodes; v++) dev[v] = d;
        hsdag_sim_result r;
        rc = hsdag_sim_run(s, dev, &r);
        if (rc == 0) *bytes = r.peak_mem_bytes[d];
    }
    hsdag_sim_free(s);
    hsdag_free(dev);
    return rc;
}

int hsdag_devices_mem_override(hsdag_devices *devs, const hsdag_graph *g, const hsdag_sim_config *cfg,
                               const char *spec, hsdag_err *e)
{
    const char *eq = spec ? strchr(spec, '=') : NULL;
    if (!eq || eq == spec || !eq[1])
        return hsdag_err_set(e, HSDAG_EINVAL, "--mem '%s': expected DEVICE=BYTES[K|M|G|T] or DEVICE=P%%",
                             spec ? spec : "");
    char name[64];
    size_t len = (size_t)(eq - spec);
    if (len >= sizeof name) return hsdag_err_set(e, HSDAG_EINVAL, "--mem '%s': device name too long", spec);
    memcpy(name, spec, len);
    name[len] = 0;
    int32_t d = hsdag_devices_find(devs, name);
    if (d < 0) return hsdag_err_set(e, HSDAG_EINVAL, "--mem '%s': no device '%s' in the set", spec, name);
    char *end;
    double v = strtod(eq + 1, &end);
    if (end == eq + 1 || !(v >= 0) || !isfinite(v))
        return hsdag_err_set(e, HSDAG_EINVAL, "--mem '%s': '%s' is not a size", spec, eq + 1);
    double bytes;
    if (*end == '%' && end[1] == 0) {
        if (!(v > 0 && v <= 1e6))
            return hsdag_err_set(e, HSDAG_EINVAL, "--mem '%s': percentage must be in (0, 1e6]", spec);
        double need = 0;
        /* the whole need is measured without a cap, so an earlier override of this device does not matter */
        double saved = devs->dev[d].mem_capacity;
        devs->dev[d].mem_capacity = 0;
        int rc = whole_need(g, devs, cfg, d, &need, e);
        devs->dev[d].mem_capacity = saved;
        if (rc < 0) return rc;
        bytes = floor(need * v / 100.0);
        if (!(bytes >= 1)) bytes = 1; /* 0 would mean unlimited */
    } else {
        double mul = 1;
        if (*end && !end[1]) {
            const char *units = "KMGT";
            const char *u = strchr(units, *end);
            if (!u) return hsdag_err_set(e, HSDAG_EINVAL, "--mem '%s': unknown unit '%s'", spec, end);
            mul = pow(1024.0, (double)(u - units + 1));
        } else if (*end) {
            return hsdag_err_set(e, HSDAG_EINVAL, "--mem '%s': unknown unit '%s'", spec, end);
        }
        bytes = floor(v * mul);
        if (bytes > 9.0e18) return hsdag_err_set(e, HSDAG_EINVAL, "--mem '%s': size out of range", spec);
    }
    devs->dev[d].mem_capacity = bytes;
    return 0;
}

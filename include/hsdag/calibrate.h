/* calibrate.h - fits the roofline device model (devices.h) of one CPU to measured per-op profiles: compute rate
 * per op class (peak FLOP/s x efficiency), memory bandwidth and per-op launch overhead; and scores a device's
 * per-op predictions against profiles it was not fitted on.
 * Not here: measuring (hsdag profile / ortprof.h), simulating (sim.h; a fitted device is an ordinary device).
 * Entry points: hsdag_calib_config_default, hsdag_calibrate_fit, hsdag_calibrate_eval, hsdag_calibrate_devices,
 *   hsdag_calibrate_write_json.
 *
 * Usage:
 *   hsdag_calib_config cc = hsdag_calib_config_default();
 *   hsdag_calib_result r; hsdag_calib_model m[1]; hsdag_err e = {0};
 *   hsdag_profile *prof;                                                  // an `hsdag profile` CSV of g
 *   if (hsdag_profile_read_file(&prof, "g.csv", &e) < 0) return;
 *   const hsdag_graph *graphs[1] = {g};
 *   const hsdag_profile *profiles[1] = {prof};
 *   if (hsdag_calibrate_fit(&r, m, graphs, profiles, 1, &cc, &e) < 0) return;  // r.dev: the fitted CPU
 *   hsdag_devices *d; hsdag_calibrate_devices(&d, &r.dev, "this-cpu", NULL, &e);
 *   hsdag_buf b = {0}; hsdag_devices_write_json(&b, d);                   // --devices this-cpu.json
 *   hsdag_buf_free(&b); hsdag_devices_free(d); hsdag_profile_free(prof);
 */
#ifndef HSDAG_CALIBRATE_H
#define HSDAG_CALIBRATE_H

#include "hsdag/devices.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hsdag_calib_config {
    const char *device; /* profile entries of this device name are used (case-insensitive); default "CPU" */
    double huber_delta; /* Huber threshold on log(predicted / measured) per kernel; default 0.3 */
    int32_t max_sweeps; /* pattern-search sweeps over the parameters; default 400 */
    /* last-level cache size of the profiled machine (bytes): an op's first cache_bytes move at a fitted cache
     * bandwidth; 0 (default) = no cache level, one bandwidth for all bytes */
    double cache_bytes;
    const char *const
        *labels; /* optional: a name per (graph, profile) pair for messages, e.g. the CSV path */
} hsdag_calib_config;
HSDAG_API hsdag_calib_config hsdag_calib_config_default(void);

/* Fit quality on one (graph, profile) pair. A "kernel" is a measured node with the nodes ORT fused into it
 * ("#fused" lines) and the 0-ms nodes (folded, removed) attached to the kernel of their nearest consumer. */
typedef struct hsdag_calib_model {
    int32_t kernels;         /* kernels compared */
    double measured_ms;      /* sum of the profile's times */
    double predicted_ms;     /* sum of the device's roofline times over every node (the CPU-only latency) */
    double spearman;         /* rank correlation of per-kernel predicted and measured times */
    double median_abs_rel;   /* median |predicted / measured - 1| over kernels */
    double weighted_abs_rel; /* time-weighted mean of the same (weights = measured times) */
} hsdag_calib_model;

/* Invariants: dev is a valid cpu device (name "CPU"); class_kernels[c] counts kernels whose time is mostly
 * (by prediction) class c; classes without any keep the median efficiency of those with (flagged in fitted). */
typedef struct hsdag_calib_result {
    hsdag_device dev;
    uint8_t fitted[HSDAG_OP_CLASS_COUNT_]; /* 1 where eff[c] was fitted from data */
    int32_t class_kernels[HSDAG_OP_CLASS_COUNT_];
    int32_t n_kernels;
    int32_t sweeps;
    double loss; /* final objective: sum of measured ms x Huber(log ratio) */
} hsdag_calib_result;

/* Fits r->dev to n (graph, profile) pairs; per-model fit quality in models[0..n) (may be NULL). Profile nodes
 * missing from their graph are errors (HSDAG_EINVAL naming the node). Deterministic. */
HSDAG_API int hsdag_calibrate_fit(hsdag_calib_result *r, hsdag_calib_model *models,
                                  const hsdag_graph *const *graphs, const hsdag_profile *const *profiles,
                                  int32_t n, const hsdag_calib_config *cfg, hsdag_err *e);
/* Scores device dev (e.g. one fitted on other models) on one pair: the same figures as the fit reports. */
HSDAG_API int hsdag_calibrate_eval(hsdag_calib_model *m, const hsdag_device *dev, const hsdag_graph *g,
                                   const hsdag_profile *p, const hsdag_calib_config *cfg, hsdag_err *e);
/* Per-kernel detail of hsdag_calibrate_eval as CSV: anchor (the member with the most FLOPs), its op, member
 * count, summed FLOPs and bytes, measured and predicted ms. */
HSDAG_API int hsdag_calibrate_kernels(hsdag_buf *out, const hsdag_device *dev, const hsdag_graph *g,
                                      const hsdag_profile *p, const hsdag_calib_config *cfg, hsdag_err *e);
/* A device set holding dev: with base == NULL a one-device set named `name` (sequential); else the preset or
 * file `base` with its first CPU replaced by dev (e.g. "cpu-gpu": this CPU + the preset's GPU and link). */
HSDAG_API int hsdag_calibrate_devices(hsdag_devices **out, const hsdag_device *dev, const char *name,
                                      const char *base, hsdag_err *e);
/* The "hsdag-calibration/1" result document (docs/formats.md, "Result JSON"): the device (fitted, or the one
 * scored when r is NULL), the fit's figures (null when scoring) and one row per model (labels[i] names the
 * i-th of models[n]). 0 or HSDAG_ENOMEM. */
HSDAG_API int hsdag_calibrate_write_json(hsdag_buf *out, const hsdag_device *dev, const hsdag_calib_result *r,
                                         const hsdag_calib_model *models, const char *const *labels,
                                         int32_t n);

#ifdef __cplusplus
}
#endif
#endif

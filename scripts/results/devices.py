"""devices.py - `make results` section: the simulator's CPU latencies against ONNX Runtime on this machine.

For each ONNX model: the measured end-to-end latency (`hsdag profile`, median of runs), the simulated CPU-only
latency with a device calibrated on the other half of the models (two-fold cross-validation, `hsdag calibrate`),
with the measured per-op profile (`simulate --profile`) and with the spec-sheet preset (cpu-gpu's CPU); the
per-op (per-kernel) Spearman rank correlation of the calibrated and the preset predictions.
Not here: measuring or fitting (the CLI does both). Needs ONNX Runtime (scripts/install-deps); without it the
section says so and writes no numbers. Entry points: TITLE, generate.
"""
import json
import os
import statistics
import subprocess
import time

from common import HSDAG, run_json

TITLE = "CPU latency: simulator vs ONNX Runtime"
RUNS = int(os.environ.get("HSDAG_PROFILE_RUNS", "10"))
REUSE = os.environ.get("HSDAG_PROFILE_DIR")
KEEP = os.environ.get("HSDAG_KEEP")  # keep the work folder (fold devices)  # reuse the profiles in this folder instead of measuring
MODELS = [
    ("AlexNet", "tests/data/onnx/alexnet.onnx"),
    ("BERT-base", "tests/data/onnx/bert_base.onnx"),
    ("GoogLeNet", "tests/data/onnx/googlenet.onnx"),
    ("Inception-V3", "tests/data/onnx/inception_v3.onnx"),
    ("MobileNet-V2", "tests/data/onnx/mobilenet_v2.onnx"),
    ("ResNet-50", "tests/data/onnx/resnet50.onnx"),
    ("SqueezeNet 1.1", "tests/data/onnx/squeezenet1_1.onnx"),
    ("VGG-16", "tests/data/onnx/vgg16.onnx"),
    ("ViT-B/16", "tests/data/onnx/vit_b_16.onnx"),
    ("ConvNeXt-T", "tests/data/onnx-export/convnext_tiny.onnx"),
    ("DenseNet-121", "tests/data/onnx-export/densenet121.onnx"),
    ("EfficientNet-B0", "tests/data/onnx-export/efficientnet_b0.onnx"),
    ("FCN-ResNet-50", "tests/data/onnx-export/fcn_resnet50.onnx"),
    ("LR-ASPP MobileNet-V3", "tests/data/onnx-export/lraspp_mobilenet_v3_large.onnx"),
    ("MNASNet 1.0", "tests/data/onnx-export/mnasnet1_0.onnx"),
    ("MobileNet-V3 large", "tests/data/onnx-export/mobilenet_v3_large.onnx"),
    ("MobileNet-V3 small", "tests/data/onnx-export/mobilenet_v3_small.onnx"),
    ("RegNetY-400MF", "tests/data/onnx-export/regnet_y_400mf.onnx"),
    ("ResNet-18", "tests/data/onnx-export/resnet18.onnx"),
    ("ResNeXt-50 32x4d", "tests/data/onnx-export/resnext50_32x4d.onnx"),
    ("ShuffleNet-V2 1.0", "tests/data/onnx-export/shufflenet_v2_x1_0.onnx"),
    ("Swin-T", "tests/data/onnx-export/swin_t.onnx"),
]


def ort_available():
    try:
        subprocess.run(["node", "scripts/ort-profile.js", "--probe"], check=True, capture_output=True, text=True)
        return True
    except (OSError, subprocess.CalledProcessError):
        return False


def sim(model, extra):
    return run_json(["simulate", model, "--placement", "cpu-only"] + extra)["latency_ms"]


def pct(x):
    return "%+.1f%%" % (100 * x)


def generate(lines):
    lines.append("## " + TITLE)
    lines.append("")
    if not ort_available():
        lines.append("ONNX Runtime is not installed on the machine that regenerated this section "
                     "(scripts/install-deps installs it): no measurements.")
        return
    work = "/tmp/hsdag-results-devices-%d" % os.getpid()
    os.makedirs(work, exist_ok=True)
    load0 = os.getloadavg()
    t0 = time.time()
    meas = {}
    for label, path in MODELS:
        b = os.path.basename(path)[:-5]
        csv = os.path.join(work, b + ".csv")
        if REUSE:  # profiles taken before (hsdag profile --csv DIR/NAME.csv --json > DIR/NAME.json)
            csv = os.path.join(REUSE, b + ".csv")
            with open(os.path.join(REUSE, b + ".json")) as f:
                r = json.load(f)
        else:
            r = run_json(["profile", path, "--runs", str(RUNS), "--warmup", "3", "--csv", csv])
        meas[label] = {"path": path, "csv": csv, "latency": r["latency_ms"], "wall": r["wall_latency_ms"],
                       "kernels": r["kernel_ms"], "ort": r["ort_version"]}
    load1 = os.getloadavg()
    # two folds: alternate models in the order above (each fold mixes CNNs and transformers)
    folds = [[m for i, m in enumerate(MODELS) if i % 2 == k] for k in (0, 1)]
    dev = []
    for k in (0, 1):
        out = os.path.join(work, "fold%d.json" % k)
        args = ["calibrate"] + [meas[l]["csv"] for l, _ in folds[k]]
        for l, _ in folds[k]:
            args += ["--model", meas[l]["path"]]
        dev.append((out, run_json(args + ["--device-set", out])))
    full = os.path.join(work, "all.json")
    args = ["calibrate"] + [meas[l]["csv"] for l, _ in MODELS]
    for l, _ in MODELS:
        args += ["--model", meas[l]["path"]]
    fitall = run_json(args + ["--device-set", full])
    rows = []
    for k in (0, 1):
        djson = dev[1 - k][0]  # predict fold k with the device fitted on the other fold
        for l, path in folds[k]:
            m = meas[l]
            cal = sim(path, ["--devices", djson])
            prof = sim(path, ["--devices", "cpu-gpu", "--profile", m["csv"]])
            preset = sim(path, ["--devices", "cpu-gpu"])
            sc = run_json(["calibrate", m["csv"], "--model", path, "--devices", djson])["models"][0]
            sp = run_json(["calibrate", m["csv"], "--model", path, "--devices", "cpu-gpu"])["models"][0]
            rows.append((l, m, cal, prof, preset, sc["spearman"], sp["spearman"], "AB"[1 - k]))
    rows.sort(key=lambda r: [x for x, _ in MODELS].index(r[0]))
    lines.append("Measured with `hsdag profile` (ONNX Runtime %s, CPU execution provider, 1 intra-op thread, "
                 "graph optimisation `all`, random inputs; %d timed runs after 3 warm-up runs, median; "
                 "clock: the process's CPU time per run, see docs/devices.md \"Measuring this CPU\"). Load average "
                 "%.1f / %.1f / %.1f before and %.1f / %.1f / %.1f after the measurements (2 cores, shared); "
                 "profiling took %.0f s." % (meas[MODELS[0][0]]["ort"], RUNS, load0[0], load0[1], load0[2],
                                            load1[0], load1[1], load1[2], time.time() - t0))
    lines.append("")
    lines.append("Simulated = `hsdag simulate MODEL --placement cpu-only` (sequential semantics: the sum of the op "
                 "costs). *calibrated*: `--devices` = the CPU fitted by `hsdag calibrate` on the other fold "
                 "(fold A = models 1, 3, 5, ... of the table, B = 2, 4, 6, ...; the column says which fold's "
                 "device predicted the row); *profile*: `--profile` with the model's own measured CSV; "
                 "*preset*: the `cpu-gpu` preset's spec-sheet CPU (i9-12900K). Errors are simulated / measured "
                 "- 1. Spearman: rank correlation of predicted and measured per-kernel times (a kernel = an ORT "
                 "kernel with the nodes fused into it).")
    lines.append("")
    lines.append("| model | measured ms | calibrated ms (err) | fitted on | profile ms (err) | preset ms (err) | "
                 "Spearman calibrated | Spearman preset |")
    lines.append("|---|---|---|---|---|---|---|---|")
    ec, ep, es, rc, rs = [], [], [], [], []
    for l, m, cal, prof, preset, sc, sp, fold in rows:
        t = m["latency"]
        e1, e2, e3 = cal / t - 1, prof / t - 1, preset / t - 1
        ec.append(abs(e1))
        ep.append(abs(e2))
        es.append(abs(e3))
        rc.append(sc)
        rs.append(sp)
        lines.append("| %s | %.2f | %.2f (%s) | %s | %.2f (%s) | %.2f (%s) | %.3f | %.3f |"
                     % (l, t, cal, pct(e1), fold, prof, pct(e2), preset, pct(e3), sc, sp))
    lines.append("")
    lines.append("Over %d models: calibrated (cross-validated) median |error| %.1f%%, worst %.1f%%; measured "
                 "profile median |error| %.1f%%, worst %.1f%%; spec-sheet preset median |error| %.1f%%; "
                 "per-kernel Spearman, median over models: calibrated %.3f (worst %.3f), preset %.3f."
                 % (len(rows), 100 * statistics.median(ec), 100 * max(ec), 100 * statistics.median(ep),
                    100 * max(ep), 100 * statistics.median(es), statistics.median(rc), min(rc),
                    statistics.median(rs)))
    lines.append("")
    d = fitall
    eff = ", ".join("%s %.3g" % (k, v) for k, v in d["efficiency"].items() if k != "bookkeeping")
    lines.append("The CPU fitted on all %d models (`hsdag calibrate` on every profile): peak %.1f GFLOP/s, "
                 "bandwidth %.1f GB/s, launch overhead %.2f us; efficiency %s."
                 % (len(MODELS), d["peak_flops"] / 1e9, d["mem_bandwidth"] / 1e9, d["launch_overhead_s"] * 1e6,
                    eff))
    for f in os.listdir(work) if not KEEP else []:
        os.remove(os.path.join(work, f))
    if not KEEP:
        os.rmdir(work)

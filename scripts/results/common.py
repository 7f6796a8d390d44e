"""common.py - helpers every `make results` section uses: run the hsdag CLI, parse --json, mean ± std.

Not here: any table layout (each section module lays out its own) or measurement logic (the CLI does it).
Entry points: run, run_json, compare, train, mean_std, median, SEEDS, MODELS.
"""
import json
import os
import subprocess

HSDAG = os.environ.get("HSDAG", "build/hsdag")
MODELS = [("Inception-V3", "tests/data/onnx/inception_v3.onnx"),
          ("ResNet-50", "tests/data/onnx/resnet50.onnx"),
          ("BERT-base", "tests/data/onnx/bert_base.onnx")]
SEEDS = [0, 1, 2]


def run(args):
    return subprocess.run([HSDAG] + args, check=True, capture_output=True, text=True).stdout


def run_json(args):
    return json.loads(run(args + ["--json"]))


def compare(model, devices, methods, seed=1):
    # seed 1: the published tables were made with it (compare's default seed is 0 since the CLI vocabulary)
    return run_json(["compare", model, "--devices", devices, "--methods", ",".join(methods), "--seed", str(seed)])


def train(model, devices, extra, seed):
    d = "/tmp/hsdag-results-%d" % os.getpid()
    return run_json(["train", model, "--devices", devices, "--seed", str(seed), "--out-dir", d, "--force"] + extra)


def mean_std(xs):
    m = sum(xs) / len(xs)
    v = sum((x - m) ** 2 for x in xs) / max(1, len(xs) - 1)
    return m, v ** 0.5


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else 0.5 * (xs[n // 2 - 1] + xs[n // 2])

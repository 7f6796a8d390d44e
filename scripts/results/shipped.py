"""shipped.py - `make results` section: the shipped HSDAG policies (policies/hsdag/) on the 13 torchvision exports
they were not trained on, zero-shot, on `cpu-gpu` with the GPU uncapped and capped at 30-90% of each model: what
`place --policy shipped` picks (the capped ensemble where the caps bind) against the uncapped policy alone.
Not here: how the policies were trained (policies/hsdag/README.md), leave-one-out (pretrained.py).
Entry point: generate(L).
"""
import os
from concurrent.futures import ThreadPoolExecutor

from common import median, run_json
from hsdag_runs import lat, run_all

TITLE = "The shipped policies on unseen models, uncapped and capped"

CAPS = [None, "30%", "50%", "70%", "90%"]
UNCAPPED = "policies/hsdag/cpu-gpu.bin"
REF_SEED = 1


def generate(L):
    from hsdag_paper import UNSEEN  # the 13 torchvision exports (docs quote these figures)
    models = ["tests/data/onnx-export/%s.onnx" % m for m in sorted(UNSEEN)]
    setting = {c: ["--devices", "cpu-gpu"] + (["--mem", "GPU=" + c] if c else []) for c in CAPS}
    # the policy-free rows go through the results cache; the policy rows do not (the cache keys the binary,
    # not the policy files)
    base = {}
    cmds = [(c, f, m) for c in CAPS for f in models for m in ("cpu-only", "heft", "hsdag")]
    got = run_all([["place", f] + setting[c] + ["--method", m, "--seed", str(REF_SEED)] for c, f, m in cmds])
    for (c, f, m), r in zip(cmds, got):
        base[c, f, m] = lat(r)
    pcmds = [(c, f, p) for c in CAPS for f in models for p in ("shipped", UNCAPPED)]

    def one(job):
        c, f, p = job
        return run_json(["place", f] + setting[c] + ["--method", "hsdag", "--policy", p])

    # `shipped` is looked up on the data path: this tree's policies/, not an installed copy
    old_data = os.environ.get("HSDAG_DATA")
    os.environ["HSDAG_DATA"] = os.getcwd()
    try:
        with ThreadPoolExecutor(2) as ex:
            pres = list(ex.map(one, pcmds))
    finally:
        if old_data is None:
            del os.environ["HSDAG_DATA"]
        else:
            os.environ["HSDAG_DATA"] = old_data
    for (c, f, p), r in zip(pcmds, pres):
        if p == "shipped" and "policies/hsdag/cpu-gpu." not in r.get("note", ""):
            raise SystemExit("shipped.py: %s under cap %s was not placed by this tree's policies: %s" % (
                f, c, r.get("note")))
    pol, note = {}, {}
    for (c, f, p), r in zip(pcmds, pres):
        pol[c, f, p] = lat(r)
        note[c, f, p] = r.get("note", "")

    L.append("## %s" % TITLE)
    L.append("")
    L.append("The 13 torchvision exports of tests/data/onnx-export (none of them a training graph of the shipped "
             "policies) on `cpu-gpu`, zero-shot (one forward pass, nothing measured). *shipped*: `place --policy "
             "shipped`, which takes the ensemble of three policies trained under a 50%% cap "
             "(policies/hsdag/cpu-gpu.capped.{0,1,2}.bin) wherever the GPU's cap binds (it cannot run the "
             "whole model alone), else the uncapped policy (*shipped picks* says which it took); *uncapped*: `--policy %s`, the shipped policy alone "
             "before the capped ensemble was shipped. *gap*: latency over the best of every row, the default "
             "`hsdag` among them (warm start, 500 measurements, polish; seed %d) as a reference for the best "
             "known; medians over the 13 models. Commands: `hsdag place MODEL --devices cpu-gpu [--mem GPU=C] "
             "--method hsdag --policy shipped|%s`, `... --method cpu-only|heft|hsdag --seed %d`."
             % (UNCAPPED, REF_SEED, UNCAPPED, REF_SEED))
    L.append("")
    L.append("| GPU cap | shipped picks | shipped gap | uncapped gap | shipped slower than CPU-only | uncapped "
             "slower than CPU-only | shipped better than HEFT | uncapped better than HEFT |")
    L.append("|---|---|---|---|---|---|---|---|")
    for c in CAPS:
        gaps = {p: [] for p in ("shipped", UNCAPPED)}
        slow = {p: 0 for p in gaps}
        heft = {p: 0 for p in gaps}
        picks = set()
        for f in models:
            best = min([base[c, f, m] for m in ("cpu-only", "heft", "hsdag")] + [pol[c, f, p] for p in gaps])
            for p in gaps:
                gaps[p].append(pol[c, f, p] / best - 1)
                slow[p] += pol[c, f, p] > base[c, f, "cpu-only"] * (1 + 1e-9)
                heft[p] += pol[c, f, p] < base[c, f, "heft"] * (1 - 1e-9)
            picks.add("capped ensemble" if "shipped ensemble of 3 policies trained under a memory cap"
                      in note[c, f, "shipped"] else "uncapped" if "cpu-gpu.bin" in note[c, f, "shipped"] else "?")
        L.append("| %s | %s | %+.1f%% | %+.1f%% | %d/%d | %d/%d | %d/%d | %d/%d |" % (
            c or "none", ", ".join(sorted(picks)), 100 * median(gaps["shipped"]), 100 * median(gaps[UNCAPPED]),
            slow["shipped"], len(models), slow[UNCAPPED], len(models), heft["shipped"], len(models),
            heft[UNCAPPED], len(models)))
    L.append("")
    L.append("Per model at `--mem GPU=50%` (ms):")
    L.append("")
    L.append("| model | shipped | uncapped | CPU-only | HEFT | hsdag (500 + polish) |")
    L.append("|---|---|---|---|---|---|")
    for f in models:
        c = "50%"
        L.append("| %s | %.4g | %.4g | %.4g | %.4g | %.4g |" % (
            os.path.basename(f)[:-5], pol[c, f, "shipped"], pol[c, f, UNCAPPED], base[c, f, "cpu-only"],
            base[c, f, "heft"], base[c, f, "hsdag"]))
    L.append("")

"""hsdag_learning.py - `make results` section: why the paper's learner does not learn (controlled experiments,
one cause at a time), the ablation of the default learner's choices on a few hard-suite instances, on the whole
suite, and on torchvision exports it was not designed on; weight units across memory caps.
Not here: the hard suite and the "learning shows" targets (hsdag_suite), the paper setting (hsdag_paper), the
runs themselves (hsdag_runs: the CLI, cached per command and binary). Entry point: generate(L).
"""
from common import SEEDS
from hsdag_runs import curve_stats, fmt, gmean, lat, mean, run_all, suite, suite_runs

TITLE = "HSDAG that learns: why the paper's learner does not, and the ablation of the default learner"


# ---- A: why the paper's learner does not learn ----

DIAG_INSTANCES = [("4gpu-inception_v3", ["tests/data/onnx/inception_v3.onnx", "--devices", "cpu-4gpu"]),
                  ("mem50-inception_v3", ["tests/data/onnx/inception_v3.onnx", "--mem", "GPU=50%"]),
                  ("igpu-googlenet", ["tests/data/onnx/googlenet.onnx", "--devices", "cpu-igpu", "--semantics",
                                      "concurrent"]),
                  ("tw-op-bert3", ["tests/data/tarnawski/latency-inputs/OperatorGraphs/bert_l-3_inference.json"]),
                  ("tw-res50", ["tests/data/tarnawski/latency-inputs/LayerGraphs/resnet50_inference.json"])]
DIAG_VARIANTS = [("the paper (REINFORCE, R > 0, one step per 20, dynamic clusters, dropout)", ["--paper"]),
                 ("+ moving-average baseline (cause 1: every sample reinforced)", ["--paper", "--baseline", "moving"]),
                 ("+ one update per placement, with the baseline (cause 2)",
                  ["--paper", "--update", "step", "--baseline", "moving"]),
                 ("clusters fixed from the initial network (cause 4)", ["--paper", "--fixed-clusters"]),
                 ("no dropout while sampling (cause 5)", ["--paper", "--dropout", "0"]),
                 ("one decision per group, no pooling (cause 3: more decisions)", ["--paper", "--levels", "0"]),
                 ("3 parsing levels (cause 3: fewer decisions)", ["--paper", "--levels", "3"]),
                 ("reward -ln(latency / first) instead of 1 / latency", ["--paper", "--reward", "log"])]


def diag(L):
    cmds = [["train"] + a + v + ["--seed", str(s)] for _, a in DIAG_INSTANCES for _, v in DIAG_VARIANTS
            for s in SEEDS]
    res = iter(run_all(cmds))
    L.append("## Why the paper's learner does not learn: one cause at a time (train, 500 placements, "
             "seeds %s)" % ",".join(map(str, SEEDS)))
    L.append("")
    L.append("Each row changes one thing in the paper's algorithm (`--paper`). *first 5* and *last 5* are the "
             "mean sampled latency (ms) of the first and last five episodes (20 placements each; an infeasible "
             "sample counts as 10 x its latency, as its reward), *best ep.* the mean episode of the best "
             "placement, *H end* the policy entropy (nats per cluster) in the last episode; means over the "
             "seeds. Command: `hsdag train MODEL [instance options] --paper [change] --seed S --json`.")
    L.append("")
    L.append("| instance | variant | best ms | first 5 | last 5 | last/first | best ep. | H end |")
    L.append("|---|---|---|---|---|---|---|---|")
    for name, _ in DIAG_INSTANCES:
        for label, _ in DIAG_VARIANTS:
            rs = [next(res) for _ in SEEDS]
            ok = [r for r in rs if "error" not in r]
            if not ok:
                L.append("| %s | %s | failed: %s |  |  |  |  |  |" % (name, label, rs[0]["error"][:60]))
                continue
            cs = [curve_stats(r) for r in ok]
            f5, l5 = mean(c["first5"] for c in cs), mean(c["last5"] for c in cs)
            L.append("| %s | %s | %s%s | %s | %s | %.2f | %.1f | %.2f |" % (
                name, label, fmt(mean(r["latency_ms"] for r in ok)),
                "" if len(ok) == len(rs) else " (%d/%d runs feasible)" % (len(ok), len(rs)), fmt(f5), fmt(l5),
                l5 / f5, mean(r["best_episode"] for r in ok), mean(c["ent_last"] for c in cs)))
    L.append("")


# ---- D: ablation of the default learner ----

ABL_INSTANCES = ["tw-bert24", "tw-op-bert3", "mem50-squeezenet1_1", "4gpu-googlenet", "igpu-squeezenet1_1"]
ABL = [("default", []),
       ("memory masks off", ["--no-memory-mask"]),
       ("inherit-the-predecessor off", ["--no-inherit"]),
       ("no pooling (one decision per group)", ["--levels", "0"]),
       ("pooling down to 2 x devices clusters (the floor before 32)", ["--min-clusters", "0"]),
       ("clusters re-parsed every step (so without self-imitation and offsets, which need fixed clusters)",
        ["--dynamic-clusters", "--sil", "0", "--offset-lr", "0"]),
       ("coarsening without group limits (min-groups 0, group-mem 0)", ["--min-groups", "0", "--group-mem", "0"]),
       ("1 epoch (no PPO re-use)", ["--epochs", "1"]),
       ("4 epochs", ["--epochs", "4"]),
       ("moving-average baseline instead of leave-one-out", ["--baseline", "moving"]),
       ("advantages not normalised", ["--normalize", "none"]),
       ("advantages normalised per step", ["--normalize", "step"]),
       ("reward 1 / latency", ["--reward", "inv"]),
       ("20 samples per step (1 step)", ["--samples", "20", "--steps", "1"]),
       ("dropout 0.2 while sampling", ["--dropout", "0.2"]),
       ("self-imitation off (`--sil 0`)", ["--sil", "0"]),
       ("per-decision offsets off (`--offset-lr 0`)", ["--offset-lr", "0"]),
       ("both off (the default learner before them)", ["--sil", "0", "--offset-lr", "0"]),
       ("+ imitation warm start (best cheap heuristic)", ["--warm-start", "auto"]),
       ("+ warm start and local-search polish (= place --method hsdag)", ["--warm-start", "auto", "--polish"])]


def ablation(L, entries, runs):
    argv = {name: a for name, _, _, a in entries}
    inst = [i for i in ABL_INSTANCES if i in argv]
    cmds = [["train"] + argv[i] + v + ["--seed", str(s)] for _, v in ABL for i in inst for s in SEEDS]
    res = iter(run_all(cmds))
    L.append("## Ablation of the default learner (train, 500 placements, seeds %s, %d instances)" % (
        ",".join(map(str, SEEDS)), len(inst)))
    L.append("")
    L.append("Instances: %s. *vs default*: geometric mean over instances and seeds of the latency ratio to the "
             "default learner's run with the same seed; *wins*: runs beating both black-box baselines (same seed); "
             "*last/first* and *after ep. 0* as above; *wall s*: mean wall time of a training run (two at a "
             "time on 2 cores). Command: `hsdag train MODEL "
             "[instance options] [change] --seed S --json`." % ", ".join(inst))
    L.append("")
    L.append("| change | vs default | wins | after ep. 0 | last/first | wall s |")
    L.append("|---|---|---|---|---|---|")
    base = {}
    bb = {}
    for i in inst:
        # by seed, not by position: under RESULTS_CACHED_ONLY a seed's compare may not have run (no baseline)
        for s, row in zip(runs[i]["seeds_run"], runs[i]["seeds"]):
            bb[(i, s)] = min(lat(row.get("bb-random")), lat(row.get("bb-local")))
    for label, _ in ABL:
        ratios, wins, after, lf, ts, n = [], 0, 0, [], [], 0
        for i in inst:
            for s in SEEDS:
                r = next(res)
                n += 1
                if "error" in r:
                    continue
                l = r["latency_ms"] if r.get("feasible") else float("inf")
                if label == "default":
                    base[(i, s)] = l
                ratios.append(l / base[(i, s)] if base.get((i, s)) else float("nan"))
                wins += (i, s) in bb and l < bb[(i, s)]
                after += r["best_episode"] > 0
                c = curve_stats(r)
                if c:
                    lf.append(c["last5"] / c["first5"])
                ts.append(r["wall_s"])
        L.append("| %s | %+.2f%% | %d/%d | %d/%d | %.2f | %.2f |" % (
            label, 100 * (gmean(ratios) - 1), wins, n, after, n, mean(lf), mean(ts)))
    L.append("")


# ---- E: self-imitation and the per-decision offsets on the whole suite ----

def learned_stats(rs):
    """One instance's train runs over the seeds: (mean latency, inf where a run failed or is infeasible; 1 if
    the mean last-5 / first-5 episode latency is <= 0.80, else 0; runs whose best came after episode 0)."""
    m = mean(r["latency_ms"] if "error" not in r and r.get("feasible") else float("inf") for r in rs)
    cs = [c for c in (curve_stats(r) for r in rs if "error" not in r) if c]
    drop = int(bool(cs) and mean(c["last5"] / c["first5"] for c in cs) <= 0.80)
    return m, drop, sum(1 for r in rs if "error" not in r and r["best_episode"] > 0)


SUITE_VARIANTS = [("default (self-imitation and offsets)", []),
                  ("self-imitation off (`--sil 0`)", ["--sil", "0"]),
                  ("offsets off (`--offset-lr 0`)", ["--offset-lr", "0"]),
                  ("both off (the default learner before them)", ["--sil", "0", "--offset-lr", "0"]),
                  ("pooling down to 2 x devices clusters (`--min-clusters 0`: the floor before 32)",
                   ["--min-clusters", "0"]),
                  ("weight units off (`--weight-units 0`: weights pooled with their consumers)",
                   ["--weight-units", "0"])]


def suite_choices(L, entries, runs):
    """The latest choices, measured where they were chosen: every hard instance, every seed."""
    cmds = [["train"] + a + v + ["--seed", str(s)] for _, v in SUITE_VARIANTS for _, _, _, a in entries
            for s in SEEDS]
    res = iter(run_all(cmds))
    L.append("## Self-imitation, per-decision offsets, the 32-decision floor and weight units on the whole hard "
             "suite (train, "
             "500 placements, seeds "
             "%s, %d instances)" % (",".join(map(str, SEEDS)), len(entries)))
    L.append("")
    L.append("*learned / best known*: geometric mean over instances of the mean learned latency over the "
             "suite's best known latency (1 = every run at the best known); *wins*: instances where the mean "
             "over the seeds beats both black-box baselines' means; *20% drop*: instances whose mean last-5 / "
             "first-5 episode latency is <= 0.80; *after ep. 0*: runs whose best placement came after episode 0. "
             "Command: `hsdag train ENTRY [change] --seed S --json`.")
    L.append("")
    L.append("| learner | learned / best known | wins | 20% drop | after ep. 0 |")
    L.append("|---|---|---|---|---|")
    for label, _ in SUITE_VARIANTS:
        ratios, wins, drop, after, n = [], 0, 0, 0, 0
        for name, best, _, _ in entries:
            rs = [next(res) for _ in SEEDS]
            seeds = runs[name]["seeds"]
            m, d, a = learned_stats(rs)
            if best:
                ratios.append(m / best)
            br = mean(lat(seeds[i].get("bb-random")) for i in range(len(seeds)))
            bl = mean(lat(seeds[i].get("bb-local")) for i in range(len(seeds)))
            wins += m < br and m < bl
            drop += d
            after += a
            n += len(rs)
        L.append("| %s | %.4f | %d/%d | %d/%d | %d/%d |" % (label, gmean(ratios), wins, len(entries), drop,
                                                           len(entries), after, n))
    L.append("")


# ---- F: the same choices on models the learner was not designed on ----

UNSEEN_SETTINGS = [("mem50", ["--devices", "cpu-gpu", "--mem", "GPU=50%"]), ("4gpu", ["--devices", "cpu-4gpu"]),
                   ("igpu", ["--devices", "cpu-igpu", "--semantics", "concurrent"])]
UNSEEN_VARIANTS = [("default", []), ("`--min-clusters 0` (the floor before 32)", ["--min-clusters", "0"]),
                   ("`--weight-units 0` (weights pooled with their consumers)", ["--weight-units", "0"])]


def unseen(L):
    """The learner alone on the torchvision exports of hsdag_paper.UNSEEN under the suite's three hard settings."""
    from hsdag_paper import UNSEEN
    inst = [("%s-%s" % (tag, m), ["tests/data/onnx-export/%s.onnx" % m] + a) for m in UNSEEN
            for tag, a in UNSEEN_SETTINGS]
    cmds = []
    for _, a in inst:
        for s in SEEDS:
            cmds += [["train"] + a + v + ["--seed", str(s)] for _, v in UNSEEN_VARIANTS]
            cmds += [["place"] + a + ["--method", m, "--seed", str(s)] for m in ("bb-random", "bb-local")]
    res = iter(run_all(cmds))
    L.append("## The learner alone on models it was not designed on (train, 500 placements, seeds %s, %d "
             "instances)" % (",".join(map(str, SEEDS)), len(inst)))
    L.append("")
    L.append("The %d torchvision exports of tests/data/onnx-export (the paper setting's *unseen* models), each "
             "under the hard suite's three settings: `--devices cpu-gpu --mem GPU=50%%` (mem50), `--devices "
             "cpu-4gpu` (4gpu) and `--devices cpu-igpu --semantics concurrent` (igpu). No best known latency is "
             "computed for them: *vs default* is the geometric mean over instances of each variant's mean "
             "latency over the default's; *wins*, *20%% drop* and *after ep. 0* as in the whole-suite table "
             "above, against `bb-random` and `bb-local` with the same seeds. Commands: `hsdag train MODEL "
             "SETTING [change] --seed S --json`, `hsdag place MODEL SETTING --method bb-random|bb-local --seed S "
             "--json`." % len(UNSEEN))
    L.append("")
    per = {v: [] for v, _ in UNSEEN_VARIANTS}
    stats = {v: [0, 0, 0, 0] for v, _ in UNSEEN_VARIANTS}  # wins, drop, after, runs
    for name, _ in inst:
        got = {v: [] for v, _ in UNSEEN_VARIANTS}
        br, bl = [], []
        for _ in SEEDS:
            for v, _ in UNSEEN_VARIANTS:
                got[v].append(next(res))
            br.append(next(res))
            bl.append(next(res))
        b = min(mean(lat(x) for x in br), mean(lat(x) for x in bl))
        for v, _ in UNSEEN_VARIANTS:
            m, d, a = learned_stats(got[v])
            per[v].append(m)
            st = stats[v]
            st[0] += m < b
            st[1] += d
            st[2] += a
            st[3] += len(got[v])
    L.append("| learner | vs default | wins | 20% drop | after ep. 0 |")
    L.append("|---|---|---|---|---|")
    for v, _ in UNSEEN_VARIANTS:
        ratio = gmean([a / d for a, d in zip(per[v], per["default"])])
        st = stats[v]
        L.append("| %s | %+.2f%% | %d/%d | %d/%d | %d/%d |" % (v, 100 * (ratio - 1), st[0], len(inst), st[1],
                                                            len(inst), st[2], st[3]))
    L.append("")


# ---- G: weight units across memory caps, and on an encoder they were not designed on ----

WU_MODELS = [("ViT-B/16", "tests/data/onnx/vit_b_16.onnx"), ("BERT-base", "tests/data/onnx/bert_base.onnx"),
             ("torch.nn encoder", "tests/data/onnx-export/transformer_encoder.onnx")]
WU_CAPS = ["30%", "50%", "70%"]


def weight_units(L):
    """The learner alone with and without weight units on the transformers, GPU capped at three fractions, with
    the default `hsdag` (warm start with the MILP on an iteration budget, local searches) as the reference."""
    inst = [(name, cap, [path, "--devices", "cpu-gpu", "--mem", "GPU=" + cap]) for name, path in WU_MODELS
            for cap in WU_CAPS]
    cmds = []
    for _, _, a in inst:
        for s in SEEDS:
            cmds += [["train"] + a + ["--seed", str(s)], ["train"] + a + ["--weight-units", "0", "--seed", str(s)],
                     ["place"] + a + ["--method", "hsdag", "--seed", str(s)]]
    res = iter(run_all(cmds))
    L.append("## Weight units across memory caps (train, 500 placements, seeds %s)" % ",".join(map(str, SEEDS)))
    L.append("")
    L.append("The learner alone with weight units (the default, `--weight-units 0.01`) and without (`--weight-units "
             "0`) on the bundled ViT-B/16 and BERT-base exports and on `transformer_encoder` (torch.nn's encoder, "
             "exported by scripts/export-models.py after weight units were chosen on the other two at 50%), the "
             "GPU capped at 30%, 50% and 70% of what each model needs. ms, mean over the seeds (best run in "
             "brackets); *hsdag*: the default `hsdag` (warm start including the MILP on an iteration budget, "
             "learning, local searches), the reference for the best known. "
             "Commands: `hsdag train MODEL --devices cpu-gpu --mem GPU=C [--weight-units 0] --seed S --json`, "
             "`hsdag place MODEL --devices cpu-gpu --mem GPU=C --method hsdag --seed S --json`.")
    L.append("")
    L.append("| model | GPU cap | learned, weight units | learned, without | hsdag | with / hsdag | without / hsdag |")
    L.append("|---|---|---|---|---|---|---|")
    better = 0
    for name, cap, _ in inst:
        on, off, ref = [], [], []
        for _ in SEEDS:
            on.append(next(res))
            off.append(next(res))
            ref.append(next(res))
        m_on = mean(lat(r) for r in on)
        m_off = mean(lat(r) for r in off)
        m_ref = mean(lat(r) for r in ref)
        better += m_on < m_off
        L.append("| %s | %s | %s (%s) | %s (%s) | %s | %.3f | %.3f |" % (
            name, cap, fmt(m_on), fmt(min(lat(r) for r in on)), fmt(m_off), fmt(min(lat(r) for r in off)),
            fmt(m_ref), m_on / m_ref, m_off / m_ref))
    L.append("")
    L.append("Weight units lower the learner's mean on %d of %d model-cap pairs." % (better, len(inst)))
    L.append("")


def generate(L):
    entries = suite()
    diag(L)
    runs = suite_runs(entries)
    ablation(L, entries, runs)
    suite_choices(L, entries, runs)
    unseen(L)
    weight_units(L)

"""pretrained.py - `make results` section: one policy for many graphs. Leave one bundled model out, train one
HSDAG (and one Placeto) policy on the other eight, then place the held-out model zero-shot (one forward pass,
nothing measured) and fine-tuned with 100 measurements, against training from scratch with 500; on cpu-4gpu
and on CPU + GPU with the GPU capped at half of what each model needs. HSDAG's pre-training imitates search
placements of the training graphs by default, so its zero-shot placement is also measured without that
(--warm-start none).
Not here: the runs (the hsdag CLI: train --graphs, place --policy, compare), the shipped policies
(policies/hsdag/README.md). Entry point: generate(L).
"""
import os

from common import run_json, mean_std, median, SEEDS
from hsdag_runs import suite

TITLE = "One policy for many graphs: zero-shot and fine-tuned placement of unseen models"

ALL = ["alexnet", "bert_base", "googlenet", "inception_v3", "mobilenet_v2", "resnet50", "squeezenet1_1",
       "vgg16", "vit_b_16"]
SETTINGS = [("cpu-4gpu", "`cpu-4gpu` (CPU + four GPUs, concurrent)", []),
            ("cpu-gpu", "`cpu-gpu --mem GPU=50%` (the GPU holds about half of each model)",
             ["--mem", "GPU=50%"])]
FINETUNE = 100
SCRATCH = 500
POLICY_SEEDS = [int(s) for s in os.environ.get("HSDAG_RESULTS_POLICY_SEEDS", "0,1,2").split(",")]
# ensembles of three policies (place --policy A,B,C), each of other seeds: the first is the table's P seeds
ENSEMBLES = [[0, 1, 2], [3, 4, 5], [6, 7, 8]]


def train_many(jobs):
    """train_policy over a list of argument tuples, two at a time (independent runs); the policy files in order."""
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(2) as ex:
        return list(ex.map(lambda a: train_policy(*a), jobs))


def path(m):
    return "tests/data/onnx/%s.onnx" % m


def place(model, devices, extra, args):
    """Latency (ms) of `hsdag place` on a bundled model (name) or a file (path), inf when infeasible."""
    r = run_json(["place", model if model.endswith(".onnx") else path(model), "--devices", devices] + extra + args)
    return r["latency_ms"] if r["feasible"] else float("inf")


def train_policy(graphs, devices, extra, meth, opts, seed, tag):
    """`hsdag train --graphs` with the given options into its own directory; returns the policy file."""
    d = "/tmp/hsdag-results-pre-%d-%s-%d" % (os.getpid(), tag, seed)
    run_json(["train", "--graphs", graphs, "--devices", devices, "--method", meth, "--seed", str(seed),
              "--out-dir", d, "--force"] + opts + extra)
    return d + "/policy.bin"


def mean(xs):
    return sum(xs) / len(xs)


def fmt1(x):
    return "%.4f" % x if x != float("inf") else "infeasible"


def mv(xs):
    """mean ± std over the seeds, or how many were infeasible (and the mean of the rest)."""
    fin = [x for x in xs if x != float("inf")]
    if len(fin) < len(xs):
        return "infeasible %d/%d" % (len(xs) - len(fin), len(xs)) + (
            " (else %.4f)" % (sum(fin) / len(fin)) if fin else "")
    m, s = mean_std(xs)
    return "%.4f ± %.4f" % (m, s) if len(xs) > 1 else "%.4f" % m


def suite_best(model, devices, extra):
    """bench/hard.suite's best known latency (ms) of this very instance, or None when it has no such entry."""
    argv = [path(model), "--devices", devices] + extra
    for _, best, _, a in suite():
        if a == argv and best is not None:
            return best
    return None


def setting(L, devices, title, extra):
    L.append("### %s" % title)
    L.append("")
    rows = {}
    for held in ALL:
        others = ",".join(path(m) for m in ALL if m != held)
        ref = {m["method"]: m for m in run_json(["compare", path(held), "--devices", devices, "--methods",
                                                  "gpu-only,heft,local-search"] + extra)["methods"]}
        r = {"heft": ref["heft"]["latency_ms"] if ref["heft"]["feasible"] else float("inf"),
             "gpu": ref["gpu-only"]["latency_ms"] if ref["gpu-only"]["feasible"] else float("inf"),
             "ls": ref["local-search"]["latency_ms"] if ref["local-search"]["feasible"] else float("inf")}
        trained = {}  # HSDAG's policy file per seed
        for meth, key, opts in [("hsdag", "hsdag", []), ("placeto", "placeto", []),
                                ("hsdag", "noimit", ["--warm-start", "none"])]:
            zs, fs = [], []
            for ps in POLICY_SEEDS:
                pol = train_policy(others, devices, extra, meth, opts, ps, "%s-%s" % (key, held))
                if key == "hsdag":
                    trained[ps] = pol
                zs.append(place(held, devices, extra, ["--method", meth, "--policy", pol]))
                if key != "noimit":
                    fs.append(place(held, devices, extra, ["--method", meth, "--policy", pol, "--budget",
                                                           str(FINETUNE), "--seed", str(ps)]))
            r[key + "_zero"], r[key + "_ft"] = zs, fs
        if extra:  # the capped setting: ensembles, and single policies of every seed
            seeds = sorted({x for grp in ENSEMBLES for x in grp})
            more = [x for x in seeds if x not in trained]
            pol = dict(trained)
            pol.update(zip(more, train_many([(others, devices, extra, "hsdag", [], x, "hsdag-" + held) for x in more])))
            r["ens"] = [place(held, devices, extra, ["--method", "hsdag", "--policy", ",".join(pol[x] for x in grp)])
                        for grp in ENSEMBLES]
            r["ens_all"] = [place(held, devices, extra, ["--method", "hsdag", "--policy",
                                                         ",".join(pol[x] for x in seeds)])]
            r["single_all"] = [place(held, devices, extra, ["--method", "hsdag", "--policy", pol[x]]) for x in seeds]
        r["scratch"] = [place(held, devices, extra, ["--method", "hsdag-learned", "--budget", str(SCRATCH),
                                                     "--seed", str(s)]) for s in SEEDS]
        r["placeto_scratch"] = [place(held, devices, extra, ["--method", "placeto", "--budget", str(SCRATCH),
                                                             "--seed", str(s)]) for s in SEEDS]
        cands = [r["heft"], r["gpu"], r["ls"]] + r["scratch"] + r["placeto_scratch"] + r["hsdag_zero"] + \
            r["hsdag_ft"] + r["placeto_zero"] + r["placeto_ft"] + r["noimit_zero"] + r.get("ens", []) + \
            r.get("ens_all", []) + r.get("single_all", [])
        sb = suite_best(held, devices, extra)
        r["best"] = min(cands + ([sb] if sb is not None else []))
        r["best_from"] = "suite" if sb is not None and sb <= min(cands) else "row"
        rows[held] = r

    L.append("| held-out model | best known ms | HEFT | GPU-only | HSDAG zero-shot | HSDAG fine-tuned (%d) | "
             "HSDAG from scratch (%d) | Placeto zero-shot | Placeto fine-tuned (%d) | HSDAG zero-shot, no "
             "imitation |" % (FINETUNE, SCRATCH, FINETUNE))
    L.append("|---|---|---|---|---|---|---|---|---|---|")
    for held in ALL:
        r = rows[held]
        best = "%.4f%s" % (r["best"], " (suite)" if r["best_from"] == "suite" else "")
        L.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            held, best, fmt1(r["heft"]), fmt1(r["gpu"]), mv(r["hsdag_zero"]), mv(r["hsdag_ft"]),
            mv(r["scratch"]), mv(r["placeto_zero"]), mv(r["placeto_ft"]), mv(r["noimit_zero"])))
    L.append("")
    for meth, label in [("hsdag", "HSDAG"), ("placeto", "Placeto")]:
        gaps = [mean(rows[h][meth + "_zero"]) / rows[h]["best"] - 1 for h in ALL]
        better = sum(1 for h in ALL if mean(rows[h][meth + "_zero"]) < rows[h]["heft"] * (1 - 1e-9))
        equal = sum(1 for h in ALL if abs(mean(rows[h][meth + "_zero"]) - rows[h]["heft"]) <= 1e-9 * rows[h]["heft"])
        ft_ok = sum(1 for h in ALL if mean(rows[h][meth + "_ft"]) <= mean(rows[h]["scratch"]) * (1 + 1e-9))
        ft_gap = median([mean(rows[h][meth + "_ft"]) / mean(rows[h]["scratch"]) - 1 for h in ALL])
        L.append("- %s zero-shot: median gap to the best known %+.1f%% (target: within 10%%); better than HEFT "
                 "on %d of %d models, equal on %d. Fine-tuned with %d measurements: at least as good as HSDAG "
                 "from scratch with %d on %d of %d models, median ratio %+.1f%%." % (
                     label, 100 * median(gaps), better, len(ALL), equal, FINETUNE, SCRATCH, ft_ok, len(ALL),
                     100 * ft_gap))
    gaps = [mean(rows[h]["noimit_zero"]) / rows[h]["best"] - 1 for h in ALL]
    better = sum(1 for h in ALL if mean(rows[h]["noimit_zero"]) < rows[h]["heft"] * (1 - 1e-9))
    L.append("- HSDAG zero-shot without the imitation in pre-training (`--warm-start none`: 10 rounds of "
             "REINFORCE only): median gap to the best known %+.1f%%; better than HEFT on %d of %d models." % (
                 100 * median(gaps), better, len(ALL)))
    if extra:
        n_all = len({x for g in ENSEMBLES for x in g})
        L.append("")
        L.append("Ensembles (`hsdag place MODEL ... --method hsdag --policy A,B,C`: one forward pass per policy, "
                 "every decision on the mean of their log-probabilities) of the held-out policies of seeds %s "
                 "(mean ± std over the ensembles) and of all %d, against single policies of the same seeds (mean ± "
                 "std over the seeds):" % (", ".join("{%s}" % ",".join(map(str, g)) for g in ENSEMBLES), n_all))
        L.append("")
        L.append("| held-out model | best known ms | HEFT | HSDAG zero-shot, ensemble of 3 | HSDAG zero-shot, ensemble "
                 "of %d | HSDAG zero-shot, single policy |" % n_all)
        L.append("|---|---|---|---|---|---|")
        for held in ALL:
            r = rows[held]
            L.append("| %s | %.4f | %s | %s | %s | %s |" % (held, r["best"], fmt1(r["heft"]), mv(r["ens"]),
                                                           mv(r["ens_all"]), mv(r["single_all"])))
        L.append("")
        for key, label in [("ens", "ensembles of 3"), ("ens_all", "the ensemble of %d" % n_all),
                           ("single_all", "single policies")]:
            gaps = [mean(rows[h][key]) / rows[h]["best"] - 1 for h in ALL]
            better = sum(1 for h in ALL if mean(rows[h][key]) < rows[h]["heft"] * (1 - 1e-9))
            within = sum(1 for g in gaps if g <= 0.10)
            L.append("- HSDAG zero-shot, %s: median gap to the best known %+.1f%% (target: within 10%%); within "
                     "10%% on %d of %d models; better than HEFT on %d." % (label, 100 * median(gaps), within,
                                                                          len(ALL), better))
    L.append("")


def unseen_models(L):
    """Zero-shot on the 13 torchvision exports no policy or setting was chosen on (hsdag_paper.UNSEEN),
    memory-capped: one policy per seed trained on all nine bundled models."""
    from hsdag_paper import UNSEEN
    devices, extra = "cpu-gpu", ["--mem", "GPU=50%"]
    allm = ",".join(path(m) for m in ALL)
    pols = {(key, ps): train_policy(allm, devices, extra, "hsdag", opts, ps, "all-" + key)
            for key, opts in [("hsdag", []), ("noimit", ["--warm-start", "none"])] for ps in POLICY_SEEDS}
    groups = ENSEMBLES[:2]
    extra_seeds = sorted({x for g in groups for x in g} - set(POLICY_SEEDS))
    for x, f in zip(extra_seeds, train_many([(allm, devices, extra, "hsdag", [], x, "all-hsdag") for x in extra_seeds])):
        pols[("hsdag", x)] = f
    L.append("### Zero-shot on models no setting was chosen on (`cpu-gpu --mem GPU=50%`)")
    L.append("")
    L.append("One policy per seed P = %s trained on all nine bundled models (`hsdag train --graphs <the nine> "
             "--devices cpu-gpu --mem GPU=50%% --seed P`, and the same with `--warm-start none`), then each of "
             "the 13 torchvision exports of tests/data/onnx-export placed zero-shot (`hsdag place MODEL --devices "
             "cpu-gpu --mem GPU=50%% --method hsdag --policy P.bin`), and by ensembles of the policies of seeds %s "
             "(`--policy A,B,C`). Against `compare --methods cpu-only,heft,local-search,ilp --ilp-iterations "
             "20000`; best known = the lowest number in the row." %
             (",".join(map(str, POLICY_SEEDS)), " and ".join("{%s}" % ",".join(map(str, g)) for g in groups)))
    L.append("")
    L.append("| model | best known ms | CPU-only | HEFT | local search | MILP (20k iterations) | HSDAG zero-shot | "
             "HSDAG zero-shot, no imitation | HSDAG zero-shot, ensemble of 3 |")
    L.append("|---|---|---|---|---|---|---|---|---|")
    gaps, gaps_n, gaps_e, better, better_n, better_e, worse_cpu, worse_cpu_e = [], [], [], 0, 0, 0, 0, 0
    for m in UNSEEN:
        f = "tests/data/onnx-export/%s.onnx" % m
        ref = {r["method"]: (r["latency_ms"] if r["feasible"] else float("inf"))
               for r in run_json(["compare", f, "--devices", devices, "--methods", "cpu-only,heft,local-search,ilp",
                                  "--ilp-iterations", "20000"] + extra)["methods"]}
        z = {key: [place(f, devices, extra, ["--method", "hsdag", "--policy", pols[(key, ps)]]) for ps in POLICY_SEEDS]
             for key in ("hsdag", "noimit")}
        z["ens"] = [place(f, devices, extra, ["--method", "hsdag", "--policy",
                                              ",".join(pols[("hsdag", x)] for x in g)]) for g in groups]
        best = min(list(ref.values()) + z["hsdag"] + z["noimit"] + z["ens"])
        gaps.append(mean(z["hsdag"]) / best - 1)
        gaps_e.append(mean(z["ens"]) / best - 1)
        better_e += mean(z["ens"]) < ref["heft"] * (1 - 1e-9)
        worse_cpu_e += mean(z["ens"]) > ref["cpu-only"] * (1 + 1e-9)
        gaps_n.append(mean(z["noimit"]) / best - 1)
        better += mean(z["hsdag"]) < ref["heft"] * (1 - 1e-9)
        better_n += mean(z["noimit"]) < ref["heft"] * (1 - 1e-9)
        worse_cpu += mean(z["hsdag"]) > ref["cpu-only"] * (1 + 1e-9)
        L.append("| %s | %.4f | %s | %s | %s | %s | %s | %s | %s |" % (
            m, best, fmt1(ref["cpu-only"]), fmt1(ref["heft"]), fmt1(ref["local-search"]), fmt1(ref["ilp"]),
            mv(z["hsdag"]), mv(z["noimit"]), mv(z["ens"])))
    L.append("")
    L.append("- HSDAG zero-shot: median gap to the best known %+.1f%%; better than HEFT on %d of %d; slower than "
             "CPU-only on %d. Without the imitation: median gap %+.1f%%, better than HEFT on %d." % (
                 100 * median(gaps), better, len(UNSEEN), worse_cpu, 100 * median(gaps_n), better_n))
    L.append("- HSDAG zero-shot, ensembles of 3: median gap to the best known %+.1f%%; better than HEFT on %d of %d; "
             "slower than CPU-only on %d." % (100 * median(gaps_e), better_e, len(UNSEEN), worse_cpu_e))
    L.append("")


def generate(L):
    L.append("## Leave-one-out: train on eight bundled models, place the ninth")
    L.append("")
    L.append("For each held-out model: `hsdag train --graphs <the other eight> --devices D [--mem GPU=50%%] "
             "--method hsdag|placeto --seed P` (the defaults: HSDAG imitates each training graph's warm-start "
             "placement, the MILP's where it runs, then 1 round of REINFORCE, one decision per group, with the "
             "cost feature kind (each group's time per device and bytes against the caps, as ratios); "
             "Placeto 10 rounds of REINFORCE), then `hsdag place MODEL --method hsdag|placeto "
             "--policy DIR/policy.bin` (zero-shot: one forward pass, no latency measured; the placement, "
             "HSDAG's and Placeto's, made to fit the memory caps with the simulator's memory walk) and the same with "
             "`--budget %d --seed P` (fine-tuned); HSDAG from scratch is `--method hsdag-learned --budget %d "
             "--seed S` (the project's learner alone, no warm start, no polish). Policy seeds P = %s, scratch "
             "seeds S = %s, mean ± std. Best known = the best of every number in the row, local search "
             "(`compare --methods gpu-only,heft,local-search`) and, where bench/hard.suite has the same "
             "instance (its `4gpu-*` and `mem50-*` entries), its best known latency, marked (suite) "
             "where it is the lowest." % (
                 FINETUNE, SCRATCH, ",".join(map(str, POLICY_SEEDS)), ",".join(map(str, SEEDS))))
    L.append("")
    for devices, title, extra in SETTINGS:
        setting(L, devices, title, extra)
    unseen_models(L)

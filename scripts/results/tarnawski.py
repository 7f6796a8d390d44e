"""tarnawski.py - `make results` section: the Tarnawski et al. (NeurIPS 2020) benchmark, one table per objective:
their greedy, their DP where it finishes, the expert splits, our methods, the MILP incumbent and bound, times;
and the throughput optimum for 2, 4 and 8 accelerators.
Not here: their code (the project never runs it: their published greedy figures and their dp.exe's objectives,
measured once beside the project at commit b207b6a, are constants below; make bench times theirs side by side).
Runs two workloads at a time, each command in its own session (its own scheduling group on a shared machine).
Entry point: generate(L).
"""
import json
import os
import subprocess
from concurrent.futures import ThreadPoolExecutor

from common import HSDAG

TITLE = "The Tarnawski et al. benchmark"
D = "tests/data/tarnawski/"
LAT = [("Layer bert24", "LayerGraphs/bert24_inference.json", 100.219, "bert24_inference"),
       ("Layer gnmt", "LayerGraphs/gnmt_inference.json", 268.5, "gnmt_inference"),
       ("Layer inceptionv3", "LayerGraphs/inceptionv3_inference.json", 2485.24, "inceptionv3_inference"),
       ("Layer resnet50", "LayerGraphs/resnet50_inference.json", 4197.06, "resnet50_inference"),
       ("Op bert_l-3", "OperatorGraphs/bert_l-3_inference.json", 416.204, None),
       ("Op bert_l-6", "OperatorGraphs/bert_l-6_inference.json", 494.135, None),
       ("Op bert_l-12", "OperatorGraphs/bert_l-12_inference.json", 867.839, None),
       ("Op resnet50", "OperatorGraphs/resnet50_inference.json", 839.536, None)]
# their dp.exe's maxLoad (full precision from its JSON output); None: did not finish (over 10 GB / 10 min in
# their paper; killed at 120 s and 6 GB here)
TPUT = [("Layer bert24 inf", "LayerGraphs/bert24_inference.json", 17.78990625, "bert24_inference"),
        ("Layer bert24 train", "LayerGraphs/bert24_training.json", 41.7458125, "bert24_training"),
        ("Layer gnmt inf", "LayerGraphs/gnmt_inference.json", 32.910658203124996, "gnmt_inference"),
        ("Layer gnmt train", "LayerGraphs/gnmt_training.json", 107.0044140625, "gnmt_training"),
        ("Layer inceptionv3 inf", "LayerGraphs/inceptionv3_inference.json", None, "inceptionv3_inference"),
        ("Layer inceptionv3 train", "LayerGraphs/inceptionv3_training.json", None, "inceptionv3_inference"),
        ("Layer resnet50 inf", "LayerGraphs/resnet50_inference.json", 33.774666015625, "resnet50_inference"),
        ("Layer resnet50 train", "LayerGraphs/resnet50_training.json", 78.63181250000001, "resnet50_inference"),
        ("Op bert_L-12 train", "OperatorGraphs/bert_L-12_training.json", 437.9976378578455, None),
        ("Op bert_l-12 inf", "OperatorGraphs/bert_l-12_inference.json", 147.47798444934838, None),
        ("Op bert_l-3 inf", "OperatorGraphs/bert_l-3_inference.json", 27.9185676799125, None),
        ("Op bert_l-3 train", "OperatorGraphs/bert_l-3_training.json", 65.30314912208605, None),
        ("Op bert_l-6 inf", "OperatorGraphs/bert_l-6_inference.json", 29.57950580645155, None),
        ("Op bert_l-6 train", "OperatorGraphs/bert_l-6_training.json", 72.86496632241122, None),
        ("Op resnet50 inf", "OperatorGraphs/resnet50_inference.json", 124.34884977404485, None),
        ("Op resnet50 train", "OperatorGraphs/resnet50_training.json", 255.19441645217384, None)]
TL_ILP_LAT = 60  # the target: gap <= 5% within 60 s (of CPU time: --cpu-time)
TL_DP = 60
JOBS = 2  # workloads measured at once
H_LAT = "## Latency (one request; `--semantics tarnawski`, the workloads' own devices)"
H_TPUT = "## Throughput (max-load: time per sample of a pipelined split)"
H_ACC = "## Throughput optimum for 2, 4 and 8 accelerators"


def run_json(args):
    out = subprocess.run([HSDAG] + args + ["--json"], check=True, capture_output=True, text=True,
                         start_new_session=True).stdout
    return json.loads(out)


def in_parallel(fn, items):
    """fn over items, JOBS at a time, results in items' order."""
    with ThreadPoolExecutor(max_workers=JOBS) as ex:
        return list(ex.map(fn, items))


def expert(path, name, objective):
    """The human-expert split of a workload simulated under the objective, or None."""
    if not name:
        return None
    split = D + "human-experts/%s_expert.json" % name
    if not os.path.exists(split):
        return None
    # the latency inputs allow fewer accelerators than the experts use: let the split widen the set
    return run_json(["simulate", path, "--placement", split, "--objective", objective])


def fmt(x, feasible=True, digits=1):
    if x is None:
        return "-"
    return ("%.*f" % (digits, x)) + ("" if feasible else "!")


def row_of(cmp, method):
    for m in cmp["methods"]:
        if m["method"] == method:
            return m
    return None


def latency_row(w):
    label, rel, theirs, ex = w
    path = D + "latency-inputs/" + rel
    c = run_json(["compare", path, "--methods", "greedy-tarnawski,heft,metis,pipedream,dp,local-search,ilp",
                  "--time-limit", str(TL_ILP_LAT), "--cpu-time"])
    ls2 = run_json(["place", path, "--method", "local-search", "--max-evals", "200000", "--time-limit",
                    str(TL_ILP_LAT), "--cpu-time"])
    e = expert(path, ex, "latency")
    cells = {}
    for m in ["greedy-tarnawski", "dp", "pipedream", "heft", "local-search", "ilp"]:
        r = row_of(c, m)
        cells[m] = fmt(r["latency_ms"], r["feasible"], 1) if r and r["latency_ms"] is not None else "n/a"
    ilp = row_of(c, "ilp")
    bound = ilp.get("method_bound_ms") if ilp else None
    gap = "-" if bound is None or not ilp["objective_ms"] else "%.1f%%" % (
        100 * (ilp["objective_ms"] - bound) / ilp["objective_ms"])
    best = min([m["latency_ms"] for m in c["methods"] if m["feasible"] and m["latency_ms"] is not None] +
               ([ls2["latency_ms"]] if ls2["feasible"] else []))
    gain = 100 * (theirs - best) / theirs
    lb = max(c["lower_bound_ms"], bound if bound is not None else 0)
    line = "| %s | %.3f | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %.1f | %s | %.0f | %.1f%% | %.1f%% |" % (
        label, theirs, cells["greedy-tarnawski"], fmt(e["latency_ms"], e["feasible"]) if e else "-",
        cells["dp"], cells["pipedream"], cells["heft"], cells["local-search"],
        fmt(ls2["latency_ms"], ls2["feasible"]), cells["ilp"], fmt(bound, True, 1), gap,
        c["lower_bound_ms"], c.get("lower_bound_rule", ""), ilp["cpu_s"] if ilp else 0, gain,
        100 * (best - lb) / best)
    secs = ""
    if ilp and ilp.get("lp_cpu_s") is not None:
        secs = "; CPU s: LP %.3g, branch-and-cut %.3g" % (ilp["lp_cpu_s"], ilp["branch_and_cut_cpu_s"] or 0)
    return line, gain, gap, (ilp["note"] + secs if ilp else "")


def latency(L):
    L.append(H_LAT)
    L.append("")
    L.append("`hsdag compare W --methods greedy-tarnawski,heft,metis,pipedream,dp,local-search,ilp "
             "--time-limit %d --cpu-time` on each of `tests/data/tarnawski/latency-inputs`, plus local search "
             "with 200,000 evaluations (`place --method local-search --max-evals 200000 --time-limit %d "
             "--cpu-time`). `--cpu-time`: every time limit (ilp, dp, pipedream, local search) counts CPU seconds "
             "of the placing thread, not wall time (the machine that made this table was shared by six "
             "sessions: 60 s of wall time there was 2-3 s of CPU). "
             "ms; `!` = infeasible (memory cap or accelerator count). *their greedy*: their published "
             "figure; *expert*: the human-expert split (made for the throughput inputs' 6 x 16 GiB "
             "accelerators, so infeasible here); *dp*: their max-load DP baseline (the throughput optimum, "
             "scored by latency); *ilp*: their latency IP on GLPK, warm-started, %d CPU s, with its bound over "
             "contiguous splits (each accelerator one contiguous subgraph; its objective column starts at the "
             "bound of every placement) and the proven gap; *bound*: the lower bound of every feasible "
             "placement (`hsdag bound W`: the larger of the critical path and the path-blocks bound, "
             "docs/simulator.md) and its rule; *ilp CPU s*: the CPU seconds the ilp took (GLPK "
             "looks at the limit between its steps only, so it can run over). *best vs greedy*: the best of "
             "our feasible rows against their greedy; *best vs bound*: its distance to the larger of the two bounds, "
             "(best - bound) / best." % (TL_ILP_LAT, TL_ILP_LAT, TL_ILP_LAT))
    L.append("")
    L.append("| workload | their greedy | greedy-tarnawski | expert | dp | pipedream | heft | local-search "
             "| local-search 200k | ilp | ilp bound | ilp gap | bound | rule | ilp CPU s | best vs greedy "
             "| best vs bound |")
    L.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    rows = in_parallel(latency_row, LAT)
    gains = sorted(r[1] for r in rows)
    L.extend(r[0] for r in rows)
    med = (gains[3] + gains[4]) / 2
    L.append("")
    # strictly better: by more than the published figures' rounding (the 0.1% parity tolerance)
    L.append("Best of ours against their greedy: median %.1f%% better (target: at least 10%%), never worse "
             "(%d of 8 better by more than 0.1%%)." % (med, sum(1 for g in gains if g > 0.1)))
    within = sum(1 for r in rows if r[2] != "-" and float(r[2].rstrip("%")) <= 5)
    L.append("")
    L.append("The MILP proves a gap of at most 5%% on %d of 8 (target: 6 of 8). Its notes (where the time "
             "went, the model's size):" % within)
    L.append("")
    for w, r in zip(LAT, rows):
        L.append("- %s: %s" % (w[0], r[3]))
    L.append("")


def throughput_row(w):
    label, rel, theirs, ex = w
    path = D + "throughput-inputs/" + rel
    c = run_json(["compare", path, "--objective", "throughput", "--methods",
                  "greedy-tarnawski,pipedream,dp,local-search", "--time-limit", str(TL_DP)])
    ilp = run_json(["place", path, "--method", "ilp", "--objective", "throughput", "--time-limit", "10",
                    "--cpu-time"])
    e = expert(path, ex, "throughput")
    dp = row_of(c, "dp")
    diff = "-" if theirs is None else "%.1e" % (abs(dp["objective_ms"] - theirs) / theirs)
    cells = {}
    for m in ["greedy-tarnawski", "pipedream", "local-search"]:
        r = row_of(c, m)
        cells[m] = fmt(r["objective_ms"], r["feasible"], 3)
    return ("| %s | %s | %s%s | %s | %.2f | %s | %s | %s | %s | %s | %s | %.3f |" % (
        label, "did not finish" if theirs is None else "%.4f" % theirs, fmt(dp["objective_ms"], dp["feasible"], 4),
        "" if dp["optimal"] else " (not proven)", diff, dp["cpu_s"],
        fmt(e["objective_ms"], e["feasible"], 3) if e else "-", cells["greedy-tarnawski"], cells["pipedream"],
        cells["local-search"], fmt(ilp["objective_ms"], ilp["feasible"], 3),
        fmt(ilp.get("method_bound_ms"), True, 3), c["lower_bound_ms"]))


def throughput(L):
    L.append(H_TPUT)
    L.append("")
    L.append("`hsdag compare W --objective throughput --methods greedy-tarnawski,pipedream,dp,local-search,ilp "
             "--time-limit T` on each of `tests/data/tarnawski/throughput-inputs` (T = %d s of wall time for dp; "
             "the ilp: `place --method ilp --objective throughput --time-limit 10 --cpu-time`, 10 CPU s). ms; "
             "*dp CPU s*: the CPU seconds dp took. *their dp*: their "
             "dp.exe's maxLoad; *rel. diff*: |ours - theirs| / theirs; *expert*: the human-expert split "
             "(training workloads without one use the inference split, backward nodes following their "
             "colour class, as their -expert does); *bound*: max-class / work per device, valid for every "
             "placement; *ilp*: the chain-of-ideals MILP, its incumbent / bound." % TL_DP)
    L.append("")
    L.append("| workload | their dp | dp | rel. diff | dp CPU s | expert | greedy-tarnawski | pipedream "
             "| local-search | ilp | ilp bound | bound |")
    L.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
    L.extend(in_parallel(throughput_row, TPUT))
    L.append("")
    L.append("Local search is not restricted to contiguous splits, which is why it can beat the contiguous "
             "optimum (their DP's and ours).")
    L.append("")


def accelerators_row(iw):
    i, (label, rel, _, _) = iw
    tmp = "/tmp/hsdag-results-tw-%d-%d.json" % (os.getpid(), i)
    with open(D + "throughput-inputs/" + rel) as f:
        j = json.load(f)
    cells = []
    for k in (2, 4, 8):
        j["maxFPGAs"] = k
        with open(tmp, "w") as f:
            json.dump(j, f)
        dp = run_json(["place", tmp, "--method", "dp", "--objective", "throughput", "--time-limit", str(TL_DP)])
        pd = run_json(["place", tmp, "--method", "pipedream", "--objective", "throughput"])
        cells.append("%s (%.1f)" % (fmt(dp["objective_ms"], dp["feasible"], 3) +
                                     ("" if dp["optimal"] else " not proven"), dp["cpu_s"]))
        cells.append(fmt(pd["objective_ms"], pd["feasible"], 3))
    os.unlink(tmp)
    return "| %s | %s |" % (label, " | ".join(cells))


def accelerators(L):
    L.append(H_ACC)
    L.append("")
    L.append("Each throughput workload with `maxFPGAs` set to K (a copy in /tmp; the memory cap and the one "
             "CPU as in the file): `place --method dp --objective throughput --time-limit %d` and "
             "`--method pipedream`. ms (dp CPU seconds in brackets; its limit counts wall time); *pd*: the "
             "PipeDream-style chain DP." % TL_DP)
    L.append("")
    L.append("| workload | dp K=2 | pd K=2 | dp K=4 | pd K=4 | dp K=8 | pd K=8 |")
    L.append("|---|---|---|---|---|---|---|")
    L.extend(in_parallel(accelerators_row, list(enumerate(TPUT))))
    L.append("")


def generate(L):
    L.append("# %s" % TITLE)
    L.append("")
    L.append("Workloads, devices and model: docs/placers.md (\"The Tarnawski benchmark\"); their greedy is "
             "`greedy-tarnawski`, their throughput DP is `dp`, their latency IP is `ilp` under "
             "`--semantics tarnawski`.")
    L.append("")
    # HSDAG_TW_TABLES: the tables to measure (default all); the others are kept from the current
    # docs/results/tarnawski.md, marked as such
    want = os.environ.get("HSDAG_TW_TABLES", "latency,throughput,accelerators").split(",")
    for name, head, fn in (("latency", H_LAT, latency), ("throughput", H_TPUT, throughput),
                           ("accelerators", H_ACC, accelerators)):
        if name in want:
            fn(L)
        else:
            keep(L, head)


def keep(L, head):
    """The table under heading head as the current docs/results/tarnawski.md has it."""
    with open("docs/results/tarnawski.md") as f:
        old = f.read().split("\n")
    i = old.index(head)
    j = next((k for k in range(i + 1, len(old)) if old[k].startswith("## ")), len(old))
    L.append(head)
    L.append("")
    L.append("*(Not measured again by the last run: kept from the one before it.)*")
    L.extend(old[i + 1:j])

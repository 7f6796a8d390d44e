"""paper_tables.py - `make results` section: the HSDAG paper's tables in its layout, with its two learned
baselines (Placeto, the RNN placer): Table 2 on the paper's setting and on the hard suite, HSDAG against
Placeto as the paper reports it, Table 3 (feature ablation), the GNN-layer table and the running-time table.
Every learned method gets the same budget (500 measurements); 3 seeds, mean ± std.
Not here: the runs (the hsdag CLI: compare, train, through hsdag_runs' cache), other sections. Entry point:
generate(L).
"""
import os
import re

import common
from common import mean_std, SEEDS
from hsdag_runs import cli, run_all, suite

# What runs: PAPER_TABLES_PARTS (comma list of table2, hard, table3, gnn; default all four) and
# PAPER_TABLES_HARD (comma list of bench/hard.suite names; default every instance), PAPER_TABLES_VARIANT_MODELS below. The section says what ran.
# Every command goes through hsdag_runs.cli (cached per command and binary, RESULTS_JOBS at a time), so a
# run that is stopped keeps what it measured and a rerun resumes.
PARTS = os.environ.get("PAPER_TABLES_PARTS", "table2,hard,table3,gnn").split(",")
HARD_ONLY = [x for x in os.environ.get("PAPER_TABLES_HARD", "").split(",") if x]
MODELS = common.MODELS
# PAPER_TABLES_VARIANT_MODELS: comma list of model names (MODELS' first column) for Table 3 and the GNN table
VARIANT_ONLY = [x for x in os.environ.get("PAPER_TABLES_VARIANT_MODELS", "").split(",") if x]
VARIANT_MODELS = [m for m in MODELS if not VARIANT_ONLY or m[0] in VARIANT_ONLY]

TITLE = "The HSDAG paper's tables: HSDAG vs Placeto and the RNN placer"

BUDGET = 500
LEARNED = ["placeto", "rnn", "hsdag-paper", "hsdag-learned"]
LABEL = {"cpu-only": "CPU-only", "gpu-only": "GPU-only", "placeto": "Placeto", "rnn": "RNN-based",
         "hsdag-paper": "HSDAG (paper's algorithm)", "hsdag-learned": "HSDAG (project learner, learned only)",
         "heft": "HEFT", "m-etf": "m-ETF", "m-sct": "m-SCT", "metis": "METIS", "local-search": "local search",
         "mincut": "min cut (exact)", "ilp": "ILP (exact, 10 s)", "bb-random": "black-box random search"}
DETERMINISTIC = ["cpu-only", "gpu-only", "heft", "m-etf", "m-sct", "metis", "mincut", "ilp"]
SEEDED = ["local-search"] + LEARNED
HARD_METHODS = ["cpu-only", "gpu-only", "heft", "local-search"] + LEARNED
BUDGETED = {"bb-random", "bb-local", "hsdag", "hsdag-learned", "hsdag-paper", "placeto", "rnn"}  # read --budget
ABLATIONS = [("all features", ["--paper"]), ("no output shape", ["--paper", "--no-shape"]),
             ("no node id", ["--paper", "--no-id"]), ("no structural features", ["--paper", "--no-struct"])]
GNNS = [("GCN (paper)", ["--paper"]), ("GAT", ["--paper", "--gnn", "gat"]), ("GIN", ["--paper", "--gnn", "gin"]),
        ("GraphSAGE", ["--paper", "--gnn", "sage"])]


def run_json(args):
    r = cli(args)
    if "error" in r and len(r) == 1:
        raise RuntimeError("hsdag %s: %s" % (" ".join(args), r["error"]))
    return r


def compare_args(path, devices, methods, seed, extra=()):
    """`hsdag compare` arguments; --budget only when a method reads it (the CLI rejects it otherwise)."""
    return (["compare", path] + (["--devices", devices] if devices else []) + ["--methods", ",".join(methods),
            "--seed", str(seed)] + (["--budget", str(BUDGET)] if BUDGETED & set(methods) else []) + list(extra))


def compare(path, devices, methods, seed, extra=()):
    return {m["method"]: m for m in run_json(compare_args(path, devices, methods, seed, extra))["methods"]}


def to_best_s(row):
    """Seconds from the start of the method to its best placement (learned: from the measurement that found
    it, assuming equal time per measurement; others: the whole run, they produce one placement)."""
    n = row.get("placements_evaluated") or 0
    m = re.search(r"best at measurement (\d+)", row.get("note", ""))
    if m and n:
        return row["wall_s"] * int(m.group(1)) / n
    m = re.search(r"(\d+) steps x (\d+) samples", row.get("note", ""))
    if m and n and row.get("best_episode") is not None:
        per = int(m.group(1)) * int(m.group(2))
        return row["wall_s"] * min(n, (row["best_episode"] + 1) * per) / n
    return row["wall_s"]


def fmt(xs):
    if len(xs) == 1:
        return "%.4f" % xs[0]
    m, s = mean_std(xs)
    return "%.4f ± %.4f" % (m, s)


def table2(L, devices, methods_det, methods_seeded):
    """Paper Table 2: rows = methods, per model latency (ms) and speed-up over CPU-only. Returns
    {model: {method: [latencies]}} and {model: {method: [seconds to best]}}."""
    lat, tbest, feas = {}, {}, {}
    for name, path in MODELS:
        lat[name], tbest[name], feas[name] = {}, {}, {}
        det = compare(path, devices, methods_det, 1)
        for m, r in det.items():
            lat[name][m] = [r["latency_ms"]]
            tbest[name][m] = [to_best_s(r)]
            feas[name][m] = r["feasible"]
        for s in SEEDS:
            for m, r in compare(path, devices, methods_seeded, s).items():
                lat[name].setdefault(m, []).append(r["latency_ms"])
                tbest[name].setdefault(m, []).append(to_best_s(r))
                feas[name][m] = feas[name].get(m, True) and r["feasible"]
    L.append("| method | " + " | ".join("%s ms | vs CPU-only" % n for n, _ in MODELS) + " |")
    L.append("|---" * (1 + 2 * len(MODELS)) + "|")
    for m in methods_det + methods_seeded:
        row = ["%s" % LABEL.get(m, m)]
        for name, _ in MODELS:
            xs = lat[name][m]
            cpu = lat[name]["cpu-only"][0]
            mean = sum(xs) / len(xs)
            row += [fmt(xs) + ("" if feas[name][m] else " (infeasible)"), "%+.1f%%" % (100 * (cpu - mean) / cpu)]
        L.append("| " + " | ".join(row) + " |")
    return lat, tbest


def hsdag_vs_placeto(L, lat, where):
    """The paper's headline: how much faster HSDAG's placement is than Placeto's, (Placeto - HSDAG) / Placeto."""
    L.append("HSDAG against Placeto on %s (the paper reports up to 60.24%% faster than Placeto), latency "
             "reduction (Placeto - HSDAG) / Placeto of the mean over seeds:" % where)
    L.append("")
    L.append("| model | Placeto ms | RNN-based ms | HSDAG (paper) ms | vs Placeto | HSDAG (project) ms | vs Placeto |")
    L.append("|---|---|---|---|---|---|---|")
    gains = []
    for name in lat:
        def mean(m):
            xs = lat[name][m]
            return sum(xs) / len(xs)
        p, r, hp, hl = mean("placeto"), mean("rnn"), mean("hsdag-paper"), mean("hsdag-learned")
        gains.append((name, (p - hp) / p, (p - hl) / p))
        L.append("| %s | %.4f | %.4f | %.4f | %+.1f%% | %.4f | %+.1f%% |" % (
            name, p, r, hp, 100 * (p - hp) / p, hl, 100 * (p - hl) / p))
    L.append("")
    best_p = max(g[1] for g in gains)
    best_l = max(g[2] for g in gains)
    worse_p = [g[0] for g in gains if g[1] < -0.005]
    L.append("Up to %+.1f%% (paper's algorithm) and %+.1f%% (project learner) faster than Placeto here; the "
             "paper's algorithm is slower than Placeto on %s." % (
                 100 * best_p, 100 * best_l, ", ".join(worse_p) if worse_p else "none of them"))
    L.append("")
    return gains


def train_args(path, devices, extra, seed):
    return ["train", path, "--devices", devices, "--seed", str(seed), "--budget", str(BUDGET)] + extra


def variant_table(L, devices, variants):
    L.append("| variant | " + " | ".join("%s ms" % n for n, _ in VARIANT_MODELS) + " |")
    L.append("|---|" + "---|" * len(VARIANT_MODELS))
    for label, extra in variants:
        row = [label]
        for name, path in VARIANT_MODELS:
            xs = [run_json(train_args(path, devices, extra, s))["latency_ms"] for s in SEEDS]
            row.append(fmt(xs))
        L.append("| " + " | ".join(row) + " |")
    L.append("")


def hard_entries():
    """The hard suite's instances this run measures: (name, best_ms, argv, methods); gpu-only is left out
    where the instance has no GPU (Tarnawski's accelerators: no --devices), as `compare --suite` marks it n/a."""
    out = []
    for name, best, _, argv in suite():
        if HARD_ONLY and name not in HARD_ONLY:
            continue
        methods = [m for m in HARD_METHODS if m != "gpu-only" or "--devices" in argv]
        out.append((name, best, argv, methods))
    return out


def hard_cmds(e):
    name, _, argv, methods = e
    return [compare_args(argv[0], None, methods, s, argv[1:]) for s in SEEDS]


def hard_table(L):
    """Table 2 on the hard suite, each instance its own compare (the suite line's MODEL and options)."""
    entries = hard_entries()
    n_all = len(suite())
    L.append("## Table 2 on the hard suite (`bench/hard.suite`: memory caps, several accelerators, comparable "
             "devices)")
    L.append("")
    L.append("%s; each instance run as its own `hsdag compare MODEL ARGS --methods M --seed S --budget %d --json` "
             "with the suite line's MODEL and ARGS (what `compare --suite hard` runs per instance), mean ± std "
             "over seeds %s; best known = the suite's BEST_MS column (how it was found is in the file), or the best "
             "of the row when the suite has none (`-`); GPU-only is n/a on Tarnawski's accelerator sets." % (
                 "All %d instances" % n_all if len(entries) == n_all else
                 "%d of the %d instances (%s)" % (len(entries), n_all, ", ".join(e[0] for e in entries)),
                 BUDGET, ",".join(map(str, SEEDS))))
    L.append("")
    L.append("| instance | best known ms | " + " | ".join(LABEL.get(m, m) for m in HARD_METHODS) + " |")
    L.append("|---|---|" + "---|" * len(HARD_METHODS))
    lat_s, wins = {}, {m: 0 for m in HARD_METHODS}
    for e in entries:
        name, best_ms, _, methods = e
        per, feas = {}, {}
        for args in hard_cmds(e):
            for m, r in {x["method"]: x for x in run_json(args)["methods"]}.items():
                per.setdefault(m, []).append(r["latency_ms"])
                feas[m] = feas.get(m, True) and r["feasible"]
        ok = [sum(per[m]) / len(per[m]) for m in methods if feas[m]]
        best = best_ms if best_ms is not None else (min(ok) if ok else float("nan"))
        top = min(ok) if ok else None
        for m in methods:
            if top is not None and feas[m] and sum(per[m]) / len(per[m]) <= top * (1 + 1e-9):
                wins[m] += 1
        lat_s[name] = {m: per[m] for m in LEARNED}
        L.append("| %s | %.4f | %s |" % (name, best, " | ".join(
            (fmt(per[m]) + ("" if feas[m] else " (infeasible)")) if m in per else "n/a" for m in HARD_METHODS)))
    L.append("")
    L.append("Instances where each method is the best of these (ties count for each): " +
             ", ".join("%s %d" % (LABEL.get(m, m), wins[m]) for m in HARD_METHODS) + " of %d." % len(entries))
    L.append("")
    hsdag_vs_placeto(L, lat_s, "the hard suite")


def prefetch():
    """Every command of the parts that run, cheapest tables first, RESULTS_JOBS at a time (fills the cache the
    layout below reads)."""
    cmds = []
    if "table2" in PARTS:
        for _, path in MODELS:
            cmds.append(compare_args(path, "cpu-gpu", DETERMINISTIC, 1))
            cmds += [compare_args(path, "cpu-gpu", SEEDED, s) for s in SEEDS]
    for part, variants in (("table3", ABLATIONS), ("gnn", GNNS)):
        if part in PARTS:
            cmds += [train_args(path, "cpu-gpu", extra, s) for _, extra in variants for _, path in VARIANT_MODELS
                     for s in SEEDS]
    if "hard" in PARTS:
        for e in hard_entries():
            cmds += hard_cmds(e)
    run_all(cmds)


def running_time(L, tbest):
    L.append("## Running time: seconds to reach the best placement (`cpu-gpu`, mean over seeds)")
    L.append("")
    L.append("Learned methods: the run's time up to the measurement that found its best (from the note of "
             "`compare --json`, at equal time per measurement); one-shot methods: their whole run. Wall "
             "seconds on a shared 2-core machine (load 10-15 while measuring: only the ratios mean much).")
    L.append("")
    L.append("| method | " + " | ".join("%s s" % n for n, _ in MODELS) + " |")
    L.append("|---|" + "---|" * len(MODELS))
    for m in DETERMINISTIC + SEEDED:
        row = [LABEL.get(m, m)]
        for name, _ in MODELS:
            xs = tbest[name][m]
            row.append("%.3g" % (sum(xs) / len(xs)))
        L.append("| " + " | ".join(row) + " |")
    L.append("")


def generate(L):
    prefetch()
    skipped = [p for p in ("table2", "hard", "table3", "gnn") if p not in PARTS]
    if skipped or HARD_ONLY or VARIANT_ONLY:
        notes = ["not run: " + ", ".join(skipped)] if skipped else []
        if HARD_ONLY and "hard" in PARTS:
            notes.append("the hard-suite table on %d of its %d instances only" % (len(hard_entries()), len(suite())))
        if VARIANT_ONLY:
            notes.append("Table 3 and the GNN-layer table on %s only (not %s)" % (
                ", ".join(n for n, _ in VARIANT_MODELS), ", ".join(n for n, _ in MODELS if (n, _) not in VARIANT_MODELS)))
        env = ["PAPER_TABLES_PARTS=" + ",".join(PARTS)] + (["PAPER_TABLES_HARD=" + ",".join(HARD_ONLY)] if HARD_ONLY else [])
        env += ["PAPER_TABLES_VARIANT_MODELS=" + ",".join(VARIANT_ONLY)] if VARIANT_ONLY else []
        L.append("**Partial regeneration** (`%s`, what fitted in a session on a shared 2-core machine): %s. "
                 "`make results SECTIONS=paper_tables` without these variables runs every table on every model "
                 "and instance." % (" ".join(env), "; ".join(notes)))
        L.append("")
    if "table2" in PARTS:
        L.append("## Table 2: the paper's setting (`cpu-gpu`: Core i9-12900K + Arc A770, sequential as OpenVINO "
                 "HETERO)")
        L.append("")
        L.append("Latency in ms; learned methods and local search: mean ± std over seeds %s, each learned method "
                 "with %d measurements of the simulator; speed-up = (CPU-only - method) / CPU-only. Commands: "
                 "`hsdag compare MODEL --devices cpu-gpu --methods M --seed S [--budget %d] --json` (--budget "
                 "with the learned methods; the deterministic rows are seed 1's)." % (
                     ",".join(map(str, SEEDS)), BUDGET, BUDGET))
        L.append("")
        lat, tbest = table2(L, "cpu-gpu", DETERMINISTIC, SEEDED)
        L.append("")
        hsdag_vs_placeto(L, lat, "the paper's setting")
    if "hard" in PARTS:
        hard_table(L)
    if "table2" in PARTS:
        running_time(L, tbest)
    if "table3" in PARTS:
        L.append("## Table 3: feature ablation (the paper's algorithm, `cpu-gpu`, mean ± std over seeds %s)"
                 % ",".join(map(str, SEEDS)))
        L.append("")
        L.append("`hsdag train MODEL --devices cpu-gpu --paper [ABLATION] --budget %d --seed S --json`." % BUDGET)
        L.append("")
        variant_table(L, "cpu-gpu", ABLATIONS)
    if "gnn" in PARTS:
        L.append("## GNN layer (the paper's algorithm, `cpu-gpu`, mean ± std over seeds %s)"
                 % ",".join(map(str, SEEDS)))
        L.append("")
        L.append("`hsdag train MODEL --devices cpu-gpu --paper [--gnn gat|gin|sage] --budget %d --seed S --json`."
                 % BUDGET)
        L.append("")
        variant_table(L, "cpu-gpu", GNNS)

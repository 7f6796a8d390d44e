"""hsdag_runs.py - what the HSDAG result sections (hsdag_learning, hsdag_suite, hsdag_paper) and
scripts/suite-best.py share: run `hsdag ... --json` with a cache per command and hsdag binary
(build/results-cache/hsdag_learning/), JOBS at a time under nice; read a suite file; the suite's compare runs
over the seeds; small statistics and formatting. Not a section (no TITLE): it lays nothing out.
Entry points: cli, run_all, suite, suite_runs, curve_stats, lat, mean, gmean, fmt.
"""
import concurrent.futures as cf
import hashlib
import json
import math
import os
import subprocess

from common import HSDAG, SEEDS

JOBS = int(os.environ.get("RESULTS_JOBS", "2"))
CACHE = "build/results-cache/hsdag_learning"
# RESULTS_CACHED_ONLY=1: run nothing, lay out what the cache holds (a run that did not finish in time); a
# missing run is NOT_RUN and the sections that read it say what is missing
CACHED_ONLY = os.environ.get("RESULTS_CACHED_ONLY") == "1"
NOT_RUN = {"error": "not run", "not_run": True}


def _binary_key():
    h = hashlib.md5()
    with open(HSDAG, "rb") as f:
        h.update(f.read())
    return h.hexdigest()[:12]


_BIN = None
STATS = {"run": 0, "cached": 0}  # commands run and read from the cache (results.py reports them per section)


def cli(args):
    """Runs `hsdag ARGS --json` (cached by binary and arguments); returns the parsed JSON or {"error": msg}."""
    global _BIN
    if _BIN is None:
        _BIN = _binary_key()
    key = hashlib.md5(json.dumps([_BIN] + args).encode()).hexdigest()
    path = os.path.join(CACHE, key + ".json")
    if os.path.exists(path):
        STATS["cached"] += 1
        with open(path) as f:
            return json.load(f)
    if CACHED_ONLY:
        return dict(NOT_RUN)
    os.makedirs(CACHE, exist_ok=True)
    STATS["run"] += 1
    out = None
    if args[0] == "train":  # each run its own directory; the curve is read back into the result
        d = os.path.join(CACHE, key + ".d")
        args = args + ["--out-dir", d, "--force"]  # a run stopped half-way left its files there
    p = subprocess.run(["nice", "-n", "10", HSDAG] + args + ["--json"], capture_output=True, text=True)
    if p.returncode != 0:
        out = {"error": p.stderr.strip()}
    else:
        out = json.loads(p.stdout)
        if args[0] == "train":
            rows = [l.split(",") for l in open(os.path.join(d, "curve.csv")).read().split("\n")[1:] if l]
            out["curve_mean"] = [float(r[1]) for r in rows]
            out["curve_entropy"] = [float(r[3]) for r in rows]
    with open(path, "w") as f:
        json.dump(out, f)
    return out


def run_all(cmds):
    with cf.ThreadPoolExecutor(JOBS) as ex:
        return list(ex.map(cli, cmds))


def suite(path="bench/hard.suite"):
    """The suite's entries: (name, best_ms or None, how, argv)."""
    out = []
    for line in open(path):
        line = line.split("#", 1)[0].split()
        if not line:
            continue
        best = None if line[1] == "-" else float(line[1])
        out.append((line[0], best, line[2], line[3:]))
    return out


def gmean(xs):
    xs = [x for x in xs if x and x > 0 and math.isfinite(x)]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def mean(xs):
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else float("nan")


def lat(row):
    """Latency of a compare row, inf when infeasible or failed."""
    if row is None or row.get("latency_ms") is None or not row.get("feasible", False):
        return float("inf")
    return row["latency_ms"]


def fmt(x, digits=4):
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "infeasible" if x == float("inf") else "-"
    return "%.*g" % (digits, x)


def curve_stats(r):
    m = r.get("curve_mean") or []
    if not m:
        return None
    return {"first5": mean(m[:5]), "last5": mean(m[-5:]), "ent_first": r["curve_entropy"][0],
            "ent_last": r["curve_entropy"][-1]}


DETERMINISTIC = {"cpu-only", "gpu-only", "accel-only", "round-robin", "m-topo", "m-etf", "m-sct", "heft",
                 "greedy-tarnawski", "mincut"}
# ilp is seeded: its start is the best of greedy-tarnawski, pipedream, CPU-only and a local search with the
# run's seed (src/place/ilp.c), so each seed's hsdag is compared with the same seed's MILP
STOCHASTIC = ["random", "metis", "local-search", "ilp", "bb-random", "bb-local", "hsdag", "hsdag-paper"]
# hsdag-learned is what `train` runs (same learner, budget and seeds): its rows come from the train runs of
# "learning shows", which also give its learning curve
OTHER = ["heft", "m-etf", "m-sct", "metis", "greedy-tarnawski", "ilp", "local-search"]  # the table


def suite_runs(entries):
    """compare over the seeds on every entry: {name: {"seeds": [{method: row}] per seed, "lb", "rule", "sem",
    "error"}};
    seed 0 runs the default table, seeds 1, 2 the stochastic methods (deterministic rows are seed 0's; the
    learner alone is not repeated here: its runs are `train`'s, with their curves). A seed whose run is
    NOT_RUN (RESULTS_CACHED_ONLY) is left out; "seeds_run" lists the seeds kept."""
    cmds = []
    for _, _, _, argv in entries:
        cmds.append(["compare"] + argv + ["--seed", str(SEEDS[0])])
        for s in SEEDS[1:]:
            cmds.append(["compare"] + argv + ["--seed", str(s), "--methods", ",".join(STOCHASTIC)])
    res = iter(run_all(cmds))
    out = {}
    for name, _, _, _ in entries:
        per_seed = []
        first = next(res)
        per_seed.append({m["method"]: m for m in first.get("methods", [])})
        kept = [SEEDS[0]]
        for s in SEEDS[1:]:
            r = next(res)
            if r.get("not_run"):
                continue
            d = {m: per_seed[0][m] for m in per_seed[0] if m in DETERMINISTIC or m.endswith("-only")}
            d.update({m["method"]: m for m in r.get("methods", [])})
            per_seed.append(d)
            kept.append(s)
        out[name] = {"seeds": per_seed, "lb": first.get("lower_bound_ms"), "rule": first.get("lower_bound_rule"),
                     "sem": first.get("semantics"), "error": first.get("error"), "seeds_run": kept}
    return out

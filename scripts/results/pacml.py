"""pacml.py - `make results` section: PAC-ML on the RAMP cluster. The paper's baselines against the authors'
figures, every policy (the learned ones included) per beta distribution in reference units and with
--time-unit-fix, and the learned policies against the paper's PAC-ML and the best heuristic.
Not here: the simulator or any training (hsdag cluster compare / run do it; policies/pacml/README.md says how
the shipped policies were trained). Entry point: generate(L).
"""
import os
from common import run_json, SEEDS

TITLE = "PAC-ML"
BETAS = "ABCD"
# the authors' figures: mean blocking rate over 3 seeds, 1001 arrivals (issue 11; spec pacml.md)
PAPER = {"para-max": [0.2624, 0.2631, 0.2674, 0.2631],
         "para-min": [0.3087, 0.3956, 0.3074, 0.1419],
         "random": [0.5172, 0.6011, 0.5055, 0.4652],
         "PAC-ML (paper)": [0.2038, 0.2567, 0.1166, 0.0992]}
HEURISTICS = ["para-max", "para-min", "random", "para-min-jct", "sequential", "fixed:2", "fixed:4",
              "fixed:6", "fixed:8", "fixed:16", "lookahead"]


def compare(policies, fix):
    out = run_json(["cluster", "compare", "--seeds", ",".join(map(str, SEEDS)), "--policies",
                    ",".join(policies), "--quiet"] + fix)
    res = {}
    for r in out["results"]:  # hsdag-cluster-comparison/1 keys (docs/formats.md) as {key: {mean, std, per_seed}}
        for k in ("blocking_rate", "throughput"):
            r[k] = {"mean": r[k + "_mean"], "std": r[k + "_std"], "per_seed": r[k + "_per_seed"]}
        res[(r["policy"], r["beta"])] = r
    return res


def cell(r, key="blocking_rate"):
    return "%.4f ± %.4f" % (r[key]["mean"], r[key]["std"])


def breakdown(L, beta, policies):
    """Where the blocking comes from: the episode JSON's refusal split and decisions per degree, summed over
    SEEDS, as fractions of the arrivals."""
    L.append("| policy | blocking_rate | refused_no_worker | refused_no_fit | refused_by_choice | blocked_jct + "
             "blocked_placement | blocked_horizon | utilisation | decisions_per_degree (share of decisions) |")
    L.append("|---|---|---|---|---|---|---|---|---|")
    for p in policies:
        runs = [run_json(["cluster", "run", "--policy", p, "--beta", beta, "--seed", str(s), "--quiet"])
                for s in SEEDS]
        arr = float(sum(r["jobs_arrived"] for r in runs))
        dec = float(sum(r["jobs_decided"] for r in runs))
        f = lambda k: sum(r[k] for r in runs) / arr
        per = [sum(r["decisions_per_degree"][a] for r in runs) / dec for a in range(17)]
        shares = ", ".join("%d: %.3f" % (a, v) for a, v in enumerate(per) if v >= 0.0005)
        L.append("| %s | %.4f | %.4f | %.4f | %.4f | %.4f | %.4f | %.3f | %s |" % (
            p, f("jobs_blocked"), f("refused_no_worker"), f("refused_no_fit"), f("refused_by_choice"),
            f("blocked_jct") + f("blocked_placement"), f("blocked_horizon"),
            sum(r["utilisation"] for r in runs) / len(runs), shares))
    L.append("")


def generate(L):
    have_learned = all(os.path.exists("policies/pacml/beta_%s.bin" % b) for b in BETAS)
    pols = HEURISTICS + (["learned"] if have_learned else [])
    # the earlier PPO policies for reference units, kept beside the shipped DQN ones
    ppo = ["learned:policies/pacml/ppo"] if os.path.exists("policies/pacml/ppo/beta_A.bin") else []
    L.append("`blocking_rate` = jobs_blocked / jobs_arrived, lower is better; mean ± std over seeds %s, 1001 "
             "arrivals per episode (t = 0, 1000, ..., 1e6; the arrival at the horizon is counted in jobs_arrived "
             "but gets no decision, so 1000 jobs are decided). `throughput` is the mean demand total throughput in "
             "B per time unit. `learned` is the shipped policy for each beta (policies/pacml/: DQN in reference units, "
             "PPO with --time-unit-fix; how each was trained: policies/pacml/README.md); `learned:policies/pacml/ppo` "
             "is the earlier PPO policy in reference units. Evaluation seeds 0, 1, 2 were never used in training or "
             "selection." %
             ", ".join(map(str, SEEDS)))
    L.append("")
    ref = compare(pols + ppo, [])
    L.append("## PAC-ML: the paper's baselines against the authors' figures (reference units)")
    L.append("")
    L.append("| policy | " + " | ".join("paper %s | ours %s | diff %s" % (b, b, b) for b in BETAS) + " |")
    L.append("|---|" + "---|---|---|" * len(BETAS))
    for p in ["para-max", "para-min", "random"]:
        row = []
        for i, b in enumerate(BETAS):
            m = ref[(p, b)]["blocking_rate"]["mean"]
            row.append("%.4f | %.4f | %+.4f" % (PAPER[p][i], m, m - PAPER[p][i]))
        L.append("| %s | %s |" % (p, " | ".join(row)))
    L.append("")
    L.append("para-max is ddls's SiPML at 16, para-min is ddls's AcceptableJCT (the smallest valid degree >= "
             "ceil(1/beta), ignoring communication), random is uniform over the valid non-zero degrees "
             "(docs/pacml.md, \"Policies\"). tests/test_cluster.c pins these to within 0.02.")
    L.append("")
    for fix, title in [([], "reference units (profile ms treated as the time unit)"),
                       (["--time-unit-fix"], "`--time-unit-fix` (communication in ms too)")]:
        res = ref if not fix else compare(pols, fix)
        L.append("## PAC-ML: blocking rate and throughput, %s" % title)
        L.append("")
        L.append("| policy | " + " | ".join("blocking_rate %s | throughput %s" % (b, b) for b in BETAS) + " |")
        L.append("|---|" + "---|---|" * len(BETAS))
        for p in pols + ([] if fix else ppo):
            L.append("| %s | %s |" % (p, " | ".join(
                "%s | %.3g" % (cell(res[(p, b)]), res[(p, b)]["throughput"]["mean"]) for b in BETAS)))
        L.append("")
        if have_learned:
            L.append("The learned policy against the best of the other policies above (every fixed degree, "
                     "lookahead, para-max, para-min, ...)%s:" % ("" if fix else " and the paper's PAC-ML"))
            L.append("")
            L.append("| beta | learned | best other policy | gap | %s" %
                     ("" if fix else "paper's PAC-ML | gap |"))
            L.append("|---|---|---|---|%s" % ("" if fix else "---|---|"))
            for i, b in enumerate(BETAS):
                lm = res[("learned", b)]["blocking_rate"]["mean"]
                best = min((res[(p, b)]["blocking_rate"]["mean"], p) for p in HEURISTICS)
                line = "| %s | %.4f | %.4f (%s) | %+.4f |" % (b, lm, best[0], best[1], lm - best[0])
                if not fix:
                    line += " %.4f | %+.4f |" % (PAPER["PAC-ML (paper)"][i], lm - PAPER["PAC-ML (paper)"][i])
                L.append(line)
            L.append("")
            if not fix:
                L.append("### Where the blocking comes from, beta C (seeds %s; fractions of the arrivals)" %
                         ", ".join(map(str, SEEDS)))
                L.append("")
                breakdown(L, "C", ["learned", "fixed:4", "lookahead", "para-min-jct", "lookahead:1:2"])
                L.append("`refused_*` split `blocked_action0`: no worker free; workers free but no valid degree "
                         "both placeable now and on time; a degree was possible and the policy refused "
                         "(`hsdag cluster run --json`, docs/formats.md). Why beta C only ties the paper "
                         "(noise of 3 episodes, capacity): policies/pacml/README.md, \"Why β C only ties the "
                         "paper\".")
                L.append("")

"""pacml.py - `make results` section: PAC-ML blocking rate and throughput per policy and beta distribution,
in reference units and with --time-unit-fix.
Not here: the cluster simulator (hsdag cluster compare does it). Entry point: generate(L).
"""
import os
from common import run, SEEDS

TITLE = "PAC-ML"


def generate(L):
    # PAC-ML
    for fix, title in [([], "reference units (profile ms treated as the time unit)"),
                       (["--time-unit-fix"], "`--time-unit-fix` (communication in ms too)")]:
        L.append("## PAC-ML: blocking rate and throughput, %s" % title)
        L.append("")
        out = "/tmp/hsdag-results-cluster-%d.md" % os.getpid()
        pols = "para-max,para-min,random,acceptable-jct,sequential,fixed:4,lookahead"
        if os.path.exists("policies/pacml/beta_A.bin"):
            pols += ",learned"
        run(["cluster", "compare", "--seeds", ",".join(map(str, SEEDS)), "--policies", pols, "--markdown", out,
             "--quiet"] + fix)
        with open(out) as f:
            L.append(f.read().strip())
        os.unlink(out)
        L.append("")

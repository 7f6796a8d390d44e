# hostile.py - the hostile-input suite: generates the inputs of issue 16 (and those found since) at sizes
# that run in seconds, runs the CLI on each under a time limit (and an address-space limit where the case
# asks), and checks the expected outcome: exit 2 with one stderr line naming the file (rejected cleanly),
# exit 1 with "out of memory", or success; every run also within the resource contract of
# docs/formats.md: 2 s of CPU time and 256 MB of peak RSS per MB of input beyond a start-up baseline
# (CPU time, not wall time, so that a loaded machine does not fail the suite). A hang is a run past a CPU-time
# limit of 10 s or three times the bound (RLIMIT_CPU), or, for one that burns no CPU, past a wall-clock
# timeout of 120 s or ten times the bound, generous so that a loaded machine does not stretch a run into one.
# Not here: the generators (gen.py), the bad-input suite of real files (tests/cli/badinput.sh).
# Usage: python3 tests/hostile/hostile.py BUILD/hsdag [CASE-SUBSTRING]   (tests/hostile/hostile.sh in make test)
# Prints one line per failure, the counts (tried, rejected cleanly, accepted, out of memory, crashed, hung)
# and "hostile.py: N passed, M failed".
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen  # noqa: E402

HSDAG = sys.argv[1] if len(sys.argv) > 1 else "build/hsdag"
ONLY = sys.argv[2] if len(sys.argv) > 2 else ""
ASAN = "asan" in HSDAG  # slower, and its shadow memory rules out address-space limits and RSS bounds
SEC_PER_MB, MB_PER_MB = 2.0, 256.0
TMP = tempfile.mkdtemp(prefix="hostile.")
LAST_PID = 0  # the process id of the last command run


def path(name):
    return os.path.join(TMP, name)


# The command runs under a small Python wrapper that forks it and reads its peak RSS from wait4: counted
# from here, the peak would include this process (a child's maxrss starts from the memory it was forked or
# vforked from, and this process holds the generated inputs).
WRAPPER = r"""
import json, os, resource, signal, subprocess, sys, time
timeout, lim, stack, cpu, report = float(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
cmd = sys.argv[6:]
def pre():
    if cpu:
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    if lim:
        resource.setrlimit(resource.RLIMIT_AS, (lim, lim))
    if stack:
        resource.setrlimit(resource.RLIMIT_STACK, (stack, stack))
p = subprocess.Popen(cmd, preexec_fn=pre)
t0, hung = time.monotonic(), False
while True:
    pid, status, ru = os.wait4(p.pid, os.WNOHANG)
    if pid:
        break
    if time.monotonic() - t0 > timeout:
        hung = True
        os.kill(p.pid, signal.SIGKILL)
        pid, status, ru = os.wait4(p.pid, 0)
        break
    time.sleep(0.002)
p.returncode = 0
spent = ru.ru_utime + ru.ru_stime
if cpu and os.WIFSIGNALED(status) and os.WTERMSIG(status) in (signal.SIGXCPU, signal.SIGKILL) and spent >= cpu - 0.05:
    hung = True  # killed at its CPU-time limit
with open(report, "w") as f:
    json.dump({"code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
               "sig": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
               "wall": time.monotonic() - t0, "cpu": ru.ru_utime + ru.ru_stime, "rss": ru.ru_maxrss / 1024.0,
               "hung": hung, "pid": p.pid}, f)
"""


def run(args, limit_as_mb=None, timeout=60.0, stack_kb=0, cwd=None, cpu_limit=0):
    """Runs HSDAG args; returns (status, signal, cpu_s, maxrss_mb, stdout, stderr, hung, wall_s)."""
    out, err = open(path(".out"), "w+b"), open(path(".err"), "w+b")
    lim = (int(limit_as_mb) << 20) if limit_as_mb and not ASAN else 0
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")  # OpenBLAS's worker threads hang under a tight ulimit
    subprocess.run([sys.executable, "-c", WRAPPER, str(timeout), str(lim), str(stack_kb << 10), str(int(cpu_limit)), path(".rep"),
                    os.path.abspath(HSDAG)] + args, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=env,
                   cwd=cwd)
    with open(path(".rep")) as f:
        r = json.load(f)
    out.seek(0)
    err.seek(0)
    o, e = out.read(), err.read()
    out.close()
    err.close()
    global LAST_PID
    LAST_PID = r["pid"]
    return r["code"], r["sig"], r["cpu"], r["rss"], o, e, r["hung"], r["wall"]


# ---- the cases: (name, issue row, {file: bytes}, args with {file} placeholders, expectation, options) ----
# expect: "reject" (exit 2, one line naming the first file, matching pat), "oom" (exit 1, one line naming it,
# "out of memory"), "ok" (exit 0). Options: pat (regex on stderr), limit_as (MB of address space), files
# counted for the contract (default all), timeout.
CASES = []


def case(name, row, files, args, expect, **opt):
    CASES.append((name, row, files, args, expect, opt))


case("msct-17-isolated-tarnawski", "m-sct buffer", {"iso17.json": lambda: gen.tarnawski(17)},
     ["place", "{iso17.json}", "--method", "m-sct"], "ok")
case("msct-40-isolated-hsdag-json", "m-sct buffer", {"iso40.json": lambda: gen.hsdag_json(40, cost=1.0)},
     ["place", "{iso40.json}", "--method", "m-sct", "--devices", "cpu-4gpu"], "ok")
case("compare-17-isolated", "m-sct buffer", {"iso17c.json": lambda: gen.tarnawski(17)},
     ["compare", "{iso17c.json}", "--time-limit", "1", "--max-evals", "200"], "ok", cpu_s=20)  # placers, not a reader
for text in ("1e300", "1.7e308", "1e999", "-1"):
    for method in ("m-sct", "ilp"):
        case("cost-%s-%s" % (text, method), "costs 1e300", {"cost.json": lambda t=text: gen.hsdag_json_raw_cost(t)},
             ["place", "{cost.json}", "--method", method], "reject", pat="cpu|finite|negative|large")
case("pipedream-forward-1e300", "costs 1e300", {"fwd.txt": lambda: gen.pipedream_chain(3, fwd="1e300")},
     ["place", "{fwd.txt}", "--method", "m-sct"], "reject", pat="above the limit|1e\\+300")
case("flops-1e300", "costs 1e300", {"flops.json": lambda: gen.hsdag_json(2, [(0, 1)], flops=1e300)},
     ["place", "{flops.json}", "--method", "ilp"], "reject", pat="flops")
case("profile-1e300-ms", "costs 1e300",
     {"pcsv.csv": lambda: b"node,device,ms\nn0,CPU,1e300\n", "pg2.json": lambda: gen.hsdag_json(2, [(0, 1)])},
     ["bound", "{pg2.json}", "--profile", "{pcsv.csv}"], "reject", pat="above the limit", name_file="pcsv.csv")
case("slow-device-file", "costs 1e300",
     {"big.json": lambda: gen.hsdag_json(2, [(0, 1)], flops=1e24, bytes_=1e18),
      "slow.json": lambda: gen.devices(2, peak=1e3, bw=1e3, link_bw=1)},
     ["place", "{big.json}", "--devices", "{slow.json}", "--method", "m-sct"], "reject",
     pat="node 'n0' takes 1e\\+21 s on device 'D0'", name_file="")  # a graph and a device set: no one file
for method in ("m-sct", "ilp", "m-etf", "heft", "metis", "local-search"):
    case("glpk-scale-%s" % method, "costs 1e300", {"scale.json": gen.tarnawski_glpk_scale},
         ["place", "{scale.json}", "--method", method] + (["--time-limit", "1"] if method in ("ilp", "local-search")
                                                           else []), "ok", cpu_s=10)
case("msct-simplex-stall", "solver aborts", {"stall.json": gen.msct_simplex_stall},
     ["place", "{stall.json}", "--method", "m-sct", "--devices", "cpu-4gpu", "--semantics", "concurrent"], "ok",
     cpu_s=5)
case("dot-100k-duplicate-edges", "DOT duplicate edges", {"dup.dot": lambda: gen.dot_duplicate_edges(100000)},
     ["info", "{dup.dot}"], "ok", stack_kb=1024)  # cgraph's dtsize recursion overflowed 8 MB at 600k
case("dot-subgraph-64M-edges", "DOT expansion", {"prod.dot": lambda: gen.dot_subgraph_product(8000)},
     ["info", "{prod.dot}"], "reject", pat="edges", limit_as=2048)
case("dot-nodelist-9M-edges", "DOT expansion", {"list.dot": lambda: gen.dot_nodelist_product(3000)},
     ["info", "{list.dot}"], "reject", pat="edges", limit_as=2048)
case("dot-named-subgraph-reuse", "DOT expansion", {"reuse.dot": lambda: gen.dot_named_subgraph_reuse(1000, 100)},
     ["info", "{reuse.dot}"], "reject", pat="edges", limit_as=2048)
case("dot-attribute-slots", "DOT expansion", {"attrs.dot": lambda: gen.dot_attribute_slots(5000, 5000)},
     ["info", "{attrs.dot}"], "reject", pat="attribute", limit_as=2048)
case("dot-nesting-1000", "DOT expansion", {"deep.dot": lambda: gen.dot_deep(1000)},
     ["info", "{deep.dot}"], "reject", pat="nested")
case("dot-2MB-identifier", "DOT identifier", {"ident.dot": lambda: gen.dot_long_identifier(2000000)},
     ["info", "{ident.dot}"], "reject", pat="identifier")
# 200k inputs, not 100k: the quadratic reader took 4 s for 100k (3.1 MB), inside the contract's 6.7 s, and 16 s
# for 200k (6.2 MB; 4.6 MB with initializers), past its 13 s (measured on 7a13b12, before the fix)
case("onnx-sum-200k-inputs", "ONNX Sum", {"sum.onnx": lambda: gen.onnx_sum(200000)}, ["info", "{sum.onnx}"], "ok")
case("onnx-sum-200k-initializers", "ONNX Sum", {"sumw.onnx": lambda: gen.onnx_sum(200000, weights=True)},
     ["info", "{sumw.onnx}"], "ok")
case("xml-100k-attributes", "XML attributes", {"attrs.xml": lambda: gen.ovxml_attributes(100000)},
     ["info", "{attrs.xml}"], "reject", pat="attributes")
case("xml-ebcdic-us", "EBCDIC XML", {"ebcdic.xml": lambda: gen.ovxml_encoding("EBCDIC-US")},
     ["info", "{ebcdic.xml}"], "reject", pat="XML")
case("xml-ebcdic", "EBCDIC XML", {"ebcdic2.xml": lambda: gen.ovxml_encoding("EBCDIC")},
     ["info", "{ebcdic2.xml}"], "reject", pat="XML")
case("xml-utf16", "EBCDIC XML", {"utf16.xml": gen.ovxml_utf16}, ["info", "{utf16.xml}"], "reject",
     pat="unrecognised|NUL")
# the streaming reader (issue 15) loads 50k nodes in 200 MB of address space (about 120 MB); 200k nodes need
# about 250 MB, so 150 MB is a clean "out of memory"
case("json-50k-nodes-200MB", "JSON out of memory",
     {"big.json": lambda: gen.hsdag_json(50000, [(i, i + 1) for i in range(49999)], outputs=True)},
     ["info", "{big.json}"], "ok", limit_as=200, skip_asan=True, no_contract=True)
case("json-200k-nodes-150MB", "JSON out of memory",
     {"big2.json": lambda: gen.hsdag_json(200000, [(i, i + 1) for i in range(199999)], outputs=True)},
     ["info", "{big2.json}"], "oom", limit_as=150, skip_asan=True, no_contract=True)
case("json-null", "JSON out of memory", {"null.json": lambda: b"null\n"},
     ["convert", "{null.json}", "-", "--to", "json", "--format", "hsdag-json"], "reject", pat="null")
case("device-name-escape", "device names",
     {"g.json": lambda: gen.hsdag_json(2, [(0, 1)]), "esc.json": lambda: gen.devices(2, lambda i: "G\x1b[31mPU%d" % i)},
     ["place", "{g.json}", "--devices", "{esc.json}", "--method", "heft"], "reject", pat="control character",
     name_file="esc.json")
case("device-name-newline", "device names",
     {"g.json": lambda: gen.hsdag_json(2, [(0, 1)]), "nl.json": lambda: gen.devices(2, lambda i: "GPU\n%d" % i)},
     ["place", "{g.json}", "--devices", "{nl.json}", "--method", "heft"], "reject", pat="control character",
     name_file="nl.json")
case("device-name-c1-csi", "device names",
     {"g.json": lambda: gen.hsdag_json(2, [(0, 1)]), "c1.json": lambda: gen.devices(2, lambda i: "GPU\u009b%d" % i)},
     ["place", "{g.json}", "--devices", "{c1.json}", "--method", "heft"], "reject", pat="control character",
     name_file="c1.json")
case("placement-format-v99", "placement format",
     {"g.json": lambda: gen.hsdag_json(2, [(0, 1)]),
      "p99.json": lambda: gen.placement(["n0", "n1"], "CPU", fmt="hsdag-placement-v99")},
     ["simulate", "{g.json}", "--placement", "{p99.json}"], "reject", pat="v99", name_file="p99.json")
case("placement-other-device-set", "placement format",
     {"g.json": lambda: gen.hsdag_json(2, [(0, 1)]),
      "pset.json": lambda: gen.placement(["n0", "n1"], "CPU", set_name="cpu-4gpu")},
     ["simulate", "{g.json}", "--placement", "{pset.json}"], "reject", pat="device set", name_file="pset.json")

# a PipeDream job graph with a 20k fan-out: the RAMP lookahead's ready lists were scanned linearly (> 60 s and
# 716 MB); now per-server heaps, and a graph whose split graph passes HSDAG_CLUSTER_MAX_SPLIT_DEPS is refused
# before it is simulated. A 1k fan-out is accepted within the contract.
for n, fanin in ((20000, False), (20000, True)):
    fname = "fan%dk%s.txt" % (n // 1000, "-in" if fanin else "")
    case("pipedream-fanout-%dk%s-cluster-run" % (n // 1000, "-fanin" if fanin else ""), "PipeDream fan-out",
         {fname: lambda n=n, fanin=fanin: gen.pipedream_fanout(n, fanin)},
         ["cluster", "run", "--policy", "para-max", "--graphs", "{%s}" % fname, "--quiet"], "reject",
         pat="dependencies, above the simulator's limit", name_file=fname[:-4])
case("pipedream-fanout-1k-cluster-run", "PipeDream fan-out", {"fan1k.txt": lambda: gen.pipedream_fanout(1000)},
     ["cluster", "run", "--policy", "lookahead", "--graphs", "{fan1k.txt}", "--quiet"], "ok")
# the contract's worst accepted shapes: a compact star of heavy ops (every op split 16 ways: 5.9M split deps
# for 0.65 MB, 2.5-2.9 s per MB before one flow event per op and run time), and a compact dense graph (100
# heavy ops, every pair an edge: 3.8M split deps for 0.1 MB, 4.4 s and 880 MB per MB), refused by the
# dependencies-per-byte limit of hsdag_cluster_check_graph
case("pipedream-star-5400-compact-cluster-run", "PipeDream fan-out",
     {"star.txt": lambda: gen.pipedream_compact(5401, [(0, i) for i in range(1, 5401)])},
     ["cluster", "run", "--policy", "para-max", "--graphs", "{star.txt}", "--quiet"], "ok")
case("pipedream-dense-100-cluster-run", "PipeDream fan-out",
     {"dense.txt": lambda: gen.pipedream_compact(100, [(i, j) for i in range(100) for j in range(i + 1, 100)])},
     ["cluster", "run", "--policy", "para-max", "--graphs", "{dense.txt}", "--quiet"], "reject",
     pat="dependencies for a .*-byte graph, above the limit", name_file="dense.txt")

# the measurement command ran through sh with the placement path inside single quotes: an output
# directory holding a quote broke out of them (arch: the oracle runs its command without a shell)
case("measure-cmd-quote-injection", "measure-cmd shell", {"mg.json": lambda: gen.hsdag_json(2, [(0, 1)])},
     ["train", "mg.json", "--episodes", "1", "--steps", "2", "--measure-cmd", "echo 0.001 {placement}",
      "--out-dir", "o'; touch INJECTED; echo '"], "ok", in_tmp=True, absent=["INJECTED"], cpu_s=10)

# one flipped bit in a run's state or a policy: accepted silently before, and then ran for minutes, took
# 667 MB or trained another configuration (arch: every binary file carries a checksum, checked on load)
PACML_TRAIN = ["cluster", "train", "--beta", "A", "--seed", "0", "--iterations", "1", "--batch-episodes", "1",
               "--epochs", "1", "--eval-episodes", "1", "--horizon", "20000", "--hidden", "16", "--quiet"]
# The flips land in fields, not in the frame header: checkpoint.bin is the run's frame (32-byte header, then the
# cluster configuration: 3 x i32 shape, 7 x f64 from worker memory to the quantum, i32 steps, i32 replication,
# ...; 86 bytes) and the trainer's frame (header at 118, payload at 150: u64 seed, i32 iterations, i32 episodes
# per iteration, i32 epochs, ...). 166 = the trainer's epochs, 104 = the replication, 82 = the interarrival
# time's exponent. (Case 0 used to flip byte 20, in the frame's length field: refused as "truncated" with or
# without the checksum, so it could not fail; docs/fuzzing.md, issue 16.) The policy's flip is a weight's low
# bit (byte 300, used before, is in a tensor name, which the loader's name check refuses without the checksum).
for i, at in enumerate((166, 104, 82)):  # epochs, replication, interarrival
    case("pacml-state-flipped-bit-%d" % i, "PAC-ML flipped bit", {},
         ["cluster", "train", "--resume", "run%d" % i, "--iterations", "2", "--quiet"], "reject",
         pat="checksum|corrupt", in_tmp=True, setup=[PACML_TRAIN + ["--out-dir", "run%d" % i]],
         flip=[("run%d/checkpoint.bin" % i, at, 0x10)], name_file="run%d/checkpoint.bin" % i, cpu_s=10)
case("pacml-policy-flipped-bit", "PAC-ML flipped bit", {},
     ["cluster", "run", "--policy", "learned:runp", "--beta", "A", "--horizon", "20000", "--quiet"], "reject",
     pat="checksum|corrupt", in_tmp=True, setup=[PACML_TRAIN + ["--out-dir", "runp"]],
     flip=[("runp/policy.bin", -100, 0x01)], name_file="runp", cpu_s=10)
case("hsdag-checkpoint-flipped-bit", "PAC-ML flipped bit", {"tg.json": lambda: gen.hsdag_json(4, [(0, 1), (1, 2), (2, 3)])},
     ["train", "tg.json", "--resume", "tr", "--episodes", "3"], "reject", pat="checksum|corrupt", in_tmp=True,
     setup=[["train", "tg.json", "--episodes", "1", "--steps", "2", "--out-dir", "tr"]],
     flip=[("tr/checkpoint.bin", 200, 0x04)], name_file="tr/checkpoint.bin", cpu_s=10)

# a symlink planted where a writer puts its file: at the temporary name writers used to take (OUT.tmp<pid>,
# planted for the next pids, so that the old writer would have followed one into the victim), and at the
# output path itself, pointing out of its directory (refused before any work). The victim stays as it was.
case("symlink-at-old-temp-name", "symlink race",
     {"sg.json": lambda: gen.hsdag_json(2, [(0, 1)]), "victim": lambda: b"keep"},
     ["place", "{sg.json}", "--method", "heft", "--out", "{sout.json}"], "ok", pid_links=("sout.json", "victim"),
     intact={"victim": b"keep"}, regular=["sout.json"])
case("symlink-at-output-path", "symlink race",
     {"sg2.json": lambda: gen.hsdag_json(2, [(0, 1)]), "outside/victim": lambda: b"keep"},
     ["place", "{sg2.json}", "--method", "heft", "--out", "{lnk.json}"], "reject", pat="symbolic link",
     links=[("lnk.json", "outside/victim")], intact={"outside/victim": b"keep"}, name_file="lnk.json")

# ---- the resource contract: a valid input of about 1 MB per reader, within 2 s and 256 MB per MB ----
N = int(os.environ.get("HOSTILE_CONTRACT_N", "20000"))  # ops of the contract inputs (docs: 100000)
case("contract-onnx", "contract", {"c.onnx": lambda: gen.onnx_chain(N)}, ["info", "{c.onnx}"], "ok")
case("contract-ovxml", "contract", {"c.xml": lambda: gen.ovxml_chain(N // 2)}, ["info", "{c.xml}"], "ok")
case("contract-pipedream", "contract", {"c.txt": lambda: gen.pipedream_chain(N // 2)}, ["info", "{c.txt}"], "ok")
case("contract-tarnawski", "contract", {"c.json": lambda: gen.tarnawski(N // 2, [(i, i + 1) for i in range(N // 2 - 1)])},
     ["info", "{c.json}"], "ok")
case("contract-hsdag-json", "contract", {"h.json": lambda: gen.hsdag_json(N // 2, [(i, i + 1) for i in range(N // 2 - 1)],
                                                                          outputs=True)},
     ["info", "{h.json}"], "ok")
case("contract-dot", "contract", {"c.dot": lambda: gen.dot_chain(N // 2)}, ["info", "{c.dot}"], "ok")
case("contract-devices-64", "contract",
     {"g2.json": lambda: gen.hsdag_json(2, [(0, 1)]), "d64.json": lambda: gen.devices(64)},
     ["place", "{g2.json}", "--devices", "{d64.json}", "--method", "heft"], "ok")
case("contract-placement", "contract",
     {"pg.json": lambda: gen.hsdag_json(N, [(i, i + 1) for i in range(N - 1)]),
      "pp.json": lambda: gen.placement(["n%d" % i for i in range(N)], "GPU")},
     ["simulate", "{pg.json}", "--placement", "{pp.json}"], "ok")
case("contract-profile", "contract",
     {"qg.json": lambda: gen.hsdag_json(N, [(i, i + 1) for i in range(N - 1)]),
      "q.csv": lambda: gen.profile(["n%d" % i for i in range(N)], ["CPU", "GPU"])},
     ["bound", "{qg.json}", "--profile", "{q.csv}"], "ok")


def plant_links(opt):
    """The case's symlinks: links = [(name, target)], pid_links = (out, target): out.tmp<pid> -> target for the
    next 256 process ids (the old writer's temporary name; the command's pid is among them)."""
    for name, target in opt.get("links", ()):
        os.symlink(path(target), path(name))
    if "pid_links" in opt:
        out, target = opt["pid_links"]
        with open("/proc/sys/kernel/ns_last_pid") as f:
            last = int(f.read())
        for pid in range(last + 1, last + 257):
            if not os.path.lexists(path("%s.tmp%d" % (out, pid))):
                os.symlink(path(target), path("%s.tmp%d" % (out, pid)))


def main():
    files_written = {}
    base_t, base_mb = 0.0, 0.0
    with open(path("base.json"), "wb") as f:
        f.write(gen.hsdag_json(2, [(0, 1)]))
    for _ in range(3):
        _, _, t, mb, _, _, _, _ = run(["info", path("base.json")])
        base_t, base_mb = max(base_t, t), max(base_mb, mb)
    counts = dict(tried=0, rejected=0, accepted=0, oom=0, crashed=0, hung=0, other=0)
    passed = failed = 0
    t_start = time.monotonic()
    for name, row, files, args, expect, opt in CASES:
        if ONLY and ONLY not in name:
            continue
        if ASAN and opt.get("skip_asan"):
            continue
        size = 0
        for fname, make in files.items():
            data = make()
            os.makedirs(os.path.dirname(path(fname)), exist_ok=True)
            with open(path(fname), "wb") as f:
                f.write(data)
            files_written[fname] = len(data)
            size += len(data)
        argv = [path(a[1:-1]) if a[:1] == "{" and a[-1:] == "}" else a for a in args]
        setup_failed = None
        for sargs in opt.get("setup", ()):  # commands making the files the case then corrupts
            sc, _, _, _, _, serr, _, _ = run(sargs, cwd=TMP, timeout=120)
            if sc != 0:
                setup_failed = "setup %s: exit %s: %s" % (" ".join(sargs[:2]), sc, serr.decode()[:200])
        for fname, at, mask in () if setup_failed else opt.get("flip", ()):  # one flipped bit
            with open(path(fname), "r+b") as f:
                data = bytearray(f.read())
                i = at if at >= 0 else len(data) + at
                data[i] ^= mask
                f.seek(0)
                f.write(data)
            size += 0
        if setup_failed:
            failed += 1
            counts["tried"] += 1
            counts["other"] += 1
            print("FAIL %s [%s]: %s" % (name, row, setup_failed))
            continue
        plant_links(opt)
        mb_in = size / 1e6
        t_bound = opt.get("cpu_s", 0.5 + base_t + SEC_PER_MB * mb_in)
        m_bound = 32.0 + base_mb + MB_PER_MB * mb_in
        if ASAN:
            t_bound *= 5
        code, sig, cpu, rss, out, err, hung, wall = run(argv, opt.get("limit_as"), timeout=max(120.0, 10 * t_bound),
                                                        cpu_limit=max(10, math.ceil(3 * t_bound)),
                                                        stack_kb=opt.get("stack_kb", 0),
                                                        cwd=TMP if opt.get("in_tmp") else None)
        counts["tried"] += 1
        lines = err.decode("utf-8", "replace").splitlines()
        if hung:
            outcome = "hung"
        elif sig is not None or code not in (0, 1, 2):
            outcome = "crashed"
        elif code == 2:
            outcome = "rejected"
        elif code == 0:
            outcome = "accepted"
        elif code == 1 and "out of memory" in err.decode("utf-8", "replace"):
            outcome = "oom"
        else:
            outcome = "other"
        counts[outcome] += 1
        problems = []
        want = {"reject": "rejected", "ok": "accepted", "oom": "oom"}[expect]
        if outcome != want:
            problems.append("%s (exit %s, signal %s), want %s" % (outcome, code, sig, want))
        named = opt["name_file"] if "name_file" in opt else next(iter(files), "")
        if expect in ("reject", "oom") and outcome == want:
            if len(lines) != 1:
                problems.append("%d stderr lines" % len(lines))
            if named not in err.decode("utf-8", "replace"):
                problems.append("stderr does not name %s" % named)
            if opt.get("pat") and not re.search(opt["pat"], err.decode("utf-8", "replace")):
                problems.append("stderr does not match /%s/" % opt["pat"])
            if out:
                problems.append("printed on stdout")
            if re.search(rb"[\x00-\x08\x0b-\x1f\x7f]", err):
                problems.append("control character on stderr")
        for fname, want_bytes in opt.get("intact", {}).items():
            with open(path(fname), "rb") as f:
                if f.read() != want_bytes:
                    problems.append("%s was overwritten" % fname)
        if "pid_links" in opt and not os.path.islink(path("%s.tmp%d" % (opt["pid_links"][0], LAST_PID))):
            problems.append("no symlink was planted at the command's own old temporary name (pid %d)" % LAST_PID)
        for fname in opt.get("regular", ()):
            if os.path.islink(path(fname)) or not os.path.isfile(path(fname)):
                problems.append("%s is not a regular file" % fname)
        for name_absent in opt.get("absent", ()):
            if os.path.lexists(path(name_absent)):
                problems.append("%s exists afterwards" % name_absent)
        if not opt.get("no_contract"):
            if cpu > t_bound:
                problems.append("%.2f s of CPU for %.2f MB (bound %.2f s)" % (cpu, mb_in, t_bound))
            if not ASAN and rss > m_bound:
                problems.append("%.0f MB for %.2f MB (bound %.0f MB)" % (rss, mb_in, m_bound))
        if problems:
            failed += 1
            print("FAIL %s [%s]: %s :: %s" % (name, row, "; ".join(problems), " | ".join(lines)[:300]))
        else:
            passed += 1
        if os.environ.get("HOSTILE_VERBOSE"):
            print("  %-32s %-9s %6.2f s cpu %6.2f s wall %6.0f MB %7.2f MB in  %s" % (name, outcome, cpu, wall, rss, mb_in,
                                                                    (lines[0] if lines else "")[:100]))
    shutil.rmtree(TMP, ignore_errors=True)
    print("hostile: tried %(tried)d, rejected cleanly %(rejected)d, accepted %(accepted)d, "
          "out of memory %(oom)d, crashed %(crashed)d, hung %(hung)d, other %(other)d" % counts +
          " (%.1f s)" % (time.monotonic() - t_start))
    print("hostile.py: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""check-layers.py - fails when an #include in src/, include/hsdag/ or tools/ points up a layer.
Not here: anything about what the code does; it reads #include lines only (tests/, bench/, fuzz/ sit on top
and may include anything). Entry points: main (run by `make test`; --root DIR checks another tree), --self-test (proves it can
fail).

Layers, lowest first (README.md, "Layout"): core -> graph, nn -> io -> sim -> place -> learn -> cluster ->
tools. A file may include headers of its own layer or of a lower one; graph and nn are siblings and may
not include each other. A private header (src/<layer>/x.h) is seen only by its own folder. Every public
header is assigned to one layer below; a new header must be added here or the check fails.
"""
import os
import re
import sys
import tempfile

RANK = {"core": 0, "graph": 1, "nn": 1, "io": 2, "sim": 3, "place": 4, "learn": 5, "cluster": 6,
        "umbrella": 6.5, "tools": 7}

# public header -> the layer that implements it
PUBLIC = {
    "common.h": "core", "codec.h": "core",
    "graph.h": "graph", "gen.h": "graph", "coarsen.h": "graph",
    "nn.h": "nn",
    "io.h": "io", "devices.h": "io", "placement.h": "io", "split.h": "io", "ortprof.h": "io",
    "sim.h": "sim", "calibrate.h": "sim",
    "place.h": "place",
    "features.h": "learn", "learn.h": "learn", "pacml.h": "learn", "measure.h": "learn",
    "placeto.h": "learn", "rnnplace.h": "learn", "pretrain.h": "learn",
    "cluster.h": "cluster",
    "hsdag.h": "umbrella",
}
# generated headers (build/gen) and the layer that may use them
GENERATED = {"onnx.pb-c.h": "io"}

INC = re.compile(r'^\s*#\s*include\s*"([^"]+)"')


def layer_of(root, path):
    rel = os.path.relpath(path, root).replace(os.sep, "/")
    parts = rel.split("/")
    if parts[0] == "src" and len(parts) == 3:
        return parts[1]
    if parts[0] == "include" and len(parts) == 3 and parts[1] == "hsdag":
        return PUBLIC.get(parts[2])
    if parts[0] == "tools":
        return "tools"
    return None


def check(root):
    errors, n_files, n_inc = [], 0, 0
    files = []
    for top in ("src", "include/hsdag", "tools"):
        for dirpath, _, names in os.walk(os.path.join(root, top)):
            for nm in sorted(names):
                if nm.endswith((".c", ".h")):
                    files.append(os.path.join(dirpath, nm))
    for h in sorted(os.listdir(os.path.join(root, "include/hsdag"))):
        if h.endswith(".h") and h not in PUBLIC:
            errors.append("include/hsdag/%s: public header not assigned to a layer (add it to "
                          "scripts/check-layers.py)" % h)
    for path in sorted(files):
        rel = os.path.relpath(path, root)
        src = layer_of(root, path)
        if src is None or src not in RANK:
            errors.append("%s: not in a known layer folder (%s)" % (rel, ", ".join(sorted(RANK))))
            continue
        n_files += 1
        with open(path, encoding="utf-8", errors="replace") as f:
            for ln, line in enumerate(f, 1):
                m = INC.match(line)
                if not m:
                    continue
                n_inc += 1
                name = m.group(1)
                if name.startswith("hsdag/"):
                    dst = PUBLIC.get(name[len("hsdag/"):])
                    if dst is None:
                        errors.append("%s:%d: includes %s, which is no public header" % (rel, ln, name))
                        continue
                elif name in GENERATED:
                    dst = GENERATED[name]
                elif "/" not in name and os.path.exists(os.path.join(os.path.dirname(path), name)):
                    continue  # a private header of the same folder
                else:
                    errors.append("%s:%d: includes \"%s\": neither a public header nor a header of this "
                                  "folder" % (rel, ln, name))
                    continue
                if dst == src:
                    continue
                if RANK[dst] > RANK[src]:
                    errors.append("%s:%d: includes %s (layer %s) from layer %s: points up" %
                                  (rel, ln, name, dst, src))
                elif RANK[dst] == RANK[src]:
                    errors.append("%s:%d: includes %s (layer %s) from its sibling layer %s" %
                                  (rel, ln, name, dst, src))
    return errors, n_files, n_inc


def self_test():
    """A tree with one upward include must fail, the same tree without it must pass."""
    with tempfile.TemporaryDirectory() as d:
        for sub in ("src/place", "src/learn", "include/hsdag", "tools"):
            os.makedirs(os.path.join(d, sub))
        for h in PUBLIC:
            open(os.path.join(d, "include/hsdag", h), "w").close()
        with open(os.path.join(d, "src/learn/a.c"), "w") as f:
            f.write('#include "hsdag/place.h"\n#include "hsdag/learn.h"\n')
        with open(os.path.join(d, "src/place/b.c"), "w") as f:
            f.write('#include "hsdag/sim.h"\n')
        ok, _, _ = check(d)
        with open(os.path.join(d, "src/place/b.c"), "a") as f:
            f.write('#include "hsdag/learn.h"\n')
        bad, _, _ = check(d)
        with open(os.path.join(d, "src/learn/c.h"), "w") as f:
            f.write('#include "../place/x.h"\n')
        bad2, _, _ = check(d)
    return not ok and len(bad) == 1 and "points up" in bad[0] and len(bad2) == 2


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if "--root" in sys.argv[1:-1]:
        root = sys.argv[sys.argv.index("--root") + 1]
    if "--self-test" in sys.argv[1:]:
        if not self_test():
            print("check-layers: self-test FAILED (the check did not catch an upward include)")
            return 1
        print("check-layers: self-test ok")
        return 0
    errors, n_files, n_inc = check(root)
    for e in errors:
        print("check-layers: " + e)
    if errors:
        print("check-layers: %d violation(s); layers, lowest first: core -> graph, nn -> io -> sim -> place -> "
              "learn -> cluster -> tools" % len(errors))
        return 1
    print("check-layers: %d files, %d includes, every one points down or stays in its layer" %
          (n_files, n_inc))
    return 0


if __name__ == "__main__":
    sys.exit(main())

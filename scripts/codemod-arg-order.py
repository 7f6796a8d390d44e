#!/usr/bin/env python3
"""codemod-arg-order.py - rewrites calls (and declarations) of the public functions whose parameters were
reordered by issue 13 (output first, hsdag_err last; a few parsers gained an error buffer).
Not here: anything else; it edits C text in place and prints every call it could not rewrite (a wrong
argument count, e.g. in prose). Run it ONCE on a branch after merging main (it is not idempotent: a second run permutes again), on the
files that still use the old order: python3 scripts/codemod-arg-order.py FILE... (no FILE: src/ include/
tools/ tests/ bench/ fuzz/ examples/); --only NAME,NAME applies only those rules (for code merged later).
The compiler catches most leftovers (the reordered arguments have other types). Entry points: main.

Each rule maps the old argument positions to the new order; "+X" appends the literal X (a new error buffer
argument becomes NULL: pass your hsdag_err * by hand where a message matters).
"""
import os
import re
import sys

RULES = {
    # name: (old arity, new order as old indices or "+literal")
    "hsdag_cluster_create": (6, [4, 0, 1, 2, 3, 5]),
    "hsdag_ramp_find_block": (6, [5, 0, 1, 2, 3, 4]),
    "hsdag_cluster_builtin_graph": (3, [1, 2, 0]),
    "hsdag_read_file": (5, [1, 2, 0, 3, 4]),
    "hsdag_semantics_parse": (2, [1, 0, "+NULL"]),
    "hsdag_devices_preset": (4, [2, 0, 1, 3]),
    "hsdag_devices_load": (4, [2, 0, 1, 3]),
    "hsdag_devices_parse": (5, [3, 0, 1, 2, 4]),
    "hsdag_devices_write_json": (2, [1, 0]),
    "hsdag_profile_parse": (5, [3, 0, 1, 2, 4]),
    "hsdag_profile_read_file": (3, [1, 0, 2]),
    "hsdag_load": (6, [4, 0, 1, 2, 3, 5]),
    "hsdag_load_file": (4, [2, 0, 1, 3]),
    "hsdag_onnx_read": (5, [3, 0, 1, 2, 4]),
    "hsdag_ovxml_read": (5, [3, 0, 1, 2, 4]),
    "hsdag_pipedream_read": (5, [3, 0, 1, 2, 4]),
    "hsdag_tarnawski_read": (5, [3, 0, 1, 2, 4]),
    "hsdag_json_read": (5, [3, 0, 1, 2, 4]),
    "hsdag_dot_read": (5, [3, 0, 1, 2, 4]),
    "hsdag_pipedream_mirror": (3, [1, 0, 2]),
    "hsdag_json_write": (2, [1, 0]),
    "hsdag_dot_write": (5, [4, 0, 1, 2, 3]),
    "hsdag_placement_parse": (8, [5, 6, 0, 1, 2, 3, 4, 7]),
    "hsdag_placement_read_file": (6, [3, 4, 0, 1, 2, 5]),
    "hsdag_placement_from_spec": (6, [3, 4, 0, 1, 2, 5]),
    "hsdag_placement_write_json": (4, [3, 0, 1, 2]),
    "hsdag_placement_write_affinity": (4, [3, 0, 1, 2]),
    "hsdag_placement_write_split": (4, [3, 0, 1, 2]),
    "hsdag_split_read": (8, [4, 5, 6, 0, 1, 2, 3, 7]),
    "hsdag_split_write": (6, [4, 0, 1, 2, 3, 5]),
    "hsdag_bound_compute": (6, [4, 0, 1, 2, 3, 5]),
    "hsdag_place_bound_exact": (5, [4, 2, 0, 1, 3]),
    "hsdag_nn_params_create": (1, [0, "+NULL"]),
    "hsdag_nn_gnn_kind_parse": (2, [1, 0, "+NULL"]),
    "hsdag_cluster_policy_parse": (3, [1, 0, 2]),
    "hsdag_pacml_policy_find": (5, [2, 3, 0, 1, 4]),
    "hsdag_ortprof_parse": (6, [4, 0, 1, 2, 3, 5]),
    "hsdag_ortprof_write_csv": (4, [3, 0, 1, 2]),
}

IDENT = re.compile(r"\b(hsdag_\w+)\s*\(")
PARAM = re.compile(r"^(const\s+)?[A-Za-z_]\w*(\s+const)?[\s\*]+(const\s+)?\**\s*[A-Za-z_]\w*(\[\w*\])?$")


def split_args(s, i):
    """s[i] == '('; returns (list of argument texts, index after the closing paren) or None."""
    depth, args, cur, j = 0, [], [], i
    while j < len(s):
        c = s[j]
        if c in "([{":
            depth += 1
            if depth > 1:
                cur.append(c)
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                args.append("".join(cur))
                return args, j + 1
            cur.append(c)
        elif c == "," and depth == 1:
            args.append("".join(cur))
            cur = []
        elif c == '"' or c == "'":
            q, k = c, j + 1
            while k < len(s) and s[k] != q:
                k += 2 if s[k] == "\\" else 1
            cur.append(s[j:k + 1])
            j = k
        else:
            cur.append(c)
        j += 1
    return None


def rewrite(text, path, report):
    out, pos = [], 0
    for m in IDENT.finditer(text):
        name = m.group(1)
        if name not in RULES or m.start() < pos:
            continue
        r = split_args(text, m.end() - 1)
        if not r:
            continue
        args, end = r
        if len(args) == 1 and not args[0].strip():
            args = []
        arity, order = RULES[name]
        line = text.count("\n", 0, m.start()) + 1
        if len(args) != arity:
            report.append("%s:%d: %s with %d arguments (want %d): left alone" % (path, line, name, len(args), arity))
            continue
        lead = [a[: len(a) - len(a.lstrip())] for a in args]
        decl = args and all(PARAM.match(a.strip()) for a in args)  # a prototype or a definition
        new = []
        for k, o in enumerate(order):
            if isinstance(o, str):
                a = "hsdag_err *e" if decl else o[1:]
            else:
                a = args[o].strip()
            new.append((lead[k] if k < len(lead) and k else (" " if k else "")) + a)
        out.append(text[pos:m.end()])
        out.append(",".join(new))
        out.append(")")
        pos = end
    out.append(text[pos:])
    return "".join(out)


def main():
    args = sys.argv[1:]
    if "--only" in args:  # --only NAME,NAME: apply just these rules (e.g. to code merged after a first run)
        i = args.index("--only")
        keep = set(args[i + 1].split(","))
        for k in list(RULES):
            if k not in keep:
                del RULES[k]
        del args[i:i + 2]
    paths = args
    if not paths:
        for top in ("src", "include", "tools", "tests", "bench", "fuzz", "examples"):
            for d, _, names in os.walk(top):
                if d.startswith(os.path.join("tests", "data")):
                    continue  # fixtures written against older builds keep their API
                paths += [os.path.join(d, n) for n in names if n.endswith((".c", ".h"))]
    report, changed = [], 0
    for p in sorted(paths):
        s = open(p, encoding="utf-8").read()
        t = rewrite(s, p, report)
        if t != s:
            open(p, "w", encoding="utf-8").write(t)
            changed += 1
    for r in report:
        print(r)
    print("codemod-arg-order: %d files rewritten, %d calls left alone" % (changed, len(report)))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""expect.py - independent expectations for tests/test_dot.c from NNCF .dot files (regular expressions only).
Not here: cgraph or anything the C reader shares; the rules are re-implemented from the comments of
src/io/dot.c and src/io/constw.h. Usage: python3 expect.py FILE.dot ..."""
import re
import sys
from math import prod

NAME = r'("(?:[^"\\]|\\.)*"|[^\s\[\]";]+)'
NODE = re.compile(r'^' + NAME + r'\s*\[(.*)\];?\s*$')
EDGE = re.compile(r'^' + NAME + r'\s*->\s*' + NAME + r'\s*\[(.*)\];?\s*$')
ATTR = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|[^,\]]+)')
CONST = {"Constant", "Const", "get_attr", "nncf_model_const"}


def unq(s):
    return s[1:-1] if s.startswith('"') else s


def attrs(s):
    return {k: unq(v.strip()) for k, v in ATTR.findall(s)}


def shape_bytes(text, dtype):
    m = re.fullmatch(r'\s*[\[(]\s*(.*?)\s*[\])]\s*', text or "")
    if not m:
        return 0
    dims = [int(d) for d in m.group(1).split(",") if d.strip()]
    if any(d < 0 for d in dims):
        return 0
    return prod(dims) * {"float": 4, None: 4}[dtype]


def main(path):
    nodes, edges = {}, []
    for line in open(path):
        line = line.strip()
        m = EDGE.match(line)
        if m:
            a = attrs(m.group(3))
            edges.append((unq(m.group(1)), unq(m.group(2)), a))
            continue
        m = NODE.match(line)
        if m and not line.startswith(("graph", "node", "edge")):
            nodes[unq(m.group(1))] = attrs(m.group(2))
    tensors = {}  # (u, key) -> bytes
    dist = {}     # (u, v, key) -> bytes
    for u, v, a in edges:
        key = a.get("out_port_id") or a.get("shape") or a.get("label") or ""
        b = shape_bytes(a.get("shape", a.get("label")), a.get("dtype"))
        tensors[(u, key)] = b
        dist[(u, v, key)] = b
    preds = {n: set() for n in nodes}
    for u, v, _ in dist:
        preds[v].add(u)
    cv = {n: nodes[n].get("type") in CONST for n in nodes}
    changed = True
    while changed:
        changed = False
        for n, ps in preds.items():
            if not cv[n] and ps and all(cv[p] for p in ps):
                cv[n] = changed = True
    succ = {n: set() for n in nodes}
    for u, v, _ in dist:
        succ[u].add(v)
    param = 0
    for n in nodes:
        if nodes[n].get("type") not in CONST:
            continue
        seen, stack, reaches = set(), list(succ[n]), False
        while stack and not reaches:
            s = stack.pop()
            if not cv[s]:
                reaches = True
            elif s not in seen:
                seen.add(s)
                stack += list(succ[s])
        if reaches:
            param += sum(b for (t, _), b in tensors.items() if t == n)
    pairs = {(u, v) for u, v, _ in dist}
    print(f"{path}: nodes {len(nodes)} edges {len(edges)} ir_edges {len(pairs)} "
          f"edge_bytes {sum(dist.values())} param_bytes {param}")


if __name__ == "__main__":
    for p in sys.argv[1:]:
        main(p)

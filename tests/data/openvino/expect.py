#!/usr/bin/env python3
"""expect.py - independent expectations for tests/test_ovxml.c from an OpenVINO IR .xml (xml.etree only).
Not here: anything the C reader shares; the rules are re-implemented from the comments of src/io/ovxml.c,
src/io/constw.h and the FLOP table in src/graph/opcost.c. Usage: python3 expect.py resnet-50-pytorch.xml"""
import sys
import xml.etree.ElementTree as ET
from math import prod

BYTES = {"FP32": 4, "FP16": 2, "BF16": 2, "FP64": 8, "I8": 1, "U8": 1, "I16": 2, "U16": 2, "I32": 4,
         "U32": 4, "I64": 8, "U64": 8, "BOOL": 1, "BOOLEAN": 1, "I4": 0.5, "U4": 0.5, "U1": 0.125}
ELEM = {"Add", "Subtract", "Multiply", "Divide", "ReLU", "Relu", "Convert", "Clamp", "Maximum", "Minimum"}
ZERO = {"Const", "Parameter", "Result", "Reshape", "Concat", "Transpose", "ShapeOf", "Gather", "Squeeze",
        "Unsqueeze", "StridedSlice", "Split", "Concat"}


def dims(port):
    return [int(d.text) for d in port.findall("dim")]


def main(path):
    net = ET.parse(path).getroot()
    layers = net.find("layers").findall("layer")
    edges = net.find("edges").findall("edge")
    by_id = {l.get("id"): l for l in layers}
    outp = {}  # (layer id, port id) -> bytes
    for l in layers:
        for p in (l.find("output") or []):
            d = dims(p)
            outp[(l.get("id"), p.get("id"))] = 0 if min(d, default=0) < 0 else prod(d) * BYTES[p.get("precision")]
    preds = {l.get("id"): set() for l in layers}
    for e in edges:
        preds[e.get("to-layer")].add(e.get("from-layer"))
    # constant-valued: Const, or all inputs constant-valued (fixed point; the graph is a DAG)
    cv = {i: by_id[i].get("type") == "Const" for i in by_id}
    changed = True
    while changed:
        changed = False
        for i, ps in preds.items():
            if not cv[i] and ps and all(cv[p] for p in ps):
                cv[i] = changed = True
    # every Const that reaches a non-constant layer through constant-valued layers counts once
    param = 0
    for l in layers:
        if l.get("type") != "Const":
            continue
        succ = [e.get("to-layer") for e in edges if e.get("from-layer") == l.get("id")]
        seen, stack, reaches = set(), list(succ), False
        while stack and not reaches:
            s = stack.pop()
            if not cv[s]:
                reaches = True
            elif s not in seen:
                seen.add(s)
                stack += [e.get("to-layer") for e in edges if e.get("from-layer") == s]
        if reaches:
            param += sum(b for (lid, _), b in outp.items() if lid == l.get("id"))
    flops = 0
    for l in layers:
        t, lid = l.get("type"), l.get("id")
        if cv[lid] or t in ZERO:
            continue
        ins = sorted((l.find("input") or []), key=lambda p: int(p.get("id")))
        outs = sorted((l.find("output") or []), key=lambda p: int(p.get("id")))
        o = prod(dims(outs[0]))
        if t == "Convolution":
            flops += 2 * o * prod(dims(ins[1])[1:])
        elif t == "GroupConvolution":
            flops += 2 * o * prod(dims(ins[1])[2:])
        elif t == "MatMul":
            a = dims(ins[0])
            ta = l.find("data").get("transpose_a") == "true"
            flops += 2 * o * (a[-2] if ta else a[-1])
        elif t in ("MaxPool", "AvgPool"):
            flops += o * prod(int(k) for k in l.find("data").get("kernel").split(","))
        elif t == "ReduceMean":
            flops += prod(dims(ins[0]))
        elif t in ELEM:  # a dynamic output falls back to the largest fully known input
            known = [prod(dims(p)) for p in ins if min(dims(p), default=0) >= 0]
            flops += o if min(dims(outs[0]), default=0) >= 0 else max(known, default=0)
        elif t in ("LRN", "MVN", "SoftMax", "Softmax"):
            flops += 5 * o
        elif t in ("DetectionOutput", "PriorBoxClustered"):
            pass  # not in the cost table: byte-only
        else:
            raise SystemExit("no rule for " + t)
    fe = {}
    for e in edges:  # one tensor per (from-layer, from-port, to-layer)
        fe[(e.get("from-layer"), e.get("from-port"), e.get("to-layer"))] = outp[(e.get("from-layer"), e.get("from-port"))]
    pairs = {(a, c) for a, _, c in fe}
    print(f"layers {len(layers)} edges {len(edges)} ir_edges {len(pairs)} param_bytes {param} "
          f"flops {flops} edge_bytes {sum(fe.values())} const_valued {sum(cv.values())}")


if __name__ == "__main__":
    main(sys.argv[1])

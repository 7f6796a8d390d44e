#!/usr/bin/env python3
"""gen_transformer.py - writes a transformer-encoder computation graph of any size as hsdag JSON (docs/formats.md),
shaped like a torch.onnx export of BERT/Swin blocks: LayerNorm spelled out, Q/K/V projections, the shape
arithmetic of the head split (Shape/Gather/Unsqueeze/Concat/Reshape chains), softmax attention, an erf-GELU MLP.
81 ops per layer and 12 more, so --layers 76 gives 6,168 ops and --layers 1235 100,047.
Not here: weights or numerics (graph structure, shapes, FLOPs and weight bytes only); `hsdag gen transformer`
(the scale benchmarks' decoder generator) is the other one, this one stays for the learner's bench graphs.
Usage: python3 tests/gen_transformer.py --layers 76 [--seq 196] [--hidden 384] [--heads 6] > /tmp/t7k.json
"""
import argparse
import json
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--layers", type=int, default=64)
    ap.add_argument("--seq", type=int, default=196)
    ap.add_argument("--hidden", type=int, default=384)
    ap.add_argument("--heads", type=int, default=6)
    a = ap.parse_args()
    S, H, NH = a.seq, a.hidden, a.heads
    nodes, edges = [], []

    def node(op, shape, flops=0, params=0, ins=()):
        i = len(nodes)
        nb = 4
        for d in shape:
            nb *= d
        nodes.append({"name": "%s_%d" % (op.lower(), i), "op": op, "flops": flops, "param_bytes": params,
                      "outputs": [{"dtype": "f32", "shape": list(shape)}]})
        for u in ins:
            out = nodes[u]["outputs"][0]["shape"]
            b = 4
            for d in out:
                b *= d
            edges.append({"src": u, "dst": i, "bytes": b})
        return i

    x = node("Input", [1, S, H])

    def layernorm(x):
        m = node("ReduceMean", [1, S, 1], S * H, 0, [x])
        d = node("Sub", [1, S, H], S * H, 0, [x, m])
        c2 = node("Constant", [])
        p = node("Pow", [1, S, H], S * H, 0, [d, c2])
        v = node("ReduceMean", [1, S, 1], S * H, 0, [p])
        ce = node("Constant", [])
        a_ = node("Add", [1, S, 1], S, 0, [v, ce])
        r = node("Sqrt", [1, S, 1], S, 0, [a_])
        q = node("Div", [1, S, H], S * H, 0, [d, r])
        g = node("Mul", [1, S, H], S * H, 4 * H, [q])
        return node("Add", [1, S, H], S * H, 4 * H, [g])

    def linear(x, din, dout):
        m = node("MatMul", [1, S, dout], 2 * S * din * dout, 4 * din * dout, [x])
        return node("Add", [1, S, dout], S * dout, 4 * dout, [m])

    def heads(x):
        # shape arithmetic of the head split, as torch.onnx writes it
        sh = node("Shape", [3], 0, 0, [x])
        c0 = node("Constant", [])
        g0 = node("Gather", [], 0, 0, [sh, c0])
        u0 = node("Unsqueeze", [1], 0, 0, [g0])
        c1 = node("Constant", [1])
        c2 = node("Constant", [1])
        cat = node("Concat", [4], 0, 0, [u0, c1, c2])
        r = node("Reshape", [1, S, NH, H // NH], 0, 0, [x, cat])
        return node("Transpose", [1, NH, S, H // NH], S * H, 0, [r])

    for _ in range(a.layers):
        h = layernorm(x)
        q = heads(linear(h, H, H))
        k = heads(linear(h, H, H))
        v = heads(linear(h, H, H))
        kt = node("Transpose", [1, NH, H // NH, S], S * H, 0, [k])
        s = node("MatMul", [1, NH, S, S], 2 * S * S * H, 0, [q, kt])
        cs = node("Constant", [])
        s = node("Div", [1, NH, S, S], NH * S * S, 0, [s, cs])
        s = node("Softmax", [1, NH, S, S], 5 * NH * S * S, 0, [s])
        o = node("MatMul", [1, NH, S, H // NH], 2 * S * S * H, 0, [s, v])
        o = node("Transpose", [1, S, NH, H // NH], S * H, 0, [o])
        sh = node("Shape", [4], 0, 0, [o])
        cat = node("Concat", [3], 0, 0, [sh])
        o = node("Reshape", [1, S, H], 0, 0, [o, cat])
        o = linear(o, H, H)
        x = node("Add", [1, S, H], S * H, 0, [x, o])
        h = layernorm(x)
        m = linear(h, H, 4 * H)
        c = node("Constant", [])
        d = node("Div", [1, S, 4 * H], 4 * S * H, 0, [m, c])
        er = node("Erf", [1, S, 4 * H], 8 * S * H, 0, [d])
        c1 = node("Constant", [])
        ad = node("Add", [1, S, 4 * H], 4 * S * H, 0, [er, c1])
        mu = node("Mul", [1, S, 4 * H], 4 * S * H, 0, [m, ad])
        c5 = node("Constant", [])
        ge = node("Mul", [1, S, 4 * H], 4 * S * H, 0, [mu, c5])
        m2 = linear(ge, 4 * H, H)
        x = node("Add", [1, S, H], S * H, 0, [x, m2])
    layernorm(x)
    json.dump({"format": "hsdag-graph", "version": 1,
               "meta": {"name": "transformer_%dx%d_%d" % (a.layers, H, S), "source_format": "built"},
               "nodes": nodes, "edges": edges}, sys.stdout, separators=(",", ":"))
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()

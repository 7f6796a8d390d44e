# gen.py - generators of hostile and large inputs for the hostile suite (tests/hostile/hostile.py), one
# function per input family, Python standard library only (ONNX is written as raw protobuf).
# Not here: the cases and their expected outcomes (hostile.py), the bad-input suite of real truncated
# files (tests/cli/badinput.sh).
# Entry points: the generator functions (each returns bytes), onnx_model and its protobuf helpers.
import json


# ---- ONNX as raw protobuf (ModelProto fields: 1 ir_version, 7 graph, 8 opset_import) ----
def _varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _key(field, wire):
    return _varint((field << 3) | wire)


def _vint(field, n):
    return _key(field, 0) + _varint(n)


def _ld(field, b):
    if isinstance(b, str):
        b = b.encode()
    return _key(field, 2) + _varint(len(b)) + b


def onnx_value_info(name, dims, elem=1):
    shape = b"".join(_ld(1, _vint(1, d)) for d in dims)
    return _ld(1, name) + _ld(2, _ld(1, _vint(1, elem) + _ld(2, shape)))


def onnx_node(op, ins, outs, name=""):
    return (b"".join(_ld(1, i) for i in ins) + b"".join(_ld(2, o) for o in outs) +
            (_ld(3, name) if name else b"") + _ld(4, op))


def onnx_initializer(name, dims, elem=1):
    return b"".join(_vint(1, d) for d in dims) + _vint(2, elem) + _ld(8, name)


def onnx_model(nodes, inputs=(), outputs=(), inits=(), value_info=()):
    g = (b"".join(_ld(1, n) for n in nodes) + _ld(2, "g") + b"".join(_ld(5, t) for t in inits) +
         b"".join(_ld(11, i) for i in inputs) + b"".join(_ld(12, o) for o in outputs) +
         b"".join(_ld(13, v) for v in value_info))
    return _vint(1, 8) + _ld(7, g) + _ld(8, _ld(1, "") + _vint(2, 17))


# ---- graphs ----
def tarnawski(n, edges=(), cpu=1.0, accel=2.0, edge_cost=0.1, size=1):
    nodes = [{"id": i, "cpuLatency": cpu, "fpgaLatency": accel, "supportedOnFpga": 1, "size": size}
             for i in range(n)]
    e = [{"sourceId": a, "destId": b, "cost": edge_cost} for a, b in edges]
    return json.dumps({"maxSizePerFPGA": 1e9, "maxFPGAs": 2, "maxCPUs": 1, "nodes": nodes,
                       "edges": e}).encode()


def tarnawski_glpk_scale():
    """In-range costs from 1e-300 to 1e12 ms side by side: GLPK's scaling aborted ("invalid scale factor")."""
    c = [(1e3, 1e6, 1, 0), (1e12, 1e-6, 1, 0), (1e9, 1e6, 1, 1), (1e6, 1e-300, 1, 0), (1e12, 1e6, 1, 1e18),
         (1, 1e-300, 0, 0), (1e6, 1e-300, 1, 1e9), (1e-300, 1e9, 0, 1), (1e-12, 1e-300, 1, 0)]
    nodes = [{"id": i, "cpuLatency": a, "fpgaLatency": b, "supportedOnFpga": f, "size": z}
             for i, (a, b, f, z) in enumerate(c)]
    nodes[0]["colorClass"] = 1
    edges = [{"sourceId": 1, "destId": 2, "cost": 1e3}, {"sourceId": 2, "destId": 6, "cost": 1e9},
             {"sourceId": 2, "destId": 7, "cost": 1e-6, "size": 1}, {"sourceId": 4, "destId": 7, "cost": 1e12, "size": 1e18},
             {"sourceId": 5, "destId": 8, "cost": 1e-300}]
    return json.dumps({"maxSizePerFPGA": 1e18, "maxFPGAs": 3, "maxCPUs": 1, "nodes": nodes, "edges": edges}).encode()


def msct_simplex_stall():
    """7 ops with 1e18-byte tensors beside 1e-300 ms transfers (found by fuzz_compare): with no iteration
    limit GLPK's simplex ran for minutes on m-SCT's LP (cpu-4gpu, concurrent)."""
    nodes = [('v0', 'Softmax', ['no_accel'], 1000000000000000.0, None, -1), ('v1', 'Constant', ['bookkeeping'], 1000000000000, 4096, 2), ('v2', 'Weird', ['unknown_op', 'no_accel'], 0, None, -1), ('v3', 'Conv', [], 0, None, 1), ('v4', 'Conv', [], 0, 1, 2), ('v5', 'Softmax', [], 0, None, -1), ('v6', 'Constant', ['bookkeeping', 'no_accel'], 1000000, None, -1)]
    edges = [(0, 3, 1000000000000000.0, None), (0, 6, 1e+18, None), (1, 2, 1000000000, None), (1, 3, 1e+18, None), (1, 4, 1e+18, None), (1, 6, 1, None), (2, 3, 1000000000, 1000000000000), (2, 4, 0, 1), (2, 6, 0, 1), (3, 4, 1, 1e-300), (3, 6, 4096, 1e-12), (4, 5, 4096, None), (4, 6, 1000000000000000.0, None)]
    nd = [{"name": a, "op": b, "flags": [f for f in c if f != "bookkeeping" and f != "unknown_op"], "flops": d,
           "mem_bytes": m, "color": k} for a, b, c, d, m, k in nodes]
    ed = [{"src": a, "dst": b, "bytes": x, "cost_ms": c} for a, b, x, c in edges]
    return json.dumps({"format": "hsdag-graph", "version": 1, "nodes": nd, "edges": ed}).encode()


def hsdag_json(n, edges=(), cost=None, flops=None, bytes_=1.0, outputs=False):
    nodes = []
    for i in range(n):
        nd = {"name": "n%d" % i, "op": "Relu"}
        if cost is not None:
            nd["cost_ms"] = {"cpu": cost, "accel": cost, "bwd": None}
        if flops is not None:
            nd["flops"] = flops
        if outputs:
            nd["outputs"] = [{"dtype": "f32", "shape": [1, 64, 56, 56]}]
        nodes.append(nd)
    e = [{"src": a, "dst": b, "bytes": bytes_} for a, b in edges]
    return json.dumps({"format": "hsdag-graph", "version": 1, "nodes": nodes, "edges": e},
                      separators=(",", ":")).encode()


def hsdag_json_raw_cost(text):
    """Two nodes, the first with cost_ms.cpu given as raw JSON text (1e300, 1.7e308, 1e999 ...)."""
    return ('{"format":"hsdag-graph","version":1,"nodes":[{"name":"a","op":"Relu","cost_ms":{"cpu":%s,'
            '"accel":1}},{"name":"b","op":"Relu","cost_ms":{"cpu":1,"accel":1}}],'
            '"edges":[{"src":0,"dst":1,"bytes":4}]}' % text).encode()


def pipedream_chain(n, fwd="1.0"):
    lines = ["node%d -- ReLU(inplace) -- forward_compute_time=%s, backward_compute_time=1.0, "
             "activation_size=4096.0, parameter_size=0.0" % (i + 1, fwd if i == 0 else "1.0")
             for i in range(n)]
    lines += ["\tnode%d -- node%d" % (i + 1, i + 2) for i in range(n - 1)]
    return ("\n".join(lines) + "\n").encode()


def pipedream_fanout(n, fanin=False):
    """node1 -> node2..node(n+1) (and, with fanin, all of them -> node(n+2)): the RAMP lookahead's worst shape."""
    m = n + (2 if fanin else 1)
    lines = ["node%d -- ReLU(inplace) -- forward_compute_time=1.0, backward_compute_time=1.0, "
             "activation_size=4096.0, parameter_size=0.0" % (i + 1) for i in range(m)]
    lines += ["\tnode1 -- node%d" % (i + 2) for i in range(n)]
    if fanin:
        lines += ["\tnode%d -- node%d" % (i + 2, n + 2) for i in range(n)]
    return ("\n".join(lines) + "\n").encode()


def pipedream_compact(n, edges):
    """n ops of 1 ms each way (split 16 ways by the RAMP lookahead) in the shortest lines, and the edges."""
    lines = ["node%d -- R -- forward_compute_time=1, backward_compute_time=1, activation_size=1, "
             "parameter_size=0" % (i + 1) for i in range(n)]
    lines += ["\tnode%d -- node%d" % (u + 1, v + 1) for u, v in edges]
    return ("\n".join(lines) + "\n").encode()


def dot_chain(n):
    return ("digraph g {\n" + "".join('"%d n%d" [id=%d, type=Conv];\n' % (i, i, i) for i in range(n)) +
            "".join('"%d n%d" -> "%d n%d" [label="[1, 64, 56, 56]"];\n' % (i, i, i + 1, i + 1)
                    for i in range(n - 1)) + "}\n").encode()


def dot_duplicate_edges(n):
    return ("digraph {\n" + "a -> b;\n" * n + "}\n").encode()


def dot_subgraph_product(k):
    a = " ".join("a%d" % i for i in range(k))
    b = " ".join("b%d" % i for i in range(k))
    return ("digraph { {%s} -> {%s} }\n" % (a, b)).encode()


def dot_nodelist_product(k):
    a = ",".join("a%d" % i for i in range(k))
    b = ",".join("b%d" % i for i in range(k))
    return ("digraph { %s -> %s }\n" % (a, b)).encode()


def dot_named_subgraph_reuse(k, reps):
    body = " ".join("s%d" % i for i in range(k))
    return ("digraph { subgraph s {%s}\n" % body +
            "subgraph s {} -> subgraph s {}\n" * reps + "}\n").encode()


def dot_attribute_slots(names, nodes):
    a = " ".join("a%d=1" % i for i in range(names))
    return ("digraph { node [%s]; %s }\n" % (a, " ".join("n%d;" % i for i in range(nodes)))).encode()


def dot_deep(depth):
    return ("digraph { " + "{ " * depth + "a" + " }" * depth + " }\n").encode()


def dot_long_identifier(n):
    return ('digraph { "' + "x" * n + '" -> b }\n').encode()


def ovxml_chain(n):
    layers, edges = [], []
    for i in range(n):
        t = "Parameter" if i == 0 else "ReLU"
        inp = "" if i == 0 else ('<input><port id="0" precision="FP32"><dim>1</dim><dim>64</dim></port>'
                                 '</input>')
        layers.append('<layer id="%d" name="l%d" type="%s" version="opset1">%s<output><port id="1" '
                      'precision="FP32"><dim>1</dim><dim>64</dim></port></output></layer>' % (i, i, t, inp))
        if i:
            edges.append('<edge from-layer="%d" from-port="1" to-layer="%d" to-port="0"/>' % (i - 1, i))
    return ('<?xml version="1.0"?>\n<net name="chain" version="11"><layers>' + "\n".join(layers) +
            "</layers><edges>" + "\n".join(edges) + "</edges></net>\n").encode()


def ovxml_attributes(n):
    a = " ".join('a%d="1"' % i for i in range(n))
    return ('<?xml version="1.0"?>\n<net name="x" version="10"><layers><layer id="0" name="a" '
            'type="Parameter" version="opset1" %s/></layers><edges/></net>\n' % a).encode()


def ovxml_encoding(enc):
    return ('<?xml version="1.0" encoding="%s"?>\n<net name="x" version="10"><layers/><edges/></net>\n'
            % enc).encode()


def ovxml_utf16():
    return ('<?xml version="1.0" encoding="UTF-16"?>\n<net name="x" version="10"><layers/><edges/>'
            '</net>\n').encode("utf-16")


def onnx_sum(k, weights=False):
    ins = ["i%d" % i for i in range(k)]
    node = _ld(1, onnx_node("Sum", ins, ["y"], "s"))
    if weights:
        tail = _vint(1, 4) + _vint(2, 1)  # dims [4], float
        inits = b"".join(_ld(5, tail + _ld(8, x)) for x in ins)
        g = node + _ld(2, "g") + inits + _ld(12, onnx_value_info("y", [4]))
    else:
        ty = _ld(2, _ld(1, _vint(1, 1) + _ld(2, _ld(1, _vint(1, 4)))))  # the type of every input, once
        g = node + _ld(2, "g") + b"".join(_ld(11, _ld(1, x) + ty) for x in ins) + _ld(12, onnx_value_info("y", [4]))
    return _vint(1, 8) + _ld(7, g) + _ld(8, _ld(1, "") + _vint(2, 17))


def onnx_chain(n):
    nodes = [onnx_node("Relu", ["t%d" % i], ["t%d" % (i + 1)], "r%d" % i) for i in range(n)]
    vi = [onnx_value_info("t%d" % i, [1, 64]) for i in range(1, n)]
    return onnx_model(nodes, inputs=[onnx_value_info("t0", [1, 64])],
                      outputs=[onnx_value_info("t%d" % n, [1, 64])], value_info=vi)


# ---- devices, placements, profiles ----
def devices(n=2, name_of=lambda i: "D%d" % i, peak=1e12, bw=1e11, link_bw=1e10, set_name="hostile"):
    devs = [{"name": name_of(i), "kind": "cpu" if i == 0 else "gpu", "peak_flops": peak, "mem_bandwidth": bw}
            for i in range(n)]
    links = [{"from": name_of(a), "to": name_of(b), "symmetric": True, "latency_s": 1e-5, "bandwidth": link_bw}
             for a in range(n) for b in range(a + 1, n)]
    return json.dumps({"name": set_name, "devices": devs, "links": links}).encode()


def placement(nodes, device, fmt="hsdag-placement", set_name="cpu-gpu"):
    return json.dumps({"format": fmt, "devices": set_name,
                       "placement": {nd: device for nd in nodes}}).encode()


def profile(nodes, devs):
    return ("node,device,ms\n" + "".join("%s,%s,0.5\n" % (nd, d) for nd in nodes for d in devs)).encode()

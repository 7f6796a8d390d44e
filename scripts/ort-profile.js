#!/usr/bin/env node
// ort-profile.js - the ONNX Runtime bridge of `hsdag profile`: runs one ONNX model on this machine's CPU with
// onnxruntime-node and prints what it measured as one JSON object (schema: docs/devices.md, "Measuring this CPU").
// Weights of weight-free exports become random initializers first (--weights constants), as in a deployed model.
// Not here: writing the profile CSV, comparing shapes or fitting devices (the hsdag library does that from
// this script's JSON); no network, no files written except ORT's trace and optimised model in a temporary
// directory (removed on exit).
// Entry point: node ort-profile.js --model M.onnx [--runs N] [--warmup W] [--threads T] [--opt all|extended|
//              basic|disabled] [--clock wall|cpu] [--weights constants|inputs] [--check-shapes] [--seed S];  node ort-profile.js --probe (exit 3: no runtime)
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');

// ---- finding onnxruntime-node: $HSDAG_ORT_MODULES, beside this script, the install-deps prefix, node's own
// resolution ----
function loadOrt() {
    const only = process.env.HSDAG_ORT_MODULES; // when set, the only place looked at
    const dirs = only ? [only] : [path.join(__dirname, 'node_modules'),
                                  path.join(__dirname, '..', '..', 'lib', 'hsdag-ort', 'node_modules'),
                                  '/usr/local/lib/hsdag-ort/node_modules'];
    for (const d of dirs) {
        const p = path.join(d, 'onnxruntime-node');
        if (fs.existsSync(p)) return require(p);
    }
    try {
        if (only) throw new Error('not found');
        return require('onnxruntime-node');
    } catch (e) {
        fail(3, 'ONNX Runtime is not installed (onnxruntime-node not found in ' + dirs.join(', ') +
                    '; run scripts/install-deps or set HSDAG_ORT_MODULES)');
    }
}

function fail(code, msg) {
    process.stderr.write('ort-profile: ' + msg + '\n');
    process.exit(code);
}

// ---- minimal protobuf reader for the few ONNX fields needed (node names, op types, tensor names) ----
function readVarint(buf, pos) {
    let x = 0, mul = 1, b;
    do {
        if (pos.i >= buf.length) throw new Error('truncated varint');
        b = buf[pos.i++];
        x += (b & 0x7f) * mul;
        mul *= 128;
    } while (b & 0x80);
    return x;
}

// Calls fn(field, wiretype, value) for each field of the message buf[start, end); value is a subarray for
// length-delimited fields, a number for varints.
function fields(buf, fn) {
    const pos = {i: 0};
    while (pos.i < buf.length) {
        const key = readVarint(buf, pos), f = Math.floor(key / 8), wt = key & 7;
        if (wt === 0) fn(f, wt, readVarint(buf, pos));
        else if (wt === 1) pos.i += 8;
        else if (wt === 5) pos.i += 4;
        else if (wt === 2) {
            const n = readVarint(buf, pos);
            fn(f, wt, buf.subarray(pos.i, pos.i + n));
            pos.i += n;
        } else throw new Error('bad wire type ' + wt);
    }
}

const str = (b) => Buffer.from(b).toString('utf8');

// Returns {nodes: [{name, op, domain, inputs, outputs}], inits: Set, inputs: Set}.
function readGraph(file) {
    const model = fs.readFileSync(file);
    let graph = null;
    fields(model, (f, wt, v) => {
        if (f === 7 && wt === 2) graph = v;
    });
    if (!graph) throw new Error('no graph');
    const g = {nodes: [], inits: new Set(), inputs: new Set()};
    fields(graph, (f, wt, v) => {
        if (wt !== 2) return;
        if (f === 1) {
            const n = {name: '', op: '', domain: '', inputs: [], outputs: []};
            fields(v, (nf, nwt, nv) => {
                if (nwt !== 2) return;
                if (nf === 1) n.inputs.push(str(nv));
                else if (nf === 2) n.outputs.push(str(nv));
                else if (nf === 3) n.name = str(nv);
                else if (nf === 4) n.op = str(nv);
                else if (nf === 7) n.domain = str(nv);
            });
            g.nodes.push(n);
        } else if (f === 5) {
            fields(v, (tf, twt, tv) => {
                if (tf === 8 && twt === 2) g.inits.add(str(tv));
            });
        } else if (f === 11) {
            fields(v, (tf, twt, tv) => {
                if (tf === 1 && twt === 2) g.inputs.add(str(tv));
            });
        }
    });
    return g;
}

// ---- weights as constants: graph inputs that are weights become initializers with random values ----
// Spans [start, end) of each top-level field of a message, with its field number.
function spans(buf) {
    const out = [], pos = {i: 0};
    while (pos.i < buf.length) {
        const start = pos.i, key = readVarint(buf, pos), f = Math.floor(key / 8), wt = key & 7;
        if (wt === 0) readVarint(buf, pos);
        else if (wt === 1) pos.i += 8;
        else if (wt === 5) pos.i += 4;
        else if (wt === 2) {
            const n = readVarint(buf, pos); // (not pos.i += readVarint(): that adds to the old pos.i)
            pos.i += n;
        } else throw new Error('bad wire type ' + wt);
        out.push({f, start, end: pos.i});
    }
    return out;
}

function varint(n) {
    const b = [];
    do {
        let c = n % 128;
        n = Math.floor(n / 128);
        if (n > 0) c |= 128;
        b.push(c);
    } while (n > 0);
    return Buffer.from(b);
}

const lenField = (f, payload) => Buffer.concat([varint(f * 8 + 2), varint(payload.length), payload]);

// A float32 TensorProto: dims (1), data_type (2) = FLOAT, name (8), raw_data (9).
function tensorProto(name, shape, data) {
    const parts = shape.map((d) => Buffer.concat([varint(8), varint(d)]));
    parts.push(Buffer.from([16, 1]));
    parts.push(lenField(8, Buffer.from(name, 'utf8')));
    parts.push(lenField(9, Buffer.from(data.buffer, data.byteOffset, data.byteLength)));
    return Buffer.concat(parts);
}

// Slot 0 of these ops (and slot 1 of Gather*) holds activations, so a graph input there is data, not a weight
// (the rule of hsdag's ONNX reader, src/io/onnx.c, "which graph inputs are weights").
const ACT_OPS = new Set(['Conv', 'ConvTranspose', 'ConvInteger', 'MatMul', 'MatMulInteger', 'Gemm', 'MaxPool',
    'AveragePool', 'LpPool', 'GlobalAveragePool', 'GlobalMaxPool', 'GlobalLpPool', 'BatchNormalization',
    'InstanceNormalization', 'LayerNormalization', 'GroupNormalization', 'LRN', 'MeanVarianceNormalization',
    'LpNormalization', 'Softmax', 'LogSoftmax', 'Hardmax', 'ReduceMean', 'ReduceSum', 'ReduceMax', 'ReduceMin',
    'ReduceProd', 'ReduceL1', 'ReduceL2', 'ReduceLogSum', 'ReduceLogSumExp', 'ReduceSumSquare', 'ArgMax', 'ArgMin']);

function weightNames(orig, meta) {
    const act = new Set();
    for (const n of orig.nodes) {
        if (ACT_OPS.has(n.op) && n.inputs[0]) act.add(n.inputs[0]);
        if (n.op.startsWith('Gather') && n.inputs[1]) act.add(n.inputs[1]);
    }
    const isData = (m) => m.type !== 'float32' || m.shape.some((d) => typeof d !== 'number' || d < 0) ||
                          act.has(m.name);
    const ins = meta.filter((m) => !orig.inits.has(m.name));
    const data = new Set(ins.filter(isData).map((m) => m.name));
    if (!data.size && ins.length) data.add(ins[0].name);
    return ins.filter((m) => !data.has(m.name));
}

// The model with every weight input turned into an initializer: uniform in +-1/sqrt(fan-in), 1-D tensors (biases,
// norm scales and variances) in [0.5, 1.5) so that variances stay positive.
function withConstWeights(file, weights, seed) {
    const model = fs.readFileSync(file), rand = rng(seed + 7);
    const ms = spans(model), gs = ms.find((x) => x.f === 7);
    if (!gs) throw new Error('no graph');
    const gpos = {i: gs.start};
    readVarint(model, gpos);
    const glen = readVarint(model, gpos), graph = model.subarray(gpos.i, gpos.i + glen);
    const drop = new Set(weights.map((w) => w.name)), parts = [];
    for (const sp of spans(graph)) {
        const raw = graph.subarray(sp.start, sp.end);
        if (sp.f === 11) { // graph.input: keep data inputs only
            let name = '';
            const p = {i: sp.start};
            readVarint(graph, p);
            const n = readVarint(graph, p);
            fields(graph.subarray(p.i, p.i + n), (f, wt, v) => {
                if (f === 1 && wt === 2) name = str(v);
            });
            if (drop.has(name)) continue;
        }
        parts.push(raw);
    }
    for (const w of weights) {
        const n = w.shape.reduce((a, b) => a * b, 1), data = new Float32Array(n);
        if (w.shape.length <= 1) {
            for (let i = 0; i < n; i++) data[i] = 0.5 + rand();
        } else {
            const sc = 1 / Math.sqrt(Math.max(1, n / w.shape[0]));
            for (let i = 0; i < n; i++) data[i] = (2 * rand() - 1) * sc;
        }
        parts.push(lenField(5, tensorProto(w.name, w.shape, data)));
    }
    const out = [];
    for (const sp of ms) out.push(sp.f === 7 ? lenField(7, Buffer.concat(parts)) : model.subarray(sp.start, sp.end));
    return new Uint8Array(Buffer.concat(out));
}

// ---- inputs: random tensors of the declared shapes (symbolic dims = 1) ----
function rng(seed) {
    let s = (seed >>> 0) || 1;
    return () => {
        s ^= s << 13;
        s >>>= 0;
        s ^= s >>> 17;
        s ^= s << 5;
        s >>>= 0;
        return s / 4294967296;
    };
}

function makeFeeds(ort, session, seed) {
    const rand = rng(seed), feeds = {};
    for (const m of session.inputMetadata) {
        if (!m.isTensor) fail(2, 'input \'' + m.name + '\' is not a tensor');
        const shape = m.shape.map((d) => (typeof d === 'number' && d >= 0 ? d : 1));
        const n = shape.reduce((a, b) => a * b, 1);
        let data;
        switch (m.type) {
        case 'float32':
            data = new Float32Array(n);
            for (let i = 0; i < n; i++) data[i] = rand() - 0.5;
            break;
        case 'float64':
            data = new Float64Array(n);
            for (let i = 0; i < n; i++) data[i] = rand() - 0.5;
            break;
        case 'int64':
            data = new BigInt64Array(n); // zeros: valid indices for any Gather table
            break;
        case 'int32':
            data = new Int32Array(n);
            break;
        case 'bool':
            data = new Uint8Array(n);
            break;
        default:
            fail(2, 'input \'' + m.name + '\' has type ' + m.type + ', which this bridge cannot feed');
        }
        feeds[m.name] = new ort.Tensor(m.type, data, shape);
    }
    return feeds;
}

function median(xs) {
    if (!xs.length) return 0;
    const s = xs.slice().sort((a, b) => a - b), h = s.length >> 1;
    return s.length % 2 ? s[h] : (s[h - 1] + s[h]) / 2;
}

// ops ORT's optimiser eliminates outright: never counted as fused into a neighbour
const REMOVABLE = new Set(['Identity', 'Dropout']);
// the op that carries a fused kernel's time when it is one of the kernel's nodes
const MAIN_OPS = new Set(['Conv', 'ConvTranspose', 'MatMul', 'Gemm', 'ConvInteger', 'MatMulInteger']);

// ---- attribution of ORT's kernels to the original nodes (docs/devices.md, "Measuring this CPU") ----
// A kernel anchors the original node of the same name, else the node whose output tensor it produces, else the
// node whose name (or output tensor's name) starts the kernel's name (fusions append "/FusionName/...", NCHWc
// kernels are named "<tensor>_nchwc"). A node ORT does not run is "folded" (all inputs constant, or Shape/Size),
// "fused" (into its producer's kernel when that kernel changed op and starts with a Conv/MatMul/Gemm, else into
// its consumer's kernel), else "removed". A fused kernel's time goes to its Conv/MatMul/Gemm node when it has one.
// Kernels that anchor nothing (layout reorders) give their time to the nearest anchored kernel downstream (else
// upstream).
function attribute(orig, opt, kernelMs) {
    const nameIdx = new Map(), tensorProducer = new Map();
    orig.nodes.forEach((n, i) => {
        if (n.name && !nameIdx.has(n.name)) nameIdx.set(n.name, i);
        n.outputs.forEach((t) => t && tensorProducer.set(t, i));
    });
    const anchorOf = new Array(orig.nodes.length).fill(-1); // original node -> kernel index
    const kAnchor = opt.nodes.map((k, ki) => {
        let a = k.name && nameIdx.has(k.name) ? nameIdx.get(k.name) : -1;
        if (a >= 0 && anchorOf[a] >= 0) a = -1;
        if (a < 0)
            for (const t of k.outputs) {
                const p = tensorProducer.get(t);
                if (p !== undefined && anchorOf[p] < 0 && orig.nodes[p].outputs[0] === t) {
                    a = p;
                    break;
                }
            }
        if (a < 0 && k.name) { // a fusion's name: the original name + "/FusionName/..." or "_suffix"
            for (let j = k.name.length - 1; j > 0 && a < 0; j--)
                if ((k.name[j] === '/' || k.name[j] === '_') && nameIdx.has(k.name.slice(0, j))) a = nameIdx.get(k.name.slice(0, j));
            // NCHWc kernels are named after the original output tensor: "<tensor>_nchwc"
            for (let j = k.name.length - 1; j > 0 && a < 0; j--)
                if (k.name[j] === '_' && tensorProducer.has(k.name.slice(0, j))) a = tensorProducer.get(k.name.slice(0, j));
        }
        if (a >= 0 && anchorOf[a] < 0) anchorOf[a] = ki;
        return a;
    });
    // orphan kernels: follow produced tensors to consumers (then inputs to producers) until an anchored one
    const optProducer = new Map(), optConsumers = new Map();
    opt.nodes.forEach((k, ki) => {
        k.outputs.forEach((t) => optProducer.set(t, ki));
        k.inputs.forEach((t) => {
            if (!optConsumers.has(t)) optConsumers.set(t, []);
            optConsumers.get(t).push(ki);
        });
    });
    const target = opt.nodes.map((k, ki) => (kAnchor[ki] >= 0 ? ki : -1));
    const resolve = (ki, dir, seen) => {
        if (target[ki] >= 0) return target[ki];
        if (seen.has(ki)) return -1;
        seen.add(ki);
        const next = [];
        if (dir > 0) opt.nodes[ki].outputs.forEach((t) => next.push(...(optConsumers.get(t) || [])));
        else opt.nodes[ki].inputs.forEach((t) => optProducer.has(t) && next.push(optProducer.get(t)));
        for (const n of next) {
            const r = resolve(n, dir, seen);
            if (r >= 0) return r;
        }
        return -1;
    };
    const into = opt.nodes.map((k, ki) => {
        if (target[ki] >= 0) return ki;
        let r = resolve(ki, 1, new Set());
        if (r < 0) r = resolve(ki, -1, new Set());
        return r;
    });
    // node statuses
    const status = orig.nodes.map((n, i) => (anchorOf[i] >= 0 ? 'kernel' : ''));
    const fusedInto = new Array(orig.nodes.length).fill(-1);
    const constant = new Set(orig.inits);
    orig.nodes.forEach((n, i) => {
        if (status[i]) return;
        const folded = n.op === 'Constant' || n.op === 'Shape' || n.op === 'Size' ||
                       n.inputs.every((t) => !t || constant.has(t));
        if (folded) {
            status[i] = 'folded';
            n.outputs.forEach((t) => constant.add(t));
        }
    });
    // fused: a node ORT did not run joins the kernel of its producer when that kernel changed op or domain and is
    // anchored on a Conv/MatMul/Gemm (Conv -> Relu into FusedConv), else the kernel of its consumer (the pieces of
    // a LayerNormalization, the Conv of an NCHWc kernel named after its Relu)
    const changed = (i) => {
        const k = opt.nodes[anchorOf[i]];
        return k.op !== orig.nodes[i].op || k.domain !== orig.nodes[i].domain;
    };
    const rootOf = (p) => (status[p] === 'kernel' ? (changed(p) ? p : -1) : status[p] === 'fused' ? fusedInto[p] : -1);
    const consumers = new Map();
    orig.nodes.forEach((n, i) => n.inputs.forEach((t) => {
        if (!consumers.has(t)) consumers.set(t, []);
        consumers.get(t).push(i);
    }));
    const candidate = (i) => !status[i] && !REMOVABLE.has(orig.nodes[i].op);
    for (let i = 0; i < orig.nodes.length; i++) {
        if (!candidate(i)) continue;
        for (const t of orig.nodes[i].inputs) {
            const p = tensorProducer.get(t);
            const r = p === undefined ? -1 : rootOf(p);
            // forward only from a kernel that starts with its main op (FusedConv keeps the Conv's name); a kernel
            // named after the last node of its chain (NCHWc: "<Relu output>_nchwc") takes its nodes backwards
            // and a Conv/MatMul never joins an earlier kernel: ORT's fusions start at it
            if (r >= 0 && (!MAIN_OPS.has(orig.nodes[r].op) || MAIN_OPS.has(orig.nodes[i].op))) continue;
            if (r >= 0) {
                status[i] = 'fused';
                fusedInto[i] = r;
                break;
            }
        }
    }
    for (let i = orig.nodes.length - 1; i >= 0; i--) {
        if (!candidate(i)) continue;
        for (const t of orig.nodes[i].outputs)
            for (const c of consumers.get(t) || []) {
                const r = status[i] ? -1 : rootOf(c);
                if (r >= 0) {
                    status[i] = 'fused';
                    fusedInto[i] = r;
                }
            }
    }
    orig.nodes.forEach((n, i) => {
        if (!status[i]) status[i] = 'removed';
    });
    // the kernel's time goes to its main op: a Conv fused with its Relu is timed on the Conv even when ORT named
    // the kernel after the Relu's output (NCHWc)
    const kernelOf = anchorOf.slice();
    const members = new Map();
    fusedInto.forEach((r, i) => r >= 0 && (members.get(r) || members.set(r, []).get(r)).push(i));
    for (const [a, ms] of members) {
        if (MAIN_OPS.has(orig.nodes[a].op)) continue;
        const b = ms.find((i) => MAIN_OPS.has(orig.nodes[i].op));
        if (b === undefined) continue;
        for (const i of ms) fusedInto[i] = b;
        fusedInto[b] = -1;
        fusedInto[a] = b;
        status[b] = 'kernel';
        status[a] = 'fused';
        kernelOf[b] = anchorOf[a];
        kernelOf[a] = -1;
        for (let ki = 0; ki < kAnchor.length; ki++)
            if (kAnchor[ki] === a) kAnchor[ki] = b;
    }
    // times: a kernel's median goes to its anchor; an orphan's to the anchor of its target
    const ms = new Array(orig.nodes.length).fill(0);
    const orphans = [];
    opt.nodes.forEach((k, ki) => {
        const t = kernelMs.get(k.name);
        if (t === undefined) return;
        const tk = into[ki];
        if (tk < 0) {
            orphans.push({kernel: k.name, op: k.op, ms: t, into: -1});
            return;
        }
        ms[kAnchor[tk]] += t;
        if (tk !== ki) orphans.push({kernel: k.name, op: k.op, ms: t, into: kAnchor[tk]});
    });
    const nodes = orig.nodes.map((n, i) => ({
        i,
        name: n.name,
        op: n.op,
        status: status[i],
        kernel: kernelOf[i] >= 0 ? opt.nodes[kernelOf[i]].op : '',
        into: fusedInto[i],
        ms: ms[i],
    }));
    return [nodes, orphans];
}

// Kernel events of a Chrome trace grouped by timed run (the last `runs` model_run windows): per kernel the median
// of its per-run time; with cpu (per-run CPU times of those runs) the medians are scaled by one factor so that their
// sum is the median over runs of the kernels' share of the run's CPU time (per-kernel scaling by each run's own
// CPU/wall ratio would undercount: a kernel's median run is its least disturbed one).
function kernelTimes(trace, runs, cpu) {
    const windows = trace.filter((e) => e.cat === 'Session' && e.name === 'model_run');
    windows.sort((a, b) => a.ts - b.ts);
    const timed = windows.slice(Math.max(0, windows.length - runs));
    const per = new Map(), shapes = new Map(), sums = new Array(timed.length).fill(0);
    for (const e of trace) {
        if (e.cat !== 'Node' || !e.name.endsWith('_kernel_time')) continue;
        const r = timed.findIndex((w) => e.ts >= w.ts && e.ts <= w.ts + w.dur);
        const name = e.name.slice(0, -'_kernel_time'.length);
        if (e.args && e.args.output_type_shape && !shapes.has(name))
            shapes.set(name, {index: Number(e.args.node_index), out: e.args.output_type_shape.map((o) => {
                const v = Object.values(o)[0];
                return Array.isArray(v) ? v : null;
            })});
        if (r < 0) continue;
        if (!per.has(name)) per.set(name, new Array(timed.length).fill(0));
        per.get(name)[r] += e.dur / 1000;
        sums[r] += e.dur / 1000;
    }
    const med = new Map();
    let total = 0;
    for (const [k, v] of per) {
        med.set(k, median(v));
        total += med.get(k);
    }
    if (cpu && total > 0) {
        const share = timed.map((w, r) => (cpu[r] * sums[r]) / (w.dur / 1000));
        const f = median(share) / total;
        for (const [k, v] of med) med.set(k, v * f);
    }
    return {med, shapes, runs: timed.map((w) => w.dur / 1000)};
}

function parseArgs(argv) {
    const a = {runs: 10, warmup: 3, threads: 1, opt: 'all', checkShapes: false, seed: 1, model: null, clock: 'wall',
               weights: 'constants'};
    for (let i = 0; i < argv.length; i++) {
        const k = argv[i], v = argv[i + 1];
        const num = (lo, hi) => {
            const x = Number(v);
            if (!Number.isInteger(x) || x < lo || x > hi) fail(2, 'bad value \'' + v + '\' for ' + k);
            i++;
            return x;
        };
        if (k === '--model') a.model = v, i++;
        else if (k === '--runs') a.runs = num(1, 100000);
        else if (k === '--warmup') a.warmup = num(0, 100000);
        else if (k === '--threads') a.threads = num(0, 1024);
        else if (k === '--seed') a.seed = num(0, 4294967295);
        else if (k === '--opt') {
            if (!['all', 'extended', 'basic', 'disabled'].includes(v)) fail(2, 'bad --opt \'' + v + '\'');
            a.opt = v, i++;
        } else if (k === '--clock') {
            if (!['wall', 'cpu'].includes(v)) fail(2, 'bad --clock \'' + v + '\'');
            a.clock = v, i++;
        } else if (k === '--weights') {
            if (!['constants', 'inputs'].includes(v)) fail(2, 'bad --weights \'' + v + '\'');
            a.weights = v, i++;
        } else if (k === '--check-shapes') a.checkShapes = true;
        else fail(2, 'unknown option \'' + k + '\'');
    }
    if (!a.model) fail(2, 'no --model');
    return a;
}

// Times runs by the wall clock and by the process's CPU time (user + system, all threads): with one intra-op
// thread the CPU time is the run's latency without the time other processes held the core. The sessions take
// turns run by run, so that all of them see the same load on a shared machine.
async function timeRuns(sessions, feeds, warmup, runs) {
    for (let i = 0; i < warmup; i++)
        for (const s of sessions) await s.run(feeds);
    const res = sessions.map(() => ({wall: [], cpu: []}));
    for (let i = 0; i < runs; i++)
        for (let j = 0; j < sessions.length; j++) {
            const c0 = process.cpuUsage(), t0 = process.hrtime.bigint();
            await sessions[j].run(feeds);
            const t1 = process.hrtime.bigint(), c1 = process.cpuUsage(c0);
            res[j].wall.push(Number(t1 - t0) / 1e6);
            res[j].cpu.push((c1.user + c1.system) / 1000);
        }
    return res;
}

async function main() {
    if (process.argv[2] === '--probe') { // is the runtime usable? prints its version
        const ort = loadOrt();
        process.stdout.write('onnxruntime-node ' + (ort.env.versions.node || '?') + ', node ' + process.versions.node + '\n');
        return;
    }
    const a = parseArgs(process.argv.slice(2));
    const ort = loadOrt();
    const t0 = Date.now();
    let orig;
    try {
        orig = readGraph(a.model);
    } catch (e) {
        fail(2, a.model + ': cannot read the ONNX graph: ' + e.message);
    }
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'hsdag-ort-'));
    process.on('exit', () => fs.rmSync(tmp, {recursive: true, force: true})); // also after fail()
    const base = {
        intraOpNumThreads: a.threads,
        interOpNumThreads: 1,
        executionMode: 'sequential',
        logSeverityLevel: 3,
        graphOptimizationLevel: a.opt,
        extra: {session: {set_denormal_as_zero: '1'}},
    };
    const out = {format: 'hsdag-ort-profile', version: 1, ort_version: ort.env.versions.node || '',
                 node_version: process.versions.node, threads: a.threads, runs: a.runs, warmup: a.warmup,
                 opt: a.opt};
    try {
        // end-to-end latency from a session without profiling; per-kernel times, and the optimised graph for
        // the attribution, from a profiling one; the two alternate run by run
        const optFile = path.join(tmp, 'optimized.onnx');
        let model = a.model;
        out.weights = a.weights;
        if (a.weights === 'constants') { // deployed models hold their weights: ORT prepacks and folds them
            const probe = await ort.InferenceSession.create(a.model, Object.assign({}, base, {graphOptimizationLevel: 'disabled'}));
            const w = weightNames(orig, probe.inputMetadata);
            await probe.release();
            out.weight_inputs = w.length;
            if (w.length) model = withConstWeights(a.model, w, a.seed);
        }
        const s = await ort.InferenceSession.create(model, base);
        const sp = await ort.InferenceSession.create(model, Object.assign({}, base, {
            enableProfiling: true, profileFilePrefix: path.join(tmp, 'trace'), optimizedModelFilePath: optFile,
            extra: {session: {set_denormal_as_zero: '1',
                              'optimized_model_external_initializers_file_name': 'weights.bin',
                              'optimized_model_external_initializers_min_size_in_bytes': '256'}}}));
        const feeds = makeFeeds(ort, s, a.seed);
        const [e2e, prof] = await timeRuns([s, sp], feeds, a.warmup, a.runs);
        out.run_ms = e2e.wall;
        out.run_cpu_ms = e2e.cpu;
        out.clock = a.clock;
        out.median_wall_ms = median(e2e.wall);
        out.median_cpu_ms = median(e2e.cpu);
        out.median_ms = a.clock === 'cpu' ? out.median_cpu_ms : out.median_wall_ms;
        const traceFile = sp.endProfiling() || fs.readdirSync(tmp).filter((f) => f.startsWith('trace'))
                                                   .map((f) => path.join(tmp, f))[0];
        await s.release();
        await sp.release();
        const kt = kernelTimes(JSON.parse(fs.readFileSync(traceFile, 'utf8')), a.runs, a.clock === 'cpu' ? prof.cpu : null);
        out.profiled_run_ms = kt.runs;
        const [nodes, orphans] = attribute(orig, readGraph(optFile), kt.med);
        out.kernel_ms = 0;
        for (const v of kt.med.values()) out.kernel_ms += v;
        out.nodes = nodes;
        out.orphan_kernels = orphans;
        if (a.checkShapes) {
            // every original node as one kernel: its output shapes as ORT computed them
            const sc = await ort.InferenceSession.create(model, Object.assign({}, base, {
                graphOptimizationLevel: 'disabled', enableProfiling: true,
                profileFilePrefix: path.join(tmp, 'shapes')}));
            await sc.run(feeds);
            const sf = sc.endProfiling() || fs.readdirSync(tmp).filter((f) => f.startsWith('shapes'))
                                                .map((f) => path.join(tmp, f))[0];
            await sc.release();
            const st = kernelTimes(JSON.parse(fs.readFileSync(sf, 'utf8')), 1, null);
            const byName = new Map();
            orig.nodes.forEach((n, i) => n.name && !byName.has(n.name) && byName.set(n.name, i));
            out.shapes = [];
            for (const [name, v] of st.shapes) {
                const i = byName.has(name) ? byName.get(name) : -1;
                if (i >= 0) out.shapes.push({i, out: v.out});
            }
        }
    } catch (e) {
        if (process.env.HSDAG_ORT_DEBUG) console.error(e.stack);
        fail(2, a.model + ': ONNX Runtime cannot run the model: ' + String(e.message || e).split('\n')[0]);
    } finally {
        fs.rmSync(tmp, {recursive: true, force: true});
    }
    out.wall_s = (Date.now() - t0) / 1000;
    process.stdout.write(JSON.stringify(out) + '\n');
}

main();

#!/usr/bin/python3
"""export-gpt.py - exports a small GPT-style decoder written in torch to weight-free ONNX (export_params=False), the
reference that `hsdag gen transformer` is checked against (tests/test_gen.c: op counts per type and total FLOPs).
Not here: trained weights (random init, never saved), running the model, the generator itself (src/graph/gen.c).
The model is the one docs/formats.md ("Generated graphs") describes: pre-LayerNorm blocks, Q/K/V/O projections,
GQA by repeating K/V heads (expand + reshape, as Hugging Face's repeat_kv), causal mask, erf GELU MLP, learned
positions, optional tied embeddings, decode with past K/V as inputs and present K/V as outputs.
Usage: /usr/bin/python3 scripts/export-gpt.py OUT.onnx --layers 2 --hidden 64 --heads 4 --kv-heads 2 --ffn 256
       --seq 16 --vocab 100 [--batch B] [--decode] [--tied] [--no-bias]   (Debian's python3-torch 1.13)
"""
import argparse
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def build(a):
    D, H, KVH, FF, V, B = a.hidden, a.heads, a.kv_heads or a.heads, a.ffn or 4 * a.hidden, a.vocab, a.batch
    HD, T, P = D // H, (1 if a.decode else a.seq), (a.seq if a.decode else 0)

    class Block(nn.Module):
        def __init__(s):
            super().__init__()
            s.ln1, s.ln2 = nn.LayerNorm(D), nn.LayerNorm(D)
            s.q = nn.Linear(D, H * HD, bias=a.bias)
            s.k = nn.Linear(D, KVH * HD, bias=a.bias)
            s.v = nn.Linear(D, KVH * HD, bias=a.bias)
            s.o = nn.Linear(D, D, bias=a.bias)
            s.up = nn.Linear(D, FF, bias=a.bias)
            s.down = nn.Linear(FF, D, bias=a.bias)

        def forward(s, x, mask, pk, pv):
            h = s.ln1(x)
            q = s.q(h).view(B, T, H, HD).transpose(1, 2)
            k = s.k(h).view(B, T, KVH, HD).transpose(1, 2)
            v = s.v(h).view(B, T, KVH, HD).transpose(1, 2)
            if a.decode:
                k, v = torch.cat([pk, k], 2), torch.cat([pv, v], 2)
            present = (k, v)
            Tk = P + T
            if KVH < H:
                k = k[:, :, None].expand(B, KVH, H // KVH, Tk, HD).reshape(B, H, Tk, HD)
                v = v[:, :, None].expand(B, KVH, H // KVH, Tk, HD).reshape(B, H, Tk, HD)
            att = torch.matmul(q, k.transpose(2, 3)) * (1.0 / math.sqrt(HD))
            if not a.decode:
                att = att + mask
            y = torch.matmul(torch.softmax(att, -1), v).transpose(1, 2).reshape(B, T, D)
            x = x + s.o(y)
            return x + s.down(F.gelu(s.up(s.ln2(x)))), present

    class GPT(nn.Module):
        def __init__(s):
            super().__init__()
            s.emb, s.pos = nn.Embedding(V, D), nn.Embedding(a.seq + (1 if a.decode else 0), D)
            s.blocks = nn.ModuleList([Block() for _ in range(a.layers)])
            s.lnf = nn.LayerNorm(D)
            s.head = nn.Linear(D, V, bias=False)
            if a.tied:
                s.head.weight = s.emb.weight
            s.register_buffer("mask", torch.triu(torch.full((T, P + T), float("-inf")), 1 + P))

        def forward(s, ids, pos, *past):
            x = s.emb(ids) + s.pos(pos)
            presents = []
            for i, blk in enumerate(s.blocks):
                pk, pv = (past[2 * i], past[2 * i + 1]) if a.decode else (None, None)
                x, pr = blk(x, s.mask, pk, pv)
                presents += pr
            return (s.head(s.lnf(x)), *presents)

    torch.manual_seed(0)
    model = GPT().eval()
    ids = torch.zeros(B, T, dtype=torch.long)
    pos = (torch.arange(T) + P)[None].expand(B, T)
    past = [torch.zeros(B, KVH, P, HD) for _ in range(2 * a.layers)] if a.decode else []
    return model, (ids, pos, *past)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    for k, v in (("layers", 2), ("hidden", 64), ("heads", 4), ("kv-heads", 0), ("ffn", 0), ("seq", 16),
                 ("vocab", 100), ("batch", 1)):
        ap.add_argument("--" + k, type=int, default=v)
    ap.add_argument("--decode", action="store_true")
    ap.add_argument("--tied", action="store_true")
    ap.add_argument("--no-bias", dest="bias", action="store_false")
    a = ap.parse_args()
    model, inputs = build(a)
    with torch.no_grad():
        torch.onnx.export(model, inputs, a.out, export_params=False, opset_version=17, do_constant_folding=True)


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""export-models.py - exports torchvision model definitions, and one encoder built from torch.nn's own
layers, to weight-free ONNX files (export_params=False: weights become graph inputs with shapes and no values),
for shape-inference checks, CPU profiling and models the learner was not designed on.
Not here: trained weights (none are downloaded: every model is built with weights=None), running anything.
Usage: /usr/bin/python3 scripts/export-models.py OUTDIR [NAME...]   (Debian's python3-torch, -torchvision)
"""
import os
import sys

import torch
import torchvision

class TransformerEncoder(torch.nn.Module):
    """A BERT-like encoder of torch.nn's layers: token embedding (30,000 x 512), 6 post-norm layers of width
    512 (8 heads, feed-forward 2,048, ReLU: torch's default), a 2-way classifier on the first token. Most of
    its weights reach their MatMul or Gemm through an op of their own (an Identity), as in the bundled
    ViT-B/16 and BERT-base exports (Transposes) and unlike the torchvision exports above."""

    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(30000, 512)
        layer = torch.nn.TransformerEncoderLayer(512, 8, 2048, dropout=0.0, batch_first=True)
        self.enc = torch.nn.TransformerEncoder(layer, 6)
        self.head = torch.nn.Linear(512, 2)

    def forward(self, ids):
        return self.head(self.enc(self.emb(ids))[:, 0])


# name -> (constructor, input shape[, input dtype]); torchvision 0.14 definitions, batch 1, opset 13
MODELS = {
    "swin_t": (lambda: torchvision.models.swin_t(), (1, 3, 224, 224)),
    "vit_b_32": (lambda: torchvision.models.vit_b_32(), (1, 3, 224, 224)),
    "convnext_tiny": (lambda: torchvision.models.convnext_tiny(), (1, 3, 224, 224)),
    "efficientnet_b0": (lambda: torchvision.models.efficientnet_b0(), (1, 3, 224, 224)),
    "mobilenet_v3_small": (lambda: torchvision.models.mobilenet_v3_small(), (1, 3, 224, 224)),
    "mobilenet_v3_large": (lambda: torchvision.models.mobilenet_v3_large(), (1, 3, 224, 224)),
    "regnet_y_400mf": (lambda: torchvision.models.regnet_y_400mf(), (1, 3, 224, 224)),
    "densenet121": (lambda: torchvision.models.densenet121(), (1, 3, 224, 224)),
    "resnet18": (lambda: torchvision.models.resnet18(), (1, 3, 224, 224)),
    "shufflenet_v2_x1_0": (lambda: torchvision.models.shufflenet_v2_x1_0(), (1, 3, 224, 224)),
    "mnasnet1_0": (lambda: torchvision.models.mnasnet1_0(), (1, 3, 224, 224)),
    "resnext50_32x4d": (lambda: torchvision.models.resnext50_32x4d(), (1, 3, 224, 224)),
    "lraspp_mobilenet_v3_large": (
        lambda: torchvision.models.segmentation.lraspp_mobilenet_v3_large(weights=None, weights_backbone=None),
        (1, 3, 224, 224),
    ),
    "fcn_resnet50": (
        lambda: torchvision.models.segmentation.fcn_resnet50(weights=None, weights_backbone=None, aux_loss=False),
        (1, 3, 224, 224),
    ),
    # 128 token ids; exported with autograd on (no torch.no_grad) so that torch 1.13 keeps the attention as
    # separate ops instead of its fused inference kernel, which has no ONNX export
    "transformer_encoder": (lambda: TransformerEncoder(), (1, 128), torch.long, True),
}


def export(name, outdir):
    ctor, shape, dtype, grad = (MODELS[name] + (torch.float32, False))[:4]
    torch.manual_seed(0)
    model = ctor().eval()
    x = torch.zeros(shape, dtype=dtype)
    path = os.path.join(outdir, name + ".onnx")
    with torch.set_grad_enabled(grad):
        torch.onnx.export(model, x, path, export_params=False, opset_version=13, input_names=["input"],
                          output_names=["output"], do_constant_folding=True)
    print("%s: %d bytes" % (path, os.path.getsize(path)), flush=True)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    for name in sys.argv[2:] or MODELS:
        try:
            export(name, outdir)
        except Exception as ex:  # report and go on with the others
            print("%s: export failed: %s" % (name, ex), file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()

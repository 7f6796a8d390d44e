#!/usr/bin/python3
"""export-models.py - exports torchvision model definitions to weight-free ONNX files (export_params=False:
weights become graph inputs with shapes and no values), for shape-inference checks and CPU profiling.
Not here: trained weights (none are downloaded: every model is built with weights=None), running anything.
Usage: /usr/bin/python3 scripts/export-models.py OUTDIR [NAME...]   (Debian's python3-torch, -torchvision)
"""
import os
import sys

import torch
import torchvision

# name -> (constructor, input shape); torchvision 0.14 definitions, batch 1, opset 13
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
}


def export(name, outdir):
    ctor, shape = MODELS[name]
    torch.manual_seed(0)
    model = ctor().eval()
    x = torch.zeros(shape)
    path = os.path.join(outdir, name + ".onnx")
    with torch.no_grad():
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

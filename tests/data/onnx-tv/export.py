#!/usr/bin/python3
"""export.py - re-creates the ONNX files of this folder from Debian's python3-torch / python3-torchvision:
torchvision model definitions (no weights: export_params=False), input 1x3x224x224, opset 13, ONNX shape
inference applied. Not here: anything the project runs (the files are committed; this documents how).
Usage: /usr/bin/python3 tests/data/onnx-tv/export.py OUTDIR [model ...]
"""
import sys

import onnx
import torch
import torchvision
from onnx import shape_inference

MODELS = ["resnet18", "resnet101", "densenet121", "mobilenet_v3_large", "efficientnet_b0", "regnet_y_400mf",
          "shufflenet_v2_x1_0", "mnasnet1_0", "convnext_tiny", "wide_resnet50_2"]


def main():
    out = sys.argv[1]
    for n in sys.argv[2:] or MODELS:
        m = getattr(torchvision.models, n)(weights=None).eval()
        path = "%s/%s.onnx" % (out, n)
        torch.onnx.export(m, torch.randn(1, 3, 224, 224), path, export_params=False, opset_version=13)
        onnx.save(shape_inference.infer_shapes(onnx.load(path)), path)
        print(n, len(onnx.load(path).graph.node), "nodes")


if __name__ == "__main__":
    main()

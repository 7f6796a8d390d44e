#!/usr/bin/env python3
# openvino_measure.py - measures one placement on real devices with OpenVINO HETERO, the way the HSDAG paper did.
# Not tested here (no OpenVINO on the build machine): treat it as a starting point and check it on your setup.
# Entry point: main. Usage with the trainer:
#   hsdag train model.xml --devices cpu-gpu --measure-cmd 'python3 examples/openvino_measure.py model.xml {placement}'
#
# It reads the placement JSON that hsdag writes ({"placement": {"layer": "GPU", ...}} or a flat affinity map
# {"layer": "GPU", ...}), sets each op's rt_info "affinity", compiles on HETERO:GPU,CPU, runs 10 synchronous
# inferences on random inputs and prints the mean of the last 5 in seconds (the last number on stdout is what
# hsdag reads). Exit status 1 on any failure, so hsdag retries and then reports it.
import json
import sys
import time


def main():
    if len(sys.argv) != 3:
        print("usage: openvino_measure.py MODEL.xml PLACEMENT.json", file=sys.stderr)
        return 2
    model_path, placement_path = sys.argv[1], sys.argv[2]
    try:
        import numpy as np
        import openvino as ov  # OpenVINO >= 2023.1 (the paper used 2023.3)
    except ImportError as exc:
        print(f"openvino_measure: {exc}", file=sys.stderr)
        return 1
    with open(placement_path) as f:
        doc = json.load(f)
    affinity = doc.get("placement", doc)
    default = doc.get("default")
    core = ov.Core()
    model = core.read_model(model_path)
    for op in model.get_ops():
        dev = affinity.get(op.get_friendly_name(), default)
        if dev is None:
            print(f"openvino_measure: op '{op.get_friendly_name()}' has no device", file=sys.stderr)
            return 1
        dev = str(dev).upper()
        if dev.startswith("GPU") or dev.startswith("CPU"):
            op.get_rt_info()["affinity"] = dev
    compiled = core.compile_model(model, "HETERO:GPU,CPU")
    request = compiled.create_infer_request()
    inputs = {}
    for port in compiled.inputs:
        shape = [d if d > 0 else 1 for d in port.get_partial_shape().get_min_shape()]
        inputs[port.any_name] = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    times = []
    for _ in range(10):
        t0 = time.perf_counter()
        request.infer(inputs)
        times.append(time.perf_counter() - t0)
    print(f"{sum(times[-5:]) / 5:.9f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

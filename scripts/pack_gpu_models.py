#!/usr/bin/env python3
"""Exports the models of scripts/gpu-check.sh's `table` part and bench_cuda's ResNet-50s into one
small archive, for a GPU machine that cannot export them itself or receive 1 GB of weights.

  scripts/pack_gpu_models.py ARCHIVE.tar.xz

Each floating-point weight is its own initial values' first 4,096 repeated (so each keeps the
scale and sign mix of PyTorch's initialisation, and activations stay finite), which xz compresses
to almost nothing. Timings on such weights are those of any weights; the outputs are still checked
against the CPU by `placer run`. Unpack on the GPU machine into $PLACER_ONNX_MODELS; the table
script then only times PyTorch.
"""
import importlib.util
import os
import subprocess
import sys
import tempfile

import torch
import torchvision

spec = importlib.util.spec_from_file_location(
    "export_models", os.path.join(os.path.dirname(os.path.abspath(__file__)), "export_models.py"))
em = importlib.util.module_from_spec(spec)
spec.loader.exec_module(em)

BLOCK = 4096


def tiled(model):
    with torch.no_grad():
        for tensor in list(model.parameters()) + list(model.buffers()):
            if tensor.is_floating_point() and tensor.numel() > BLOCK:
                flat = tensor.view(-1)
                block = flat[:BLOCK].clone()
                repeats = (flat.numel() + BLOCK - 1) // BLOCK
                flat.copy_(block.repeat(repeats)[: flat.numel()])
    return model


def main(archive):
    torch.manual_seed(0)
    folder = tempfile.mkdtemp(prefix="placer-gpu-models-")
    image = torch.randn(1, 3, 224, 224)
    names = []
    for name in ["resnet18", "resnet50", "mobilenet_v2", "squeezenet1_1", "googlenet", "vgg11",
                 "densenet121", "efficientnet_b0", "inception_v3", "mnasnet1_0", "regnet_y_400mf"]:
        extra = {"aux_logits": False, "init_weights": False} if name in ("googlenet", "inception_v3") else {}
        model = tiled(getattr(torchvision.models, name)(weights=None, **extra))
        example = torch.randn(1, 3, 299, 299) if name == "inception_v3" else image
        em.export(model, example, os.path.join(folder, name + ".onnx"))
        names.append(name + ".onnx")
    em.export(tiled(torchvision.models.resnet50(weights=None)), torch.randn(32, 3, 224, 224),
              os.path.join(folder, "resnet50_batch32.onnx"))
    names.append("resnet50_batch32.onnx")
    em.export(tiled(em.Encoder(30522, 768, 12, 3072, 12, 128)), torch.randint(0, 30522, (1, 128)),
              os.path.join(folder, "bert_base_encoder.onnx"), ["ids"])
    names.append("bert_base_encoder.onnx")
    subprocess.run(["tar", "-C", folder, "-cJf", archive] + names, check=True,
                   env=dict(os.environ, XZ_OPT="-6 -T2"))
    print(f"{archive}: {os.path.getsize(archive) / 1024:.1f} KiB")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])

#!/usr/bin/python3
"""Writes PyTorch's own nn.TransformerEncoder as torch.onnx.export writes it at batch 1 (opset
14), with NAME.{x,y}.npy: by default tests/models/torch_encoder_b1.onnx (two layers, width 32,
two heads, feed-forward 64, 8 tokens). Its attention's input projection is one MatMul taken
apart by three Slices (Q, K, V), its sequence axis first inside the layers: what --shard must
cut by heads as it comes. The benchmark's encoder (docs/benchmarks.md) is

  /usr/bin/python3 scripts/make_torch_encoder.py --folder /tmp --name encoder_b1 \\
      --width 256 --heads 4 --ff 1024 --layers 4 --tokens 64
"""
import argparse
import pathlib

import numpy as np
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--folder", default="tests/models")
parser.add_argument("--name", default="torch_encoder_b1")
parser.add_argument("--width", type=int, default=32)
parser.add_argument("--heads", type=int, default=2)
parser.add_argument("--ff", type=int, default=64)
parser.add_argument("--layers", type=int, default=2)
parser.add_argument("--tokens", type=int, default=8)
args = parser.parse_args()

folder = pathlib.Path(args.folder)
torch.manual_seed(0)
layer = torch.nn.TransformerEncoderLayer(args.width, args.heads, args.ff, dropout=0.0,
                                         batch_first=True)
encoder = torch.nn.TransformerEncoder(layer, args.layers, enable_nested_tensor=False).eval()
x = torch.randn(1, args.tokens, args.width)
torch.onnx.export(encoder, x, folder / f"{args.name}.onnx", opset_version=14,
                  input_names=["x"], output_names=["y"])
with torch.no_grad():
    y = encoder(x)
np.save(folder / f"{args.name}.x.npy", x.numpy())
np.save(folder / f"{args.name}.y.npy", y.numpy())
print("wrote", folder / f"{args.name}.onnx")

#!/usr/bin/python3
"""Writes the dynamic-shape test models into tests/models/ (default), with inputs and numpy
references:

- dyn_encoder.onnx: one attention block over x[batch, seq, 16] (symbolic batch and seq; a
  Reshape to (batch*seq, 16) through Shape, Gather and Mul, as exporters write it), run at three
  shapes: dyn_encoder.{1x4,2x16,3x33}.{input,expected}.npy;
- runtime_slice_pad.onnx: Slice and Pad whose starts, ends and pads are graph inputs:
  runtime_slice_pad.{x,starts,ends,pads,expected}.npy.

Built with python3-onnx and numpy (no PyTorch).

  scripts/make_dynamic_models.py [DIR]
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh


def encoder(folder):
    rng = np.random.default_rng(3)
    d = 16
    wq, wk, wv, wo = [(rng.standard_normal((d, d)) * 0.25).astype(np.float32) for _ in range(4)]
    bo = (rng.standard_normal((d,)) * 0.1).astype(np.float32)
    nodes = [
        h.make_node("MatMul", ["x", "wq"], ["q"]),
        h.make_node("MatMul", ["x", "wk"], ["k"]),
        h.make_node("MatMul", ["x", "wv"], ["v"]),
        h.make_node("Transpose", ["k"], ["kt"], perm=[0, 2, 1]),
        h.make_node("MatMul", ["q", "kt"], ["s0"]),
        h.make_node("Mul", ["s0", "scale"], ["s"]),
        h.make_node("Softmax", ["s"], ["p"], axis=-1),
        h.make_node("MatMul", ["p", "v"], ["a"]),
        h.make_node("Add", ["a", "x"], ["r"]),
        # (batch*seq, 16) through the shape of x, as exporters write a flatten.
        h.make_node("Shape", ["x"], ["xs"]),
        h.make_node("Gather", ["xs", "i0"], ["b"], axis=0),
        h.make_node("Gather", ["xs", "i1"], ["n"], axis=0),
        h.make_node("Mul", ["b", "n"], ["bn"]),
        h.make_node("Concat", ["bn", "dd"], ["flat"], axis=0),
        h.make_node("Reshape", ["r", "flat"], ["r2"]),
        h.make_node("MatMul", ["r2", "wo"], ["o0"]),
        h.make_node("Add", ["o0", "bo"], ["o1"]),
        h.make_node("Relu", ["o1"], ["o2"]),
        h.make_node("Reshape", ["o2", "xs"], ["y"]),
    ]
    inits = [nh.from_array(wq, "wq"), nh.from_array(wk, "wk"), nh.from_array(wv, "wv"),
             nh.from_array(wo, "wo"), nh.from_array(bo, "bo"),
             nh.from_array(np.array(0.25, np.float32), "scale"),
             nh.from_array(np.array([0], np.int64), "i0"),
             nh.from_array(np.array([1], np.int64), "i1"),
             nh.from_array(np.array([d], np.int64), "dd")]
    graph = h.make_graph(nodes, "dyn_encoder",
                         [h.make_tensor_value_info("x", T.FLOAT, ["batch", "seq", d])],
                         [h.make_tensor_value_info("y", T.FLOAT, ["batch", "seq", d])], inits)
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(folder, "dyn_encoder.onnx"))

    def reference(x):
        q, k, v = x @ wq, x @ wk, x @ wv
        s = (q @ k.transpose(0, 2, 1)) * np.float32(0.25)
        p = np.exp(s - s.max(-1, keepdims=True))
        p /= p.sum(-1, keepdims=True)
        r = (p @ v + x).reshape(-1, d)
        return np.maximum(r @ wo + bo, 0).reshape(x.shape).astype(np.float32)

    for batch, seq in [(1, 4), (2, 16), (3, 33)]:
        x = rng.standard_normal((batch, seq, d)).astype(np.float32)
        stem = os.path.join(folder, "dyn_encoder.%dx%d" % (batch, seq))
        np.save(stem + ".input.npy", x)
        np.save(stem + ".expected.npy", reference(x))


def slice_pad(folder):
    nodes = [
        h.make_node("Slice", ["x", "starts", "ends", "axes"], ["s"]),
        h.make_node("Pad", ["s", "pads"], ["y"], mode="constant"),
    ]
    graph = h.make_graph(
        nodes, "runtime_slice_pad",
        [h.make_tensor_value_info("x", T.FLOAT, [4, 10]),
         h.make_tensor_value_info("starts", T.INT64, [1]),
         h.make_tensor_value_info("ends", T.INT64, [1]),
         h.make_tensor_value_info("pads", T.INT64, [4])],
        [h.make_tensor_value_info("y", T.FLOAT, ["rows", "cols"])],
        [nh.from_array(np.array([1], np.int64), "axes")])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(folder, "runtime_slice_pad.onnx"))
    x = np.arange(40, dtype=np.float32).reshape(4, 10)
    starts, ends = np.array([2], np.int64), np.array([7], np.int64)
    pads = np.array([1, 0, 0, 2], np.int64)
    y = np.pad(x[:, 2:7], ((1, 0), (0, 2)))
    stem = os.path.join(folder, "runtime_slice_pad.")
    for name, value in [("x", x), ("starts", starts), ("ends", ends), ("pads", pads),
                        ("expected", y)]:
        np.save(stem + name + ".npy", value)


def main(folder):
    os.makedirs(folder, exist_ok=True)
    encoder(folder)
    slice_pad(folder)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else
         os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "models"))

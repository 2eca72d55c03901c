#!/usr/bin/python3
"""Writes resources/models/tiny_recurrent.onnx: a small recurrent model with control flow.

An input projection, a Loop that applies a cell five times (reading the cell's weights from the
outer graph, and stacking each step's mean as a scan output), then an If on the sign of the
state's sum that picks a head. Built with python3-onnx and numpy (no PyTorch); the reference
output (tiny_recurrent.expected.npy) is computed with numpy from the same weights.

  scripts/make_control_flow_model.py [DIR]    (default: resources/models)
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh


def main(folder):
    rng = np.random.default_rng(0)
    P = (rng.standard_normal((16, 16)) * 0.3).astype(np.float32)
    c = (rng.standard_normal((16,)) * 0.1).astype(np.float32)
    W = (rng.standard_normal((16, 16)) * 0.3).astype(np.float32)
    b = (rng.standard_normal((16,)) * 0.1).astype(np.float32)
    H = (rng.standard_normal((16, 4)) * 0.3).astype(np.float32)
    x = rng.standard_normal((2, 16)).astype(np.float32)

    body = h.make_graph(
        [h.make_node("Identity", ["cond_in"], ["cond_out"], name="keep_going"),
         h.make_node("MatMul", ["h_in", "W"], ["hw"], name="cell_matmul"),
         h.make_node("Add", ["hw", "b"], ["hwb"], name="cell_bias"),
         h.make_node("Add", ["hwb", "x0"], ["pre"], name="cell_skip"),
         h.make_node("Tanh", ["pre"], ["h_out"], name="cell_tanh"),
         h.make_node("ReduceMean", ["h_out"], ["step_mean"], axes=[1], keepdims=0,
                     name="step_mean")],
        "cell_body",
        [h.make_tensor_value_info("i", T.INT64, []),
         h.make_tensor_value_info("cond_in", T.BOOL, []),
         h.make_tensor_value_info("h_in", T.FLOAT, [2, 16])],
        [h.make_tensor_value_info("cond_out", T.BOOL, []),
         h.make_tensor_value_info("h_out", T.FLOAT, [2, 16]),
         h.make_tensor_value_info("step_mean", T.FLOAT, [2])])
    positive = h.make_graph(
        [h.make_node("MatMul", ["h", "H"], ["then_out"], name="head")], "positive", [],
        [h.make_tensor_value_info("then_out", T.FLOAT, [2, 4])])
    negative = h.make_graph(
        [h.make_node("MatMul", ["h", "H"], ["hh"], name="head_neg"),
         h.make_node("Neg", ["hh"], ["else_out"], name="negate")], "negative", [],
        [h.make_tensor_value_info("else_out", T.FLOAT, [2, 4])])
    nodes = [
        h.make_node("MatMul", ["input", "P"], ["xp"], name="project"),
        h.make_node("Add", ["xp", "c"], ["x0"], name="project_bias"),
        h.make_node("Loop", ["steps", "", "x0"], ["h", "means"], body=body, name="recurrence"),
        h.make_node("ReduceSum", ["h"], ["total"], keepdims=0, name="total"),
        h.make_node("Greater", ["total", "zero"], ["positive"], name="is_positive"),
        h.make_node("If", ["positive"], ["logits"], then_branch=positive,
                    else_branch=negative, name="head_by_sign"),
        h.make_node("Softmax", ["logits"], ["output"], axis=-1, name="softmax"),
    ]
    graph = h.make_graph(
        nodes, "tiny_recurrent", [h.make_tensor_value_info("input", T.FLOAT, [2, 16])],
        [h.make_tensor_value_info("output", T.FLOAT, [2, 4])],
        [nh.from_array(P, "P"), nh.from_array(c, "c"), nh.from_array(W, "W"),
         nh.from_array(b, "b"), nh.from_array(H, "H"),
         nh.from_array(np.array(5, dtype=np.int64), "steps"),
         nh.from_array(np.array(0, dtype=np.float32), "zero")])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 13)],
                         producer_name="placement-explorer-examples")
    model.ir_version = 8
    onnx.checker.check_model(model)

    x0 = x @ P + c
    state = x0
    for _ in range(5):
        state = np.tanh(state @ W + b + x0)
    logits = state @ H if state.sum() > 0 else -(state @ H)
    e = np.exp(logits - logits.max(axis=-1, keepdims=True))
    expected = (e / e.sum(axis=-1, keepdims=True)).astype(np.float32)

    os.makedirs(folder, exist_ok=True)
    onnx.save(model, os.path.join(folder, "tiny_recurrent.onnx"))
    np.save(os.path.join(folder, "tiny_recurrent.input.npy"), x)
    np.save(os.path.join(folder, "tiny_recurrent.expected.npy"), expected)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else
         os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "resources", "models"))

#!/usr/bin/python3
"""Writes the dynamic-shape test models into tests/models/ (default), with inputs and numpy
references:

- dyn_encoder.onnx: one attention block over x[batch, seq, 16] (symbolic batch and seq; a
  Reshape to (batch*seq, 16) through Shape, Gather and Mul, as exporters write it), run at three
  shapes: dyn_encoder.{1x4,2x16,3x33}.{input,expected}.npy;
- runtime_slice_pad.onnx: Slice and Pad whose starts, ends and pads are graph inputs:
  runtime_slice_pad.{x,starts,ends,pads,expected}.npy;
- nonzero_select.onnx: the elements of x[6, 8] over a threshold, found by NonZero and read
  by GatherND, then reshaped, multiplied and summed (every node after NonZero has a shape
  known only at run time), at two inputs: nonzero_select.{a,b}.{x,y,rows,total}.npy;
- nms_topk.onnx: NonMaxSuppression, then the scores of what it kept (Gather), the best
  min(kept, 5) of them (TopK with k from the data) and their boxes, as a detector's
  post-processing does: nms_topk.{a,b}.{boxes,scores,top,picked}.npy;
- if_on_data.onnx: an If on sum(x) > 0 whose branches give results of other lengths: the
  elements of x over 0, doubled (NonZero and GatherND inside the branch), or the 3 largest of
  -x; then their sum and the result with a 1 appended: if_on_data.{a,b}.{x,y,total,longer}.npy;
- shape_inputs.onnx: Reshape, Expand, Tile, Range, ConstantOfShape and TopK whose shapes come
  from graph inputs' values (the fuzz target fuzz_run_shapes feeds them hostile ones):
  shape_inputs.{x,shape,...,reshaped,...}.npy;
- loop_grows.onnx: a Loop whose trip count n is a graph input and whose carried value grows by
  one element an iteration (v = concat(v, [i])), with the sum of v per iteration as a scan
  output: loop_grows.{a,b}.{n,x,v,sums}.npy.

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


def save_model(graph, folder, name, opset=13):
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", opset)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(folder, name + ".onnx"))


def nonzero_select(folder):
    w = np.array([[1.0, -2.0, 0.5]], np.float32)
    nodes = [
        h.make_node("Greater", ["x", "threshold"], ["mask"]),
        h.make_node("NonZero", ["mask"], ["nz"]),
        h.make_node("Transpose", ["nz"], ["idx"], perm=[1, 0]),
        h.make_node("GatherND", ["x", "idx"], ["vals"]),
        h.make_node("Reshape", ["vals", "column"], ["col"]),
        h.make_node("MatMul", ["col", "w"], ["y"]),
        h.make_node("Shape", ["vals"], ["rows"]),
        h.make_node("ReduceSum", ["vals"], ["total"], keepdims=0),
    ]
    graph = h.make_graph(
        nodes, "nonzero_select", [h.make_tensor_value_info("x", T.FLOAT, [6, 8])],
        [h.make_tensor_value_info("y", T.FLOAT, ["n", 3]),
         h.make_tensor_value_info("rows", T.INT64, [1]),
         h.make_tensor_value_info("total", T.FLOAT, [])],
        [nh.from_array(np.array(0.5, np.float32), "threshold"),
         nh.from_array(np.array([-1, 1], np.int64), "column"), nh.from_array(w, "w")])
    save_model(graph, folder, "nonzero_select")
    rng = np.random.default_rng(5)
    for tag, scale in [("a", 1.0), ("b", 0.6)]:
        x = (rng.standard_normal((6, 8)) * scale).astype(np.float32)
        vals = x[x > 0.5]
        stem = os.path.join(folder, "nonzero_select.%s." % tag)
        np.save(stem + "x.npy", x)
        np.save(stem + "y.npy", (vals.reshape(-1, 1) @ w).astype(np.float32))
        np.save(stem + "rows.npy", np.array([vals.size], np.int64))
        np.save(stem + "total.npy", np.array(vals.sum(), np.float32))


def nms_reference(boxes, scores, max_out, iou_threshold, score_threshold):
    """ONNX's NonMaxSuppression for one batch and one class, corners as (y1, x1, y2, x2)."""
    order = [i for i in np.argsort(-scores, kind="stable") if scores[i] > score_threshold]
    kept = []

    def area(b):
        return max(0.0, b[2] - b[0]) * max(0.0, b[3] - b[1])

    for i in order:
        if len(kept) == max_out:
            break
        ok = True
        for j in kept:
            a, b = boxes[i], boxes[j]
            y1, x1 = max(a[0], b[0]), max(a[1], b[1])
            y2, x2 = min(a[2], b[2]), min(a[3], b[3])
            inter = max(0.0, y2 - y1) * max(0.0, x2 - x1)
            union = area(a) + area(b) - inter
            if union > 0 and inter / union > iou_threshold:
                ok = False
                break
        if ok:
            kept.append(i)
    return np.array(kept, np.int64)


def nms_topk(folder):
    count = 24
    nodes = [
        h.make_node("NonMaxSuppression", ["boxes", "scores", "max_out", "iou", "score_min"],
                    ["selected"]),
        h.make_node("Gather", ["selected", "two"], ["box_col"], axis=1),
        h.make_node("Squeeze", ["box_col", "one"], ["box_idx"]),
        h.make_node("Reshape", ["scores", "flat"], ["all_scores"]),
        h.make_node("Gather", ["all_scores", "box_idx"], ["kept_scores"], axis=0),
        h.make_node("Shape", ["kept_scores"], ["kept"]),
        h.make_node("Min", ["kept", "five"], ["k"]),
        h.make_node("TopK", ["kept_scores", "k"], ["top", "top_idx"]),
        h.make_node("Gather", ["box_idx", "top_idx"], ["best"], axis=0),
        h.make_node("Reshape", ["boxes", "rows4"], ["all_boxes"]),
        h.make_node("Gather", ["all_boxes", "best"], ["picked"], axis=0),
    ]
    graph = h.make_graph(
        nodes, "nms_topk",
        [h.make_tensor_value_info("boxes", T.FLOAT, [1, count, 4]),
         h.make_tensor_value_info("scores", T.FLOAT, [1, 1, count])],
        [h.make_tensor_value_info("top", T.FLOAT, ["k"]),
         h.make_tensor_value_info("picked", T.FLOAT, ["k", 4])],
        [nh.from_array(np.array([20], np.int64), "max_out"),
         nh.from_array(np.array([0.4], np.float32), "iou"),
         nh.from_array(np.array([0.3], np.float32), "score_min"),
         nh.from_array(np.array([2], np.int64), "two"),
         nh.from_array(np.array([1], np.int64), "one"),
         nh.from_array(np.array([-1], np.int64), "flat"),
         nh.from_array(np.array([5], np.int64), "five"),
         nh.from_array(np.array([-1, 4], np.int64), "rows4")])
    save_model(graph, folder, "nms_topk")
    rng = np.random.default_rng(9)
    for tag, cut in [("a", 0.3), ("b", 0.9)]:
        corner = rng.uniform(0, 10, (count, 2)).astype(np.float32)
        size = rng.uniform(1, 4, (count, 2)).astype(np.float32)
        boxes = np.concatenate([corner, corner + size], axis=1)
        # Distinct scores, so that the order is the same in every implementation.
        scores = (rng.permutation(count) / count + 0.01).astype(np.float32)
        if tag == "b":
            scores = np.where(scores > cut, scores, 0.0).astype(np.float32)
        kept = nms_reference(boxes, scores, 20, 0.4, 0.3)
        kept_scores = scores[kept]
        order = np.argsort(-kept_scores, kind="stable")[:min(kept.size, 5)]
        stem = os.path.join(folder, "nms_topk.%s." % tag)
        np.save(stem + "boxes.npy", boxes.reshape(1, count, 4))
        np.save(stem + "scores.npy", scores.reshape(1, 1, count))
        np.save(stem + "top.npy", kept_scores[order])
        np.save(stem + "picked.npy", boxes[kept[order]])


def if_on_data(folder):
    then_nodes = [
        h.make_node("Greater", ["x", "zero"], ["mask"]),
        h.make_node("NonZero", ["mask"], ["nz"]),
        h.make_node("Transpose", ["nz"], ["idx"], perm=[1, 0]),
        h.make_node("GatherND", ["x", "idx"], ["vals"]),
        h.make_node("Mul", ["vals", "two"], ["then_y"]),
    ]
    then_branch = h.make_graph(then_nodes, "then", [],
                               [h.make_tensor_value_info("then_y", T.FLOAT, None)])
    else_nodes = [
        h.make_node("Neg", ["x"], ["negated"]),
        h.make_node("TopK", ["negated", "three"], ["else_y", "else_idx"]),
    ]
    else_branch = h.make_graph(else_nodes, "else", [],
                               [h.make_tensor_value_info("else_y", T.FLOAT, None)])
    nodes = [
        h.make_node("ReduceSum", ["x"], ["sum"], keepdims=0),
        h.make_node("Greater", ["sum", "zero"], ["positive"]),
        h.make_node("If", ["positive"], ["y"], then_branch=then_branch, else_branch=else_branch),
        h.make_node("ReduceSum", ["y"], ["total"], keepdims=0),
        h.make_node("Concat", ["y", "one"], ["longer"], axis=0),
    ]
    graph = h.make_graph(
        nodes, "if_on_data", [h.make_tensor_value_info("x", T.FLOAT, [8])],
        [h.make_tensor_value_info("y", T.FLOAT, ["n"]),
         h.make_tensor_value_info("total", T.FLOAT, []),
         h.make_tensor_value_info("longer", T.FLOAT, ["m"])],
        [nh.from_array(np.array(0.0, np.float32), "zero"),
         nh.from_array(np.array(2.0, np.float32), "two"),
         nh.from_array(np.array([3], np.int64), "three"),
         nh.from_array(np.array([1.0], np.float32), "one")])
    save_model(graph, folder, "if_on_data")
    rng = np.random.default_rng(11)
    for tag, shift in [("a", 0.8), ("b", -0.8)]:
        x = (rng.standard_normal(8) + shift).astype(np.float32)
        y = x[x > 0] * 2 if x.sum() > 0 else np.sort(-x)[::-1][:3]
        y = y.astype(np.float32)
        stem = os.path.join(folder, "if_on_data.%s." % tag)
        np.save(stem + "x.npy", x)
        np.save(stem + "y.npy", y)
        np.save(stem + "total.npy", np.array(y.sum(), np.float32))
        np.save(stem + "longer.npy", np.concatenate([y, [1.0]]).astype(np.float32))


def loop_grows(folder):
    body = h.make_graph(
        [h.make_node("Cast", ["i"], ["i_float"], to=T.FLOAT),
         h.make_node("Unsqueeze", ["i_float", "axis0"], ["i_row"]),
         h.make_node("Concat", ["v_in", "i_row"], ["v_out"], axis=0),
         h.make_node("Identity", ["cond_in"], ["cond_out"]),
         h.make_node("ReduceSum", ["v_in"], ["sum"], keepdims=0)],
        "body",
        [h.make_tensor_value_info("i", T.INT64, []),
         h.make_tensor_value_info("cond_in", T.BOOL, []),
         h.make_tensor_value_info("v_in", T.FLOAT, None)],
        [h.make_tensor_value_info("cond_out", T.BOOL, []),
         h.make_tensor_value_info("v_out", T.FLOAT, None),
         h.make_tensor_value_info("sum", T.FLOAT, [])],
        [nh.from_array(np.array([0], np.int64), "axis0")])
    graph = h.make_graph(
        [h.make_node("Loop", ["n", "", "x"], ["v", "sums"], body=body)], "loop_grows",
        [h.make_tensor_value_info("n", T.INT64, []),
         h.make_tensor_value_info("x", T.FLOAT, [2])],
        [h.make_tensor_value_info("v", T.FLOAT, ["length"]),
         h.make_tensor_value_info("sums", T.FLOAT, ["n"])])
    save_model(graph, folder, "loop_grows")
    for tag, n in [("a", 3), ("b", 6)]:
        x = np.array([0.5, -1.5], np.float32) * (1 if tag == "a" else 2)
        v, sums = x.copy(), []
        for i in range(n):
            sums.append(v.sum())
            v = np.concatenate([v, [float(i)]]).astype(np.float32)
        stem = os.path.join(folder, "loop_grows.%s." % tag)
        np.save(stem + "n.npy", np.array(n, np.int64))
        np.save(stem + "x.npy", x)
        np.save(stem + "v.npy", v)
        np.save(stem + "sums.npy", np.array(sums, np.float32))


def shape_inputs(folder):
    """Every output's shape is set by a graph input's value, read when the model runs."""
    nodes = [
        h.make_node("Reshape", ["x", "shape"], ["reshaped"]),
        h.make_node("Expand", ["x", "expand_to"], ["expanded"]),
        h.make_node("Tile", ["x", "repeats"], ["tiled"]),
        h.make_node("Range", ["start", "limit", "delta"], ["ramp"]),
        h.make_node("ConstantOfShape", ["fill_shape"], ["filled"],
                    value=nh.from_array(np.array([7], np.int64))),
        h.make_node("Flatten", ["x"], ["row"], axis=0),
        h.make_node("TopK", ["row", "k"], ["top", "top_at"]),
    ]
    graph = h.make_graph(
        nodes, "shape_inputs",
        [h.make_tensor_value_info("x", T.FLOAT, [2, 3]),
         h.make_tensor_value_info("shape", T.INT64, [2]),
         h.make_tensor_value_info("expand_to", T.INT64, [3]),
         h.make_tensor_value_info("repeats", T.INT64, [2]),
         h.make_tensor_value_info("start", T.INT64, []),
         h.make_tensor_value_info("limit", T.INT64, []),
         h.make_tensor_value_info("delta", T.INT64, []),
         h.make_tensor_value_info("fill_shape", T.INT64, [2]),
         h.make_tensor_value_info("k", T.INT64, [1])],
        [h.make_tensor_value_info(name, elem, [None] * rank) for name, elem, rank in [
            ("reshaped", T.FLOAT, 2), ("expanded", T.FLOAT, 3), ("tiled", T.FLOAT, 2),
            ("ramp", T.INT64, 1), ("filled", T.INT64, 2), ("top", T.FLOAT, 2),
            ("top_at", T.INT64, 2)]])
    save_model(graph, folder, "shape_inputs")
    x = np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5
    inputs = {"x": x, "shape": np.array([3, -1], np.int64),
              "expand_to": np.array([2, 2, 3], np.int64), "repeats": np.array([2, 1], np.int64),
              "start": np.array(3, np.int64), "limit": np.array(11, np.int64),
              "delta": np.array(3, np.int64), "fill_shape": np.array([2, 4], np.int64),
              "k": np.array([4], np.int64)}
    row = x.reshape(1, -1)
    at = np.argsort(-row, axis=1, kind="stable")[:, :4]
    expected = {"reshaped": x.reshape(3, -1), "expanded": np.broadcast_to(x, (2, 2, 3)),
                "tiled": np.tile(x, (2, 1)), "ramp": np.arange(3, 11, 3, dtype=np.int64),
                "filled": np.full((2, 4), 7, np.int64),
                "top": np.take_along_axis(row, at, 1), "top_at": at.astype(np.int64)}
    stem = os.path.join(folder, "shape_inputs.")
    for name, value in list(inputs.items()) + list(expected.items()):
        np.save(stem + name + ".npy", np.array(value))  # a copy, scalars kept 0-d


def main(folder):
    os.makedirs(folder, exist_ok=True)
    encoder(folder)
    slice_pad(folder)
    nonzero_select(folder)
    nms_topk(folder)
    if_on_data(folder)
    loop_grows(folder)
    shape_inputs(folder)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else
         os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "models"))

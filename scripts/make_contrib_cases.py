#!/usr/bin/python3
"""Writes single-node cases of ONNX Runtime's attention operators in the layout of ONNX's backend
node tests (CASE/model.onnx, CASE/test_data_set_0/input_K.pb and output_K.pb), with ONNX
Runtime's own outputs as the expected ones: tst_onnxconformance's contribNodeTests runs them.

  NODE_PATH=.../node_modules scripts/make_contrib_cases.py tests/models/contrib_node_tests

The outputs come from onnxruntime-node's CPU provider (`npm install --ignore-scripts
onnxruntime-node`), run by node on a script this writes beside the cases and removes.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

RUNNER = r"""
const fs = require('fs');
const ort = require('onnxruntime-node');
(async () => {
  const [model, spec] = process.argv.slice(2);
  const inputs = JSON.parse(fs.readFileSync(spec));
  const feeds = {};
  for (const i of inputs) {
    const raw = fs.readFileSync(i.file);
    const buf = raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.byteLength);
    const data = i.type === 'float32' ? new Float32Array(buf) : i.type === 'int32'
        ? new Int32Array(buf) : new BigInt64Array(buf);
    feeds[i.name] = new ort.Tensor(i.type, data, i.dims);
  }
  const session = await ort.InferenceSession.create(model, {executionProviders: ['cpu'],
      graphOptimizationLevel: 'disabled', intraOpNumThreads: 1});
  const out = await session.run(feeds);
  const result = {};
  for (const name of session.outputNames)
    result[name] = {dims: out[name].dims, data: Array.from(out[name].data, Number)};
  console.log(JSON.stringify(result));
})().catch(e => { console.error(String(e)); process.exit(1); });
"""

ONNX_TYPE = {np.float32: TensorProto.FLOAT, np.int32: TensorProto.INT32,
             np.int64: TensorProto.INT64}
JS_TYPE = {np.float32: "float32", np.int32: "int32", np.int64: "int64"}


def rotary_caches(positions, half):
    inv = 1.0 / (10000 ** (np.arange(half) / half))
    angles = np.outer(np.arange(positions), inv)
    return np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)


def write_case(root, name, op, inputs, outputs, attrs, runner):
    """inputs: (name, array or None for a skipped one); outputs: names (empty: skipped)."""
    folder = os.path.join(root, name)
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(os.path.join(folder, "test_data_set_0"))
    given = [(n, a) for n, a in inputs if a is not None]
    node = helper.make_node(op, [n if a is not None else "" for n, a in inputs], outputs,
                            domain="com.microsoft", **attrs)
    graph = helper.make_graph(
        [node], name,
        [helper.make_tensor_value_info(n, ONNX_TYPE[a.dtype.type], a.shape) for n, a in given],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs if o])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 8
    path = os.path.join(folder, "model.onnx")
    onnx.save(model, path)
    with tempfile.TemporaryDirectory() as scratch:
        spec = []
        for k, (n, a) in enumerate(given):
            file = os.path.join(scratch, f"{k}.bin")
            np.ascontiguousarray(a).tofile(file)
            spec.append({"name": n, "type": JS_TYPE[a.dtype.type], "dims": list(a.shape),
                         "file": file})
            with open(os.path.join(folder, "test_data_set_0", f"input_{k}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(a, n).SerializeToString())
        with open(os.path.join(scratch, "spec.json"), "w") as f:
            json.dump(spec, f)
        done = subprocess.run(["node", runner, path, os.path.join(scratch, "spec.json")],
                              capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"{name}: ONNX Runtime failed: {done.stderr.strip()}")
        result = json.loads(done.stdout)
    # The outputs typed with the shapes ONNX Runtime gave them, as ONNX's cases declare theirs.
    del model.graph.output[:]
    model.graph.output.extend(
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, result[o]["dims"])
         for o in outputs if o])
    onnx.save(model, path)
    for k, o in enumerate(o for o in outputs if o):
        got = np.array(result[o]["data"], np.float32).reshape(result[o]["dims"])
        with open(os.path.join(folder, "test_data_set_0", f"output_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(got, o).SerializeToString())
    shapes = ", ".join(f"{o} {result[o]['dims']}" for o in outputs if o)
    print(f"{name}: {shapes}")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    root = sys.argv[1]
    os.makedirs(root, exist_ok=True)
    rng = np.random.default_rng(11)
    f = lambda *shape: rng.standard_normal(shape).astype(np.float32)
    with tempfile.NamedTemporaryFile("w", suffix=".js", delete=False) as js:
        js.write(RUNNER)
    try:
        # GroupQueryAttention: B batches, S new tokens after P cached, N heads over KV (with
        # rotary positions, ONNX Runtime takes heads of a multiple of 16 only).
        def gqa(name, b, s, p, n, kv, h, packed=False, rotary=False, interleaved=False,
                rotary_half=None, prompt=False, **attrs):
            total = s if prompt else p + s
            query = f(b, s, (n + 2 * kv) * h) if packed else f(b, s, n * h)
            key = None if packed else f(b, s, kv * h)
            value = None if packed else f(b, s, kv * h)
            past = None if prompt else f(b, kv, p, h)
            past_v = None if prompt else f(b, kv, p, h)
            seqlens = np.full((b,), total - 1, np.int32)
            cos = sin = None
            if rotary:
                cos, sin = rotary_caches(64, rotary_half or h // 2)
            inputs = [("query", query), ("key", key), ("value", value), ("past_key", past),
                      ("past_value", past_v), ("seqlens_k", seqlens),
                      ("total_sequence_length", np.array([total], np.int32)),
                      ("cos_cache", cos), ("sin_cache", sin)]
            while inputs[-1][1] is None:
                inputs.pop()
            write_case(root, name, "GroupQueryAttention", inputs,
                       ["output", "present_key", "present_value"],
                       dict(num_heads=n, kv_num_heads=kv, do_rotary=int(rotary),
                            rotary_interleaved=int(interleaved), **attrs), js.name)

        gqa("test_gqa_prompt", 1, 5, 0, 4, 2, 8, prompt=True)
        gqa("test_gqa_decode_step", 2, 1, 6, 4, 2, 8)
        gqa("test_gqa_decode_chunk", 1, 3, 4, 6, 3, 8)
        gqa("test_gqa_packed_rotary", 1, 4, 3, 4, 2, 16, packed=True, rotary=True)
        gqa("test_gqa_rotary_interleaved", 1, 2, 5, 2, 1, 16, rotary=True, interleaved=True)
        gqa("test_gqa_rotary_prompt", 2, 6, 0, 4, 4, 16, rotary=True, prompt=True)
        gqa("test_gqa_local_window", 1, 4, 6, 2, 2, 8, local_window_size=3)
        gqa("test_gqa_softcap_scale", 1, 3, 2, 2, 1, 8, softcap=2.0, scale=0.5)
        gqa("test_gqa_smooth_softmax", 1, 2, 3, 2, 2, 8, smooth_softmax=1)

        # RotaryEmbedding: [B, S, hidden] with position ids or an offset, [B, N, S, H].
        def rotary(name, shape, positions, interleaved=False, half=None, **attrs):
            head = shape[-1] if len(shape) == 4 else shape[2] // attrs.get("num_heads", 1)
            cos, sin = rotary_caches(32, half or head // 2)
            write_case(root, name, "RotaryEmbedding",
                       [("input", f(*shape)), ("position_ids", positions),
                        ("cos_cache", cos), ("sin_cache", sin)], ["output"],
                       dict(interleaved=int(interleaved), **attrs), js.name)

        rotary("test_rotary_embedding_positions", (2, 3, 16), np.array(
            [[0, 1, 2], [5, 6, 7]], np.int64), num_heads=2)
        rotary("test_rotary_embedding_offset", (1, 4, 32), np.array([3], np.int64),
               num_heads=4)
        rotary("test_rotary_embedding_interleaved", (1, 2, 3, 8), np.array(
            [[1, 2, 3]], np.int64), interleaved=True)
        rotary("test_rotary_embedding_partial", (1, 3, 32), np.array([[0, 4, 9]], np.int64),
               half=4, num_heads=2, rotary_embedding_dim=8)
    finally:
        os.unlink(js.name)


if __name__ == "__main__":
    main()

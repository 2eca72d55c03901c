#!/usr/bin/python3
"""Writes a decoder shaped as ONNX Runtime's model builder writes language models, with numpy's
seeded random weights (nothing downloaded, no PyTorch):

- inputs input_ids[batch, sequence_length] and attention_mask[batch, total_sequence_length]
  (int64), past_key_values.N.key / .value [batch, kv heads, past_sequence_length, head];
  outputs logits[batch, sequence_length, vocabulary] and present.N.key / .value;
- seqlens_k and total_sequence_length computed from the mask in the graph (ReduceSum, Sub, Cast;
  Shape, Gather, Cast), as the builder does;
- per layer SimplifiedLayerNormalization (the first) or SkipSimplifiedLayerNormalization (the
  rest, carrying the residual), com.microsoft.GroupQueryAttention with rotary positions inside
  (cos/sin caches as initializers): layer 0 with separate q/k/v products, the others with one
  packed QKV product; a SiLU-gated MLP (Sigmoid, Mul);
- with --q4, every matrix product of the layers as com.microsoft.MatMulNBits (4-bit blocks of
  32), as the builder's int4 models are.

  scripts/make_gqa_decoder.py DIR [--q4]   writes DIR/tiny_gqa_decoder[.q4].onnx and
                                           tiny_gqa_decoder.prompt.npy (12 ids): 2 layers,
                                           hidden 64, 4 query and 2 kv heads of 16
  ... DIR --small [--q4]                   gqa_decoder30m[.q4].onnx (8 layers, hidden 512,
                                           8 query and 2 kv heads of 64, vocabulary 8192) and
                                           its prompt of 32 ids, for bench_generate

The expected tokens are ONNX Runtime's, made with tests/benchmarks/ort_generate.js on the file
(tests/models/README.md says how).
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

SIZES = {
    # vocabulary, hidden, query heads, kv heads, head, layers, MLP width, rotary positions
    "tiny": (96, 64, 4, 2, 16, 2, 128, 256),
    "small": (8192, 512, 8, 2, 64, 8, 1408, 2048),  # about 30M parameters
}


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out_dir = sys.argv[1]
    q4 = "--q4" in sys.argv[2:]
    size = "small" if "--small" in sys.argv[2:] else "tiny"
    global VOCAB, HIDDEN, HEADS, KV_HEADS, HEAD, LAYERS, FFN, POSITIONS
    VOCAB, HIDDEN, HEADS, KV_HEADS, HEAD, LAYERS, FFN, POSITIONS = SIZES[size]
    rng = np.random.default_rng(7)
    inits, nodes = [], []

    def weight(name, shape, scale=0.08):
        inits.append(numpy_helper.from_array((rng.standard_normal(shape) * scale)
                                             .astype(np.float32), name))
        return name

    def const(name, array):
        inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def node(op, inputs, outputs, domain="", **attrs):
        nodes.append(helper.make_node(op, inputs, outputs, name=outputs[0] + "_node",
                                      domain=domain, **attrs))
        return outputs[0]


    def matmul(x, name, k, n):
        if not q4:
            return node("MatMul", [x, weight(name, (k, n))], [name + "_out"])
        # 4-bit blocks of 32 along K, a scale and a packed zero point per block.
        w = rng.standard_normal((n, k)).astype(np.float32) * 0.08
        block = 32
        blocks = (k + block - 1) // block
        padded = np.zeros((n, blocks * block), np.float32)
        padded[:, :k] = w
        tiles = padded.reshape(n, blocks, block)
        lo, hi = tiles.min(axis=2), tiles.max(axis=2)
        scale = np.maximum(hi - lo, 1e-6) / 15
        zero = np.clip(np.round(-lo / scale), 0, 15).astype(np.uint8)
        codes = np.clip(np.round(tiles / scale[..., None]) + zero[..., None], 0, 15) \
            .astype(np.uint8)
        packed = (codes[..., 0::2] | (codes[..., 1::2] << 4)).astype(np.uint8)
        zeros = np.zeros((n, (blocks + 1) // 2), np.uint8)
        for b in range(blocks):
            zeros[:, b // 2] |= zero[:, b] << (4 * (b % 2))
        const(name + "_q", packed)
        const(name + "_scales", scale.astype(np.float32).reshape(-1))
        const(name + "_zeros", zeros.reshape(-1))
        return node("MatMulNBits", [x, name + "_q", name + "_scales", name + "_zeros"],
                    [name + "_out"], domain="com.microsoft", K=k, N=n, bits=4, block_size=block)

    # Rotary caches, as the builder stores them: cos/sin of position * inverse frequency.
    inv = 1.0 / (10000 ** (np.arange(0, HEAD, 2) / HEAD))
    angles = np.outer(np.arange(POSITIONS), inv)
    const("cos_cache", np.cos(angles).astype(np.float32))
    const("sin_cache", np.sin(angles).astype(np.float32))

    # seqlens_k = sum(mask) - 1 and the total length, from the mask.
    const("one_i64", np.array([1], np.int64))
    const("axis_one", np.array([1], np.int64))
    node("ReduceSum", ["attention_mask", "axis_one"], ["mask_sum"], keepdims=0)
    node("Sub", ["mask_sum", "one_i64"], ["mask_sub"])
    node("Cast", ["mask_sub"], ["seqlens_k"], to=TensorProto.INT32)
    node("Shape", ["attention_mask"], ["mask_shape"])
    const("index_one", np.array(1, np.int64))
    node("Gather", ["mask_shape", "index_one"], ["total_i64"], axis=0)
    node("Cast", ["total_i64"], ["total_sequence_length"], to=TensorProto.INT32)

    hidden = node("Gather", [weight("embed_tokens", (VOCAB, HIDDEN), 0.5), "input_ids"],
                  ["embeddings"])
    residual = hidden
    normed = node("SimplifiedLayerNormalization",
                  [hidden, weight("layers.0.input_norm", (HIDDEN,), 0.1)],
                  ["layers.0.input_norm_out"], axis=-1, epsilon=1e-5)
    inputs, outputs = [], []
    for layer in range(LAYERS):
        prefix = f"layers.{layer}"
        past_k, past_v = f"past_key_values.{layer}.key", f"past_key_values.{layer}.value"
        present_k, present_v = f"present.{layer}.key", f"present.{layer}.value"
        cache = ["batch_size", KV_HEADS, "past_sequence_length", HEAD]
        present_shape = ["batch_size", KV_HEADS, "total_sequence_length", HEAD]
        inputs += [helper.make_tensor_value_info(past_k, TensorProto.FLOAT, cache),
                   helper.make_tensor_value_info(past_v, TensorProto.FLOAT, cache)]
        outputs += [helper.make_tensor_value_info(present_k, TensorProto.FLOAT, present_shape),
                    helper.make_tensor_value_info(present_v, TensorProto.FLOAT, present_shape)]
        gqa = dict(domain="com.microsoft", num_heads=HEADS, kv_num_heads=KV_HEADS,
                   do_rotary=1, rotary_interleaved=0, local_window_size=-1)
        tail = [past_k, past_v, "seqlens_k", "total_sequence_length", "cos_cache", "sin_cache"]
        if layer == 0:
            q = matmul(normed, f"{prefix}.q_proj", HIDDEN, HEADS * HEAD)
            k = matmul(normed, f"{prefix}.k_proj", HIDDEN, KV_HEADS * HEAD)
            v = matmul(normed, f"{prefix}.v_proj", HIDDEN, KV_HEADS * HEAD)
            attn = node("GroupQueryAttention", [q, k, v] + tail,
                        [f"{prefix}.attn_out", present_k, present_v], **gqa)
        else:
            qkv = matmul(normed, f"{prefix}.qkv_proj", HIDDEN, (HEADS + 2 * KV_HEADS) * HEAD)
            attn = node("GroupQueryAttention", [qkv, "", ""] + tail,
                        [f"{prefix}.attn_out", present_k, present_v], **gqa)
        o = matmul(attn, f"{prefix}.o_proj", HEADS * HEAD, HIDDEN)
        # The residual and the next norm in one op, as the builder fuses them: outputs the
        # normed sum and (fourth) the sum, the mean and inverse deviation left out.
        mid = f"{prefix}.residual_mid"
        node("SkipSimplifiedLayerNormalization",
             [o, residual, weight(f"{prefix}.post_norm", (HIDDEN,), 0.1)],
             [f"{prefix}.post_norm_out", "", "", mid], domain="com.microsoft", epsilon=1e-5)
        normed = f"{prefix}.post_norm_out"
        gate = matmul(normed, f"{prefix}.gate_proj", HIDDEN, FFN)
        up = matmul(normed, f"{prefix}.up_proj", HIDDEN, FFN)
        sig = node("Sigmoid", [gate], [f"{prefix}.gate_sigmoid"])
        silu = node("Mul", [gate, sig], [f"{prefix}.gate_silu"])
        act = node("Mul", [silu, up], [f"{prefix}.mlp_act"])
        down = matmul(act, f"{prefix}.down_proj", FFN, HIDDEN)
        next_norm = f"layers.{layer + 1}.input_norm" if layer + 1 < LAYERS else "final_norm"
        residual = f"{prefix}.residual_out"
        node("SkipSimplifiedLayerNormalization",
             [down, mid, weight(next_norm, (HIDDEN,), 0.1)],
             [f"{next_norm}_out", "", "", residual], domain="com.microsoft", epsilon=1e-5)
        normed = f"{next_norm}_out"
    logits = node("MatMul", [normed, weight("lm_head", (HIDDEN, VOCAB))], ["logits"])
    graph = helper.make_graph(
        nodes, "tiny_gqa_decoder",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64,
                                       ["batch_size", "sequence_length"]),
         helper.make_tensor_value_info("attention_mask", TensorProto.INT64,
                                       ["batch_size", "total_sequence_length"])] + inputs,
        [helper.make_tensor_value_info(logits, TensorProto.FLOAT,
                                       ["batch_size", "sequence_length", VOCAB])] + outputs,
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 8
    stem = "tiny_gqa_decoder" if size == "tiny" else "gqa_decoder30m"
    name = stem + (".q4.onnx" if q4 else ".onnx")
    onnx.save(model, os.path.join(out_dir, name))
    prompt = np.random.default_rng(3).integers(0, VOCAB, (1, 12 if size == "tiny" else 32))
    np.save(os.path.join(out_dir, stem + ".prompt.npy"), prompt.astype(np.int64))
    print(f"wrote {name}: {sum(np.prod(i.dims) for i in inits)} values")


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Rewrites an ONNX model's matrix products with constant 2-D weights as ONNX Runtime's
MatMulNBits (com.microsoft): the weights in blocks of `bits`-bit codes along K, a scale and a
zero point per block (asymmetric, packed as ONNX Runtime packs them), as ONNX Runtime's
matmul_4bits_quantizer writes a model. For placer's 4-bit tests; numpy and onnx only.

    /usr/bin/python3 scripts/quantize_nbits.py IN.onnx OUT.onnx [--bits 4] [--block 32]
"""
import argparse
import sys

try:
    import numpy as np
    import onnx
    from onnx import helper, numpy_helper
except ImportError as missing:
    sys.exit("quantize_nbits.py needs numpy and onnx (python3-onnx for /usr/bin/python3): "
             + str(missing))


def quantize(weight, bits, block):
    """weight [K, N] -> codes uint8 [N, blocks, block*bits/8], scales [N*blocks], zero points
    packed uint8 [N * ceil(blocks*bits/8)]."""
    k, n = weight.shape
    blocks = (k + block - 1) // block
    padded = np.zeros((blocks * block, n), dtype=np.float32)
    padded[:k] = weight
    columns = padded.T.reshape(n, blocks, block)  # [N, blocks, block]
    low = np.minimum(columns.min(axis=2), 0.0)
    high = np.maximum(columns.max(axis=2), 0.0)
    levels = (1 << bits) - 1
    scales = np.where(high > low, (high - low) / levels, 1.0).astype(np.float32)
    zeros = np.clip(np.round(-low / scales), 0, levels).astype(np.uint8)
    codes = np.clip(np.round(columns / scales[:, :, None]) + zeros[:, :, None], 0, levels)
    codes = codes.astype(np.uint8)
    per_byte = 8 // bits
    shifts = (np.arange(per_byte) * bits).astype(np.uint8)
    packed = (codes.reshape(n, blocks, block // per_byte, per_byte) << shifts).sum(
        axis=3).astype(np.uint8)
    zero_row = (blocks + per_byte - 1) // per_byte
    zero_padded = np.zeros((n, zero_row * per_byte), dtype=np.uint8)
    zero_padded[:, :blocks] = zeros
    packed_zeros = (zero_padded.reshape(n, zero_row, per_byte) << shifts).sum(axis=2).astype(
        np.uint8)
    return packed, scales.reshape(-1), packed_zeros.reshape(-1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("source")
    parser.add_argument("target")
    parser.add_argument("--bits", type=int, default=4, choices=(2, 4, 8))
    parser.add_argument("--block", type=int, default=32)
    args = parser.parse_args()
    model = onnx.load(args.source)
    graph = model.graph
    weights = {t.name: t for t in graph.initializer}
    nodes, replaced = [], 0
    for node in graph.node:
        weight = weights.get(node.input[1]) if node.op_type == "MatMul" else None
        if weight is None or len(weight.dims) != 2 or weight.data_type != onnx.TensorProto.FLOAT:
            nodes.append(node)
            continue
        values = numpy_helper.to_array(weight)
        k, n = values.shape
        codes, scales, zeros = quantize(values, args.bits, args.block)
        base = node.input[1] + "_q"
        graph.initializer.extend([numpy_helper.from_array(codes, base + "_codes"),
                                  numpy_helper.from_array(scales, base + "_scales"),
                                  numpy_helper.from_array(zeros, base + "_zeros")])
        nodes.append(helper.make_node(
            "MatMulNBits", [node.input[0], base + "_codes", base + "_scales", base + "_zeros"],
            list(node.output), name=node.name, domain="com.microsoft", K=k, N=n, bits=args.bits,
            block_size=args.block))
        replaced += 1
    used = {name for node in nodes for name in node.input}
    kept = [t for t in graph.initializer if t.name in used]
    del graph.initializer[:]
    graph.initializer.extend(kept)
    del graph.node[:]
    graph.node.extend(nodes)
    if not any(o.domain == "com.microsoft" for o in model.opset_import):
        model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    onnx.save(model, args.target)
    print(f"{args.target}: {replaced} matrix products in {args.bits}-bit blocks of {args.block}")


if __name__ == "__main__":
    main()

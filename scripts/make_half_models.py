#!/usr/bin/python3
"""Writes the 16-bit test models: a small convolutional network and a small transformer block,
each exported from PyTorch in float32 and converted to float16 and to bfloat16 (every float
initializer, constant, input, output and cast), with one input and the float32 model's output
on it, for tests/core/session/tst_halfprecision.cpp; and the committed tiny decoder
(scripts/make_decoder_model.py tiny) converted the same way, for tst_generate.

    /usr/bin/python3 scripts/make_half_models.py tests/models

Needs PyTorch and onnx (Debian's python3-torch and python3-onnx belong to /usr/bin/python3).
"""
import os
import sys

try:
    import numpy as np
    import onnx
    import torch
    from onnx import TensorProto, numpy_helper
except ImportError as missing:
    sys.exit("make_half_models.py needs PyTorch and onnx (python3-torch, python3-onnx for "
             "/usr/bin/python3): " + str(missing))


class SmallCnn(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = torch.nn.BatchNorm2d(8)
        self.conv2 = torch.nn.Conv2d(8, 16, 3, padding=1, stride=2)
        self.fc = torch.nn.Linear(16, 10)

    def forward(self, x):
        x = torch.relu(self.bn1(self.conv1(x)))
        x = torch.nn.functional.max_pool2d(x, 2)
        x = torch.nn.functional.gelu(self.conv2(x))
        x = torch.nn.functional.adaptive_avg_pool2d(x, 1).flatten(1)
        return torch.softmax(self.fc(x), dim=-1)


class SmallTransformer(torch.nn.Module):
    def __init__(self, width=32, heads=4):
        super().__init__()
        self.heads = heads
        self.norm1 = torch.nn.LayerNorm(width)
        self.qkv = torch.nn.Linear(width, 3 * width)
        self.out = torch.nn.Linear(width, width)
        self.norm2 = torch.nn.LayerNorm(width)
        self.up = torch.nn.Linear(width, 2 * width)
        self.down = torch.nn.Linear(2 * width, width)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(self.norm1(x)).split(c, dim=-1)
        shape = (b, t, self.heads, c // self.heads)
        q, k, v = (y.reshape(shape).transpose(1, 2) for y in (q, k, v))
        scores = torch.softmax(q @ k.transpose(-1, -2) / (c // self.heads) ** 0.5, dim=-1)
        x = x + self.out((scores @ v).transpose(1, 2).reshape(b, t, c))
        return x + self.down(torch.nn.functional.gelu(self.up(self.norm2(x))))


def to_bfloat16_bits(values):
    bits = np.asarray(values, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + np.uint64(0x7FFF) + ((bits >> np.uint64(16)) & np.uint64(1))) >> np.uint64(16)
    return rounded.astype(np.uint16)


def narrow_tensor(tensor, target):
    if tensor.data_type != TensorProto.FLOAT:
        return tensor
    values = numpy_helper.to_array(tensor)
    if target == TensorProto.FLOAT16:
        made = numpy_helper.from_array(values.astype(np.float16), tensor.name)
    else:
        made = TensorProto()
        made.name = tensor.name
        made.dims.extend(values.shape)
        made.data_type = TensorProto.BFLOAT16
        made.raw_data = to_bfloat16_bits(values).tobytes()
    return made


def narrow_model(model, target):
    """The model with every float32 tensor made `target` (FLOAT16 or BFLOAT16)."""
    narrowed = onnx.ModelProto()
    narrowed.CopyFrom(model)
    graph = narrowed.graph
    for i, initializer in enumerate(graph.initializer):
        graph.initializer[i].CopyFrom(narrow_tensor(initializer, target))
    for value in list(graph.input) + list(graph.output):
        if value.type.tensor_type.elem_type == TensorProto.FLOAT:
            value.type.tensor_type.elem_type = target
    del graph.value_info[:]
    for node in graph.node:
        for attribute in node.attribute:
            if node.op_type == "Constant" and attribute.name == "value":
                attribute.t.CopyFrom(narrow_tensor(attribute.t, target))
            if node.op_type == "Cast" and attribute.name == "to" and attribute.i == TensorProto.FLOAT:
                attribute.i = target
    onnx.checker.check_model(narrowed)
    return narrowed


def write(directory, name, module, example):
    torch.manual_seed(0)
    module.eval()
    path = os.path.join(directory, name + ".onnx")
    torch.onnx.export(module, (example,), path, opset_version=17, input_names=["x"],
                      output_names=["y"])
    model = onnx.load(path)
    with torch.no_grad():
        expected = module(example).numpy()
    np.save(os.path.join(directory, name + ".x.npy"), example.numpy())
    np.save(os.path.join(directory, name + ".y.npy"), expected)
    for suffix, target in (("f16", TensorProto.FLOAT16), ("bf16", TensorProto.BFLOAT16)):
        onnx.save(narrow_model(model, target), os.path.join(directory, f"{name}.{suffix}.onnx"))
    print("wrote", path, "and its f16 and bf16 versions")


def main():
    directory = sys.argv[1] if len(sys.argv) > 1 else "tests/models"
    torch.manual_seed(0)
    write(directory, "half_cnn", SmallCnn(), torch.randn(2, 3, 16, 16))
    torch.manual_seed(0)
    write(directory, "half_transformer", SmallTransformer(), torch.randn(2, 8, 32))
    decoder = os.path.join(directory, "tiny_decoder.onnx")
    if os.path.exists(decoder):
        model = onnx.load(decoder)
        for suffix, target in (("f16", TensorProto.FLOAT16), ("bf16", TensorProto.BFLOAT16)):
            # The causal mask's float32 minimum overflows to -inf in float16: masked all the same.
            with np.errstate(over="ignore"):
                narrowed = narrow_model(model, target)
            onnx.save(narrowed, os.path.join(directory, f"tiny_decoder.{suffix}.onnx"))
        print("wrote", decoder, "in float16 and bfloat16")


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Writes Llama-shaped decoders with a KV cache, exported from PyTorch as users export them
(opset 14, dynamic axes T for the new tokens and P for the cached ones), and PyTorch's greedy
continuation of a prompt as the expected tokens:

- RMSNorm; rotary positions computed from arange(P, P + T); grouped-query attention (the
  key/value heads widened with expand + reshape, as PyTorch 1.13 exports repeat_interleave
  wrongly under dynamic axes); a causal mask over the cache; a SwiGLU MLP;
- inputs input_ids[1, T] (int64) and past_key_i / past_value_i [1, KV, P, D] for each layer i;
  outputs logits[1, T, V] and present_key_i / present_value_i [1, KV, P + T, D].

  scripts/make_decoder_model.py tiny DIR     the committed test model (tests/models/): 2 layers,
                                             hidden 64, 4 query heads and 2 key/value heads of
                                             16, vocabulary 128 (about 110k parameters), with
                                             tiny_decoder.prompt.npy (32 ids) and
                                             tiny_decoder.expected.npy (PyTorch's 64 greedy
                                             tokens after it)
  scripts/make_decoder_model.py tiny-hf DIR  the same with Hugging Face's names and a position_ids
                                             input (tests/models/tiny_decoder_hf.*)
  scripts/make_decoder_model.py small DIR    30M parameters (8 layers, hidden 512, 8 query heads
                                             and 2 key/value heads of 64, vocabulary 8192),
                                             weights as external data: decoder30m.*
  scripts/make_decoder_model.py large DIR    110M parameters (12 layers, hidden 768, 12 query
                                             heads and 4 key/value heads of 64, vocabulary
                                             16384): decoder110m.*

The benchmarks read the small and large ones where $PLACER_ONNX_MODELS names DIR; they are never
committed. Weights are random (seeded): nothing is downloaded.
"""
import math
import os
import sys

import numpy as np

try:
    import torch
    from torch import nn
except ImportError:
    sys.exit("make_decoder_model.py needs PyTorch: Debian's python3-torch, run with /usr/bin/python3 "
             "(the committed tests/models/tiny_decoder* need nothing)")


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class Attention(nn.Module):
    def __init__(self, hidden, heads, kv_heads, head_dim):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, head_dim
        self.q = nn.Linear(hidden, heads * head_dim, bias=False)
        self.k = nn.Linear(hidden, kv_heads * head_dim, bias=False)
        self.v = nn.Linear(hidden, kv_heads * head_dim, bias=False)
        self.o = nn.Linear(heads * head_dim, hidden, bias=False)

    def forward(self, x, cos, sin, mask, past_k, past_v):
        b, t = x.shape[0], x.shape[1]
        q = self.q(x).view(b, t, self.heads, self.head_dim).transpose(1, 2)
        k = self.k(x).view(b, t, self.kv_heads, self.head_dim).transpose(1, 2)
        v = self.v(x).view(b, t, self.kv_heads, self.head_dim).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        k = torch.cat([past_k, k], dim=2)
        v = torch.cat([past_v, v], dim=2)
        present_k, present_v = k, v
        group = self.heads // self.kv_heads
        s = k.shape[2]
        k = k[:, :, None].expand(b, self.kv_heads, group, s, self.head_dim)
        k = k.reshape(b, self.heads, s, self.head_dim)
        v = v[:, :, None].expand(b, self.kv_heads, group, s, self.head_dim)
        v = v.reshape(b, self.heads, s, self.head_dim)
        scores = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(self.head_dim) + mask
        p = torch.softmax(scores, dim=-1)
        out = torch.matmul(p, v).transpose(1, 2).reshape(b, t, self.heads * self.head_dim)
        return self.o(out), present_k, present_v


class Block(nn.Module):
    def __init__(self, hidden, heads, kv_heads, head_dim, inner):
        super().__init__()
        self.norm1 = RMSNorm(hidden)
        self.attn = Attention(hidden, heads, kv_heads, head_dim)
        self.norm2 = RMSNorm(hidden)
        self.gate = nn.Linear(hidden, inner, bias=False)
        self.up = nn.Linear(hidden, inner, bias=False)
        self.down = nn.Linear(inner, hidden, bias=False)

    def forward(self, x, cos, sin, mask, past_k, past_v):
        a, pk, pv = self.attn(self.norm1(x), cos, sin, mask, past_k, past_v)
        x = x + a
        h = self.norm2(x)
        x = x + self.down(torch.nn.functional.silu(self.gate(h)) * self.up(h))
        return x, pk, pv


class Decoder(nn.Module):
    def __init__(self, vocab, hidden, layers, heads, kv_heads, head_dim, inner):
        super().__init__()
        self.head_dim = head_dim
        self.hf = False
        self.embed = nn.Embedding(vocab, hidden)
        self.blocks = nn.ModuleList(
            [Block(hidden, heads, kv_heads, head_dim, inner) for _ in range(layers)])
        self.norm = RMSNorm(hidden)
        self.lm_head = nn.Linear(hidden, vocab, bias=False)
        inv = 1.0 / (10000 ** (torch.arange(0, head_dim, 2).float() / head_dim))
        self.register_buffer("inv_freq", inv)

    def forward(self, input_ids, *past):
        positions_given = None
        if self.hf:
            positions_given, past = past[0], past[1:]
        t = input_ids.shape[1]
        p = past[0].shape[2]
        if positions_given is not None:
            positions = positions_given[0].float()
        else:
            positions = torch.arange(p, p + t, dtype=torch.int64).float()
        freqs = positions[:, None] * self.inv_freq[None, :]
        angles = torch.cat([freqs, freqs], dim=-1)
        cos, sin = angles.cos()[None, None], angles.sin()[None, None]
        # Query i (at position p + i) sees keys 0 .. p + i.
        rows = torch.arange(p, p + t, dtype=torch.int64)[:, None]
        cols = torch.arange(0, p + t, dtype=torch.int64)[None, :]
        mask = torch.where(cols > rows, torch.tensor(-1e9), torch.tensor(0.0))[None, None]
        x = self.embed(input_ids)
        presents = []
        for i, block in enumerate(self.blocks):
            x, pk, pv = block(x, cos, sin, mask, past[2 * i], past[2 * i + 1])
            presents += [pk, pv]
        return (self.lm_head(self.norm(x)), *presents)


CONFIGS = {
    # name: vocab, hidden, layers, heads, kv heads, head dim, inner
    "tiny": ("tiny_decoder", 128, 64, 2, 4, 2, 16, 128),
    # Hugging Face's names: input_ids and position_ids [batch_size, sequence_length],
    # past_key_values.K.key/value in, present.K.key/value out, logits.
    "tiny-hf": ("tiny_decoder_hf", 128, 64, 2, 4, 2, 16, 128),
    "small": ("decoder30m", 8192, 512, 8, 8, 2, 64, 1536),
    "large": ("decoder110m", 16384, 768, 12, 12, 4, 64, 2304),
}


def greedy(model, prompt, steps, layers, kv_heads, head_dim):
    past = [torch.zeros(1, kv_heads, 0, head_dim) for _ in range(2 * layers)]
    ids = torch.tensor(prompt[None], dtype=torch.int64)
    out = []
    with torch.no_grad():
        for _ in range(steps):
            p = past[0].shape[2]
            extra = [torch.arange(p, p + ids.shape[1])[None]] if model.hf else []
            logits, *past = model(ids, *extra, *past)
            token = int(logits[0, -1].argmax())
            out.append(token)
            ids = torch.tensor([[token]], dtype=torch.int64)
    return np.array(out, dtype=np.int64)


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in CONFIGS:
        sys.exit(__doc__)
    name, vocab, hidden, layers, heads, kv_heads, head_dim, inner = CONFIGS[sys.argv[1]]
    folder = sys.argv[2]
    os.makedirs(folder, exist_ok=True)
    torch.manual_seed(11)
    model = Decoder(vocab, hidden, layers, heads, kv_heads, head_dim, inner).eval()
    hf = sys.argv[1] == "tiny-hf"
    model.hf = hf
    if sys.argv[1] in ("tiny", "tiny-hf"):
        # Larger weights than the default, so that greedy decoding wanders over the vocabulary
        # rather than repeating one token.
        with torch.no_grad():
            for param in model.parameters():
                if param.dim() == 2:
                    param.mul_(2.5)
    names_in = ["input_ids"] + (["position_ids"] if hf else [])
    names_out = ["logits"]
    if hf:
        axes = {"input_ids": {0: "batch_size", 1: "sequence_length"},
                "position_ids": {0: "batch_size", 1: "sequence_length"},
                "logits": {0: "batch_size", 1: "sequence_length"}}
    else:
        axes = {"input_ids": {1: "T"}, "logits": {1: "T"}}
    for i in range(layers):
        for kind in ("key", "value"):
            past_name = f"past_key_values.{i}.{kind}" if hf else f"past_{kind}_{i}"
            present_name = f"present.{i}.{kind}" if hf else f"present_{kind}_{i}"
            names_in.append(past_name)
            names_out.append(present_name)
            if hf:
                axes[past_name] = {0: "batch_size", 2: "past_sequence_length"}
                axes[present_name] = {0: "batch_size", 2: "total_sequence_length"}
            else:
                axes[past_name] = {2: "P"}
                axes[present_name] = {2: "P+T"}
    example = (torch.zeros(1, 3, dtype=torch.int64),
               *([torch.arange(5, 8)[None]] if hf else []),
               *[torch.zeros(1, kv_heads, 5, head_dim) for _ in range(2 * layers)])
    path = os.path.join(folder, name + ".onnx")
    torch.onnx.export(model, example, path, input_names=names_in, output_names=names_out,
                      dynamic_axes=axes, opset_version=14, do_constant_folding=True)
    if sys.argv[1] not in ("tiny", "tiny-hf"):
        import onnx
        m = onnx.load(path)
        onnx.save_model(m, path, save_as_external_data=True, all_tensors_to_one_file=True,
                        location=name + ".onnx.data", size_threshold=1024)
    rng = np.random.default_rng(5)
    prompt = rng.integers(0, vocab, size=32, dtype=np.int64)
    np.save(os.path.join(folder, name + ".prompt.npy"), prompt[None])
    expected = greedy(model, prompt, 64, layers, kv_heads, head_dim)
    np.save(os.path.join(folder, name + ".expected.npy"), expected[None])
    params = sum(p.numel() for p in model.parameters())
    print(f"{path}: {params} parameters; greedy: {expected.tolist()}")


if __name__ == "__main__":
    main()

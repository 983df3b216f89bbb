# PyTorch's nn.TransformerEncoderLayer as an attntrace lesson (docs/pytorch.md).
# Builds a seeded layer, saves its weights in attntrace's layout as .npy files
# and a lesson that loads them, and saves what torch computes (the layer's
# output, the self-attention's output and its per-head weights) as an npy
# trace that `attntrace diff` reads. Run from the repository:
#   /usr/bin/python3 docs/examples/torch_to_lesson.py
# It writes docs/examples/torch/ (committed, so the commands in pytorch.md run without torch).
import json
from pathlib import Path

import numpy as np
import torch

T, C, NH, F = 4, 8, 2, 16                        # tokens, d_model, heads, d_ff
out = Path(__file__).parent / "torch"
(out / "weights").mkdir(parents=True, exist_ok=True)
(out / "torch-trace").mkdir(exist_ok=True)

torch.manual_seed(0)
layer = torch.nn.TransformerEncoderLayer(d_model=C, nhead=NH, dim_feedforward=F, dropout=0.0,
                                         activation="gelu", batch_first=True, norm_first=False)
layer.eval()
x = torch.randn(1, T, C)                         # (batch 1, T, C): batch_first

def save(path, a):
    np.save(path, np.ascontiguousarray(a.detach().numpy(), dtype="<f4"))

# torch stores a Linear's weight as (out, in) and computes x @ W.T + b;
# attntrace's weights are (in, out), used as x @ W + b: every matrix is transposed.
sa = layer.self_attn
W_q, W_k, W_v = sa.in_proj_weight.chunk(3, dim=0)   # (3C, C) -> three (C, C), rows = outputs
b_q, b_k, b_v = sa.in_proj_bias.chunk(3)            # (3C) -> three (C)
weights = {
    "W_Q": W_q.T, "W_K": W_k.T, "W_V": W_v.T, "b_Q": b_q, "b_K": b_k, "b_V": b_v,
    "W_O": sa.out_proj.weight.T, "b_O": sa.out_proj.bias,
    "ln1_gamma": layer.norm1.weight, "ln1_beta": layer.norm1.bias,
    "W_1": layer.linear1.weight.T, "b_1": layer.linear1.bias,   # (F, C) -> (C, F)
    "W_2": layer.linear2.weight.T, "b_2": layer.linear2.bias,   # (C, F) -> (F, C)
    "ln2_gamma": layer.norm2.weight, "ln2_beta": layer.norm2.bias,
}
for name, w in weights.items():
    save(out / "weights" / f"{name}.npy", w)
save(out / "weights" / "X.npy", x[0])

lesson = {
    "format": "attntrace-lesson", "version": 1, "id": "torch-encoder-layer",
    "title": "nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16, activation='gelu')",
    "source": {"document": "docs/examples/torch_to_lesson.py", "title": "PyTorch", "section": "seed 0"},
    "tokens": [f"t{i}" for i in range(T)],
    "config": {"d_model": C, "heads": NH, "d_ff": F, "mask": "none", "activation": "gelu",
               "eps": layer.norm1.eps},
    "inputs": {"X": {"npy": "weights/X.npy"}},
    "weights": {name: {"npy": f"weights/{name}.npy"} for name in weights},
}
(out / "lesson.json").write_text(json.dumps(lesson, indent=1) + "\n")

# What torch computes, named by attntrace's steps (docs/steps.md):
with torch.no_grad():
    y = layer(x)                                 # the layer's output: norm2(...)
    attn_out, attn_w = sa(x, x, x, need_weights=True, average_attn_weights=False)
steps = {
    "blocks.0.hook_attn_out": attn_out[0],       # (T, C): out_proj(concat of heads)
    "blocks.0.attn.hook_pattern": attn_w[0],     # (NH, T, T): softmax per head, not averaged
    "blocks.0.ln2.hook_normalized": y[0],        # (T, C)
}
index = {"format": "attntrace-npy", "version": 1,
         "lesson": {"id": "torch-encoder-layer", "title": "torch " + torch.__version__}, "steps": []}
for name, a in steps.items():
    save(out / "torch-trace" / f"{name}.npy", a)
    index["steps"].append({"name": name, "file": f"{name}.npy", "shape": list(a.shape)})
(out / "torch-trace" / "index.json").write_text(json.dumps(index, indent=1) + "\n")
print("wrote", out)

#!/usr/bin/python3
"""A tiny Phi (Phi-2's architecture) checkpoint for the tests, made without a download.

Builds Phi in plain PyTorch from its published definition (Hugging Face's
modeling_phi.py, PhiForCausalLM): token embeddings (embed_tokens) without
learned positions; each block has ONE LayerNorm (input_layernorm, with a
bias) whose output both the attention and the MLP read, side by side:
x + attn(ln(x)) + mlp(ln(x)); q_proj, k_proj, v_proj and the output
projection `dense`, all with biases; rotary positions on the first
int(head_dim * partial_rotary_factor) dimensions of each head in the half
layout (rotate_half), the rest passed through; an MLP fc1 -> gelu_new (GELU's
tanh form) -> fc2 with biases; final_layernorm; lm_head with a weight AND a
bias, untied. Random weights from a fixed seed, saved as a Hugging Face
folder:

  tiny-phi/  config.json (Phi-2's partial_rotary_factor 0.4: 4 of each
             head's 10 dimensions rotated; num_key_value_heads null, as
             PhiConfig allows: one K/V head per query head),
             model.safetensors (F32, the body under "model.", lm_head beside
             it), tokenizer.json (tiny-gpt2's byte-level BPE), reference.json

reference.json holds, for tiny-gpt2's reference texts and ids, in float64
(the same weights, the forward run in double): block 0's rotated queries,
attention pattern and MLP output (which reads the block's one norm), the
residual stream after block 1, the final LayerNorm's output and the last
position's logits (lm_head's bias added); and the last logits of text 0
with tie_word_embeddings true (the embedding table as the head's weight,
lm_head.bias still added, as PhiForCausalLM ties only the weight).

Run with Debian's python (python3-torch): /usr/bin/python3 tests/models/make_tiny_phi.py
"""
import json
import math
import os
import shutil

import torch

from make_tiny_models import gelu_new, rounded, write_json, write_safetensors

HERE = os.path.dirname(os.path.abspath(__file__))
SEED = 31
C, HEADS, LAYERS, FF, POSITIONS = 20, 2, 2, 48, 64
PARTIAL_ROTARY, BASE, EPS = 0.4, 10000.0, 1e-5


def layer_norm(x, w, b):
    return torch.nn.functional.layer_norm(x, (x.shape[-1],), w, b, EPS)


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


def forward(p, ids, keep, tied=False):
    """PhiForCausalLM's forward over one sequence; p: name -> float64 tensor."""
    T, hs = len(ids), C // HEADS
    rd = int(hs * PARTIAL_ROTARY)
    x = p["model.embed_tokens.weight"][ids]
    inv_freq = 1.0 / (BASE ** (torch.arange(0, rd, 2, dtype=torch.float64) / rd))
    freqs = torch.outer(torch.arange(T, dtype=torch.float64), inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)  # (T, rd)
    cos, sin = emb.cos(), emb.sin()
    causal = torch.triu(torch.ones(T, T, dtype=torch.bool), 1)
    for i in range(LAYERS):
        b = f"model.layers.{i}."
        h = layer_norm(x, p[b + "input_layernorm.weight"], p[b + "input_layernorm.bias"])  # read by both branches

        def linear(t, name):
            return t @ p[b + name + ".weight"].T + p[b + name + ".bias"]

        q, k, v = (linear(h, "self_attn." + n).view(T, HEADS, hs).transpose(0, 1) for n in ("q_proj", "k_proj", "v_proj"))
        q = torch.cat((q[..., :rd] * cos + rotate_half(q[..., :rd]) * sin, q[..., rd:]), dim=-1)
        k = torch.cat((k[..., :rd] * cos + rotate_half(k[..., :rd]) * sin, k[..., rd:]), dim=-1)
        s = (q @ k.transpose(-1, -2)) * hs ** -0.5
        pattern = torch.softmax(s.masked_fill(causal, float("-inf")), dim=-1)
        attn = linear((pattern @ v).transpose(0, 1).reshape(T, C), "self_attn.dense")
        mlp = linear(gelu_new(linear(h, "mlp.fc1")), "mlp.fc2")
        if i == 0:
            keep["blocks.0.attn.hook_rot_q"] = q.transpose(0, 1)  # (T, H, hs)
            keep["blocks.0.attn.hook_pattern"] = pattern
            keep["blocks.0.hook_mlp_out"] = mlp
        x = attn + mlp + x
        keep[f"blocks.{i}.hook_resid_post"] = x
    n = layer_norm(x, p["model.final_layernorm.weight"], p["model.final_layernorm.bias"])
    keep["ln_final.hook_normalized"] = n
    W = p["model.embed_tokens.weight"] if tied else p["lm_head.weight"]
    return n @ W.T + p["lm_head.bias"]


def make_weights(vocab_size):
    g = torch.Generator().manual_seed(SEED)

    def normal(*shape, std):
        return torch.randn(*shape, generator=g) * std

    p = {"model.embed_tokens.weight": normal(vocab_size, C, std=0.5)}
    for i in range(LAYERS):
        b = f"model.layers.{i}."
        p[b + "input_layernorm.weight"] = 1 + normal(C, std=0.1)
        p[b + "input_layernorm.bias"] = normal(C, std=0.1)
        for n in ("q_proj", "k_proj", "v_proj"):
            p[b + f"self_attn.{n}.weight"] = normal(C, C, std=0.4)
            p[b + f"self_attn.{n}.bias"] = normal(C, std=0.1)
        p[b + "self_attn.dense.weight"] = normal(C, C, std=0.2)
        p[b + "self_attn.dense.bias"] = normal(C, std=0.05)
        p[b + "mlp.fc1.weight"] = normal(FF, C, std=0.2)
        p[b + "mlp.fc1.bias"] = normal(FF, std=0.1)
        p[b + "mlp.fc2.weight"] = normal(C, FF, std=0.1)
        p[b + "mlp.fc2.bias"] = normal(C, std=0.05)
    p["model.final_layernorm.weight"] = 1 + normal(C, std=0.1)
    p["model.final_layernorm.bias"] = normal(C, std=0.1)
    p["lm_head.weight"] = normal(vocab_size, C, std=0.3)
    p["lm_head.bias"] = normal(vocab_size, std=0.5)  # large enough to move the next token: held by the tests
    return p


def main():
    torch.set_num_threads(1)
    gpt2 = os.path.join(HERE, "tiny-gpt2")
    with open(os.path.join(gpt2, "vocab.json"), encoding="utf-8") as f:
        V = len(json.load(f))
    with open(os.path.join(gpt2, "reference.json"), encoding="utf-8") as f:
        texts = [{"text": t["text"], "ids": t["ids"]} for t in json.load(f)["texts"]]
    p32 = make_weights(V)
    d = os.path.join(HERE, "tiny-phi")
    os.makedirs(d, exist_ok=True)
    write_json(os.path.join(d, "config.json"), {
        "model_type": "phi", "architectures": ["PhiForCausalLM"], "hidden_size": C,
        "num_attention_heads": HEADS, "num_key_value_heads": None, "num_hidden_layers": LAYERS,
        "intermediate_size": FF, "max_position_embeddings": POSITIONS, "vocab_size": V,
        "partial_rotary_factor": PARTIAL_ROTARY, "rope_theta": BASE, "rope_scaling": None, "qk_layernorm": False,
        "layer_norm_eps": EPS, "hidden_act": "gelu_new", "tie_word_embeddings": False, "resid_pdrop": 0.1,
        "embd_pdrop": 0.0, "attention_dropout": 0.0, "bos_token_id": V - 1, "eos_token_id": V - 1,
        "torch_dtype": "float32"})
    write_safetensors(os.path.join(d, "model.safetensors"), p32)
    shutil.copyfile(os.path.join(gpt2, "tokenizer.json"), os.path.join(d, "tokenizer.json"))

    ref = {"made_by": "tests/models/make_tiny_phi.py (seed %d): float64 forward of the same weights" % SEED,
           "texts": []}
    p64 = {k: v.double() for k, v in p32.items()}
    for t in texts:
        keep = {}
        logits = forward(p64, t["ids"], keep)
        ref["texts"].append(dict(t, **{name: rounded(keep[name]) for name in (
            "blocks.0.attn.hook_rot_q", "blocks.0.attn.hook_pattern", "blocks.0.hook_mlp_out",
            "blocks.1.hook_resid_post", "ln_final.hook_normalized")}, last_logits=rounded(logits[-1])))
    ref["tied"] = {"ids": texts[0]["ids"], "last_logits": rounded(forward(p64, texts[0]["ids"], {}, True)[-1])}
    write_json(os.path.join(d, "reference.json"), ref)


if __name__ == "__main__":
    main()

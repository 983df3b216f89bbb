#!/usr/bin/python3
"""A tiny GPT-NeoX (Pythia) checkpoint for the tests, made without a download.

Builds GPT-NeoX in plain PyTorch from its published definition (Hugging
Face's modeling_gpt_neox.py): token embeddings (embed_in) without learned
positions; pre-norm blocks with LayerNorm whose FFN, with
use_parallel_residual, reads the block's input beside the attention
(x + attn(ln1(x)) + mlp(ln2(x))); Q, K and V from one query_key_value
nn.Linear whose output is laid out head by head (for each head its q, k, v,
head_size each); rotary positions on the first rotary_pct of each head's
dimensions in the half layout (rotate_half), the rest passed through; GELU
with erf; a final LayerNorm and an untied embed_out. Random weights from a
fixed seed, saved as a Hugging Face folder:

  tiny-neox/  config.json (rotary_pct 0.5: 4 of each head's 8 dimensions
              rotated), model.safetensors (F32, under "gpt_neox.", embed_out
              beside it, and each block's rotary_emb.inv_freq buffer as
              older checkpoints carry it), tokenizer.json (tiny-gpt2's
              byte-level BPE), reference.json

reference.json holds, for tiny-gpt2's reference texts and ids, in float64
(the same weights, the forward run in double): block 0's rotated queries and
attention pattern, the residual stream after block 1, the final LayerNorm's
output and the last position's logits; and the last logits of text 0 with
use_parallel_residual false (the same weights run sequentially).

Run with Debian's python (python3-torch): /usr/bin/python3 tests/models/make_tiny_neox.py
"""
import json
import math
import os
import shutil

import torch

from make_tiny_models import rounded, write_json, write_safetensors

HERE = os.path.dirname(os.path.abspath(__file__))
SEED = 29
C, HEADS, LAYERS, FF, POSITIONS = 32, 4, 2, 64, 64
ROTARY_PCT, BASE, EPS = 0.5, 10000.0, 1e-5


def layer_norm(x, w, b):
    return torch.nn.functional.layer_norm(x, (x.shape[-1],), w, b, EPS)


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


def forward(p, ids, keep, parallel=True):
    """GPT-NeoX's forward over one sequence; p: name -> float64 tensor."""
    T, hs = len(ids), C // HEADS
    rd = int(hs * ROTARY_PCT)
    x = p["gpt_neox.embed_in.weight"][ids]
    inv_freq = 1.0 / (BASE ** (torch.arange(0, rd, 2, dtype=torch.float64) / rd))
    freqs = torch.outer(torch.arange(T, dtype=torch.float64), inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)  # (T, rd)
    cos, sin = emb.cos(), emb.sin()
    causal = torch.triu(torch.ones(T, T, dtype=torch.bool), 1)
    for i in range(LAYERS):
        b = f"gpt_neox.layers.{i}."
        a = layer_norm(x, p[b + "input_layernorm.weight"], p[b + "input_layernorm.bias"])
        qkv = a @ p[b + "attention.query_key_value.weight"].T + p[b + "attention.query_key_value.bias"]
        qkv = qkv.view(T, HEADS, 3 * hs)  # head by head: q, k, v
        q, k, v = qkv[..., :hs], qkv[..., hs:2 * hs], qkv[..., 2 * hs:]
        q, k, v = (t.transpose(0, 1) for t in (q, k, v))  # (H, T, hs)
        q = torch.cat((q[..., :rd] * cos + rotate_half(q[..., :rd]) * sin, q[..., rd:]), dim=-1)
        k = torch.cat((k[..., :rd] * cos + rotate_half(k[..., :rd]) * sin, k[..., rd:]), dim=-1)
        s = (q @ k.transpose(-1, -2)) / math.sqrt(hs)
        pattern = torch.softmax(s.masked_fill(causal, float("-inf")), dim=-1)
        if i == 0:
            keep["blocks.0.attn.hook_rot_q"] = q.transpose(0, 1)  # (T, H, hs)
            keep["blocks.0.attn.hook_pattern"] = pattern
        z = (pattern @ v).transpose(0, 1).reshape(T, C)
        attn = z @ p[b + "attention.dense.weight"].T + p[b + "attention.dense.bias"]

        def mlp(h):
            h = h @ p[b + "mlp.dense_h_to_4h.weight"].T + p[b + "mlp.dense_h_to_4h.bias"]
            return torch.nn.functional.gelu(h) @ p[b + "mlp.dense_4h_to_h.weight"].T + p[b + "mlp.dense_4h_to_h.bias"]

        if parallel:
            m = mlp(layer_norm(x, p[b + "post_attention_layernorm.weight"], p[b + "post_attention_layernorm.bias"]))
            x = m + attn + x
        else:
            x = x + attn
            x = mlp(layer_norm(x, p[b + "post_attention_layernorm.weight"], p[b + "post_attention_layernorm.bias"])) + x
        keep[f"blocks.{i}.hook_resid_post"] = x
    n = layer_norm(x, p["gpt_neox.final_layer_norm.weight"], p["gpt_neox.final_layer_norm.bias"])
    keep["ln_final.hook_normalized"] = n
    return n @ p["embed_out.weight"].T


def make_weights(vocab_size):
    g = torch.Generator().manual_seed(SEED)

    def normal(*shape, std):
        return torch.randn(*shape, generator=g) * std

    hs = C // HEADS
    rd = int(hs * ROTARY_PCT)
    p = {"gpt_neox.embed_in.weight": normal(vocab_size, C, std=0.5)}
    for i in range(LAYERS):
        b = f"gpt_neox.layers.{i}."
        p[b + "input_layernorm.weight"] = 1 + normal(C, std=0.1)
        p[b + "input_layernorm.bias"] = normal(C, std=0.1)
        p[b + "post_attention_layernorm.weight"] = 1 + normal(C, std=0.1)
        p[b + "post_attention_layernorm.bias"] = normal(C, std=0.1)
        p[b + "attention.query_key_value.weight"] = normal(3 * C, C, std=0.4)
        p[b + "attention.query_key_value.bias"] = normal(3 * C, std=0.1)
        p[b + "attention.dense.weight"] = normal(C, C, std=0.2)
        p[b + "attention.dense.bias"] = normal(C, std=0.05)
        p[b + "mlp.dense_h_to_4h.weight"] = normal(FF, C, std=0.2)
        p[b + "mlp.dense_h_to_4h.bias"] = normal(FF, std=0.1)
        p[b + "mlp.dense_4h_to_h.weight"] = normal(C, FF, std=0.1)
        p[b + "mlp.dense_4h_to_h.bias"] = normal(C, std=0.05)
        # a buffer older checkpoints save: not a weight, ignored by the loader
        p[b + "attention.rotary_emb.inv_freq"] = 1.0 / (BASE ** (torch.arange(0, rd, 2, dtype=torch.float32) / rd))
    p["gpt_neox.final_layer_norm.weight"] = 1 + normal(C, std=0.1)
    p["gpt_neox.final_layer_norm.bias"] = normal(C, std=0.1)
    p["embed_out.weight"] = normal(vocab_size, C, std=0.3)
    return p


def main():
    torch.set_num_threads(1)
    gpt2 = os.path.join(HERE, "tiny-gpt2")
    with open(os.path.join(gpt2, "vocab.json"), encoding="utf-8") as f:
        V = len(json.load(f))
    with open(os.path.join(gpt2, "reference.json"), encoding="utf-8") as f:
        texts = [{"text": t["text"], "ids": t["ids"]} for t in json.load(f)["texts"]]
    p32 = make_weights(V)
    d = os.path.join(HERE, "tiny-neox")
    os.makedirs(d, exist_ok=True)
    write_json(os.path.join(d, "config.json"), {
        "model_type": "gpt_neox", "architectures": ["GPTNeoXForCausalLM"], "hidden_size": C,
        "num_attention_heads": HEADS, "num_hidden_layers": LAYERS, "intermediate_size": FF,
        "max_position_embeddings": POSITIONS, "vocab_size": V, "rotary_pct": ROTARY_PCT, "rotary_emb_base": BASE,
        "use_parallel_residual": True, "layer_norm_eps": EPS, "hidden_act": "gelu", "tie_word_embeddings": False,
        "bos_token_id": V - 1, "eos_token_id": V - 1, "torch_dtype": "float32"})
    write_safetensors(os.path.join(d, "model.safetensors"), p32)
    shutil.copyfile(os.path.join(gpt2, "tokenizer.json"), os.path.join(d, "tokenizer.json"))

    ref = {"made_by": "tests/models/make_tiny_neox.py (seed %d): float64 forward of the same weights" % SEED,
           "texts": []}
    p64 = {k: v.double() for k, v in p32.items()}
    for t in texts:
        keep = {}
        logits = forward(p64, t["ids"], keep)
        ref["texts"].append(dict(t, **{name: rounded(keep[name]) for name in (
            "blocks.0.attn.hook_rot_q", "blocks.0.attn.hook_pattern", "blocks.1.hook_resid_post",
            "ln_final.hook_normalized")}, last_logits=rounded(logits[-1])))
    ref["sequential"] = {"ids": texts[0]["ids"], "last_logits": rounded(forward(p64, texts[0]["ids"], {}, False)[-1])}
    write_json(os.path.join(d, "reference.json"), ref)


if __name__ == "__main__":
    main()

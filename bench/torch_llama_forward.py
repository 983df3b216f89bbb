#!/usr/bin/env python3
"""Time a Llama checkpoint's forward in plain PyTorch: the --llama row of bench/run_standard.sh.

One process, the thread variables set *before* it starts (Debian's torch
sends fp32 matmul to OpenBLAS, whose pool torch.set_num_threads does not set;
see bench/torch_layer.py):

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 OMP_WAIT_POLICY=PASSIVE \
        /usr/bin/python3 bench/torch_llama_forward.py --model DIR --threads 1 --ids-file IDS \
        [--check-logits LOGITS.npy] --repeat 3 --warmup 1

The model is Llama written out in plain PyTorch from a Hugging Face folder's
config.json and model.safetensors (F32 or BF16, read with numpy from the
file's own header), as Hugging Face's modeling_llama.py defines it: token
embeddings, pre-norm blocks (RMSNorm, q/k/v_proj, rotary positions in the
half layout with rope_theta, grouped-query attention (K/V head g shared by
query heads g·H/KVH ..), causal softmax, o_proj, RMSNorm, SwiGLU
down_proj(silu(gate_proj(x)) * up_proj(x))), the final RMSNorm and an untied
lm_head; logits for every position, as LlamaForCausalLM returns them. The
forward records nothing beyond what it needs.

BF16 weights are widened to float32 once, before timing (torch 1.13's CPU
bf16 matmul is far slower than its fp32 one, which Debian's torch sends to
OpenBLAS): the timed forward is float32 throughout, on the same values the
stored bf16 weights hold. attntrace reads the bf16 weights as stored and
widens them inside its GEMM's packing, so its time includes the widening
and PyTorch's does not.

The ids are read from --ids-file (comma-separated, as attntrace's --ids takes
them). With --check-logits, the logits (ids, vocabulary) are compared with
the given float32 .npy (attntrace's `export --model DIR --ids ... --trace
logits --npy OUT`) before timing; the run fails (exit 4) when they differ by
more than LOGIT_TOLERANCE.

Prints one JSON object: torch version, thread settings, the check, and in
"runs" the median, min and max seconds of the forward over --repeat timed
runs after --warmup untimed ones, under torch.no_grad().
"""
import argparse
import json
import math
import os
import sys
import time

# Both sides are float32 forwards of the same (bf16-valued) weights whose sums
# run in other orders (our GEMM's K blocks against OpenBLAS's), over 16 blocks
# of K up to 8192: such rounding differed by 3.3e-5 on logits up to 4.8
# (make_tiny_llama.py --llama-1b, 256 ids: ~7e-6 of the largest). 2e-3 of
# the largest logit (at least 1) is far above that and far
# below a modelling difference (RoPE's interleaved layout for the half one, K/V
# heads shared otherwise, a missing mask: such moves logits by their own scale).
LOGIT_TOLERANCE = 2e-3

sys.dont_write_bytecode = True  # no __pycache__ left in bench/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_common import logits_agree, read_safetensors, settings, timed  # noqa: E402


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", required=True, help="a Llama folder (config.json, model.safetensors, F32 or BF16)")
    p.add_argument("--threads", type=int, required=True)
    p.add_argument("--ids-file", required=True, help="comma-separated token ids")
    p.add_argument("--check-logits", help="a float32 .npy of the logits (ids, vocabulary) to check against")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--warmup", type=int, default=1)
    a = p.parse_args()
    try:
        import numpy as np
        import torch
    except ImportError as e:  # the caller reports it
        print(json.dumps({"format": "torch-llama-forward", "error": f"import failed: {e}"}))
        return 3
    torch.set_num_threads(a.threads)
    cfg = json.load(open(os.path.join(a.model, "config.json")))
    C, H, KVH, L = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["num_hidden_layers"]
    hs, eps, theta = C // H, cfg["rms_norm_eps"], cfg.get("rope_theta", 10000.0)
    G = H // KVH
    t0 = time.perf_counter()
    w = {k: torch.from_numpy(v) for k, v in read_safetensors(os.path.join(a.model, "model.safetensors"), "torch_llama_forward.py").items()}
    widen_s = time.perf_counter() - t0
    head = w["model.embed_tokens.weight"] if cfg.get("tie_word_embeddings") else w["lm_head.weight"]
    ids = [int(x) for x in open(a.ids_file).read().replace("\n", "").split(",") if x.strip()]
    T = len(ids)
    ids_t = torch.tensor(ids)
    # cos, sin: (T, hs), the angle p·θ_i repeated over both halves, θ_i = theta^(-2i/hs) (HF's rotary embedding).
    inv = 1.0 / theta ** (torch.arange(0, hs, 2, dtype=torch.float32) / hs)
    ang = torch.arange(T, dtype=torch.float32)[:, None] * inv[None, :]
    cos, sin = torch.cat((ang, ang), -1).cos(), torch.cat((ang, ang), -1).sin()
    causal = torch.ones(T, T, dtype=torch.bool).triu(1)
    linear = torch.nn.functional.linear  # x·Wᵀ, W as nn.Linear stores it (d_out, d_in)

    def rms_norm(x, weight):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight

    def rope(x):  # x: (heads, T, hs)
        h = hs // 2
        return x * cos + torch.cat((-x[..., h:], x[..., :h]), dim=-1) * sin

    def forward():
        x = w["model.embed_tokens.weight"][ids_t]
        for i in range(L):
            g = f"model.layers.{i}."
            h = rms_norm(x, w[g + "input_layernorm.weight"])
            q = rope(linear(h, w[g + "self_attn.q_proj.weight"]).view(T, H, hs).transpose(0, 1))    # (H, T, hs)
            k = rope(linear(h, w[g + "self_attn.k_proj.weight"]).view(T, KVH, hs).transpose(0, 1))  # (KVH, T, hs)
            v = linear(h, w[g + "self_attn.v_proj.weight"]).view(T, KVH, hs).transpose(0, 1)
            # Grouped-query: query heads g·G .. g·G + G - 1 share K/V head g; (KVH, G·T, hs) against (KVH, T, hs).
            s = torch.matmul(q.reshape(KVH, G * T, hs), k.transpose(1, 2)).view(KVH, G, T, T) / math.sqrt(hs)
            pattern = torch.softmax(s.masked_fill(causal, float("-inf")), dim=-1)
            z = torch.matmul(pattern.view(KVH, G * T, T), v).view(H, T, hs).transpose(0, 1).reshape(T, C)
            x = x + linear(z, w[g + "self_attn.o_proj.weight"])
            h = rms_norm(x, w[g + "post_attention_layernorm.weight"])
            f = torch.nn.functional.silu(linear(h, w[g + "mlp.gate_proj.weight"]))
            f = f * linear(h, w[g + "mlp.up_proj.weight"])
            x = x + linear(f, w[g + "mlp.down_proj.weight"])
        return linear(rms_norm(x, w["model.norm.weight"]), head)

    out = settings("torch-llama-forward", a, torch, T)
    out.update({"load_and_widen_s": widen_s, "forward": "Llama in plain PyTorch under torch.no_grad(), float32 (bf16 weights widened once before "
                      "timing), logits of every position", "runs": []})
    with torch.no_grad():
        logits = forward()
        if a.check_logits and not logits_agree(out, a.check_logits, logits, LOGIT_TOLERANCE):
            print(json.dumps(out, indent=1))
            return 4
        del logits
        out["runs"].append(timed(a, forward, T))
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

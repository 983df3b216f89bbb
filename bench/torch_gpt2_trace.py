#!/usr/bin/env python3
"""Time GPT-2's forward in plain PyTorch keeping every intermediate: the --gpt2 row of bench/run_standard.sh.

One process per thread count, the thread variables set *before* it starts
(Debian's torch sends fp32 matmul to OpenBLAS, whose pool
torch.set_num_threads does not set; see bench/torch_layer.py):

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 OMP_WAIT_POLICY=PASSIVE \
        /usr/bin/python3 bench/torch_gpt2_trace.py --model DIR --threads 1 --ids-file IDS \
        [--check-logits LOGITS.npy] --repeat 3 --warmup 1

The model is GPT-2 written out in plain PyTorch from a Hugging Face folder's
config.json and model.safetensors (F32, read with numpy from the file's own
header, as bench/torch_decode.py reads it): token and learned position
embeddings, pre-norm blocks (LayerNorm, c_attn's Q, K and V, causal
attention, c_proj, LayerNorm, c_fc, GELU (tanh), c_proj), the final
LayerNorm and the unembedding tied to the token embedding. Every
intermediate is kept in a dict under TransformerLens' hook names, as
run_with_cache keeps them (hook_embed, hook_pos_embed, and per block
hook_resid_pre, ln1.hook_scale, ln1.hook_normalized, attn.hook_q, hook_k,
hook_v (pos, head, d_head), hook_attn_scores (scaled and masked), hook_pattern,
hook_z, hook_attn_out, hook_resid_mid, ln2's scale and normalized, mlp.hook_pre,
hook_post, hook_mlp_out, hook_resid_post; ln_final's scale and normalized; the
logits): PyTorch's cost of the full trace. Q, K and V are three products, as
TransformerLens' separate W_Q, W_K, W_V make them (c_attn's columns copied
apart once, before timing).

The ids are read from --ids-file (comma-separated, as attntrace's --ids takes
them), so both sides run the same sequence. With --check-logits, the logits
(ids, vocabulary) are compared with the given float32 .npy (attntrace's
`export --model DIR --ids ... --trace logits --npy OUT`) before timing; the
run fails (exit 4) when they differ by more than LOGIT_TOLERANCE.

Prints one JSON object: torch version, thread settings, the check, and in
"runs" the median, min and max seconds of the forward over --repeat timed
runs after --warmup untimed ones, under torch.no_grad().
"""
import argparse
import json
import math
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ left in bench/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_common import logits_agree, read_safetensors, settings, timed  # noqa: E402

# Our logits and PyTorch's are both float32 forwards of the same weights whose
# sums run in other orders (our GEMM's K blocks against OpenBLAS's); over 12
# blocks of K = 768 and 3072 such rounding differed by 4e-6 to 6e-6 on logits
# up to 3 (make_tiny_models.py --gpt2-small, 512 ids: ~2e-6 of the largest).
# 1e-3 of the largest logit (at least 1) is far above that and far
# below a modelling difference (a missing bias, mask or norm, positions off
# by one: such moves logits by their own scale).
LOGIT_TOLERANCE = 1e-3


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", required=True, help="a GPT-2 folder (config.json, model.safetensors, F32)")
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
        print(json.dumps({"format": "torch-gpt2-trace", "error": f"import failed: {e}"}))
        return 3
    torch.set_num_threads(a.threads)
    cfg = json.load(open(os.path.join(a.model, "config.json")))
    C, H, L = cfg["n_embd"], cfg["n_head"], cfg["n_layer"]
    hs, eps = C // H, cfg.get("layer_norm_epsilon", 1e-5)
    raw = read_safetensors(os.path.join(a.model, "model.safetensors"), "torch_gpt2_trace.py")
    w = {k.removeprefix("transformer."): torch.from_numpy(v) for k, v in raw.items()}
    for i in range(L):  # TransformerLens' W_Q, W_K, W_V: c_attn's column runs, apart
        g = f"h.{i}.attn.c_attn."
        for j, name in enumerate("qkv"):
            w[f"h.{i}.W_{name}"] = w[g + "weight"][:, j * C:(j + 1) * C].contiguous()
            w[f"h.{i}.b_{name}"] = w[g + "bias"][j * C:(j + 1) * C].contiguous()
    ids = [int(x) for x in open(a.ids_file).read().replace("\n", "").split(",") if x.strip()]
    T = len(ids)
    ids_t = torch.tensor(ids)
    wte, wpe = w["wte.weight"], w["wpe.weight"]
    causal = torch.ones(T, T, dtype=torch.bool).triu(1)

    def norm(cache, name, x, weight, bias):
        """LayerNorm written out, its scale and normalized output kept (TransformerLens' ln hooks)."""
        x = x - x.mean(-1, keepdim=True)
        scale = keep(cache, name + ".hook_scale", (x.pow(2).mean(-1, keepdim=True) + eps).sqrt())
        return keep(cache, name + ".hook_normalized", x / scale * weight + bias)  # after the affine, as TL's

    def keep(cache, name, t):
        cache[name] = t
        return t

    def forward():
        cache = {}
        x = keep(cache, "hook_embed", wte[ids_t]) + keep(cache, "hook_pos_embed", wpe[:T])
        for i in range(L):
            g, b = f"h.{i}.", f"blocks.{i}."
            cache[b + "hook_resid_pre"] = x
            h = norm(cache, b + "ln1", x, w[g + "ln_1.weight"], w[g + "ln_1.bias"])
            q = keep(cache, b + "attn.hook_q", torch.addmm(w[g + "b_q"], h, w[g + "W_q"]).view(T, H, hs))
            k = keep(cache, b + "attn.hook_k", torch.addmm(w[g + "b_k"], h, w[g + "W_k"]).view(T, H, hs))
            v = keep(cache, b + "attn.hook_v", torch.addmm(w[g + "b_v"], h, w[g + "W_v"]).view(T, H, hs))
            s = torch.matmul(q.transpose(0, 1), k.permute(1, 2, 0)) / math.sqrt(hs)  # (H, T, T)
            s = keep(cache, b + "attn.hook_attn_scores", s.masked_fill(causal, float("-inf")))
            pattern = keep(cache, b + "attn.hook_pattern", torch.softmax(s, dim=-1))
            z = keep(cache, b + "attn.hook_z", torch.matmul(pattern, v.transpose(0, 1)).transpose(0, 1))  # (T, H, hs)
            attn_out = keep(cache, b + "hook_attn_out",
                             torch.addmm(w[g + "attn.c_proj.bias"], z.reshape(T, C), w[g + "attn.c_proj.weight"]))
            x = keep(cache, b + "hook_resid_mid", x + attn_out)
            h = norm(cache, b + "ln2", x, w[g + "ln_2.weight"], w[g + "ln_2.bias"])
            pre = keep(cache, b + "mlp.hook_pre", torch.addmm(w[g + "mlp.c_fc.bias"], h, w[g + "mlp.c_fc.weight"]))
            post = keep(cache, b + "mlp.hook_post", torch.nn.functional.gelu(pre, approximate="tanh"))
            mlp_out = keep(cache, b + "hook_mlp_out",
                            torch.addmm(w[g + "mlp.c_proj.bias"], post, w[g + "mlp.c_proj.weight"]))
            x = keep(cache, b + "hook_resid_post", x + mlp_out)
        h = norm(cache, "ln_final", x, w["ln_f.weight"], w["ln_f.bias"])
        cache["logits"] = torch.matmul(h, wte.T)
        return cache

    out = settings("torch-gpt2-trace", a, torch, T)
    out.update({"forward": "GPT-2 in plain PyTorch under torch.no_grad(), every intermediate kept under TransformerLens' "
                      "hook names (as run_with_cache keeps them)", "runs": []})
    with torch.no_grad():
        cache = forward()
        out["kept_tensors"] = len(cache)
        out["kept_bytes"] = sum(t.numel() * t.element_size() for t in cache.values())
        if a.check_logits and not logits_agree(out, a.check_logits, cache["logits"], LOGIT_TOLERANCE):
            print(json.dumps(out, indent=1))
            return 4
        del cache
        out["runs"].append(timed(a, forward, T))
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

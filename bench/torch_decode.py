#!/usr/bin/env python3
"""Time PyTorch's KV-cache decode of a GPT-2 checkpoint: the decode row of bench/run_standard.sh.

One process per thread count, the thread variables set *before* it starts
(Debian's torch sends fp32 matmul to OpenBLAS, whose pool
torch.set_num_threads does not set; see bench/torch_layer.py):

    OMP_NUM_THREADS=N OPENBLAS_NUM_THREADS=N OMP_WAIT_POLICY=PASSIVE \
        /usr/bin/python3 bench/torch_decode.py --model DIR --threads N --tokens 64 --repeat 3

The model is GPT-2 written out in plain PyTorch from a Hugging Face folder's
config.json and model.safetensors (F32: the tensors are read with numpy from
the file's own header): learned positions, pre-norm blocks, Conv1D weights
(d_in, d_out), GELU (tanh), the final LayerNorm, the unembedding tied to the
token embedding. The decode is the loop a generator runs, one token at a
time under torch.no_grad(): the new row's q, k and v, appended to each
block's key and value caches (preallocated, written in place), its query
attending over the cache, W^O, the FFN, the final norm and the logits of the
row. The ids are fixed (--tokens of them, as the attntrace command reads
them: --ids); nothing is sampled.

Prints one JSON object: torch version, thread settings, and per repeat the
seconds of the whole loop over --tokens tokens; ms_per_token is the median
over the repeats divided by --tokens. The first repeat's logits at the last
position are checked against one causal run over all the ids (the loop is
the model's forward).
"""
import argparse
import json
import math
import os
import statistics
import sys
import time


sys.dont_write_bytecode = True  # no __pycache__ left in bench/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_common import read_safetensors, settings  # noqa: E402


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", required=True, help="a GPT-2 folder (config.json, model.safetensors, F32)")
    p.add_argument("--threads", type=int, required=True)
    p.add_argument("--tokens", type=int, default=64)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--warmup", type=int, default=1)
    a = p.parse_args()
    try:
        import torch
    except ImportError as e:  # the caller reports it
        print(json.dumps({"format": "torch-decode", "error": f"import torch failed: {e}"}))
        return 3
    torch.set_num_threads(a.threads)
    cfg = json.load(open(os.path.join(a.model, "config.json")))
    C, H, L = cfg["n_embd"], cfg["n_head"], cfg["n_layer"]
    hs, eps = C // H, cfg.get("layer_norm_epsilon", 1e-5)
    raw = read_safetensors(os.path.join(a.model, "model.safetensors"), "torch_decode.py")
    w = {k.removeprefix("transformer."): torch.from_numpy(v) for k, v in raw.items()}
    T = a.tokens
    ids = [5 + (i * 7919) % (cfg["vocab_size"] - 5) for i in range(T)]
    wte, wpe = w["wte.weight"], w["wpe.weight"]
    ln = torch.nn.functional.layer_norm

    def gelu(x):
        return torch.nn.functional.gelu(x, approximate="tanh")

    def block(i, x, kc, vc, t):
        """Block i over rows x (n, C) at positions t.. with the caches kc, vc (L, H, T, hs): keys 0..t+n-1."""
        g = f"h.{i}."
        n = x.shape[0]
        h = ln(x, (C,), w[g + "ln_1.weight"], w[g + "ln_1.bias"], eps)
        qkv = torch.addmm(w[g + "attn.c_attn.bias"], h, w[g + "attn.c_attn.weight"])
        q, k, v = qkv.split(C, dim=1)
        kc[i, :, t:t + n] = k.view(n, H, hs).transpose(0, 1)  # appended in place
        vc[i, :, t:t + n] = v.view(n, H, hs).transpose(0, 1)
        K, V = kc[i, :, :t + n], vc[i, :, :t + n]
        s = torch.matmul(q.view(n, H, hs).transpose(0, 1), K.transpose(1, 2)) / math.sqrt(hs)
        if n > 1:  # a causal run: row r sees keys up to t + r
            s = s.masked_fill(torch.ones(n, t + n, dtype=torch.bool).triu(t + 1), float("-inf"))
        z = torch.matmul(torch.softmax(s, dim=-1), V).transpose(0, 1).reshape(n, C)
        x = x + torch.addmm(w[g + "attn.c_proj.bias"], z, w[g + "attn.c_proj.weight"])
        h = ln(x, (C,), w[g + "ln_2.weight"], w[g + "ln_2.bias"], eps)
        f = gelu(torch.addmm(w[g + "mlp.c_fc.bias"], h, w[g + "mlp.c_fc.weight"]))
        return x + torch.addmm(w[g + "mlp.c_proj.bias"], f, w[g + "mlp.c_proj.weight"])

    def forward(rows, t, kc, vc):
        """The logits (n, V) of ids[t:t+rows] with the caches holding 0..t-1."""
        x = wte[ids[t:t + rows]] + wpe[t:t + rows]
        for i in range(L):
            x = block(i, x, kc, vc, t)
        return torch.matmul(ln(x, (C,), w["ln_f.weight"], w["ln_f.bias"], eps), wte.T)

    def caches():
        return torch.empty(L, H, T, hs), torch.empty(L, H, T, hs)

    def decode():
        kc, vc = caches()
        logits = None
        for t in range(T):
            logits = forward(1, t, kc, vc)
        return logits[-1]

    out = settings("torch-decode", a, torch, T)
    out.update({"loop": "GPT-2 in plain PyTorch, one token at a time under torch.no_grad(): q, k, v of the new row, "
                   "k and v written into preallocated caches, attention over them, W^O, FFN, final norm, logits"})
    with torch.no_grad():
        last = decode()
        whole = forward(T, 0, *caches())[-1]
        out["check_max_abs_logit_diff"] = (last - whole).abs().max().item()
        if not out["check_max_abs_logit_diff"] < 1e-3:
            out["error"] = "the cached loop's last logits differ from the causal run's"
            print(json.dumps(out, indent=1))
            return 4
        for _ in range(a.warmup):
            decode()
        samples = []
        for _ in range(a.repeat):
            t0 = time.perf_counter()
            decode()
            samples.append(time.perf_counter() - t0)
    out.update({"repeat": a.repeat, "warmup": a.warmup, "samples_s": samples, "median_s": statistics.median(samples),
                "ms_per_token": statistics.median(samples) / T * 1e3})
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

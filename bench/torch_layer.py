#!/usr/bin/env python3
"""Time PyTorch's nn.TransformerEncoderLayer forward, the reference of bench/run_standard.sh.

One process per thread count: set the thread variables in the environment
*before* starting it (OpenBLAS reads them when it is loaded, and Debian's torch
sends fp32 matmul to OpenBLAS, whose pool torch.set_num_threads does not set):

    OMP_NUM_THREADS=N OPENBLAS_NUM_THREADS=N OMP_WAIT_POLICY=PASSIVE \
        /usr/bin/python3 bench/torch_layer.py --threads N --tokens 128 512 2048 --repeat 20 10 5

Prints one JSON object: torch version, thread settings, and for each n the
median, min and max seconds of the forward over the timed repeats (after
--warmup untimed ones). The layer is
TransformerEncoderLayer(d_model, nhead, d_ff, dropout=0.0, batch_first=True)
in eval mode, under torch.no_grad(), on a (1, n, d_model) float32 input:
post-norm, ReLU, no mask, as `attntrace bench` runs the block.

With --keep-all, times the same layer written out step by step with its own
weights, every intermediate kept in a dict as TransformerLens' run_with_cache
keeps its hooks (q, k, v, attn_scores, pattern, z, attn_out, resid_mid, the
norms' scale and normalized, mlp pre, post and out, resid_post): PyTorch's cost
of a trace. Its output is checked against the layer's before timing.

With --attention, times attention alone instead: softmax(Q·Kᵀ/√hs)·V with
torch.matmul and torch.softmax on (1, heads, n, hs) tensors (hs = d_model /
heads), as written in the articles: the core `attntrace bench --trace none`
runs streamed (its "attn*" row).
"""
import argparse
import json
import os
import statistics
import sys
import time


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--threads", type=int, required=True)
    p.add_argument("--tokens", type=int, nargs="+", required=True)
    p.add_argument("--repeat", type=int, nargs="+", required=True,
                   help="timed runs, one per --tokens value (or one for all)")
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--d-model", type=int, default=768)
    p.add_argument("--heads", type=int, default=12)
    p.add_argument("--d-ff", type=int, default=3072)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--keep-all", action="store_true",
                   help="the layer step by step, keeping every intermediate as run_with_cache does")
    p.add_argument("--attention", action="store_true",
                   help="time softmax(QKᵀ/√hs)V alone instead of the layer")
    a = p.parse_args()
    if len(a.repeat) == 1:
        a.repeat = a.repeat * len(a.tokens)
    if len(a.repeat) != len(a.tokens):
        p.error("--repeat takes one value, or one per --tokens value")

    try:
        import torch
    except ImportError as e:  # the caller reports it
        print(json.dumps({"format": "torch-layer", "error": f"import torch failed: {e}"}))
        return 3

    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    layer = torch.nn.TransformerEncoderLayer(a.d_model, a.heads, a.d_ff, dropout=0.0,
                                             batch_first=True).eval()
    out = {
        "format": "torch-layer",
        "torch": torch.__version__,
        "python": sys.executable,
        "threads": a.threads,
        "torch_num_threads": torch.get_num_threads(),
        "env": {k: os.environ.get(k) for k in
                ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "OMP_WAIT_POLICY", "MKL_NUM_THREADS")},
        "layer": f"TransformerEncoderLayer({a.d_model}, {a.heads}, {a.d_ff}, dropout=0.0, "
                 f"batch_first=True).eval(), torch.no_grad(), input (1, n, {a.d_model}) float32",
        "runs": [],
    }
    hs = a.d_model // a.heads
    if a.attention:
        out["layer"] = (f"softmax(Q·Kᵀ/√{hs})·V with torch.matmul and torch.softmax, Q, K, V "
                        f"(1, {a.heads}, n, {hs}) float32, torch.no_grad()")

    if a.keep_all:
        out["layer"] = (f"TransformerEncoderLayer({a.d_model}, {a.heads}, {a.d_ff}) written step by step with its "
                        f"weights, every intermediate kept (as TransformerLens run_with_cache), torch.no_grad(), "
                        f"input (1, n, {a.d_model}) float32")

    def keep_all(x):
        """The layer's forward (post-norm, ReLU) with every intermediate kept."""
        cache = {}
        C, H = a.d_model, a.heads
        n = x.shape[1]
        w_q, w_k, w_v = layer.self_attn.in_proj_weight.chunk(3)
        b_q, b_k, b_v = layer.self_attn.in_proj_bias.chunk(3)
        heads = lambda t: t.view(1, n, H, hs)  # noqa: E731
        q = cache["hook_q"] = heads(torch.nn.functional.linear(x, w_q, b_q))
        k = cache["hook_k"] = heads(torch.nn.functional.linear(x, w_k, b_k))
        v = cache["hook_v"] = heads(torch.nn.functional.linear(x, w_v, b_v))
        scores = cache["hook_attn_scores"] = torch.einsum("bqhd,bkhd->bhqk", q, k) / hs ** 0.5
        pattern = cache["hook_pattern"] = torch.softmax(scores, dim=-1)
        z = cache["hook_z"] = torch.einsum("bhqk,bkhd->bqhd", pattern, v)
        attn_out = cache["hook_attn_out"] = layer.self_attn.out_proj(z.reshape(1, n, C))
        resid_mid = cache["hook_resid_mid"] = x + attn_out
        cache["ln1.hook_scale"] = (resid_mid.var(-1, keepdim=True, unbiased=False) + layer.norm1.eps).sqrt()
        ln1 = cache["ln1.hook_normalized"] = layer.norm1(resid_mid)
        pre = cache["mlp.hook_pre"] = layer.linear1(ln1)
        post = cache["mlp.hook_post"] = torch.relu(pre)
        mlp_out = cache["hook_mlp_out"] = layer.linear2(post)
        resid_post = cache["hook_resid_post"] = ln1 + mlp_out
        cache["ln2.hook_scale"] = (resid_post.var(-1, keepdim=True, unbiased=False) + layer.norm2.eps).sqrt()
        cache["ln2.hook_normalized"] = layer.norm2(resid_post)
        return cache

    def attention(q, k, v):
        return torch.matmul(torch.softmax(torch.matmul(q, k.transpose(-2, -1)) / hs ** 0.5, dim=-1), v)

    with torch.no_grad():
        for n, rep in zip(a.tokens, a.repeat):
            if a.attention:
                q, k, v = (torch.randn(1, a.heads, n, hs, dtype=torch.float32) for _ in range(3))
                once = lambda: attention(q, k, v)  # noqa: E731
            elif a.keep_all:
                x = torch.randn(1, n, a.d_model, dtype=torch.float32)
                err = (keep_all(x)["ln2.hook_normalized"] - layer(x)).abs().max().item()
                if not err < 1e-3:  # the same layer, summed in other orders
                    print(json.dumps({"format": "torch-layer", "error": f"keep-all differs from the layer by {err}"}))
                    return 4
                once = lambda: keep_all(x)  # noqa: E731
            else:
                x = torch.randn(1, n, a.d_model, dtype=torch.float32)
                once = lambda: layer(x)  # noqa: E731
            for _ in range(a.warmup):
                once()
            samples = []
            for _ in range(rep):
                t0 = time.perf_counter()
                once()
                samples.append(time.perf_counter() - t0)
            out["runs"].append({"tokens": n, "repeat": rep, "warmup": a.warmup,
                                "median_s": statistics.median(samples),
                                "min_s": min(samples), "max_s": max(samples)})
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

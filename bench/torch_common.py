"""What bench's PyTorch scripts share (torch_decode.py, torch_gpt2_trace.py,
torch_llama_forward.py): a checkpoint's tensors read from its .safetensors
file, the run's settings as each script prints them, the check of PyTorch's
logits against attntrace's, and the timing of a forward."""
import json
import os
import statistics
import struct
import sys
import time

THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "OMP_WAIT_POLICY", "OPENBLAS_CORETYPE")


def read_safetensors(path, who):
    """{name: float32 numpy array, writable} from an F32 or BF16 .safetensors file (bf16 widened: its bits, 16
    zeros below); another dtype stops `who` (the script) with the tensor's name."""
    import numpy as np
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        base = 8 + n
    data = np.memmap(path, dtype=np.uint8, mode="r")
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        a, b = t["data_offsets"]
        raw = data[base + a:base + b]
        if t["dtype"] == "F32":
            out[name] = np.frombuffer(raw, dtype=np.float32).reshape(t["shape"]).copy()
        elif t["dtype"] == "BF16":
            bits = np.frombuffer(raw, dtype=np.uint16).astype(np.uint32) << 16
            out[name] = bits.view(np.float32).reshape(t["shape"])
        else:
            raise SystemExit(f"{who}: {name}: expected F32 or BF16, found {t['dtype']}")
    return out


def settings(fmt, a, torch, tokens):
    """The head of a script's JSON: what ran, on how many threads, with which thread variables."""
    return {"format": fmt, "torch": torch.__version__, "python": sys.executable, "threads": a.threads,
            "torch_num_threads": torch.get_num_threads(), "env": {k: os.environ.get(k) for k in THREAD_VARIABLES},
            "model": os.path.abspath(a.model), "tokens": tokens}


def logits_agree(out, npy, logits, tolerance):
    """PyTorch's logits against attntrace's (a float32 .npy, `export --trace unembed --npy`), within
    `tolerance` x max(1, the largest |logit|): the check recorded in out["check"], out["error"] set when not."""
    import numpy as np
    import torch
    ref = torch.from_numpy(np.load(npy).astype(np.float32)).reshape(logits.shape)
    diff = (logits - ref).abs().max().item()
    bound = tolerance * max(1.0, ref.abs().max().item())
    out["check"] = {"against": os.path.abspath(npy), "max_abs_logit_diff": diff, "max_abs_logit": ref.abs().max().item(),
                    "tolerance": bound, "tolerance_rule": f"{tolerance} x max(1, the largest |logit|)"}
    if not diff <= bound:
        out["error"] = "PyTorch's logits differ from the reference's"
        return False
    return True


def timed(a, forward, tokens):
    """forward() run --warmup times untimed, then --repeat times timed: the run's entry of "runs"."""
    for _ in range(a.warmup):
        forward()
    samples = []
    for _ in range(a.repeat):
        t0 = time.perf_counter()
        forward()
        samples.append(time.perf_counter() - t0)
    return {"tokens": tokens, "repeat": a.repeat, "warmup": a.warmup, "samples_s": samples,
            "median_s": statistics.median(samples), "min_s": min(samples), "max_s": max(samples)}

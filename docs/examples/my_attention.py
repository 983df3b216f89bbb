# Your own attention, its intermediates written as a trace attntrace can diff.
# Writes mine-lesson.json (the same inputs, for attntrace) and mine.json.
import json
import numpy as np

T, C, NH = 4, 8, 2                                  # tokens, d_model, heads
hs = C // NH                                        # head size
rng = np.random.default_rng(0)
X = rng.standard_normal((T, C)).astype(np.float32)
W_Q, W_K, W_V = [(rng.standard_normal((C, C)) / np.sqrt(C)).astype(np.float32) for _ in range(3)]

def my_attention(X):
    q = (X @ W_Q).reshape(T, NH, hs)                # (T, NH, hs): heads side by side
    k = (X @ W_K).reshape(T, NH, hs)
    v = (X @ W_V).reshape(T, NH, hs)
    scores = np.einsum("qhd,khd->hqk", q, k)        # (NH, T, T)
    scaled = scores / np.float32(np.sqrt(C))        # BUG, on purpose: should be np.sqrt(hs)
    mask = np.triu(np.full((T, T), -np.inf, np.float32), k=1)  # causal: key j > query i blocked
    masked = scaled + mask
    e = np.exp(masked - masked.max(axis=-1, keepdims=True))
    pattern = e / e.sum(axis=-1, keepdims=True)     # (NH, T, T)
    z = np.einsum("hqk,khd->qhd", pattern, v)       # (T, NH, hs)
    return {"blocks.0.attn.hook_q": q, "blocks.0.attn.hook_k": k, "blocks.0.attn.hook_v": v,
            "blocks.0.attn.hook_scores_raw": scores, "blocks.0.attn.hook_scores_scaled": scaled,
            "blocks.0.attn.hook_attn_scores": masked, "blocks.0.attn.hook_pattern": pattern,
            "blocks.0.attn.hook_z": z}

def cells(x):  # JSON has no infinity: a masked cell is the string "-inf"
    if isinstance(x, list):
        return [cells(y) for y in x]
    return "-inf" if x == -np.inf else x

def write_trace(path, steps):
    doc = {"format": "attntrace-trace", "version": 2, "steps": [
        {"name": name, "shape": list(a.shape), "values": cells(np.asarray(a, np.float32).tolist())}
        for name, a in steps.items()]}
    with open(path, "w") as f:
        json.dump(doc, f, allow_nan=False)          # a NaN or +inf stops here: find it with np.isfinite

lesson = {"format": "attntrace-lesson", "version": 1, "id": "mine", "title": "my attention, same inputs",
          "source": {"document": "my_attention.py", "title": "my kernel", "section": "-"},
          "tokens": [f"t{i}" for i in range(T)], "config": {"d_model": C, "heads": NH, "mask": "causal"},
          "run": {"from": "embed", "to": "mix"}, "inputs": {"X": X.tolist()},
          "weights": {"W_Q": W_Q.tolist(), "W_K": W_K.tolist(), "W_V": W_V.tolist()}}
with open("mine-lesson.json", "w") as f:
    json.dump(lesson, f)
write_trace("mine.json", my_attention(X))

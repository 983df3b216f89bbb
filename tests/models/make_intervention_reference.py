#!/usr/bin/python3
"""The PyTorch reference for interventions on tiny-gpt2: ablations and activation patching.

Reads the committed tiny-gpt2 checkpoint (model.safetensors, and its BPE from
make_tiny_models.py) and runs GPT-2's forward in float64 with hooks where
TransformerLens has them (blocks.i.hook_resid_pre, blocks.i.attn.hook_z as
(T, heads, d_head), blocks.i.hook_attn_out, blocks.i.hook_mlp_out), then writes
tiny-gpt2/interventions-reference.json:

  ablations: the last position's logits with one head's z (or one block's MLP
             output) zeroed, or replaced by its mean over the positions;
  patching:  TransformerLens' activation patching from a clean text into a
             corrupt one of the same length: for each block x head (hook_z)
             or block x position (every step), the corrupt run with that
             cell's activation taken from the clean run, and the normalised
             logit difference
                 (LD(patched) - LD(corrupt)) / (LD(clean) - LD(corrupt)),
             LD = logit[answer] - logit[wrong] at the last position.

Nothing else in the folder is written. Run with Debian's python:
/usr/bin/python3 tests/models/make_intervention_reference.py
"""
import json
import math
import os
import struct

import numpy as np
import torch

import make_tiny_models as tiny

HERE = os.path.dirname(os.path.abspath(__file__))
DIR = os.path.join(HERE, "tiny-gpt2")
ABLATE_TEXT = "the ring fell"
CLEAN, CORRUPT = "the ring fell from the king", "the king fell from the ring"
ANSWER, WRONG = " ring", " king"


def read_safetensors(path):
    """name -> float64 tensor, from the committed F32 file (8-byte length, JSON header, data)."""
    with open(path, "rb") as f:
        raw = f.read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    out = {}
    for name, h in header.items():
        if name == "__metadata__":
            continue
        assert h["dtype"] == "F32"
        a, b = h["data_offsets"]
        out[name] = torch.from_numpy(np.frombuffer(raw[8 + n + a:8 + n + b], dtype="<f4").copy()).reshape(h["shape"]).double()
    return out


def forward(p, ids, hook):
    """GPT-2 as make_tiny_models.forward, with hook(name, value) -> value at TransformerLens' points."""
    T, C, H = len(ids), tiny.N_EMBD, tiny.N_HEAD
    hs = C // H
    x = p["wte.weight"][ids] + p["wpe.weight"][:T]
    for i in range(tiny.N_LAYER):
        h = f"h.{i}."
        x = hook(f"blocks.{i}.hook_resid_pre", x)
        a = tiny.layer_norm(x, p[h + "ln_1.weight"], p[h + "ln_1.bias"])
        qkv = a @ p[h + "attn.c_attn.weight"] + p[h + "attn.c_attn.bias"]
        q, k, v = qkv.split(C, dim=-1)
        q, k, v = (t.view(T, H, hs).transpose(0, 1) for t in (q, k, v))
        s = q @ k.transpose(-1, -2) / math.sqrt(hs)
        s = s.masked_fill(torch.triu(torch.ones(T, T, dtype=torch.bool), 1), float("-inf"))
        z = (torch.softmax(s, dim=-1) @ v).transpose(0, 1)  # (T, H, hs)
        z = hook(f"blocks.{i}.attn.hook_z", z)
        attn_out = hook(f"blocks.{i}.hook_attn_out", z.reshape(T, C) @ p[h + "attn.c_proj.weight"] + p[h + "attn.c_proj.bias"])
        x = x + attn_out
        m = tiny.layer_norm(x, p[h + "ln_2.weight"], p[h + "ln_2.bias"])
        m = tiny.gelu_new(m @ p[h + "mlp.c_fc.weight"] + p[h + "mlp.c_fc.bias"])
        x = x + hook(f"blocks.{i}.hook_mlp_out", m @ p[h + "mlp.c_proj.weight"] + p[h + "mlp.c_proj.bias"])
    n = tiny.layer_norm(x, p["ln_f.weight"], p["ln_f.bias"])
    return n @ p["wte.weight"].T


def run_with_cache(p, ids):
    cache = {}

    def keep(name, value):
        cache[name] = value.clone()
        return value

    return forward(p, ids, keep), cache


def ablation(p, ids, target, mean):
    """'blocks.0.attn.h1' or 'blocks.0.mlp': that head's z, or that block's MLP output, zeroed or mean-ablated."""
    parts = target.split(".")
    step = f"blocks.{parts[1]}.attn.hook_z" if parts[2] == "attn" else f"blocks.{parts[1]}.hook_mlp_out"
    head = int(parts[3][1:]) if parts[2] == "attn" else None

    def hook(name, value):
        if name != step:
            return value
        value = value.clone()
        cells = value[:, head] if head is not None else value
        cells[...] = cells.mean(dim=0, keepdim=True) if mean else 0.0
        return value

    return forward(p, ids, hook)


def patching(p, clean_ids, corrupt_ids, answer, wrong):
    _, clean = run_with_cache(p, clean_ids)
    ld = lambda logits: float(logits[-1, answer] - logits[-1, wrong])
    ld_clean, ld_corrupt = ld(forward(p, clean_ids, lambda n, v: v)), ld(forward(p, corrupt_ids, lambda n, v: v))
    T, out = len(clean_ids), {"logit_diff_clean": ld_clean, "logit_diff_corrupt": ld_corrupt}
    for step, over in (("hook_z", "heads"), ("hook_z", "positions"), ("hook_resid_pre", "positions"),
                       ("hook_attn_out", "positions"), ("hook_mlp_out", "positions")):
        rows = []
        for b in range(tiny.N_LAYER):
            name = f"blocks.{b}.attn.{step}" if step == "hook_z" else f"blocks.{b}.{step}"
            row = []
            for c in range(tiny.N_HEAD if over == "heads" else T):
                def hook(n, v, name=name, c=c):
                    if n != name:
                        return v
                    v = v.clone()
                    if over == "heads":
                        v[:, c] = clean[name][:, c]
                    else:
                        v[c] = clean[name][c]
                    return v
                row.append((ld(forward(p, corrupt_ids, hook)) - ld_corrupt) / (ld_clean - ld_corrupt))
            rows.append(row)
        out[f"{step}/{over}"] = rows
    return out


def main():
    torch.set_num_threads(1)
    p = read_safetensors(os.path.join(DIR, "model.safetensors"))
    vocab, merges = tiny.train_bpe()
    enc = lambda text: tiny.encode(text, vocab, merges)
    ids = enc(ABLATE_TEXT)
    ref = {"made_by": "tests/models/make_intervention_reference.py: float64 forward of tiny-gpt2's weights",
           "ablations": {"text": ABLATE_TEXT, "ids": ids,
                         "none": tiny.rounded(forward(p, ids, lambda n, v: v)[-1]), "cases": []}}
    for target, mean in (("blocks.0.attn.h1", False), ("blocks.1.attn.h2", True), ("blocks.0.mlp", False),
                         ("blocks.1.mlp", True)):
        ref["ablations"]["cases"].append({"ablate": target + (":mean" if mean else ""),
                                          "last_logits": tiny.rounded(ablation(p, ids, target, mean)[-1])})
    clean_ids, corrupt_ids = enc(CLEAN), enc(CORRUPT)
    assert len(clean_ids) == len(corrupt_ids), (clean_ids, corrupt_ids)
    answer, wrong = enc(ANSWER), enc(WRONG)
    assert len(answer) == 1 and len(wrong) == 1, (answer, wrong)
    ref["patching"] = {"clean": CLEAN, "corrupt": CORRUPT, "clean_ids": clean_ids, "corrupt_ids": corrupt_ids,
                       "answer": ANSWER, "wrong": WRONG, "answer_id": answer[0], "wrong_id": wrong[0]}
    ref["patching"].update({k: tiny.rounded(torch.tensor(v)) if isinstance(v, list) else v
                            for k, v in patching(p, clean_ids, corrupt_ids, answer[0], wrong[0]).items()})
    tiny.write_json(os.path.join(DIR, "interventions-reference.json"), ref)


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Tiny Llama-family checkpoints for the tests, made without a download.

Builds Llama in plain PyTorch from its published definition (Hugging Face's
modeling_llama.py: token embeddings, pre-norm blocks with RMSNorm, rotary
positions in the half layout (rotate_half: pairs (i, i + hs/2)) with
rope_theta, grouped-query attention (num_key_value_heads; repeat_kv shares
K/V head g with query heads g·NH/KVH .. (g+1)·NH/KVH - 1), a SwiGLU MLP
down_proj(silu(gate_proj(x)) * up_proj(x)), a final RMSNorm (model.norm),
lm_head; nn.Linear weights stored d_out x d_in), with random weights from a
fixed seed, and saves it as Hugging Face folders:

  tiny-llama/       config.json, model.safetensors (F32, untied lm_head),
                    tokenizer.model (SentencePiece BPE with byte fallback,
                    trained here), tokenizer_config.json, tokenizer.json
                    (the same model in tokenizers' terms, as Hugging Face's
                    LlamaConverter writes it, for the JavaScript port),
                    reference.json
  tiny-llama-bf16/  config.json, model.safetensors (BF16), tokenizer.model
  tiny-llama3-tokenizer/  tokenizer.json in Llama 3's form (a Split pre-tokenizer
                    with Llama 3's pattern, then ByteLevel; ignore_merges;
                    <|begin_of_text|> added by TemplateProcessing) over
                    tiny-gpt2's byte-level vocabulary and merges
  tiny-qwen2/       config.json (model_type qwen2: Q/K/V biases, tied
                    embeddings, rope_theta 1e6), model.safetensors (F32),
                    tokenizer.json in Qwen2's form (normalizer NFC, its Split
                    pattern, ByteLevel, its special tokens) over 320 ids
                    (the reference's tests give ids; tokenizer_ids_qwen2.mjs
                    gives the tokenizer's)

reference.json holds, for a few texts: the token ids (Google's sentencepiece
library, BOS first as LlamaTokenizer adds it), and in float64 (the same
weights, the forward run in double): block 0's rotated queries and attention
pattern, the residual stream after block 1, the final RMSNorm's output and
the last position's logits; the bf16 copy's last logits from its rounded
weights; and tiny-qwen2's for fixed ids.

Run with Debian's python (python3-torch, python3-sentencepiece):
  /usr/bin/python3 tests/models/make_tiny_llama.py
  /usr/bin/python3 tests/models/make_tiny_llama.py --qwen2-tokenizer   (tiny-qwen2/tokenizer.json alone)

For measurements (never committed): --llama-1b DIR writes a Llama-1B-sized
checkpoint (16 blocks, hidden 2048, 32 heads, 8 K/V heads, intermediate
8192, vocabulary 32000, BF16, ~2.2 GB) of random weights (N(0, 0.02)),
config.json and model.safetensors only, one tensor in memory at a time: run
it with --ids.
"""
import io
import json
import math
import os
import struct
import sys

import numpy as np
import sentencepiece as spm
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_tiny_models import rounded, tensor_bytes, write_json, write_safetensors  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SEED = 23
HIDDEN, HEADS, KV_HEADS, LAYERS, INTERMEDIATE, POSITIONS = 48, 4, 2, 2, 96, 128
VOCAB = 384
TEXTS = ["the ring fell", "The ring fell, and the king's ring fell too.", "rings   fell\n3 times"]
QWEN_IDS = [5, 17, 300, 42, 42, 99, 7]

CORPUS = """the ring fell. the ring fell from the king's hand, and the ring rolled.
The king said: the ring is mine; they're the king's rings, we've seen them fall.
In the morning the ring fell again and again, 3 times, 12 times, then 100 times.
the cat sat on the mat; the dog sat on the log. It's the ring that fell.
Rings of gold, rings of iron: the smith made rings for every king in the land."""


# ---- the tokenizer: SentencePiece BPE with byte fallback, as Llama's -----------

def train_sentencepiece():
    """A Llama-style model: BPE, byte fallback, digits split, no normalisation, a dummy prefix."""
    out = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(CORPUS.splitlines()), model_writer=out, vocab_size=VOCAB, model_type="bpe",
        byte_fallback=True, split_digits=True, normalization_rule_name="identity", add_dummy_prefix=True,
        remove_extra_whitespaces=False, allow_whitespace_only_pieces=True, character_coverage=1.0,
        unk_id=0, bos_id=1, eos_id=2, pad_id=-1, num_threads=1, minloglevel=2, hard_vocab_limit=False)
    return out.getvalue()


def tokenizer_json(sp):
    """The model as tokenizers' BPE (Hugging Face's LlamaConverter and SentencePieceExtractor)."""
    vocab = {sp.id_to_piece(i): i for i in range(sp.get_piece_size())}
    scores = {sp.id_to_piece(i): sp.get_score(i) for i in range(sp.get_piece_size())}
    merges = []
    for merged, score in scores.items():
        local = [(merged[:k], merged[k:], score) for k in range(1, len(merged))
                 if merged[:k] in vocab and merged[k:] in vocab]
        merges += sorted(local, key=lambda m: (vocab[m[0]], vocab[m[1]]))
    merges = sorted(merges, key=lambda m: m[2], reverse=True)
    special = [{"id": i, "content": sp.id_to_piece(i), "single_word": False, "lstrip": False, "rstrip": False,
                "normalized": False, "special": True} for i in (0, 1, 2)]
    return {"version": "1.0", "truncation": None, "padding": None, "added_tokens": special,
            "normalizer": {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "▁"},
                                                               {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]},
            "pre_tokenizer": None,
            "post_processor": {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                                                                        {"Sequence": {"id": "A", "type_id": 0}}],
                               "pair": [], "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}},
            "decoder": {"type": "Sequence", "decoders": [{"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
                                                         {"type": "ByteFallback"}, {"type": "Fuse"},
                                                         {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
            "model": {"type": "BPE", "dropout": None, "unk_token": "<unk>", "continuing_subword_prefix": None,
                      "end_of_word_suffix": None, "fuse_unk": True, "byte_fallback": True, "ignore_merges": False,
                      "vocab": vocab, "merges": [[a, b] for a, b, _ in merges]}}


# Llama 3's pre-tokenizer pattern (its tokenizer.json's Split Regex).
LLAMA3_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|"
                  r"\s*[\r\n]+|\s+(?!\S)|\s+")


def llama3_tokenizer_json():
    """tiny-gpt2's byte-level BPE in Llama 3's tokenizer.json form."""
    gpt2 = json.load(open(os.path.join(HERE, "tiny-gpt2", "tokenizer.json"), encoding="utf-8"))
    vocab = {k: v for k, v in gpt2["model"]["vocab"].items() if k != "<|endoftext|>"}
    bos = len(gpt2["model"]["vocab"])
    added = [{"id": bos, "content": "<|begin_of_text|>", "single_word": False, "lstrip": False, "rstrip": False,
              "normalized": False, "special": True}]
    return {"version": "1.0", "truncation": None, "padding": None, "added_tokens": added, "normalizer": None,
            "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
                {"type": "Split", "pattern": {"Regex": LLAMA3_PATTERN}, "behavior": "Isolated", "invert": False},
                {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}]},
            "post_processor": {"type": "TemplateProcessing",
                               "single": [{"SpecialToken": {"id": "<|begin_of_text|>", "type_id": 0}},
                                          {"Sequence": {"id": "A", "type_id": 0}}],
                               "pair": [], "special_tokens": {"<|begin_of_text|>": {
                                   "id": "<|begin_of_text|>", "ids": [bos], "tokens": ["<|begin_of_text|>"]}}},
            "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
            "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                      "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": True,
                      "vocab": vocab, "merges": gpt2["model"]["merges"]}}


# Qwen2's pre-tokenizer pattern (Qwen2's and Qwen2.5's tokenizer.json Split Regex):
# Llama 3's, but numbers one digit at a time.
QWEN2_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|"
                 r"\s*[\r\n]+|\s+(?!\S)|\s+")
QWEN2_MERGES_KEPT = 58            # tiny-gpt2's first merges (its ids 256..313)
QWEN2_ACCENT_MERGES = [("Ã", "©"), ("Ã", "¨"), ("Ã", "¯")]  # é è ï as byte-level pieces (UTF-8 C3 A9, C3 A8, C3 AF)
QWEN2_SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]


def qwen2_tokenizer_json():
    """A byte-level BPE in Qwen2's tokenizer.json form, over tiny-qwen2's 320 ids.

    Qwen2's normalizer (NFC), its Split pattern then a ByteLevel without a
    pattern, a ByteLevel post-processor (no tokens added), its three special
    tokens ("normalized": false). The vocabulary: the 256 byte pieces,
    tiny-gpt2's first merges, and three merges making precomposed accented
    letters one piece each (so that NFC, which composes e + U+0301 into é,
    changes the ids), then the special tokens: 320 ids, tiny-qwen2's
    vocab_size."""
    gpt2 = json.load(open(os.path.join(HERE, "tiny-gpt2", "tokenizer.json"), encoding="utf-8"))
    by_id = sorted(((i, p) for p, i in gpt2["model"]["vocab"].items()), key=lambda x: x[0])
    vocab = {p: i for i, p in by_id if i < 256}
    merges = [m.split(" ") for m in gpt2["model"]["merges"][:QWEN2_MERGES_KEPT]] + [list(m) for m in QWEN2_ACCENT_MERGES]
    for a, b in merges:
        vocab[a + b] = len(vocab)
    added = [{"id": len(vocab) + k, "content": c, "single_word": False, "lstrip": False, "rstrip": False,
              "normalized": False, "special": True} for k, c in enumerate(QWEN2_SPECIALS)]
    assert len(vocab) + len(added) == qwen2_config()["vocab_size"]
    return {"version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
            "normalizer": {"type": "NFC"},
            "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
                {"type": "Split", "pattern": {"Regex": QWEN2_PATTERN}, "behavior": "Isolated", "invert": False},
                {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}]},
            "post_processor": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False},
            "decoder": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False},
            "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": "",
                      "end_of_word_suffix": "", "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                      "vocab": vocab, "merges": merges}}


def write_qwen2_tokenizer():
    dq = os.path.join(HERE, "tiny-qwen2")
    os.makedirs(dq, exist_ok=True)
    write_json(os.path.join(dq, "tokenizer.json"), qwen2_tokenizer_json())


# ---- the model: Llama as published ----------------------------------------------

def rms_norm(x, w, eps):
    return x / torch.sqrt((x * x).mean(-1, keepdim=True) + eps) * w


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


def forward(p, ids, cfg, keep):
    """Llama's forward over one sequence; p: HF name -> tensor (float64)."""
    T, H, KVH = len(ids), cfg["num_attention_heads"], cfg["num_key_value_heads"]
    C = cfg["hidden_size"]
    hs = C // H
    eps, theta = cfg["rms_norm_eps"], cfg["rope_theta"]
    bias = cfg["model_type"] == "qwen2"
    # cos, sin: (T, hs), the angle p·θ_i repeated over both halves, θ_i = theta^(-2i/hs)
    inv = 1.0 / theta ** (torch.arange(0, hs, 2, dtype=torch.float64) / hs)
    ang = torch.arange(T, dtype=torch.float64)[:, None] * inv[None, :]
    cos, sin = torch.cat((ang, ang), -1).cos(), torch.cat((ang, ang), -1).sin()
    x = p["model.embed_tokens.weight"][ids]
    for i in range(cfg["num_hidden_layers"]):
        h = f"model.layers.{i}."
        a = rms_norm(x, p[h + "input_layernorm.weight"], eps)

        def lin(name, v):
            y = v @ p[h + name + ".weight"].T  # nn.Linear: x·Wᵀ (+ b)
            return y + p[h + name + ".bias"] if bias and name.split(".")[-1] in ("q_proj", "k_proj", "v_proj") else y

        q = lin("self_attn.q_proj", a).view(T, H, hs).transpose(0, 1)    # (H, T, hs)
        k = lin("self_attn.k_proj", a).view(T, KVH, hs).transpose(0, 1)  # (KVH, T, hs)
        v = lin("self_attn.v_proj", a).view(T, KVH, hs).transpose(0, 1)
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        if i == 0:
            keep["blocks.0.attn.hook_rot_q"] = q.transpose(0, 1)  # (T, H, hs)
        k, v = k.repeat_interleave(H // KVH, dim=0), v.repeat_interleave(H // KVH, dim=0)  # repeat_kv
        s = q @ k.transpose(-1, -2) / math.sqrt(hs)
        s = s.masked_fill(torch.triu(torch.ones(T, T, dtype=torch.bool), 1), float("-inf"))
        pattern = torch.softmax(s, dim=-1)
        if i == 0:
            keep["blocks.0.attn.hook_pattern"] = pattern
        z = (pattern @ v).transpose(0, 1).reshape(T, H * hs)
        x = x + lin("self_attn.o_proj", z)
        m = rms_norm(x, p[h + "post_attention_layernorm.weight"], eps)
        m = lin("mlp.down_proj", torch.nn.functional.silu(lin("mlp.gate_proj", m)) * lin("mlp.up_proj", m))
        x = x + m
        keep[f"blocks.{i}.hook_resid_post"] = x
    n = rms_norm(x, p["model.norm.weight"], eps)
    keep["ln_final.hook_normalized"] = n
    head = p["model.embed_tokens.weight"] if cfg.get("tie_word_embeddings") else p["lm_head.weight"]
    return n @ head.T


def make_weights(cfg, seed):
    g = torch.Generator().manual_seed(seed)
    C, F, V = cfg["hidden_size"], cfg["intermediate_size"], cfg["vocab_size"]
    H, KVH = cfg["num_attention_heads"], cfg["num_key_value_heads"]
    hs = C // H

    def normal(*shape, std):
        return torch.randn(*shape, generator=g) * std

    # Larger spreads than an initialisation's 0.02, so that attention is far from uniform and every term matters.
    p = {"model.embed_tokens.weight": normal(V, C, std=1.0)}
    for i in range(cfg["num_hidden_layers"]):
        h = f"model.layers.{i}."
        p[h + "input_layernorm.weight"] = 1 + normal(C, std=0.1)
        p[h + "self_attn.q_proj.weight"] = normal(H * hs, C, std=0.4)
        p[h + "self_attn.k_proj.weight"] = normal(KVH * hs, C, std=0.4)
        p[h + "self_attn.v_proj.weight"] = normal(KVH * hs, C, std=0.3)
        if cfg["model_type"] == "qwen2":
            p[h + "self_attn.q_proj.bias"] = normal(H * hs, std=0.2)
            p[h + "self_attn.k_proj.bias"] = normal(KVH * hs, std=0.2)
            p[h + "self_attn.v_proj.bias"] = normal(KVH * hs, std=0.2)
        p[h + "self_attn.o_proj.weight"] = normal(C, H * hs, std=0.2)
        p[h + "post_attention_layernorm.weight"] = 1 + normal(C, std=0.1)
        p[h + "mlp.gate_proj.weight"] = normal(F, C, std=0.3)
        p[h + "mlp.up_proj.weight"] = normal(F, C, std=0.3)
        p[h + "mlp.down_proj.weight"] = normal(C, F, std=0.15)
    p["model.norm.weight"] = 1 + normal(C, std=0.1)
    if not cfg.get("tie_word_embeddings"):
        p["lm_head.weight"] = normal(V, C, std=0.3)
    return p


def llama_config(vocab_size):
    return {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": HIDDEN,
            "num_attention_heads": HEADS, "num_key_value_heads": KV_HEADS, "num_hidden_layers": LAYERS,
            "intermediate_size": INTERMEDIATE, "max_position_embeddings": POSITIONS, "vocab_size": vocab_size,
            "rms_norm_eps": 1e-6, "rope_theta": 10000.0, "rope_scaling": None, "hidden_act": "silu",
            "tie_word_embeddings": False, "attention_bias": False, "mlp_bias": False,
            "bos_token_id": 1, "eos_token_id": 2, "torch_dtype": "float32"}


def qwen2_config():
    return {"model_type": "qwen2", "architectures": ["Qwen2ForCausalLM"], "hidden_size": 32,
            "num_attention_heads": 4, "num_key_value_heads": 1, "num_hidden_layers": 2, "intermediate_size": 80,
            "max_position_embeddings": 64, "vocab_size": 320, "rms_norm_eps": 1e-5, "rope_theta": 1000000.0,
            "hidden_act": "silu", "tie_word_embeddings": True, "use_sliding_window": False, "sliding_window": 32,
            "torch_dtype": "float32"}


# ---- measurements only ---------------------------------------------------------

def llama_1b(out):
    """Written tensor by tensor: the header first (sizes are known), then each tensor's bytes."""
    C, F, L, H, KVH, V = 2048, 8192, 16, 32, 8, 32000
    hs = C // H
    shapes = {"model.embed_tokens.weight": (V, C)}
    for i in range(L):
        h = f"model.layers.{i}."
        shapes.update({h + "input_layernorm.weight": (C,), h + "self_attn.q_proj.weight": (H * hs, C),
                       h + "self_attn.k_proj.weight": (KVH * hs, C), h + "self_attn.v_proj.weight": (KVH * hs, C),
                       h + "self_attn.o_proj.weight": (C, H * hs), h + "post_attention_layernorm.weight": (C,),
                       h + "mlp.gate_proj.weight": (F, C), h + "mlp.up_proj.weight": (F, C),
                       h + "mlp.down_proj.weight": (C, F)})
    shapes.update({"model.norm.weight": (C,), "lm_head.weight": (V, C)})
    header, at = {"__metadata__": {"format": "pt"}}, 0
    for name, shape in shapes.items():
        n = 2 * math.prod(shape)
        header[name] = {"dtype": "BF16", "shape": list(shape), "data_offsets": [at, at + n]}
        at += n
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    os.makedirs(out, exist_ok=True)
    g = torch.Generator().manual_seed(SEED)
    with open(os.path.join(out, "model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        for name, shape in shapes.items():
            t = torch.ones(shape) if len(shape) == 1 else torch.randn(*shape, generator=g) * 0.02
            f.write(tensor_bytes(t.bfloat16())[1])
    cfg = dict(llama_config(V), hidden_size=C, num_attention_heads=H, num_key_value_heads=KVH, num_hidden_layers=L,
               intermediate_size=F, max_position_embeddings=2048, rms_norm_eps=1e-5, torch_dtype="bfloat16")
    write_json(os.path.join(out, "config.json"), cfg)


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--llama-1b":
        return llama_1b(sys.argv[2])
    if len(sys.argv) == 2 and sys.argv[1] == "--qwen2-tokenizer":
        return write_qwen2_tokenizer()
    torch.set_num_threads(1)
    model = train_sentencepiece()
    sp = spm.SentencePieceProcessor(model_proto=model)
    V = sp.get_piece_size()
    cfg = llama_config(V)
    p32 = make_weights(cfg, SEED)

    d = os.path.join(HERE, "tiny-llama")
    os.makedirs(d, exist_ok=True)
    write_json(os.path.join(d, "config.json"), cfg)
    write_safetensors(os.path.join(d, "model.safetensors"), p32)
    with open(os.path.join(d, "tokenizer.model"), "wb") as f:
        f.write(model)
    write_json(os.path.join(d, "tokenizer_config.json"), {
        "tokenizer_class": "LlamaTokenizer", "add_bos_token": True, "add_eos_token": False, "legacy": True,
        "bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>", "model_max_length": POSITIONS})
    write_json(os.path.join(d, "tokenizer.json"), tokenizer_json(sp))

    pb = {k: v.bfloat16() for k, v in p32.items()}
    db = os.path.join(HERE, "tiny-llama-bf16")
    os.makedirs(db, exist_ok=True)
    write_json(os.path.join(db, "config.json"), dict(cfg, torch_dtype="bfloat16"))
    write_safetensors(os.path.join(db, "model.safetensors"), pb)
    with open(os.path.join(db, "tokenizer.model"), "wb") as f:
        f.write(model)

    dt = os.path.join(HERE, "tiny-llama3-tokenizer")
    os.makedirs(dt, exist_ok=True)
    write_json(os.path.join(dt, "tokenizer.json"), llama3_tokenizer_json())

    qcfg = qwen2_config()
    pq = make_weights(qcfg, SEED + 1)
    dq = os.path.join(HERE, "tiny-qwen2")
    os.makedirs(dq, exist_ok=True)
    write_json(os.path.join(dq, "config.json"), qcfg)
    write_safetensors(os.path.join(dq, "model.safetensors"), pq)
    write_qwen2_tokenizer()

    ref = {"made_by": "tests/models/make_tiny_llama.py (seed %d): float64 forward of the same weights; "
                      "ids from sentencepiece %s" % (SEED, spm.__version__),
           "texts": []}
    p64 = {k: v.double() for k, v in p32.items()}
    for text in TEXTS:
        ids = [sp.bos_id()] + sp.encode(text)
        keep = {}
        logits = forward(p64, ids, cfg, keep)
        ref["texts"].append({"text": text, "ids": ids, "pieces": [sp.id_to_piece(i) for i in ids],
                             **{k: rounded(keep[k]) for k in ("blocks.0.attn.hook_rot_q", "blocks.0.attn.hook_pattern",
                                                              "blocks.1.hook_resid_post", "ln_final.hook_normalized")},
                             "last_logits": rounded(logits[-1])})
    ids0 = ref["texts"][0]["ids"]
    ref["bf16"] = {"ids": ids0, "last_logits": rounded(forward({k: v.double() for k, v in pb.items()}, ids0, cfg, {})[-1])}
    keep = {}
    logits = forward({k: v.double() for k, v in pq.items()}, QWEN_IDS, qcfg, keep)
    ref["qwen2"] = {"ids": QWEN_IDS, "blocks.0.attn.hook_pattern": rounded(keep["blocks.0.attn.hook_pattern"]),
                    "blocks.1.hook_resid_post": rounded(keep["blocks.1.hook_resid_post"]),
                    "last_logits": rounded(logits[-1])}
    write_json(os.path.join(d, "reference.json"), ref)


if __name__ == "__main__":
    main()

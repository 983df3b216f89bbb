#!/usr/bin/python3
"""Tiny GPT-2 checkpoints for the tests, made without a download.

Builds GPT-2 in plain PyTorch from its published definition (OpenAI's
model.py; Hugging Face's modeling_gpt2.py: learned positions, pre-norm
blocks, Conv1D linear layers stored d_in x d_out, one c_attn for Q, K and V,
GELU with tanh, a final LayerNorm, the unembedding tied to the embedding),
with random weights from a fixed seed, and saves it as Hugging Face folders:

  tiny-gpt2/               config.json, model.safetensors (F32), tokenizer.json,
                           vocab.json, merges.txt, reference.json
  tiny-gpt2-f16/           config.json, model.safetensors (F16, names under "transformer.")
  tiny-gpt2-bf16-sharded/  config.json, model.safetensors.index.json, two BF16 shards

The safetensors files are written here (the format is an 8-byte header
length, a JSON header, the raw little-endian data). The tokenizer is a
byte-level BPE trained here on a short text: GPT-2's 256 byte symbols, then
the most frequent pairs merged, as GPT-2's was built.

reference.json holds, for a few ASCII texts: the token ids (this script's
own BPE encoder), and in float64 (the same weights, the forward run in
double): block 0's attention pattern, the residual stream after block 1, the
final LayerNorm's output and the logits at the last position; and for the
f16 and bf16 copies, the last position's logits from their rounded weights.

Run with Debian's python: /usr/bin/python3 tests/models/make_tiny_models.py

For measurements (never committed): --gpt2-small DIR writes a GPT-2-small-sized
checkpoint (12 blocks, d_model 768, 12 heads, 1024 positions, vocabulary
50257, 124 M parameters, F32, ~500 MB) of random weights (GPT-2's init,
N(0, 0.02)), config.json and model.safetensors only: run it with --ids.
"""
import json
import math
import os
import re
import struct
from collections import Counter

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
SEED = 17
N_EMBD, N_HEAD, N_LAYER, N_POSITIONS = 32, 4, 2, 64
N_MERGES = 64
TEXTS = ["the ring fell", "The ring fell, and the king's ring fell too.", "rings   fell\n3 times"]

CORPUS = """the ring fell. the ring fell from the king's hand, and the ring rolled.
The king said: the ring is mine; they're the king's rings, we've seen them fall.
In the morning the ring fell again and again, 3 times, 12 times, then 100 times.
the cat sat on the mat; the dog sat on the log. It's the ring that fell."""


# ---- the tokenizer: byte-level BPE ------------------------------------------

def bytes_to_unicode():
    """GPT-2's table: printable bytes stand for themselves, the other 68 are U+0100 + n."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, [chr(c) for c in cs]))


BYTE_CHAR = bytes_to_unicode()
# GPT-2's pattern restricted to ASCII, where \p{L} is [A-Za-z] and \p{N} is [0-9]
# (Python's re has no Unicode categories; every text here is ASCII).
PAT = re.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?[A-Za-z]+| ?[0-9]+| ?[^\sA-Za-z0-9]+|\s+(?!\S)|\s+""")


def words(text):
    assert text.isascii()
    return ["".join(BYTE_CHAR[b] for b in w.encode("utf-8")) for w in PAT.findall(text)]


def train_bpe():
    vocab = {c: i for i, c in enumerate(BYTE_CHAR.values())}  # ids 0..255 in the table's order, as GPT-2's
    counts = Counter(tuple(w) for w in words(CORPUS))
    merges = []
    for _ in range(N_MERGES):
        pairs = Counter()
        for w, c in counts.items():
            for a, b in zip(w, w[1:]):
                pairs[(a, b)] += c
        if not pairs:
            break
        (a, b), _ = max(pairs.items(), key=lambda kv: (kv[1], kv[0]))
        merges.append((a, b))
        vocab[a + b] = len(vocab)
        new = Counter()
        for w, c in counts.items():
            out, i = [], 0
            while i < len(w):
                if i + 1 < len(w) and w[i] == a and w[i + 1] == b:
                    out.append(a + b)
                    i += 2
                else:
                    out.append(w[i])
                    i += 1
            new[tuple(out)] += c
        counts = new
    vocab["<|endoftext|>"] = len(vocab)
    return vocab, merges


def encode(text, vocab, merges):
    rank = {m: i for i, m in enumerate(merges)}
    ids = []
    for w in words(text):
        sym = list(w)
        while len(sym) > 1:
            pairs = [(rank.get((a, b), math.inf), i) for i, (a, b) in enumerate(zip(sym, sym[1:]))]
            best = min(pairs)[0]
            if best == math.inf:
                break
            a, b = merges[best]
            out, i = [], 0
            while i < len(sym):
                if i + 1 < len(sym) and sym[i] == a and sym[i + 1] == b:
                    out.append(a + b)
                    i += 2
                else:
                    out.append(sym[i])
                    i += 1
            sym = out
        ids += [vocab[s] for s in sym]
    return ids


# ---- the model: GPT-2 as published --------------------------------------------

def gelu_new(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


def layer_norm(x, w, b, eps=1e-5):
    return torch.nn.functional.layer_norm(x, (x.shape[-1],), w, b, eps)


def forward(p, ids, keep):
    """GPT-2's forward over one sequence; p: name -> tensor (any float dtype)."""
    T, C, H = len(ids), N_EMBD, N_HEAD
    hs = C // H
    x = p["wte.weight"][ids] + p["wpe.weight"][:T]
    for i in range(N_LAYER):
        h = f"h.{i}."
        a = layer_norm(x, p[h + "ln_1.weight"], p[h + "ln_1.bias"])
        qkv = a @ p[h + "attn.c_attn.weight"] + p[h + "attn.c_attn.bias"]  # Conv1D: x·W + b
        q, k, v = qkv.split(C, dim=-1)
        q, k, v = (t.view(T, H, hs).transpose(0, 1) for t in (q, k, v))  # (H, T, hs)
        s = q @ k.transpose(-1, -2) / math.sqrt(hs)
        s = s.masked_fill(torch.triu(torch.ones(T, T, dtype=torch.bool), 1), float("-inf"))
        pattern = torch.softmax(s, dim=-1)
        if i == 0:
            keep["blocks.0.attn.hook_pattern"] = pattern
        z = (pattern @ v).transpose(0, 1).reshape(T, C)
        x = x + z @ p[h + "attn.c_proj.weight"] + p[h + "attn.c_proj.bias"]
        m = layer_norm(x, p[h + "ln_2.weight"], p[h + "ln_2.bias"])
        m = gelu_new(m @ p[h + "mlp.c_fc.weight"] + p[h + "mlp.c_fc.bias"])
        x = x + m @ p[h + "mlp.c_proj.weight"] + p[h + "mlp.c_proj.bias"]
        keep[f"blocks.{i}.hook_resid_post"] = x
    n = layer_norm(x, p["ln_f.weight"], p["ln_f.bias"])
    keep["ln_final.hook_normalized"] = n
    return n @ p["wte.weight"].T  # tied unembedding


def make_weights(vocab_size):
    g = torch.Generator().manual_seed(SEED)
    C, F = N_EMBD, 4 * N_EMBD

    def normal(*shape, std):
        return torch.randn(*shape, generator=g) * std

    # Larger spreads than GPT-2's 0.02, so that attention is far from uniform and every term matters.
    p = {"wte.weight": normal(vocab_size, C, std=0.5), "wpe.weight": normal(N_POSITIONS, C, std=0.3)}
    for i in range(N_LAYER):
        h = f"h.{i}."
        p[h + "ln_1.weight"] = 1 + normal(C, std=0.1)
        p[h + "ln_1.bias"] = normal(C, std=0.1)
        p[h + "attn.c_attn.weight"] = normal(C, 3 * C, std=0.4)
        p[h + "attn.c_attn.bias"] = normal(3 * C, std=0.1)
        p[h + "attn.c_proj.weight"] = normal(C, C, std=0.2)
        p[h + "attn.c_proj.bias"] = normal(C, std=0.05)
        p[h + "ln_2.weight"] = 1 + normal(C, std=0.1)
        p[h + "ln_2.bias"] = normal(C, std=0.1)
        p[h + "mlp.c_fc.weight"] = normal(C, F, std=0.2)
        p[h + "mlp.c_fc.bias"] = normal(F, std=0.1)
        p[h + "mlp.c_proj.weight"] = normal(F, C, std=0.1)
        p[h + "mlp.c_proj.bias"] = normal(C, std=0.05)
    p["ln_f.weight"] = 1 + normal(C, std=0.1)
    p["ln_f.bias"] = normal(C, std=0.1)
    return p


# ---- safetensors, written by hand ---------------------------------------------

DTYPES = {torch.float32: ("F32", np.float32), torch.float16: ("F16", np.float16)}


def tensor_bytes(t):
    if t.dtype == torch.bfloat16:
        # bfloat16 is float32's top 16 bits: take them from the float32 view
        u32 = t.float().numpy().view(np.uint32)
        return ("BF16", (u32 >> 16).astype("<u2").tobytes())
    name, np_type = DTYPES[t.dtype]
    return (name, t.numpy().astype(np.dtype(np_type).newbyteorder("<")).tobytes())


def write_safetensors(path, tensors):
    header, blobs, at = {"__metadata__": {"format": "pt"}}, [], 0
    for name, t in tensors.items():
        dtype, data = tensor_bytes(t.contiguous())
        header[name] = {"dtype": dtype, "shape": list(t.shape), "data_offsets": [at, at + len(data)]}
        blobs.append(data)
        at += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)  # the data aligned to 8 bytes, as the reference writer pads
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def config(vocab_size):
    return {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "n_embd": N_EMBD, "n_head": N_HEAD,
            "n_layer": N_LAYER, "n_positions": N_POSITIONS, "n_ctx": N_POSITIONS, "vocab_size": vocab_size,
            "n_inner": None, "layer_norm_epsilon": 1e-5, "activation_function": "gelu_new",
            "bos_token_id": vocab_size - 1, "eos_token_id": vocab_size - 1, "torch_dtype": "float32"}


def write_json(path, obj):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(obj, f, ensure_ascii=False, indent=1)
        f.write("\n")


def rounded(t, digits=10):
    """float64 values as JSON numbers of `digits` significant digits (the tests' tolerances are far coarser)."""
    return json.loads(json.dumps(np.vectorize(lambda v: float(f"{v:.{digits}g}"))(t.double().numpy()).tolist()))


def gpt2_small(out):
    g = torch.Generator().manual_seed(SEED)
    C, F, L, P, V = 768, 3072, 12, 1024, 50257
    p = {"wte.weight": torch.randn(V, C, generator=g) * 0.02, "wpe.weight": torch.randn(P, C, generator=g) * 0.01}
    for i in range(L):
        h = f"h.{i}."
        p.update({h + "ln_1.weight": torch.ones(C), h + "ln_1.bias": torch.zeros(C),
                  h + "attn.c_attn.weight": torch.randn(C, 3 * C, generator=g) * 0.02, h + "attn.c_attn.bias": torch.zeros(3 * C),
                  h + "attn.c_proj.weight": torch.randn(C, C, generator=g) * 0.02, h + "attn.c_proj.bias": torch.zeros(C),
                  h + "ln_2.weight": torch.ones(C), h + "ln_2.bias": torch.zeros(C),
                  h + "mlp.c_fc.weight": torch.randn(C, F, generator=g) * 0.02, h + "mlp.c_fc.bias": torch.zeros(F),
                  h + "mlp.c_proj.weight": torch.randn(F, C, generator=g) * 0.02, h + "mlp.c_proj.bias": torch.zeros(C)})
    p.update({"ln_f.weight": torch.ones(C), "ln_f.bias": torch.zeros(C)})
    os.makedirs(out, exist_ok=True)
    cfg = dict(config(V), n_embd=C, n_head=12, n_layer=L, n_positions=P, n_ctx=P)
    write_json(os.path.join(out, "config.json"), cfg)
    write_safetensors(os.path.join(out, "model.safetensors"), p)


def main():
    import sys
    if len(sys.argv) == 3 and sys.argv[1] == "--gpt2-small":
        return gpt2_small(sys.argv[2])
    torch.set_num_threads(1)
    vocab, merges = train_bpe()
    V = len(vocab)
    p32 = make_weights(V)

    d = os.path.join(HERE, "tiny-gpt2")
    os.makedirs(d, exist_ok=True)
    write_json(os.path.join(d, "config.json"), config(V))
    write_safetensors(os.path.join(d, "model.safetensors"), p32)
    write_json(os.path.join(d, "vocab.json"), vocab)
    with open(os.path.join(d, "merges.txt"), "w", encoding="utf-8") as f:
        f.write("#version: 0.2\n" + "".join(f"{a} {b}\n" for a, b in merges))
    eot = V - 1
    write_json(os.path.join(d, "tokenizer.json"), {
        "version": "1.0",
        "added_tokens": [{"id": eot, "content": "<|endoftext|>", "single_word": False, "lstrip": False,
                          "rstrip": False, "normalized": True, "special": True}],
        "normalizer": None,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
        "post_processor": None, "decoder": {"type": "ByteLevel"},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": "",
                  "end_of_word_suffix": "", "fuse_unk": False, "vocab": vocab, "merges": [f"{a} {b}" for a, b in merges]}})

    p16 = {k: v.half() for k, v in p32.items()}
    d16 = os.path.join(HERE, "tiny-gpt2-f16")
    os.makedirs(d16, exist_ok=True)
    write_json(os.path.join(d16, "config.json"), dict(config(V), torch_dtype="float16"))
    write_safetensors(os.path.join(d16, "model.safetensors"), {"transformer." + k: v for k, v in p16.items()})

    pb = {k: v.bfloat16() for k, v in p32.items()}
    db = os.path.join(HERE, "tiny-gpt2-bf16-sharded")
    os.makedirs(db, exist_ok=True)
    write_json(os.path.join(db, "config.json"), dict(config(V), torch_dtype="bfloat16"))
    names = list(pb)
    shards = {"model-00001-of-00002.safetensors": names[: len(names) // 2],
              "model-00002-of-00002.safetensors": names[len(names) // 2:]}
    weight_map = {}
    for shard, keys in shards.items():
        write_safetensors(os.path.join(db, shard), {k: pb[k] for k in keys})
        weight_map.update({k: shard for k in keys})
    write_json(os.path.join(db, "model.safetensors.index.json"), {"metadata": {"total_size": 0}, "weight_map": weight_map})

    ref = {"made_by": "tests/models/make_tiny_models.py (seed %d): float64 forward of the same weights" % SEED,
           "texts": []}
    p64 = {k: v.double() for k, v in p32.items()}
    for text in TEXTS:
        ids = encode(text, vocab, merges)
        keep = {}
        logits = forward(p64, ids, keep)
        ref["texts"].append({"text": text, "ids": ids,
                             "blocks.0.attn.hook_pattern": rounded(keep["blocks.0.attn.hook_pattern"]),
                             "blocks.1.hook_resid_post": rounded(keep["blocks.1.hook_resid_post"]),
                             "ln_final.hook_normalized": rounded(keep["ln_final.hook_normalized"]),
                             "last_logits": rounded(logits[-1])})
    ids0 = encode(TEXTS[0], vocab, merges)
    for name, weights in (("f16", p16), ("bf16", pb)):
        logits = forward({k: v.double() for k, v in weights.items()}, ids0, {})
        ref[name] = {"ids": ids0, "last_logits": rounded(logits[-1])}
    write_json(os.path.join(d, "reference.json"), ref)


# ---- BERT: tiny-bert/ -----------------------------------------------------------
#
# BERT as published (Devlin et al. 2018; Hugging Face's modeling_bert.py):
# embeddings = LayerNorm(word + token type 0 + position), then post-norm
# encoder blocks: x = LN(x + attn(x)), x = LN(x + FFN(x)), the FFN's GELU
# exact (erf), nn.Linear weights stored d_out x d_in, Q, K and V separate, no
# mask. The WordPiece vocabulary is made here, and a plain Python WordPiece
# (BERT's tokenization.py: clean, CJK spaced, lower-cased, accents stripped,
# split at white space and punctuation, greedy longest match with "##") gives
# the reference texts' ids. Run: /usr/bin/python3 tests/models/make_tiny_models.py --bert

BERT_C, BERT_HEADS, BERT_LAYERS, BERT_FF, BERT_POSITIONS, BERT_TYPES = 32, 4, 2, 64, 64, 2
BERT_EPS = 1e-12  # BertConfig's layer_norm_eps
BERT_TEXTS = ["the ring fell", "The King's rings fell, and fell again!", "a rolling ring [MASK] fell"]
BERT_WORDS = """the ring rings fell fall falling king hand and a an is was it of to in on from said
again roll rolled rolling cat sat mat dog log time times morning mine they we seen them that this
cafe naive resume play playing played un want wanted there here what when where who why how
not no yes all some any one two three first last new old good great small big long little
man woman child day night year world life house water light word words sentence text token
read write run running ran see saw look looked make made take took give gave find found
think thought know knew tell told ask asked work worked call called try tried need feel
become leave put mean keep let begin seem help show hear heard turn start might must shall""".split()
BERT_SUFFIXES = ["##s", "##ed", "##ing", "##ly", "##er", "##est", "##ring", "##fe", "##ve", "##me", "##ll"]
BERT_CJK = ["日", "本", "語", "中", "文"]


def bert_vocab():
    special = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    chars = [chr(c) for c in range(ord("a"), ord("z") + 1)] + [str(d) for d in range(10)]
    punct = list("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
    pieces = special + chars + punct + ["##" + c for c in chars] + BERT_WORDS + BERT_SUFFIXES + BERT_CJK
    seen, vocab = set(), []
    for p in pieces:
        if p not in seen:
            seen.add(p)
            vocab.append(p)
    return vocab


def bert_basic_words(text):
    """BERT's BasicTokenizer (tokenization.py), with Python's unicodedata."""
    import unicodedata
    out = []
    for ch in text:
        cp = ord(ch)
        if cp == 0 or cp == 0xFFFD or (ch not in "\t\n\r" and unicodedata.category(ch) in ("Cc", "Cf", "Co", "Cs")):
            continue
        out.append(" " if ch in "\t\n\r" or unicodedata.category(ch) in ("Zs", "Zl", "Zp") else ch)
    text = "".join(f" {c} " if 0x4E00 <= ord(c) <= 0x9FFF else c for c in out)
    text = "".join(c for c in unicodedata.normalize("NFD", text.lower()) if unicodedata.category(c) != "Mn")

    def punct(c):
        cp = ord(c)
        return 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126 or unicodedata.category(c).startswith("P")
    words = []
    for w in text.split():
        cur = ""
        for c in w:
            if punct(c):
                if cur:
                    words.append(cur)
                words.append(c)
                cur = ""
            else:
                cur += c
        if cur:
            words.append(cur)
    return words


def bert_encode(text, vocab):
    ids_of = {p: i for i, p in enumerate(vocab)}
    ids = [ids_of["[CLS]"]]
    for part_i, part in enumerate(text.split("[MASK]")):
        if part_i:
            ids.append(ids_of["[MASK]"])
        for w in bert_basic_words(part):
            if len(w) > 100:
                ids.append(ids_of["[UNK]"])
                continue
            start, sub = 0, []
            while start < len(w):
                end = len(w)
                while end > start and ((w[start:end] if start == 0 else "##" + w[start:end]) not in ids_of):
                    end -= 1
                if end == start:
                    sub = [ids_of["[UNK]"]]
                    break
                sub.append(ids_of[w[start:end] if start == 0 else "##" + w[start:end]])
                start = end
            ids += sub
    return ids + [ids_of["[SEP]"]]


def bert_weights(vocab_size):
    g = torch.Generator().manual_seed(SEED + 1)
    C, F = BERT_C, BERT_FF

    def normal(*shape, std):
        return torch.randn(*shape, generator=g) * std

    e = "bert.embeddings."
    p = {e + "word_embeddings.weight": normal(vocab_size, C, std=0.5),
         e + "position_embeddings.weight": normal(BERT_POSITIONS, C, std=0.3),
         e + "token_type_embeddings.weight": normal(BERT_TYPES, C, std=0.3),
         e + "LayerNorm.weight": 1 + normal(C, std=0.1), e + "LayerNorm.bias": normal(C, std=0.1)}
    for i in range(BERT_LAYERS):
        h = f"bert.encoder.layer.{i}."
        for n in ("query", "key", "value"):
            p[h + f"attention.self.{n}.weight"] = normal(C, C, std=0.4)  # nn.Linear: (d_out, d_in)
            p[h + f"attention.self.{n}.bias"] = normal(C, std=0.1)
        p[h + "attention.output.dense.weight"] = normal(C, C, std=0.2)
        p[h + "attention.output.dense.bias"] = normal(C, std=0.05)
        p[h + "attention.output.LayerNorm.weight"] = 1 + normal(C, std=0.1)
        p[h + "attention.output.LayerNorm.bias"] = normal(C, std=0.1)
        p[h + "intermediate.dense.weight"] = normal(F, C, std=0.3)
        p[h + "intermediate.dense.bias"] = normal(F, std=0.1)
        p[h + "output.dense.weight"] = normal(C, F, std=0.15)
        p[h + "output.dense.bias"] = normal(C, std=0.05)
        p[h + "output.LayerNorm.weight"] = 1 + normal(C, std=0.1)
        p[h + "output.LayerNorm.bias"] = normal(C, std=0.1)
    return p


def bert_forward(p, ids, keep):
    """BertModel's forward over one sentence (token types all 0, no mask); p in float64."""
    T, C, H = len(ids), BERT_C, BERT_HEADS
    hs = C // H
    e = "bert.embeddings."
    x = p[e + "word_embeddings.weight"][ids] + p[e + "token_type_embeddings.weight"][0] + p[e + "position_embeddings.weight"][:T]
    x = layer_norm(x, p[e + "LayerNorm.weight"], p[e + "LayerNorm.bias"], BERT_EPS)
    keep["embed.ln.hook_normalized"] = x

    def linear(v, name):  # nn.Linear: v·Wᵀ + b
        return v @ p[name + ".weight"].T + p[name + ".bias"]
    for i in range(BERT_LAYERS):
        h = f"bert.encoder.layer.{i}."
        q, k, v = (linear(x, h + f"attention.self.{n}").view(T, H, hs).transpose(0, 1) for n in ("query", "key", "value"))
        pattern = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(hs), dim=-1)  # (H, T, T), no mask
        keep[f"blocks.{i}.attn.hook_pattern"] = pattern
        z = (pattern @ v).transpose(0, 1).reshape(T, C)
        x = layer_norm(linear(z, h + "attention.output.dense") + x, p[h + "attention.output.LayerNorm.weight"],
                       p[h + "attention.output.LayerNorm.bias"], BERT_EPS)
        keep[f"blocks.{i}.ln1.hook_normalized"] = x
        m = torch.nn.functional.gelu(linear(x, h + "intermediate.dense"))  # exact GELU (erf)
        x = layer_norm(linear(m, h + "output.dense") + x, p[h + "output.LayerNorm.weight"],
                       p[h + "output.LayerNorm.bias"], BERT_EPS)
        keep[f"blocks.{i}.ln2.hook_normalized"] = x
    return x


def make_bert():
    torch.set_num_threads(1)
    vocab = bert_vocab()
    V = len(vocab)
    p32 = bert_weights(V)
    d = os.path.join(HERE, "tiny-bert")
    os.makedirs(d, exist_ok=True)
    write_json(os.path.join(d, "config.json"), {
        "model_type": "bert", "architectures": ["BertModel"], "hidden_size": BERT_C,
        "num_attention_heads": BERT_HEADS, "num_hidden_layers": BERT_LAYERS, "intermediate_size": BERT_FF,
        "hidden_act": "gelu", "max_position_embeddings": BERT_POSITIONS, "type_vocab_size": BERT_TYPES,
        "vocab_size": V, "layer_norm_eps": BERT_EPS, "position_embedding_type": "absolute",
        "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1, "pad_token_id": 0, "torch_dtype": "float32"})
    write_safetensors(os.path.join(d, "model.safetensors"), p32)
    with open(os.path.join(d, "vocab.txt"), "w", encoding="utf-8") as f:
        f.write("".join(p + "\n" for p in vocab))
    write_json(os.path.join(d, "tokenizer_config.json"), {
        "do_lower_case": True, "tokenize_chinese_chars": True, "strip_accents": None, "unk_token": "[UNK]",
        "sep_token": "[SEP]", "pad_token": "[PAD]", "cls_token": "[CLS]", "mask_token": "[MASK]",
        "model_max_length": BERT_POSITIONS, "tokenizer_class": "BertTokenizer"})
    ids_of = {p: i for i, p in enumerate(vocab)}
    special = lambda s: {"id": s, "ids": [ids_of[s]], "tokens": [s]}
    write_json(os.path.join(d, "tokenizer.json"), {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [{"id": ids_of[s], "content": s, "single_word": False, "lstrip": False, "rstrip": False,
                          "normalized": False, "special": True} for s in ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]],
        "normalizer": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                       "strip_accents": None, "lowercase": True},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": {"type": "TemplateProcessing",
                           "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                                      {"SpecialToken": {"id": "[SEP]", "type_id": 0}}],
                           "pair": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                                    {"SpecialToken": {"id": "[SEP]", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}},
                                    {"SpecialToken": {"id": "[SEP]", "type_id": 1}}],
                           "special_tokens": {"[CLS]": special("[CLS]"), "[SEP]": special("[SEP]")}},
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
        "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                  "max_input_chars_per_word": 100, "vocab": ids_of}})
    ref = {"made_by": "tests/models/make_tiny_models.py --bert (seed %d): float64 forward of the same weights" % (SEED + 1),
           "texts": []}
    p64 = {k: v.double() for k, v in p32.items()}
    for text in BERT_TEXTS:
        ids = bert_encode(text, vocab)
        keep = {}
        bert_forward(p64, ids, keep)
        ref["texts"].append({"text": text, "ids": ids, **{k: rounded(v) for k, v in keep.items()}})
    write_json(os.path.join(d, "reference.json"), ref)


def bert_base(out):
    """For measurements (never committed): a BERT-base-sized checkpoint (12 blocks, hidden 768, 12 heads,
    intermediate 3072, 512 positions, vocabulary 30522, 109 M parameters, F32, ~440 MB) of random weights
    (BERT's init, N(0, 0.02); LayerNorms 1 and 0), config.json and model.safetensors only: run it with --ids."""
    g = torch.Generator().manual_seed(SEED + 1)
    C, F, L, P, V = 768, 3072, 12, 512, 30522
    e = "bert.embeddings."
    p = {e + "word_embeddings.weight": torch.randn(V, C, generator=g) * 0.02,
         e + "position_embeddings.weight": torch.randn(P, C, generator=g) * 0.02,
         e + "token_type_embeddings.weight": torch.randn(2, C, generator=g) * 0.02,
         e + "LayerNorm.weight": torch.ones(C), e + "LayerNorm.bias": torch.zeros(C)}
    for i in range(L):
        h = f"bert.encoder.layer.{i}."
        for n in ("query", "key", "value"):
            p[h + f"attention.self.{n}.weight"] = torch.randn(C, C, generator=g) * 0.02
            p[h + f"attention.self.{n}.bias"] = torch.zeros(C)
        p.update({h + "attention.output.dense.weight": torch.randn(C, C, generator=g) * 0.02,
                  h + "attention.output.dense.bias": torch.zeros(C),
                  h + "attention.output.LayerNorm.weight": torch.ones(C), h + "attention.output.LayerNorm.bias": torch.zeros(C),
                  h + "intermediate.dense.weight": torch.randn(F, C, generator=g) * 0.02, h + "intermediate.dense.bias": torch.zeros(F),
                  h + "output.dense.weight": torch.randn(C, F, generator=g) * 0.02, h + "output.dense.bias": torch.zeros(C),
                  h + "output.LayerNorm.weight": torch.ones(C), h + "output.LayerNorm.bias": torch.zeros(C)})
    os.makedirs(out, exist_ok=True)
    write_json(os.path.join(out, "config.json"), {
        "model_type": "bert", "hidden_size": C, "num_attention_heads": 12, "num_hidden_layers": L,
        "intermediate_size": F, "hidden_act": "gelu", "max_position_embeddings": P, "type_vocab_size": 2,
        "vocab_size": V, "layer_norm_eps": 1e-12})
    write_safetensors(os.path.join(out, "model.safetensors"), p)


if __name__ == "__main__":
    import sys
    if sys.argv[1:] == ["--bert"]:
        make_bert()
    elif len(sys.argv) == 3 and sys.argv[1] == "--bert-base":
        bert_base(sys.argv[2])
    else:
        main()

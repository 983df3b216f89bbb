#!/usr/bin/env python3
# Writes tests/bad-input/*.json, each the flagship lesson made wrong in one way,
# and cases.json (file -> substrings its one-line error must contain), which
# tests/test_bad_input.cpp runs through the CLI. Run it from anywhere:
#   python3 tests/bad-input/make_cases.py
import copy
import json
import os
from collections import OrderedDict

OUT = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(OUT))
SRC = os.path.join(ROOT, "lessons/003-3.1-ring-fell.json")

with open(SRC, encoding="utf-8") as f:
    TEXT = f.read()
BASE = json.loads(TEXT, object_pairs_hook=OrderedDict)

cases = OrderedDict()


def compact(v):
    return json.dumps(v, ensure_ascii=False)


def dump(doc):
    # One top-level field per line, claims one per line: small, diffable files.
    if not isinstance(doc, dict):
        return compact(doc) + "\n"
    lines = []
    for k, v in doc.items():
        if k == "claims" and isinstance(v, list) and v:
            inner = ",\n    ".join(compact(c) for c in v)
            lines.append(f"  {compact(k)}: [\n    {inner}\n  ]")
        else:
            lines.append(f"  {compact(k)}: {compact(v)}")
    return "{\n" + ",\n".join(lines) + "\n}\n"


def raw(name, data, expect):
    mode = "wb" if isinstance(data, bytes) else "w"
    with open(os.path.join(OUT, name), mode) as f:
        f.write(data)
    cases[name] = expect


def mod(name, fn, expect):
    doc = copy.deepcopy(BASE)
    fn(doc)  # edits doc in place (what it returns is ignored)
    raw(name, dump(doc), expect)


# ---- malformed JSON -------------------------------------------------------
raw("json-truncated.json", TEXT[: len(TEXT) // 2], ["byte"])
good = dump(BASE)
tail = good.rstrip()
assert tail.endswith("]\n}")
raw("json-trailing-comma.json", tail[:-1].rstrip() + ",\n}\n", ["byte"])
raw("json-empty.json", "", ["byte 0", "empty"])
raw("json-whitespace-only.json", " \n\t\n", ["byte"])
raw("json-non-utf8.json",
    good.replace('"title": "\\"the ring fell\\"', '"title": "\\"the ring \xff fell\\"', 1)
    .encode("utf-8").replace("\xff".encode("utf-8"), b"\xff", 1),
    ["byte"])
raw("json-deep-nesting.json", "[" * 10000, ["byte", "nested"])
raw("json-deep-nesting-in-field.json",
    good.replace('"run": {', '"run": ' + "[" * 200 + "]" * 200 + ', "run2": {', 1), ["byte", "nested"])
assert "[0.1, 0.2, 0.3, 0.4]" in good
raw("json-nan-literal.json", good.replace("[0.1, 0.2, 0.3, 0.4]", "[NaN, 0.2, 0.3, 0.4]", 1), ["byte"])
raw("json-single-quotes.json", good.replace('"format"', "'format'", 1), ["byte"])
assert '"config": {"d_model": 4,' in good
raw("json-duplicate-key.json", good.replace('"config": {"d_model": 4,', '"config": {"d_model": 4, "d_model": 8,', 1),
    ["config.d_model", "each key once", "a second time"])
assert '"tokens": [' in good
raw("json-duplicate-top-level-key.json", good.replace('"tokens": [', '"tokens": ["a"],\n  "tokens": [', 1),
    ["tokens", "each key once"])

# ---- top level -------------------------------------------------------------
raw("top-level-array.json", "[" + dump(BASE).rstrip() + "]\n", ["(top level)", "an object"])
raw("top-level-number.json", "42\n", ["(top level)", "an object"])
mod("format-wrong.json", lambda d: d.__setitem__("format", "attntrace-trace"), ["format"])
mod("version-2.json", lambda d: d.__setitem__("version", 2), ["version"])
mod("version-string.json", lambda d: d.__setitem__("version", "1"), ["version", "string"])
mod("id-with-space.json", lambda d: d.__setitem__("id", "ring fell"), ["id"])

# ---- missing required fields ------------------------------------------------
mod("missing-tokens.json", lambda d: d.pop("tokens"), ["tokens", "missing"])
mod("missing-config.json", lambda d: d.pop("config"), ["config", "missing"])
mod("missing-d-model.json", lambda d: d["config"].pop("d_model"), ["config.d_model", "missing"])
mod("missing-source-document.json", lambda d: d["source"].pop("document"), ["source.document", "missing"])
mod("missing-claim-expect.json", lambda d: d["claims"][0].pop("expect"), ["claims[0].expect", "missing"])
mod("missing-claim-decimals.json", lambda d: d["claims"][4].pop("decimals"), ["claims[4].decimals", "missing"])
mod("missing-format.json", lambda d: d.pop("format"), ["format", "missing"])

# ---- unknown fields ----------------------------------------------------------
def rename(obj, old, new):
    items = [(new if k == old else k, v) for k, v in obj.items()]
    obj.clear()
    obj.update(items)


mod("unknown-top-field.json", lambda d: rename(d, "description", "descripton"), ["descripton", "unknown", "closest: description"])
mod("unknown-config-d-modle.json", lambda d: rename(d["config"], "d_model", "d_modle"),
    ["config.d_modle", "unknown field (closest: d_model)"])
mod("unknown-source-field.json", lambda d: d["source"].__setitem__("author", "someone"),
    ["source.author", "unknown"])
mod("unknown-weight-name.json", lambda d: rename(d["weights"], "W_V", "W_X"), ["weights.W_X", "unknown"])
mod("unknown-run-from-stage.json", lambda d: d["run"].__setitem__("from", "attention"), ["run.from"])
mod("unknown-given-step.json",
    lambda d: rename(d["given"], "blocks.0.attn.hook_v", "blocks.0.attn.hook_values"),
    ["given.blocks.0.attn.hook_values", "unknown"])
mod("unknown-claim-step.json", lambda d: d["claims"][7].__setitem__("step", "blocks.0.attn.hook_attention"),
    ["claims[7].step", "\"blocks.0.attn.hook_attention\"", "closest: blocks.0.attn.hook_pattern"])
mod("claim-step-typo.json", lambda d: d["claims"][7].__setitem__("step", "blocks.0.attn.hook_patern"),
    ["claims[7].step", "\"blocks.0.attn.hook_patern\"", "closest: blocks.0.attn.hook_pattern"])
mod("claim-step-short-typo.json", lambda d: d["claims"][7].__setitem__("step", "hook_scores_scald"),
    ["claims[7].step", "\"hook_scores_scald\"", "closest: blocks.0.attn.hook_scores_scaled"])
mod("unknown-claim-field.json", lambda d: rename(d["claims"][2], "decimals", "decimal"),
    ["claims[2].decimal", "unknown field (closest: decimals)"])
mod("unknown-generator-field.json",
    lambda d: d["weights"].__setitem__("W_Q", {"generate": "normal", "seed": 1, "mean": 0}),
    ["weights.W_Q.mean", "unknown"])
mod("unknown-rounding-step.json",
    lambda d: rename(d["document_rounding"], "blocks.0.attn.hook_pattern", "blocks.0.attn.hook_weights"),
    ["document_rounding.blocks.0.attn.hook_weights"])

# ---- wrong types -------------------------------------------------------------
mod("type-d-model-string.json", lambda d: d["config"].__setitem__("d_model", "4"), ["config.d_model", "string"])
mod("type-d-model-float.json", lambda d: d["config"].__setitem__("d_model", 4.5), ["config.d_model"])
mod("type-tokens-number.json", lambda d: d.__setitem__("tokens", 3), ["tokens"])
mod("type-token-not-string.json", lambda d: d["tokens"].__setitem__(1, 2), ["tokens[1]"])
mod("type-wq-number.json", lambda d: d["weights"].__setitem__("W_Q", 2), ["weights.W_Q"])
mod("type-claims-object.json", lambda d: d.__setitem__("claims", {"Q": d["claims"][0]}), ["claims"])
mod("type-scale-string.json", lambda d: d["config"].__setitem__("scale", "yes"), ["config.scale"])
mod("scale-empty-object.json", lambda d: d["config"].__setitem__("scale", {}),
    ["config.scale", "exactly one of divide_by and multiply_by", "an empty object"])
mod("scale-both.json", lambda d: d["config"].__setitem__("scale", {"divide_by": 2, "multiply_by": 0.5}),
    ["config.scale", "exactly one of divide_by and multiply_by", "both"])
mod("scale-unknown-key.json", lambda d: d["config"].__setitem__("scale", {"divide": 2}),
    ["config.scale", "divide"])
mod("scale-divide-by-zero.json", lambda d: d["config"].__setitem__("scale", {"divide_by": 0}),
    ["config.scale.divide_by", "from 1e-06 to 1e+06", "0"])
mod("scale-multiply-by-negative.json", lambda d: d["config"].__setitem__("scale", {"multiply_by": -0.5}),
    ["config.scale.multiply_by", "from 1e-06 to 1e+06", "-0.5"])
mod("scale-multiply-by-sqrt-dk.json", lambda d: d["config"].__setitem__("scale", {"multiply_by": "sqrt_dk"}),
    ["config.scale.multiply_by", "a number", "sqrt_dk"])
mod("scale-divide-by-other-string.json", lambda d: d["config"].__setitem__("scale", {"divide_by": "sqrt_dmodel"}),
    ["config.scale.divide_by", "\"sqrt_dk\"", "sqrt_dmodel"])
mod("scale-factor-given-not-recorded.json",
    lambda d: d["given"].__setitem__("blocks.0.attn.hook_scale_factor", [1.73]),
    ["given.blocks.0.attn.hook_scale_factor", "a step this lesson records", "recorded only with config.scale written as an object"])
mod("variance-unknown.json", lambda d: d["config"].__setitem__("variance", "bessel"),
    ["config.variance", "\"biased\"", "\"unbiased\"", "bessel"])
mod("variance-with-rmsnorm.json", lambda d: d["config"].update({"norm": "rmsnorm", "variance": "unbiased"}),
    ["config.variance", "RMSNorm has no variance"])
mod("eps-tiny.json", lambda d: d["config"].__setitem__("eps", 1e-40), ["config.eps", "0 or a number from 1e-30 to 1", "1e-40"])
mod("eps-huge.json", lambda d: d["config"].__setitem__("eps", 1e308), ["config.eps", "0 or a number from 1e-30 to 1", "1e+308"])
mod("normalizer-unknown.json", lambda d: d["config"].__setitem__("normalizer", "sparsemax"),
    ["config.normalizer", "\"softmax\", \"sum\" (s / Σ s) or \"none\"", "sparsemax"])
mod("normalizer-number.json", lambda d: d["config"].__setitem__("normalizer", 1), ["config.normalizer", "1"])
mod("max-shift-string.json", lambda d: d["config"].__setitem__("max_shift", "no"), ["config.max_shift", "\"no\""])
mod("max-shift-with-sum.json", lambda d: d["config"].update({"normalizer": "sum", "max_shift": False}),
    ["config.max_shift", "only with config.normalizer \"softmax\"", "config.normalizer \"sum\""])
mod("max-shift-claim-row-max.json",
    lambda d: (d["config"].__setitem__("max_shift", False), d["claims"][7].__setitem__("step", "blocks.0.attn.softmax.hook_row_max")),
    ["claims[7].step", "a step this lesson records", "config.max_shift true"])
mod("normalizer-none-given-exp.json",
    lambda d: (d["config"].__setitem__("normalizer", "none"), d["given"].__setitem__("blocks.0.attn.softmax.hook_exp", [[1, 1, 1]] * 3)),
    ["given.blocks.0.attn.softmax.hook_exp", "a step this lesson records", "config.normalizer \"softmax\""])
mod("mask-at-unknown.json", lambda d: d["config"].__setitem__("mask_at", "softmax"),
    ["config.mask_at", "\"scaled\"", "\"raw\"", "\"weights\"", "\"softmax\""])
mod("mask-at-number.json", lambda d: d["config"].__setitem__("mask_at", 0), ["config.mask_at", "0"])
mod("mask-at-raw-alibi.json",
    lambda d: d["config"].update({"mask_at": "raw", "positions": {"kind": "alibi"}}),
    ["config.mask_at", "with ALiBi", "\"raw\""])
mod("renormalize-without-weights.json", lambda d: d["config"].update({"mask_at": "raw", "renormalize": True}),
    ["config.renormalize", "only with config.mask_at \"weights\"", "config.mask_at \"raw\""])
mod("renormalize-string.json", lambda d: d["config"].update({"mask_at": "weights", "renormalize": "yes"}),
    ["config.renormalize", "\"yes\""])
mod("mask-at-raw-given-scaled.json",
    lambda d: (d["config"].__setitem__("mask_at", "raw"), d["given"].__setitem__("blocks.0.attn.hook_scores_scaled", [[1, 1, 1]] * 3)),
    ["given.blocks.0.attn.hook_scores_scaled", "a step this lesson records", "config.mask_at \"scaled\" or \"weights\""])
mod("mask-at-weights-claim-zeroed.json",
    lambda d: (d["config"].__setitem__("mask_at", "weights"), d["claims"][7].__setitem__("step", "blocks.0.attn.hook_pattern_zeroed")),
    ["claims[7].step", "a step this lesson records", "config.renormalize true"])
mod("norm-steps-unknown.json", lambda d: d["config"].__setitem__("norm_steps", "every"),
    ["config.norm_steps", "\"fused\"", "\"all\"", "\"every\""])
mod("norm-steps-rmsnorm.json", lambda d: d["config"].update({"norm": "rmsnorm", "norm_steps": "all"}),
    ["config.norm_steps", "config.norm \"rmsnorm\"", "\"all\""])
mod("norm-steps-claim-centred.json",
    lambda d: d["claims"][7].__setitem__("step", "blocks.0.ln1.hook_centred"),
    ["claims[7].step", "a step this lesson records", "config.norm_steps \"all\""])
mod("weight-layout-unknown.json", lambda d: d["config"].__setitem__("weight_layout", "torch"),
    ["config.weight_layout", "\"in_out\"", "\"out_in\"", "torch"])
mod("weight-layout-bool.json", lambda d: d["config"].__setitem__("weight_layout", True), ["config.weight_layout", "true"])


def out_in_w1_as_d_model_x_d_ff(d):  # W_1 written d_in x d_out under out_in
    d["config"].update({"weight_layout": "out_in", "d_ff": 2})
    d["weights"]["W_1"] = [[0.5, -0.5]] * 4


mod("weight-layout-out-in-wrong-shape.json", out_in_w1_as_d_model_x_d_ff,
    ["weights.W_1", "a 2x4 array (d_ff x d_model)", "found a 4x2 array"])
mod("type-weights-array.json", lambda d: d.__setitem__("weights", [d["weights"]["W_Q"]]), ["weights", "an object"])
mod("type-at-array.json", lambda d: d["claims"][3].__setitem__("at", [2]), ["claims[3].at"])

# ---- shapes --------------------------------------------------------------------
mod("shape-wq-4x3.json", lambda d: d["weights"].__setitem__("W_Q", [r[:3] for r in d["weights"]["W_Q"]]),
    ["weights.W_Q"])
mod("shape-wq-ragged-row.json", lambda d: d["weights"]["W_Q"].__setitem__(2, [0, 1, 0]), ["weights.W_Q[2]"])
mod("shape-wk-rank3.json", lambda d: d["weights"].__setitem__("W_K", [d["weights"]["W_K"]]), ["weights.W_K"])
mod("shape-x-wrong-rows.json", lambda d: d["inputs"].__setitem__("X", d["inputs"]["X"][:2]), ["inputs.X"])
mod("shape-given-q-wrong.json",
    lambda d: d["given"].__setitem__("blocks.0.attn.hook_q", [r[:3] for r in d["given"]["blocks.0.attn.hook_q"]]),
    ["given.blocks.0.attn.hook_q"])
mod("shape-claim-values-wrong.json", lambda d: d["claims"][0].__setitem__("values", d["claims"][0]["values"][:2]),
    ["claims[0].values"])
mod("shape-claim-values-scalar-for-matrix.json", lambda d: d["claims"][4].__setitem__("values", 1),
    ["claims[4].values"])
mod("shape-claim-values-too-deep.json", lambda d: d["claims"][5].__setitem__("values", [[[[2]]]]),
    ["claims[5].values"])
mod("shape-empty-row.json", lambda d: d["weights"]["W_V"].__setitem__(0, []), ["weights.W_V[0]"])
mod("heads-not-dividing.json", lambda d: d["config"].__setitem__("heads", 3), ["config.heads"])
mod("heads-zero.json", lambda d: d["config"].__setitem__("heads", 0), ["config.heads"])

# ---- numbers -------------------------------------------------------------------
mod("number-abc-in-matrix.json", lambda d: d["weights"]["W_K"][1].__setitem__(2, "abc"), ["weights.W_K[1][2]"])
mod("number-null-in-matrix.json", lambda d: d["inputs"]["X"][2].__setitem__(0, None), ["inputs.X[2][0]"])
# 1e999 cannot be written by json.dumps: patch the text.
huge = dump(BASE).replace('[0.5, 0.6', '[1e999, 0.6', 1)
assert "1e999" in huge
raw("number-huge-exponent.json", huge, ["byte", "1e999"])  # nlohmann refuses it while parsing
neg_huge = dump(BASE)
i = neg_huge.index('"W_V"')
j = neg_huge.index("[[1, 1", i) + 2
neg_huge = neg_huge[:j] + "-1e400" + neg_huge[j + 1:]
raw("number-huge-negative-exponent.json", neg_huge, ["byte", "-1e400"])
f32 = dump(BASE).replace('[0.5, 0.6', '[1e39, 0.6', 1)
assert "1e39" in f32
raw("number-float32-overflow.json", f32, ["inputs.X[1][0]"])
mod("number-neg-inf-in-weight.json", lambda d: d["weights"]["W_V"][0].__setitem__(0, "-inf"),
    ["weights.W_V[0][0]"])
mod("number-inf-string-in-given.json", lambda d: d["given"]["blocks.0.attn.hook_k"][0].__setitem__(0, "inf"),
    ["given.blocks.0.attn.hook_k[0][0]"])
mod("number-huge-claim-value.json", lambda d: d["claims"][5].__setitem__("values", 1e300),
    ["claims[5].values"])

# ---- tokens ----------------------------------------------------------------------
mod("tokens-empty.json", lambda d: d.__setitem__("tokens", []), ["tokens"])
mod("token-ids-count.json", lambda d: d.__setitem__("token_ids", [1, 2]), ["token_ids"])
mod("token-ids-negative.json", lambda d: d.__setitem__("token_ids", [0, -1, 2]), ["token_ids[1]"])

# ---- dimensions ------------------------------------------------------------------
mod("dim-d-model-huge.json", lambda d: d["config"].__setitem__("d_model", 100000000), ["config.d_model"])
mod("dim-d-model-zero.json", lambda d: d["config"].__setitem__("d_model", 0), ["config.d_model"])
mod("dim-d-model-u64.json", lambda d: d["config"].__setitem__("d_model", 18446744073709551615),
    ["config.d_model"])
def huge_generated(d):
    # d_model within its bound, but W_Q = 65536 x 65536 (16 GiB) generated from weights_seed
    d["config"]["d_model"] = 65536
    d["inputs"]["X"] = {"generate": "zeros"}
    for k in ("weights", "given", "claims"):
        d.pop(k)
    d["weights_seed"] = 1


mod("dim-generated-weights-too-big.json", huge_generated, ["weights_seed", "W_Q"])
mod("dim-heads-negative.json", lambda d: d["config"].__setitem__("heads", -1), ["config.heads"])

# ---- run / claims ----------------------------------------------------------------
mod("run-to-before-from.json", lambda d: d.__setitem__("run", {"from": "mix", "to": "qkv"}), ["run.to"])
mod("claim-step-outside-run.json", lambda d: d["claims"][9].__setitem__("step", "blocks.0.hook_attn_out"),
    ["claims[9].step"])
mod("given-step-after-run.json",
    lambda d: d["given"].__setitem__("blocks.0.hook_attn_out", [[0, 0, 0, 0]] * 3),
    ["given.blocks.0.hook_attn_out"])
mod("claim-duplicate-id.json", lambda d: d["claims"][3].__setitem__("id", "K"), ["claims[3].id"])
mod("claim-decimals-too-many.json", lambda d: d["claims"][7].__setitem__("decimals", 12), ["claims[7].decimals"])
mod("claim-decimals-negative.json", lambda d: d["claims"][7].__setitem__("decimals", -1), ["claims[7].decimals"])
mod("claim-unknown-expect.json", lambda d: d["claims"][1].__setitem__("expect", "agree"), ["claims[1].expect"])
mod("claim-at-unknown-axis.json", lambda d: d["claims"][8].__setitem__("at", {"row": 1}), ["claims[8].at.row"])
mod("claim-at-axis-not-of-step.json", lambda d: d["claims"][8].__setitem__("at", {"d_ff": 1}),
    ["claims[8].at.d_ff"])
mod("claim-at-index-out-of-range.json", lambda d: d["claims"][5].__setitem__("at", {"query": 3, "key": 2}),
    ["claims[5].at.query"])
mod("claim-at-index-negative.json", lambda d: d["claims"][3].__setitem__("at", {"key": -1}), ["claims[3].at.key"])
mod("claim-of-unknown.json", lambda d: d["claims"][7].__setitem__("of", "row_median"),
    ["claims[7].of", "row_, col_ or all_ with sum, min, max, mean, std or std_unbiased", "string \"row_median\""])
mod("claim-of-not-a-string.json", lambda d: d["claims"][7].__setitem__("of", 3), ["claims[7].of", "a string"])
mod("claim-of-row-max-of-one-value.json",
    lambda d: (d["claims"][5].__setitem__("at", {"head": 0, "query": 1, "key": 2}), d["claims"][5].__setitem__("of", "row_max")),
    ["claims[5].of", "row_max of a step with rows left after \"at\"", "a single value"])
mod("claim-of-col-sum-of-one-row.json",
    lambda d: (d["claims"][8].__setitem__("at", {"query": 1, "head": 0}), d["claims"][8].__setitem__("of", "col_sum")),
    ["claims[8].of", "col_sum of a step with columns left after \"at\"", "a single row"])
mod("claim-of-row-max-values-wrong-shape.json", lambda d: d["claims"][7].__setitem__("of", "row_max"),
    ["claims[7].values", "a 1x3 array", "a 3x3 array"])


# of "terms" (docs/lesson-format.md#terms): one cell of a step whose explanation writes terms, its terms then their sum
def terms_claim(d, at, values, i=5):
    d["claims"][i].update({"at": at, "of": "terms", "values": values})


TERMS = [0.0, 0.0, 1.0, 1.0, 2.0]  # S[ring, fell]'s hs = 4 products from the given Q, K, then their sum
mod("claim-terms-not-one-cell.json", lambda d: terms_claim(d, {"query": 1}, TERMS),
    ["claims[5].at", "every axis of blocks.0.attn.hook_scores_raw fixed", "head, key left free"])
mod("claim-terms-list.json", lambda d: terms_claim(d, {"head": 0, "query": 1, "key": [1, 2]}, TERMS),
    ["claims[5].at.key", "a terms claim is on one cell", "a list or a range"])
mod("claim-terms-step-without-terms.json",
    lambda d: (d["claims"][7].update({"at": {"head": 0, "query": 1, "key": 2}, "of": "terms", "values": TERMS})),
    ["claims[7].step", "writes a dot product's terms", "blocks.0.attn.hook_pattern"])
mod("claim-terms-values-matrix.json", lambda d: terms_claim(d, {"head": 0, "query": 1, "key": 2}, [TERMS]),
    ["claims[5].values", "the cell's terms, then their sum", "a 1x5 array"])
mod("claim-terms-wrong-count.json", lambda d: terms_claim(d, {"head": 0, "query": 1, "key": 2}, TERMS[1:]),
    ["claims[5].values", "5 numbers: the 4 terms of this cell of blocks.0.attn.hook_scores_raw, then their sum",
     "4 numbers"])

# ---- claims: `at` by label, list and range ----------------------------------------
mod("claim-at-label-unknown.json", lambda d: d["claims"][8].__setitem__("at", {"query": "rng"}),
    ["claims[8].at.query", "an index from 0 to 2 or a query label (the, ring, fell)", "string \"rng\""])
mod("claim-at-label-ambiguous.json",
    lambda d: (d.__setitem__("tokens", ["the", "ring", "the"]), d["claims"][8].__setitem__("at", {"query": "the"})),
    ["claims[8].at.query", "a label naming one query position", "\"the\", which names query 0 and 2 (ambiguous)"])
mod("claim-at-not-index-or-label.json", lambda d: d["claims"][8].__setitem__("at", {"query": True}),
    ["claims[8].at.query", "an index from 0 to 2 or a query label", "true"])
mod("claim-at-list-empty.json", lambda d: d["claims"][7].__setitem__("at", {"query": []}),
    ["claims[7].at.query", "at least one index or label", "an empty array"])
mod("claim-at-list-label-unknown.json", lambda d: d["claims"][7].__setitem__("at", {"query": ["ring", "rng"]}),
    ["claims[7].at.query[1]", "a query label (the, ring, fell)", "string \"rng\""])
mod("claim-at-list-index-out-of-range.json", lambda d: d["claims"][7].__setitem__("at", {"key": [0, 3]}),
    ["claims[7].at.key[1]", "an integer from 0 to 2", "3"])
mod("claim-at-list-out-of-order.json", lambda d: d["claims"][7].__setitem__("at", {"query": ["fell", "ring"]}),
    ["claims[7].at.query[1]", "a position after query 2 (\"fell\")", "axis order, each once", "found query 1 (\"ring\")"])
mod("claim-at-list-twice.json", lambda d: d["claims"][7].__setitem__("at", {"query": [1, "ring"]}),
    ["claims[7].at.query[1]", "a position after query 1 (\"ring\")", "found query 1 (\"ring\")"])
mod("claim-at-list-values-wrong-shape.json", lambda d: d["claims"][7].__setitem__("at", {"query": ["ring", "fell"]}),
    ["claims[7].values", "a 1x2x3 array", "a 3x3 array"])
mod("claim-at-range-backwards.json", lambda d: d["claims"][7].__setitem__("at", {"query": {"from": "fell", "to": 1}}),
    ["claims[7].at.query.to", "a position at or after \"from\", query 2 (\"fell\")", "found query 1 (\"ring\")"])
mod("claim-at-range-unknown-key.json", lambda d: d["claims"][7].__setitem__("at", {"query": {"from": 0, "until": 1}}),
    ["claims[7].at.query.until", "unknown"])
mod("claim-at-range-label-unknown.json", lambda d: d["claims"][7].__setitem__("at", {"key": {"from": "rng"}}),
    ["claims[7].at.key.from", "a key label (the, ring, fell)", "string \"rng\""])
mod("claim-at-list-in-shape-claim.json",
    lambda d: (d["claims"][4].__setitem__("shape", {"query": 3, "key": 3}), d["claims"][4].pop("values"),
               d["claims"][4].pop("decimals"), d["claims"][4].__setitem__("at", {"query": [0, 1]})),
    ["claims[4].at.query", "an index or a label (a shape claim states whole extents)", "a list or a range"])
mod("claim-at-range-index-out-of-range.json", lambda d: d["claims"][7].__setitem__("at", {"key": {"to": 5}}),
    ["claims[7].at.key.to", "an integer from 0 to 2", "5"])

# ---- claims: precision per row, per value, in significant figures ------------------
def sig(claim, value):
    claim.pop("decimals")
    claim["sig"] = value

mod("claim-decimals-and-sig.json", lambda d: d["claims"][7].__setitem__("sig", 3),
    ["claims[7]", "either \"decimals\" or \"sig\"", "both"])
mod("claim-sig-zero.json", lambda d: sig(d["claims"][5], 0), ["claims[5].sig", "an integer from 1 to 6", "0"])
mod("claim-sig-too-many.json", lambda d: sig(d["claims"][5], 7), ["claims[5].sig", "an integer from 1 to 6", "7"])
mod("claim-sig-not-integer.json", lambda d: sig(d["claims"][5], 2.5), ["claims[5].sig", "an integer from 1 to 6", "2.5"])
mod("claim-sig-per-value-zero.json", lambda d: sig(d["claims"][7], [[3, 3, 3], [3, 0, 3], [3, 3, 3]]),
    ["claims[7].sig[1][1]", "an integer from 1 to 6", "0"])
mod("claim-decimals-per-value-wrong-shape.json", lambda d: d["claims"][7].__setitem__("decimals", [[2, 2], [2, 2], [2, 2]]),
    ["claims[7].decimals", "one integer, an array of 3 (one per row of values) or a 3x3 array (one per value)", "a 3x2 array"])
mod("claim-decimals-per-value-too-many.json",
    lambda d: d["claims"][7].__setitem__("decimals", [[2, 2, 2], [2, 9, 2], [2, 2, 2]]),
    ["claims[7].decimals[1][1]", "an integer from 0 to 8", "9"])
mod("claim-decimals-per-row-negative.json", lambda d: d["claims"][7].__setitem__("decimals", [2, -1, 2]),
    ["claims[7].decimals[1]", "an integer from 0 to 8", "-1"])
mod("claim-decimals-per-row-not-number.json", lambda d: d["claims"][7].__setitem__("decimals", [2, "2", 2]),
    ["claims[7].decimals[1]", "string \"2\""])
mod("claim-decimals-ragged.json", lambda d: d["claims"][7].__setitem__("decimals", [[2, 2, 2], [2, 2]]),
    ["claims[7].decimals[1]"])
mod("claim-decimals-list-for-one-value.json", lambda d: d["claims"][5].__setitem__("decimals", [0]),
    ["claims[5].decimals", "one integer (values is a single number)", "an array of 1"])
mod("claim-decimals-per-value-of-a-row.json", lambda d: d["claims"][8].__setitem__("decimals", [2, 2]),
    ["claims[8].decimals", "one integer or an array of 3 (one per value)", "an array of 2"])
mod("claim-shape-and-values.json", lambda d: d["claims"][4].__setitem__("shape", {"query": 3, "key": 3}),
    ["claims[4]"])
mod("rounding-decimals-out-of-range.json",
    lambda d: d["document_rounding"].__setitem__("blocks.0.attn.hook_pattern", 40),
    ["document_rounding.blocks.0.attn.hook_pattern"])

# ---- generators --------------------------------------------------------------------
mod("generator-unknown-kind.json",
    lambda d: d["weights"].__setitem__("W_Q", {"generate": "uniform", "seed": 7}), ["weights.W_Q.generate"])
mod("generator-identity-non-square.json", lambda d: d["inputs"].__setitem__("X", {"generate": "identity"}),
    ["inputs.X.generate"])
mod("generator-normal-no-seed.json", lambda d: d["weights"].__setitem__("W_K", {"generate": "normal"}),
    ["weights.W_K.seed"])
mod("generator-negative-std.json",
    lambda d: d["weights"].__setitem__("W_K", {"generate": "normal", "seed": 3, "std": -0.5}),
    ["weights.W_K.std"])
mod("generator-huge-std.json",
    lambda d: d["weights"].__setitem__("W_K", {"generate": "normal", "seed": 3, "std": 1e300}),
    ["weights.W_K.std"])
mod("generator-seed-negative.json", lambda d: d.__setitem__("weights_seed", -5), ["weights_seed"])

# ---- tensors from .npy files (tests/npy/, written by make_fixtures.py) ------------------
mod("npy-nan-weight.json", lambda d: d["weights"].__setitem__("W_Q", {"npy": "../npy/numpy/nan.npy"}),
    ["weights.W_Q: ", "nan.npy: [1,2]: expected a finite number, found NaN"])
mod("npy-fortran-input.json", lambda d: d["inputs"].__setitem__("X", {"npy": "../npy/numpy/fortran.npy"}),
    ["inputs.X: ", "fortran.npy: byte", "found True"])
mod("npy-wrong-shape.json", lambda d: d["weights"].__setitem__("W_K", {"npy": "../npy/numpy/f4-2x3.npy"}),
    ["weights.W_K: ", "found a 2x3 array in", "f4-2x3.npy"])
mod("npy-missing-file.json", lambda d: d["weights"].__setitem__("W_V", {"npy": "no-such.npy"}),
    ["weights.W_V: ", "no-such.npy", "no such file"])

# ---- config values -----------------------------------------------------------------
mod("config-mask-unknown.json", lambda d: d["config"].__setitem__("mask", "sparse"), ["config.mask"])


def set_mask(m):
    return lambda d: d["config"].__setitem__("mask", m)


mod("mask-window-even.json", set_mask({"kind": "window", "window": 4}), ["config.mask.window", "odd", "found 4"])
mod("mask-window-zero.json", set_mask({"kind": "window", "window": 0}), ["config.mask.window"])
mod("mask-window-missing.json", set_mask({"kind": "window"}), ["config.mask.window", "missing"])
mod("mask-window-causal-string.json", set_mask({"kind": "window", "window": 3, "causal": "yes"}), ["config.mask.causal"])
mod("mask-kind-unknown.json", set_mask({"kind": "dilated", "window": 3}), ["config.mask.kind", "dilated"])
mod("mask-kind-missing.json", set_mask({"window": 3}), ["config.mask.kind", "missing"])
mod("mask-other-kinds-field.json", set_mask({"kind": "window", "window": 3, "global": [0]}), ["config.mask.global", "unknown"])
mod("mask-global-out-of-range.json", set_mask({"kind": "global_local", "window": 1, "global": [3]}), ["config.mask.global[0]"])
mod("mask-global-unknown-token.json", set_mask({"kind": "global_local", "window": 1, "global": ["cat"]}),
    ["config.mask.global[0]", "not a token"])
mod("mask-global-twice.json", set_mask({"kind": "global_local", "window": 1, "global": [0, "the"]}),
    ["config.mask.global[1]", "once"])
mod("mask-block-zero.json", set_mask({"kind": "block_sparse", "block": 0}), ["config.mask.block"])
mod("mask-block-summary.json", set_mask({"kind": "block_sparse", "block": 2, "summary": "middle"}), ["config.mask.summary"])
mod("mask-padding-neither.json", set_mask({"kind": "padding"}), ["config.mask", "neither"])
mod("mask-padding-both.json", set_mask({"kind": "padding", "pad": [2], "pad_token": "fell"}), ["config.mask", "both"])
mod("mask-padding-pad-float.json", set_mask({"kind": "padding", "pad": [1.5]}), ["config.mask.pad[0]"])
mod("mask-custom-rows.json", set_mask({"kind": "custom", "allowed": [[1, 1, 1], [1, 1, 1]]}),
    ["config.mask.allowed", "3x3", "2 rows"])
mod("mask-custom-cell.json", set_mask({"kind": "custom", "allowed": [[1, 1, 1], [1, 0.5, 1], [1, 1, 1]]}),
    ["config.mask.allowed[1][1]"])
mod("mask-custom-short-row.json", set_mask({"kind": "custom", "allowed": [[1, 1, 1], [1, 1], [1, 1, 1]]}),
    ["config.mask.allowed[1]"])
mod("config-eps-negative.json", lambda d: d["config"].__setitem__("eps", -1e-5), ["config.eps"])


# ---- positional encodings (config.positions, inputs.positions) ---------------------
def positions(value):
    return lambda d: d["config"].__setitem__("positions", value)


def learned_table(rows, cols):
    def fn(d):
        d["config"]["positions"] = "learned"
        d["inputs"]["positions"] = [[0.1] * cols for _ in range(rows)]
    return fn


def given_step(name, value):
    return lambda d: d["given"].__setitem__(name, value)


mod("positions-unknown.json", positions("relative"), ["config.positions", "\"sinusoidal\"", "relative"])
mod("positions-number.json", positions(3), ["config.positions", "number"])
mod("positions-rope-string.json", positions("rope"), ["config.positions", "layout", "pick one"])
mod("positions-alibi-string.json", positions("alibi"), ["config.positions", "an object"])
mod("positions-kind-missing.json", positions({"layout": "half"}), ["config.positions.kind", "missing"])
mod("positions-kind-unknown.json", positions({"kind": "xpos"}), ["config.positions.kind", "xpos"])
mod("positions-unknown-field.json", positions({"kind": "rope", "layout": "half", "layot": "half"}),
    ["config.positions.layot", "unknown"])
mod("positions-sinusoidal-extra-field.json", positions({"kind": "sinusoidal", "base": 100}),
    ["config.positions.base", "unknown"])
mod("positions-rope-no-layout.json", positions({"kind": "rope"}), ["config.positions.layout", "missing"])
mod("positions-rope-layout-unknown.json", positions({"kind": "rope", "layout": "neox"}),
    ["config.positions.layout", "\"half\"", "neox"])
mod("positions-rope-base-below-one.json", positions({"kind": "rope", "layout": "half", "base": 0.5}),
    ["config.positions.base", "above 1"])
mod("positions-rope-base-string.json", positions({"kind": "rope", "layout": "half", "base": "10000"}),
    ["config.positions.base", "string"])
mod("positions-rope-odd-head-size.json",
    lambda d: (d["config"].__setitem__("heads", 4), d["config"].__setitem__("positions", {"kind": "rope", "layout": "interleaved"})),
    ["config: ", "even head size", "= 1"])
mod("positions-alibi-slopes-count.json", positions({"kind": "alibi", "slopes": [0.5, 0.25]}),
    ["config.positions.slopes", "1 slopes", "found 2"])
mod("positions-alibi-slope-negative.json", positions({"kind": "alibi", "slopes": [-0.5]}),
    ["config.positions.slopes[0]", "from 0"])
mod("positions-alibi-slope-string.json", positions({"kind": "alibi", "slopes": ["steep"]}),
    ["config.positions.slopes[0]", "string"])
mod("positions-alibi-slopes-not-array.json", positions({"kind": "alibi", "slopes": 0.5}),
    ["config.positions.slopes", "an array"])
mod("positions-table-without-learned.json", lambda d: d["inputs"].__setitem__("positions", [[0.1] * 4] * 3),
    ["inputs.positions", "only with config.positions \"learned\""])
mod("positions-learned-no-table.json", positions("learned"), ["inputs.positions", "missing"])
mod("positions-learned-too-few-rows.json", learned_table(2, 4), ["inputs.positions", "at least 3 rows", "2 rows"])
mod("positions-learned-wrong-width.json", learned_table(3, 3), ["inputs.positions", "x 4"])
mod("positions-run-from-rope-without-rope.json", lambda d: d["run"].__setitem__("from", "rope"),
    ["run.from", "\"rope\" only with"])
mod("positions-run-to-rope-without-rope.json", lambda d: d["run"].__setitem__("to", "rope"),
    ["run.to", "\"rope\" only with"])
mod("positions-given-rot-q-without-rope.json", given_step("blocks.0.attn.hook_rot_q", [[1, 0, 0, 0]] * 3),
    ["given.blocks.0.attn.hook_rot_q", "config.positions rope"])
mod("positions-alibi-more-queries-than-tokens.json",
    lambda d: (d["config"].__setitem__("positions", {"kind": "alibi"}), d.__setitem__("query_tokens", ["a", "b", "c", "d"])),
    ["query_tokens", "at most 3 query tokens with ALiBi"])
mod("positions-claim-alibi-without-alibi.json",
    lambda d: d["claims"].append({"id": "bias", "step": "blocks.0.attn.hook_alibi", "decimals": 0, "values": 0,
                                  "expect": "agrees"}),
    ["claims[12].step", "config.positions alibi"])


# ---- K/V heads (grouped-query, multi-query attention) --------------------------------
def kv(heads, kv_heads):
    def fn(d):
        d["config"]["heads"] = heads
        d["config"]["kv_heads"] = kv_heads
    return fn


mod("kv-heads-zero.json", kv(2, 0), ["config.kv_heads", "found 0"])
mod("kv-heads-string.json", kv(2, "two"), ["config.kv_heads", "string"])
mod("kv-heads-not-dividing.json", kv(2, 3), ["config.kv_heads", "a divisor of heads = 2", "found 3"])
mod("kv-heads-more-than-heads.json", kv(1, 2), ["config.kv_heads", "a divisor of heads = 1", "found 2"])
# W_K stays 4 x 4, but 2 heads of hs 2 sharing 1 K/V head need 4 x (1·2)
mod("kv-heads-wk-wrong-shape.json", kv(2, 1),
    ["weights.W_K", "a 4x2 array", "d_model x kv_heads·head_size = 4 x 1·2", "found a 4x4 array"])
mod("kv-heads-given.json", lambda d: d["given"].__setitem__("blocks.0.attn.hook_kv_head", [0]),
    ["given.blocks.0.attn.hook_kv_head", "config.kv_heads"])
# Q has query heads, not K/V heads (K's `head` is read as kv_head only when kv_heads = heads)
mod("claim-at-kv-head-on-q.json", lambda d: d["claims"][0].__setitem__("at", {"kv_head": 0}),
    ["claims[0].at.kv_head", "an axis of blocks.0.attn.hook_q (query, head, d_head)"])


# ---- projection widths (config.d_k, config.d_v) ---------------------------------------
mod("widths-d-k-zero.json", lambda d: d["config"].__setitem__("d_k", 0), ["config.d_k", "found 0"])
mod("widths-d-v-string.json", lambda d: d["config"].__setitem__("d_v", "two"), ["config.d_v", "string"])
mod("widths-d-k-too-wide.json", lambda d: d["config"].update({"heads": 2, "d_k": 40000}),
    ["config.d_k", "heads · d_k at most 65536", "found 2 · 40000 = 80000"])
# W_Q stays 4 x 4, but one head of width 2 needs 4 x (1·2)
mod("widths-wq-wrong-shape.json", lambda d: d["config"].__setitem__("d_k", 2),
    ["weights.W_Q", "a 4x2 array", "d_model x heads·d_k = 4 x 1·2", "found a 4x4 array"])


def wo_too_wide(d):
    d["config"]["d_v"] = 2
    d["weights"]["W_V"] = [row[:2] for row in d["weights"]["W_V"]]
    d["weights"]["W_O"] = [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]
    del d["given"]["blocks.0.attn.hook_v"]
    d["claims"] = [c for c in d["claims"] if c["step"] != "blocks.0.attn.hook_v"]
    d["run"]["to"] = "out"


# Z is 1·2 wide: W_O reads heads·d_v rows
mod("widths-wo-wrong-shape.json", wo_too_wide,
    ["weights.W_O", "a 2x4 array", "heads·d_v x d_model = 1·2 x 4", "found a 4x4 array"])
mod("widths-rope-odd-d-k.json", lambda d: d["config"].update({"d_k": 3, "positions": {"kind": "rope", "layout": "half"}}),
    ["config.d_k", "an even head size for RoPE", "found 3"])
mod("widths-heads-not-dividing-says-d-k.json", lambda d: d["config"].__setitem__("heads", 3),
    ["config.heads", "a divisor of d_model = 4 (or config.d_k, the width of each head)", "found 3"])

# ---- batches (lessons/001-batch-padding.json made wrong in one way) ------------------
with open(os.path.join(ROOT, "lessons/001-batch-padding.json"), encoding="utf-8") as f:
    BATCH = json.loads(f.read(), object_pairs_hook=OrderedDict)


def bmod(name, fn, expect):
    doc = copy.deepcopy(BATCH)
    fn(doc)
    raw(name, dump(doc), expect)


def seq(i):
    return lambda d: d["batch"]["sequences"][i]


bmod("batch-not-object.json", lambda d: d.__setitem__("batch", [1, 2]), ["batch", "an object"])
bmod("batch-unknown-field.json", lambda d: d["batch"].__setitem__("padding", "right"), ["batch.padding", "unknown"])
bmod("batch-pad-token-missing.json", lambda d: d["batch"].pop("pad_token"), ["batch.pad_token", "missing"])
bmod("batch-pad-token-empty.json", lambda d: d["batch"].__setitem__("pad_token", ""), ["batch.pad_token", "non-empty"])
bmod("batch-sequences-empty.json", lambda d: d["batch"].__setitem__("sequences", []),
     ["batch.sequences", "at least one sequence"])
bmod("batch-sequences-not-array.json", lambda d: d["batch"].__setitem__("sequences", {"tokens": ["a"]}),
     ["batch.sequences", "an array of sequences"])
bmod("batch-sequence-tokens-missing.json", lambda d: seq(1)(d).pop("tokens"), ["batch.sequences[1].tokens", "missing"])
bmod("batch-sequence-tokens-empty.json", lambda d: seq(1)(d).__setitem__("tokens", []),
     ["batch.sequences[1].tokens", "at least one"])
bmod("batch-sequence-pad-token.json", lambda d: seq(1)(d)["tokens"].__setitem__(1, "<pad>"),
     ["batch.sequences[1].tokens[1]", "a real token", "the pad token"])
bmod("batch-sequence-unknown-field.json", lambda d: seq(0)(d).__setitem__("mask", [1, 1, 1, 1]),
     ["batch.sequences[0].mask", "unknown"])
bmod("batch-sequence-x-missing.json", lambda d: seq(1)(d).pop("X"), ["batch.sequences[1].X", "missing"])
bmod("batch-sequence-x-wrong-rows.json", lambda d: seq(1)(d)["X"].append([0, 0, 0, 0]),
     ["batch.sequences[1].X", "a 2x4 array", "found a 3x4 array"])
bmod("batch-sequence-x-wrong-width.json", lambda d: seq(0)(d).__setitem__("X", [[1, 2, 3]] * 4),
     ["batch.sequences[0].X", "a 4x4 array", "found a 4x3 array"])
bmod("batch-sequence-x-not-number.json", lambda d: seq(1)(d)["X"][0].__setitem__(2, "one"),
     ["batch.sequences[1].X[0][2]", "a number"])
bmod("batch-sequence-ids-without-embedding.json", lambda d: seq(1)(d).__setitem__("token_ids", [1, 2]),
     ["batch.sequences[1].token_ids", "without inputs.embedding"])
bmod("batch-pad-x-wrong-size.json", lambda d: d["batch"].__setitem__("pad_x", [0, 0]),
     ["batch.pad_x", "4 numbers", "found an array of 2"])
bmod("batch-pad-id-without-embedding.json", lambda d: d["batch"].__setitem__("pad_id", 0),
     ["batch.pad_id", "without inputs.embedding"])


def embedding(d):
    d["inputs"] = {"embedding": {"generate": "normal", "seed": 1}}
    for i, s in enumerate(d["batch"]["sequences"]):
        s.pop("X")
        s["token_ids"] = list(range(1, len(s["tokens"]) + 1))


bmod("batch-embedding-pad-id-missing.json", embedding, ["batch.pad_id", "missing"])
bmod("batch-embedding-ids-missing.json",
     lambda d: (embedding(d), d["batch"].__setitem__("pad_id", 0), seq(1)(d).pop("token_ids")),
     ["batch.sequences[1].token_ids", "missing"])
bmod("batch-embedding-ids-count.json",
     lambda d: (embedding(d), d["batch"].__setitem__("pad_id", 0), seq(1)(d).__setitem__("token_ids", [1])),
     ["batch.sequences[1].token_ids", "one id per token (2)", "found 1"])
bmod("batch-embedding-pad-id-negative.json",
     lambda d: (embedding(d), d["batch"].__setitem__("pad_id", -1)), ["batch.pad_id"])
bmod("batch-embedding-with-x.json",
     lambda d: (embedding(d), d["batch"].__setitem__("pad_id", 0), seq(0)(d).__setitem__("X", [[0, 0, 0, 0]] * 4)),
     ["batch.sequences[0].X", "token_ids, not X"])
bmod("batch-with-tokens.json", lambda d: d.__setitem__("tokens", ["a", "b"]), ["tokens", "batch"])
bmod("batch-with-query-tokens.json", lambda d: d.__setitem__("query_tokens", ["a"]), ["query_tokens", "batch"])
bmod("batch-with-inputs-x.json", lambda d: d.__setitem__("inputs", {"X": [[0, 0, 0, 0]] * 4}),
     ["inputs.X", "batched lesson"])
bmod("batch-mask-window.json", lambda d: d["config"].__setitem__("mask", {"kind": "window", "window": 3}),
     ["config.mask", "\"none\" or \"causal\" in a batched lesson", "a window mask"])
bmod("batch-mask-padding.json", lambda d: d["config"].__setitem__("mask", {"kind": "padding", "pad": [3]}),
     ["config.mask", "a padding mask"])
bmod("batch-run-from-scores.json", lambda d: d["run"].__setitem__("from", "scores"), ["run.from", "\"embed\""])
bmod("batch-given.json", lambda d: d.__setitem__("given", {"blocks.0.attn.hook_mask": [[0]]}),
     ["given", "no given values in a batched lesson"])
bmod("batch-claim-at-batch-out-of-range.json", lambda d: d["claims"][8].__setitem__("at", {"batch": 2}),
     ["claims[8].at.batch"])
bmod("batch-claim-values-wrong-shape.json", lambda d: d["claims"][10].__setitem__("at", {"head": 0}),
     ["claims[10].values", "a 2x4x4 array"])

# Cases written by hand (a whole lesson rather than the flagship made wrong,
# e.g. the model-* files) keep their entries: kept from the cases.json this
# run replaces, after the generated ones, as long as their file exists.
CASES = os.path.join(OUT, "cases.json")
generated = len(cases)
if os.path.exists(CASES):
    with open(CASES, encoding="utf-8") as f:
        for k, v in json.load(f, object_pairs_hook=OrderedDict).items():
            if k not in cases and os.path.exists(os.path.join(OUT, k)):
                cases[k] = v
with open(CASES, "w", encoding="utf-8") as f:
    f.write("{\n" + ",\n".join(f"  {compact(k)}: {compact(v)}" for k, v in cases.items()) + "\n}\n")
print(generated, "cases generated,", len(cases) - generated, "written by hand kept")

#!/usr/bin/env python3
"""Writes the bad cost lessons of this folder and cases.json (file -> what its
one-line error must contain). Each file is a valid cost lesson wrong in one
way. Run it from this folder after changing it; the files are committed."""
import copy
import json

BASE = {
    "format": "attntrace-cost-lesson", "version": 1, "id": "bad", "title": "a bad cost lesson",
    "source": {"document": "000_a7d03448c59ae593.txt"},
    "spec": {"tokens": 1024, "d_model": 64, "heads": 1, "dtype": "fp32"},
    "claims": [
        {"id": "a", "quantity": "matrix_bytes", "unit": "MiB", "decimals": 0, "value": 4, "expect": "agrees"},
        {"id": "b", "spec": {"tokens": 2048}, "over": {"tokens": 1024}, "quantity": "matrix_entries", "unit": "x",
         "decimals": 0, "value": 4, "expect": "agrees",
         "round_first": [{"quantity": "matrix_entries", "unit": "million", "decimals": 0}]},
    ],
}

cases = {}


def case(name, needles, edit):
    doc = copy.deepcopy(BASE)
    edit(doc)
    with open(name, "w") as f:
        json.dump(doc, f, indent=1, ensure_ascii=False)
        f.write("\n")
    cases[name] = needles


def setp(path, value):
    def edit(doc):
        *parents, last = path
        d = doc
        for p in parents:
            d = d[p]
        d[last] = value
    return edit


def delp(path):
    def edit(doc):
        *parents, last = path
        d = doc
        for p in parents:
            d = d[p]
        del d[last]
    return edit


case("version-2.json", ["version", "found 2"], setp(["version"], 2))
case("spec-missing.json", ["spec", "missing"], delp(["spec"]))
case("spec-tokens-zero.json", ["spec.tokens", "found 0"], setp(["spec", "tokens"], 0))
case("spec-tokens-huge.json", ["spec.tokens"], setp(["spec", "tokens"], 2 ** 40))
case("spec-heads-not-dividing.json", ["spec:", "heads dividing d_model"], setp(["spec", "heads"], 3))
case("spec-kv-heads-not-dividing.json", ["spec:", "kv-heads dividing heads"],
     lambda d: d["spec"].update({"heads": 4, "kv_heads": 3}))
case("spec-unknown-field.json", ["spec.seq_len", "known fields"], setp(["spec", "seq_len"], 4))
case("claim-spec-dtype.json", ["claims[0].spec.dtype", "fp16", "\"fp8\""], setp(["claims", 0, "spec"], {"dtype": "fp8"}))
case("claim-spec-attention.json", ["claims[0].spec.attention", "causal-window"],
     setp(["claims", 0, "spec"], {"attention": "sparse"}))
case("claim-window-without-size.json", ["claims[0].spec", "window size"],
     setp(["claims", 0, "spec"], {"attention": "window"}))
case("claim-over-heads.json", ["claims[1].over", "heads dividing d_model"], setp(["claims", 1, "over"], {"heads": 5}))
case("claim-quantity-unknown.json", ["claims[0].quantity", "matrix_entries"], setp(["claims", 0, "quantity"], "memory"))
case("claim-unit-of-count-for-bytes.json", ["claims[0].unit", "a unit of bytes", "\"million\""],
     setp(["claims", 0, "unit"], "million"))
case("claim-unit-of-bytes-for-ratio.json", ["claims[1].unit", "a ratio's unit"], setp(["claims", 1, "unit"], "MB"))
case("claim-decimals-too-many.json", ["claims[0].decimals", "found 9"], setp(["claims", 0, "decimals"], 9))
case("claim-value-string.json", ["claims[0].value", "string"], setp(["claims", 0, "value"], "4"))
case("claim-value-missing.json", ["claims[0].value", "missing"], delp(["claims", 0, "value"]))
case("claim-expect-not-checkable.json", ["claims[0].expect", "always checkable"],
     setp(["claims", 0, "expect"], "not-checkable"))
case("claim-round-first-bytes.json", ["claims[1].round_first[0].quantity", "intermediates"],
     setp(["claims", 1, "round_first", 0, "quantity"], "matrix_bytes"))
case("claim-round-first-mode.json", ["claims[1].round_first[0].mode", "down"],
     setp(["claims", 1, "round_first", 0, "mode"], "up"))
case("claim-round-first-empty.json", ["claims[1].round_first", "non-empty"], setp(["claims", 1, "round_first"], []))
case("claim-duplicate-id.json", ["claims[1].id", "\"a\" again"], setp(["claims", 1, "id"], "a"))
case("claim-unknown-field.json", ["claims[0].decimal", "known fields"], setp(["claims", 0, "decimal"], 2))
case("claims-empty.json", ["claims", "non-empty"], setp(["claims"], []))
case("answer-false.json", ["claims[0].answer", "true"],
     lambda d: d["claims"].__setitem__(0, {"id": "q", "answer": False, "quantity": "matrix_bytes", "unit": "MiB", "decimals": 0}))
case("answer-with-value.json", ["claims[0].value", "known fields"],
     lambda d: d["claims"].__setitem__(0, {"id": "q", "answer": True, "quantity": "matrix_bytes", "unit": "MiB", "decimals": 0, "value": 4}))

with open("json-truncated.json", "w") as f:
    f.write(json.dumps(BASE)[:120])
cases["json-truncated.json"] = ["byte"]

with open("cases.json", "w") as f:
    json.dump(cases, f, indent=2)
    f.write("\n")

#!/usr/bin/env python3
# Writes tests/bad-trace/*.json, each a small trace wrong in one way, and
# cases.json (file -> substrings its one-line error must contain), which
# tests/test_diff.cpp runs through `attntrace diff`, as A and as B. The base is
# the first five steps of golden/003-3.1-ring-fell.json, written as the minimal
# trace docs/diffing.md describes. Run it from anywhere:
#   python3 tests/bad-trace/make_cases.py
import copy
import json
import os
from collections import OrderedDict

OUT = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(OUT))
with open(os.path.join(ROOT, "golden/003-3.1-ring-fell.json"), encoding="utf-8") as f:
    GOLDEN = json.load(f, object_pairs_hook=OrderedDict)

# steps[0] resid_pre 3x4, [1] hook_q 3x1x4, [2] hook_k 3x1x4, [3] hook_v 3x1x4, [4] scores_raw 1x3x3
BASE = OrderedDict([("format", "attntrace-trace"), ("version", 2), ("steps", [
    OrderedDict([("name", s["name"]), ("shape", s["shape"]), ("values", s["values"])])
    for s in GOLDEN["steps"][:5]])])
cases = OrderedDict()


def dump(doc):
    # One step per line: small, diffable files.
    if not isinstance(doc, dict) or not isinstance(doc.get("steps"), list):
        return json.dumps(doc) + "\n"
    lines = [f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in doc.items() if k != "steps"]
    steps = ",\n    ".join(json.dumps(s) for s in doc["steps"])
    lines.append(f'  "steps": [\n    {steps}\n  ]')
    return "{\n" + ",\n".join(lines) + "\n}\n"


def raw(name, data, expect):
    mode = "wb" if isinstance(data, bytes) else "w"
    with open(os.path.join(OUT, name), mode) as f:
        f.write(data)
    cases[name] = expect


def mod(name, fn, expect):
    doc = copy.deepcopy(BASE)
    fn(doc)  # edits doc in place
    raw(name, dump(doc), expect)


def step(i):
    return lambda d: d["steps"][i]


GOOD = dump(BASE)

# ---- not JSON ---------------------------------------------------------------------
raw("empty.json", "", ["byte 0", "empty"])
raw("truncated.json", GOOD[: len(GOOD) // 2], ["byte"])
raw("non-utf8.json", GOOD.replace("hook_k", "hook_\xff", 1).encode("utf-8").replace("\xff".encode("utf-8"), b"\xff", 1),
    ["byte"])
raw("deep-nesting.json", "{\"steps\": " + "[" * 5000 + "]" * 5000 + "}", ["byte", "nested"])
raw("nan-literal.json", GOOD.replace("[[[", "[[[NaN, ", 1), ["byte"])

# ---- the document --------------------------------------------------------------------
raw("top-level-array.json", "[" + GOOD.rstrip() + "]\n", ["(top level)", "an object"])
mod("format-wrong.json", lambda d: d.__setitem__("format", "attntrace-lesson"), ["format", "\"attntrace-trace\""])
mod("format-missing.json", lambda d: d.pop("format"), ["format", "missing"])
mod("version-unsupported.json", lambda d: d.__setitem__("version", 3), ["version", "1 or 2", "found 3"])
mod("version-string.json", lambda d: d.__setitem__("version", "2"), ["version", "string"])
mod("steps-missing.json", lambda d: d.pop("steps"), ["steps", "missing"])
mod("steps-not-array.json", lambda d: d.__setitem__("steps", {s["name"]: s for s in d["steps"]}),
    ["steps", "an array of steps", "an object"])

# ---- a step ---------------------------------------------------------------------------
mod("step-not-object.json", lambda d: d["steps"].__setitem__(2, "blocks.0.attn.hook_k"), ["steps[2]", "an object"])
mod("step-without-name.json", lambda d: step(2)(d).pop("name"), ["steps[2].name", "missing"])
mod("step-name-number.json", lambda d: step(1)(d).__setitem__("name", 1), ["steps[1].name", "a string"])
mod("step-duplicate-name.json", lambda d: step(3)(d).__setitem__("name", "blocks.0.attn.hook_q"),
    ["steps[3].name", "steps[1]", "hook_q"])
mod("step-source-unknown.json", lambda d: step(2)(d).__setitem__("source", "mine"),
    ["steps[2].source", "computed, given or not-computable"])

# ---- shapes ------------------------------------------------------------------------------
mod("shape-missing.json", lambda d: step(1)(d).pop("shape"), ["steps[1].shape", "missing"])
mod("shape-huge.json", lambda d: step(1)(d).__setitem__("shape", [100000, 100000, 100000]),
    ["steps[1].shape", "at most 2147483648 numbers"])
mod("shape-negative.json", lambda d: step(1)(d).__setitem__("shape", [-3, 1, 4]), ["steps[1].shape[0]", "an integer"])
mod("shape-rank-5.json", lambda d: step(1)(d).__setitem__("shape", [3, 1, 4, 1, 1]), ["steps[1].shape", "at most 4"])
mod("shape-wrong-count.json", lambda d: step(2)(d).__setitem__("shape", [3, 1, 5]),
    ["steps[2].values", "3x1x5", "3x1x4"])

# ---- values --------------------------------------------------------------------------------
mod("values-missing.json", lambda d: step(2)(d).pop("values"), ["steps[2].values", "missing"])
mod("values-null.json", lambda d: step(2)(d).__setitem__("values", None), ["steps[2].values", "null"])
mod("values-ragged.json", lambda d: step(3)(d)["values"][1].append([0.5, 0.5, 0.5, 0.5]),
    ["steps[3].values[1]", "an array of 1", "an array of 2"])
mod("values-too-deep.json", lambda d: step(0)(d).__setitem__("values", [[[x] for x in r] for r in step(0)(d)["values"]]),
    ["steps[0].values", "3x4", "3x4x1"])
mod("values-too-shallow.json", lambda d: step(1)(d).__setitem__("values", [r[0] for r in step(1)(d)["values"]]),
    ["steps[1].values", "3x1x4", "3x4"])
mod("value-not-a-number.json", lambda d: step(4)(d)["values"][0][1].__setitem__(2, True),
    ["steps[4].values[0][1][2]", "a number", "true"])
mod("value-string-nan.json", lambda d: step(4)(d)["values"][0][2].__setitem__(0, "nan"),
    ["steps[4].values[0][2][0]", "\"-inf\"", "string \"nan\""])
mod("value-string-inf.json", lambda d: step(4)(d)["values"][0][0].__setitem__(1, "inf"),
    ["steps[4].values[0][0][1]", "\"-inf\"", "string \"inf\""])
mod("value-beyond-float.json", lambda d: step(0)(d)["values"][2].__setitem__(3, 1e39),
    ["steps[0].values[2][3]", "float range"])
# A few kB whose first row at each depth claims 1290 x 1290 x 1290 floats (8.6 GB):
# refused at values[0][1] before anything is allocated.
N = 1290
mod("values-ragged-bomb.json", lambda d: step(4)(d).__setitem__("values", [[[0] * N] + [0] * (N - 1)] + [0] * (N - 1)),
    ["steps[4].values[0][1]", "an array of 1290"])

with open(os.path.join(OUT, "cases.json"), "w") as f:
    f.write("{\n" + ",\n".join(f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in cases.items()) + "\n}\n")
print(f"wrote {len(cases)} cases to {OUT}")

# Writes the .npy fixtures of tests/test_npy.cpp. Run from the repository with a
# python that has numpy (the committed files are what tests read):
#   /usr/bin/python3 tests/npy/make_fixtures.py
# numpy/: files numpy itself writes; cases.json says what the reader must make of each.
# bad/:   hand-made bytes, each wrong in one way; cases.json lists the substrings
#         the one-line error must hold (a byte offset, what was found).
import json
import struct
from pathlib import Path

import numpy as np

here = Path(__file__).parent
good, bad = here / "numpy", here / "bad"
good.mkdir(exist_ok=True)
bad.mkdir(exist_ok=True)

# ---- written by numpy ------------------------------------------------------
numpy_cases = {}  # file -> {"shape": [...], "values": [...]} or {"error": [substrings]}

def save(name, a, version=None, **case):
    path = good / name
    if version is None:
        np.save(path, a)
    else:
        with open(path, "wb") as f:
            np.lib.format.write_array(f, a, version=version)
    numpy_cases[name] = case

a = (np.arange(6, dtype="<f4").reshape(2, 3) - 2) / 4
save("f4-2x3.npy", a, shape=[2, 3], values=a.ravel().tolist())
b = np.array([0.1, -2.5, 1e10, 3.0e38], dtype="<f8")
save("f8-4.npy", b, shape=[4], values=b.astype(np.float32).astype(np.float64).tolist())
save("f4-0d.npy", np.array(3.5, dtype="<f4"), shape=[], values=[3.5])
c = np.linspace(-1, 1, 24, dtype="<f4").reshape(2, 3, 4)
save("f4-2x3x4-v2.npy", c, version=(2, 0), shape=[2, 3, 4], values=c.ravel().tolist())
save("f4-neg-inf.npy", np.array([[0, -np.inf], [0, 0]], dtype="<f4"), shape=[2, 2], neg_inf_at=1,
     error=["[0,1]", "expected a finite number", "found negative infinity"])
save("fortran.npy", np.asfortranarray(np.ones((2, 3), dtype="<f4")), error=["'fortran_order': False", "found True"])
save("big-endian.npy", np.ones(3, dtype=">f4"), error=["big-endian", "'>f4'"])
n = np.zeros((2, 4), dtype="<f4")
n[1, 2] = np.nan
save("nan.npy", n, error=["[1,2]: expected a finite number", "found NaN"])
save("f8-beyond-float32.npy", np.array([1.0, 1e39]), error=["[1]", "1e+39", "beyond float32's range"])
save("int64.npy", np.arange(3), error=["expected dtype '<f4' or '<f8'", "'<i8'"])
save("rank4.npy", np.zeros((1, 1, 1, 2), dtype="<f4"), error=["rank 0 to 3", "(1, 1, 1, 2)"])
save("pos-inf.npy", np.array([1, np.inf], dtype="<f4"), error=["[1]", "found positive infinity"])
(good / "cases.json").write_text(json.dumps(numpy_cases, indent=1) + "\n")

# ---- hand-made, malformed ---------------------------------------------------
bad_cases = {}

def header(text, version=1, pad=True):
    """magic, version, length and header text padded as numpy pads it"""
    pre = 10 if version == 1 else 12
    if pad:
        text = text + " " * ((64 - (pre + len(text) + 1) % 64) % 64) + "\n"
    raw = text.encode("latin1")
    size = struct.pack("<H", len(raw)) if version == 1 else struct.pack("<I", len(raw))
    return b"\x93NUMPY" + bytes([version, 0]) + size + raw

def dict_text(descr="<f4", fortran="False", shape="(3, 3)"):
    return "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (descr, fortran, shape)

f4 = np.arange(9, dtype="<f4").tobytes()  # 3x3: what the lesson's W_Q needs

def put(name, data, needles):
    (bad / name).write_bytes(data)
    bad_cases[name] = needles

put("empty.npy", b"", ["byte 0", "magic string", "the end of the file"])
put("bad-magic.npy", b"\x93NUMPX\x01\x00" + header(dict_text())[8:] + f4, ["byte 0", "magic string", "4e 55 4d 50 58"])
put("json-not-npy.npy", b'{"W_Q": [[1, 2, 3]]}\n', ["byte 0", "magic string", "7b 22 57 5f 51 22"])
put("truncated-in-magic.npy", b"\x93NUM", ["byte 0", "magic string", "the end of the file"])
put("truncated-in-length.npy", b"\x93NUMPY\x01\x00\x76", ["byte 9", "header length", "the end of the file"])
put("truncated-header.npy", header(dict_text())[:40], ["byte 40", "a header of 118 bytes", "the end of the file"])
put("version-3.npy", header(dict_text(), version=1)[:6] + b"\x03\x00" + header(dict_text())[8:] + f4,
    ["byte 6", "version 1.0 or 2.0", "3.0"])
put("header-too-long.npy", b"\x93NUMPY\x02\x00" + struct.pack("<I", 1 << 31) + b"{}",
    ["byte 8", "header length of at most 65536", "2147483648"])
put("dict-unclosed.npy", header("{'descr': '<f4', 'fortran_order': False, 'shape': (3, 3)  ") + f4,
    ["byte 128", "',' or '}'", "the end of the header"])
put("dict-not-a-dict.npy", header("[('descr', '<f4')]") + f4, ["byte 10", "'{'", "found \"[('descr', '...\""])
put("dict-unknown-key.npy", header("{'descr': '<f4', 'fortran_order': False, 'shape': (3, 3), 'extra': 1}") + f4,
    ["byte 68", "one of the keys", "'extra'"])
put("dict-missing-shape.npy", header("{'descr': '<f4', 'fortran_order': False}") + f4,
    ["byte 49", "no 'shape'"])
put("dict-string-open.npy", header("{'descr': '<f4, 'fortran_order': False, 'shape': (3, 3)}") + f4,
    ["byte 27", "',' or '}'", "found \"fortran_orde...\""])
put("shape-not-a-number.npy", header(dict_text(shape="('three', 3)")) + f4, ["byte 61", "a size (a whole number)"])
put("dtype-float16.npy", header(dict_text(descr="<f2")) + np.zeros(9, "<f2").tobytes(),
    ["byte 20", "'<f4' or '<f8'", "'<f2'"])
put("dtype-big-endian.npy", header(dict_text(descr=">f8")) + np.zeros(9, ">f8").tobytes(),
    ["byte 20", "little-endian", "'>f8'"])
put("data-short.npy", header(dict_text()) + f4[:-4], ["byte 128", "expected 36 bytes of data", "found 32"])
put("data-long.npy", header(dict_text()) + f4 + b"\0\0\0\0", ["byte 128", "expected 36 bytes of data", "found 40"])
put("shape-huge.npy", header(dict_text(shape="(100000, 100000, 100000)")) + f4,
    ["byte 60", "at most 2147483648 numbers", "(100000, 100000, 100000)"])
put("size-overflowing.npy", header(dict_text(shape="(99999999999999999999999,)")) + f4,
    ["byte 61", "a size of at most 2147483648"])
put("size-zero.npy", header(dict_text(shape="(0, 3)")), ["byte 61", "at least 1", "empty array"])
(bad / "cases.json").write_text(json.dumps(bad_cases, indent=1) + "\n")
print(f"{len(numpy_cases)} numpy files, {len(bad_cases)} malformed ones")

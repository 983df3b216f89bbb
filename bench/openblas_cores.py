#!/usr/bin/env python3
"""Pick the OpenBLAS core for bench/run_standard.sh's comparison columns: the fastest that computes correctly.

OpenBLAS picks its kernels by the core it detects, or by $OPENBLAS_CORETYPE.
An older core than the CPU has (0.3.21 takes some newer CPUs for a Prescott;
an environment may set Haswell on AVX-512 hardware) runs PyTorch's fp32
matmul and bench's cblas_sgemm column slower, and the comparison then
flatters attntrace. This script tries each candidate core in a child process
of its own (OPENBLAS_CORETYPE set in that child's environment only):

  - the candidates: the core OpenBLAS detects by itself, the caller's
    $OPENBLAS_CORETYPE if set, and the cores the CPU's flags (/proc/cpuinfo)
    allow and this OpenBLAS knows (its library holds the name):
    AVX-512 F/BW/VL/DQ: SkylakeX, and Cooperlake with avx512_bf16 (and
    SapphireRapids with AMX, if the library knows it; 0.3.21 does not);
    AVX2 and FMA: Haswell, Zen; AVX alone: Sandybridge;
  - the child reports openblas_get_corename(): a core OpenBLAS did not take
    (it fell back to another) is not used;
  - it times fp32 products on the standard run's shapes through torch
    (torch.nn.functional.linear and torch.matmul, as nn.TransformerEncoderLayer
    runs them; numpy's float32 matmul if torch is missing), after one
    warm-up, the median of --repeat passes over all shapes, on --threads threads;
  - it checks every product against a float64 product of the same float32
    inputs, computed once here by numpy.einsum (its own loops, not OpenBLAS).

Correct means: every entry within the worst-case bound of a float32 sum of K
products, |c - c64| <= gamma_K * (|A|·|B|) entry by entry, gamma_K = K·u/(1 - K·u),
u = 2^-24 (any summation order, with or without FMA, meets it). A kernel that
drops or repeats a block of terms, or reads the wrong memory, misses it by
orders of magnitude; the JSON gives each core's largest error as a fraction
of its bound.

The candidates are tried --rounds times, in turn (the machine's neighbours
move timings from one second to the next); a core's GFLOP/s is its best
round's. The chosen core: the fastest of those that were taken and correct.

    /usr/bin/python3 bench/openblas_cores.py [--threads 1] [--repeat 5] [--rounds 2]

Prints one JSON object on stdout (per core: the name asked for, the name
OpenBLAS reports, taken, correct, the largest error over its bound, GFLOP/s
per shape and over all; the chosen core and why) and a summary on stderr.
Exit status 0 with a chosen core, 1 if no candidate was correct, 2 on usage.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

# (name, M, K, N, how): "linear" is x (M x K) · Wᵀ with W (N x K), as nn.Linear runs it;
# "matmul" is A (M x K) · B (K x N). The standard run's n = 512 projections and the
# attention's products at n = 2048 (one head: hs = 64).
SHAPES = (
    ("qkv 512x768 . (2304x768)T", 512, 768, 2304, "linear"),
    ("out 512x768 . (768x768)T", 512, 768, 768, "linear"),
    ("ffn up 512x768 . (3072x768)T", 512, 768, 3072, "linear"),
    ("ffn down 512x3072 . (768x3072)T", 512, 3072, 768, "linear"),
    ("scores 2048x64 . 64x2048", 2048, 64, 2048, "matmul"),
    ("mix 2048x2048 . 2048x64", 2048, 2048, 64, "matmul"),
)

# The unit roundoff of float32: a float32 sum of K products is within
# gamma_K = K·U32 / (1 - K·U32) of the exact one, relative to the sum of the products' magnitudes.
U32 = 2.0 ** -24

# Cores by the CPU flags they need (the order: newest first; all in /proc/cpuinfo's names).
FLAG_CORES = (
    ("SapphireRapids", ("avx512f", "avx512bw", "avx512vl", "avx512dq", "avx512_bf16", "amx_tile", "amx_bf16")),
    ("Cooperlake", ("avx512f", "avx512bw", "avx512vl", "avx512dq", "avx512_bf16")),
    ("SkylakeX", ("avx512f", "avx512bw", "avx512vl", "avx512dq")),
    ("Haswell", ("avx2", "fma")),
    ("Zen", ("avx2", "fma")),
)


# Cores whose GFLOP/s are within NEAR of the chosen one's are named beside it: the
# machine's neighbours move a child's figure by a few percent from one round to the
# next, so among those the choice is the measurement's, not the kernels'.
NEAR = 0.05


def gamma(k: int) -> float:
    return k * U32 / (1 - k * U32)


def openblas_path() -> str:
    """The OpenBLAS library this process has loaded (numpy's and torch's, via libblas.so.3), else the soname."""
    for line in open("/proc/self/maps"):
        path = line.split()[-1] if len(line.split()) >= 6 else ""
        if "libopenblas" in os.path.basename(path):
            return path
    return "libopenblas.so.0"


def corename() -> str:
    import ctypes
    lib = ctypes.CDLL(openblas_path())
    lib.openblas_get_corename.restype = ctypes.c_char_p
    return lib.openblas_get_corename().decode()


def child(a) -> int:
    """One core: this process's OPENBLAS_CORETYPE was set by the parent. Prints one JSON line."""
    import time
    import numpy as np
    data = np.load(os.path.join(a.child, "inputs.npz"))
    via = "torch"
    try:
        import torch
        torch.set_num_threads(a.threads)
        F = torch.nn.functional
        ops = []
        for i, (_, m, k, n, how) in enumerate(SHAPES):
            x, w = torch.from_numpy(data[f"a{i}"]), torch.from_numpy(data[f"b{i}"])
            ops.append((lambda x=x, w=w: F.linear(x, w)) if how == "linear" else (lambda x=x, w=w: torch.matmul(x, w)))
        grad = torch.no_grad()
        grad.__enter__()
        to_np = lambda c: c.numpy()
    except ImportError:
        via = "numpy"
        ops = []
        for i, (_, m, k, n, how) in enumerate(SHAPES):
            x, w = data[f"a{i}"], data[f"b{i}"]
            ops.append((lambda x=x, w=w: x @ w.T) if how == "linear" else (lambda x=x, w=w: x @ w))
        to_np = lambda c: c
    name = corename()  # after the first import: OpenBLAS is loaded and has chosen its core

    worst, worst_shape, bad, errors = 0.0, "", [], {}
    for i, (label, m, k, n, how) in enumerate(SHAPES):
        c = to_np(ops[i]()).astype(np.float64)
        ref, mag = data[f"ref{i}"], data[f"mag{i}"]
        bound = gamma(k) * mag
        with np.errstate(divide="ignore", invalid="ignore"):
            frac = np.abs(c - ref) / np.where(bound > 0, bound, np.inf)
        f = float(np.nanmax(frac)) if np.isfinite(c).all() else float("inf")
        errors[label] = f
        if not np.isfinite(c).all() or f > 1.0:
            bad.append(label)
        if f > worst:
            worst, worst_shape = f, label
    times = {label: [] for label, *_ in SHAPES}
    for _ in range(1 + a.repeat):  # the first pass is the warm-up
        for i, (label, *_rest) in enumerate(SHAPES):
            t0 = time.perf_counter()
            ops[i]()
            times[label].append(time.perf_counter() - t0)
    flops = {label: 2.0 * m * k * n for label, m, k, n, _ in SHAPES}
    med = {label: statistics.median(ts[1:]) for label, ts in times.items()}
    print(json.dumps({
        "corename": name, "via": via,
        "correct": not bad, "wrong_products": bad,
        "max_error_over_bound": worst, "max_error_shape": worst_shape, "error_over_bound": errors,
        "gflops": {label: flops[label] / med[label] / 1e9 for label in med},
        "gflops_all": sum(flops.values()) / sum(med.values()) / 1e9,
    }))
    return 0


def cpu_flags() -> set:
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("flags"):
                return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def known_to_library(name: str, blob: bytes) -> bool:
    """OpenBLAS's dynamic build holds each core it can force as a NUL-terminated name."""
    return (b"\0" + name.encode() + b"\0") in blob


def candidates(flags: set, detected: str, caller: str):
    """(name, why) in the order tried; each name once, compared without case."""
    try:
        blob = open(os.path.realpath(openblas_path()), "rb").read()
    except OSError:
        blob = b""
    out, seen = [], set()

    def add(name, why):
        if name and name.lower() not in seen:
            seen.add(name.lower())
            out.append((name, why))
    add(detected, "detected by OpenBLAS itself")
    add(caller, "set by the caller ($OPENBLAS_CORETYPE)")
    for name, need in FLAG_CORES:
        if all(f in flags for f in need) and (not blob or known_to_library(name, blob)):
            add(name, "the CPU has " + ", ".join(need))
    if "avx" in flags and "avx2" not in flags and known_to_library("Sandybridge", blob):
        add("Sandybridge", "the CPU has avx")
    skipped = [name for name, need in FLAG_CORES
               if all(f in flags for f in need) and blob and not known_to_library(name, blob)]
    return out, skipped


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--threads", type=int, default=1, help="OpenBLAS and torch threads in each child (default 1)")
    p.add_argument("--repeat", type=int, default=5, help="timed passes over the shapes per child (default 5)")
    p.add_argument("--rounds", type=int, default=2, help="times each candidate is tried, in turn (default 2)")
    p.add_argument("--child", help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.threads < 1 or a.repeat < 1 or a.rounds < 1:
        p.error("--threads, --repeat and --rounds take whole numbers from 1")
    if a.child:
        return child(a)

    import numpy as np
    caller = os.environ.get("OPENBLAS_CORETYPE", "")
    base = {k: v for k, v in os.environ.items() if k != "OPENBLAS_CORETYPE"}
    base.update(OMP_NUM_THREADS=str(a.threads), OPENBLAS_NUM_THREADS=str(a.threads), OMP_WAIT_POLICY="PASSIVE")
    # What OpenBLAS detects by itself: a child without OPENBLAS_CORETYPE.
    probe = subprocess.run([sys.executable, "-c", "import numpy, sys; sys.path.insert(0, sys.argv[1]);"
                            "import openblas_cores as o; print(o.corename())", os.path.dirname(os.path.abspath(__file__))],
                           env=base, capture_output=True, text=True)
    detected = probe.stdout.strip() if probe.returncode == 0 else ""
    flags = cpu_flags()
    cands, skipped = candidates(flags, detected, caller)

    rng = np.random.default_rng(1)
    tmp = tempfile.mkdtemp(prefix="openblas-cores.")
    arrays = {}
    for i, (_, m, k, n, how) in enumerate(SHAPES):
        x = rng.standard_normal((m, k)).astype(np.float32)
        w = rng.standard_normal((n, k) if how == "linear" else (k, n)).astype(np.float32)
        wkn = (w.T if how == "linear" else w).astype(np.float64)
        arrays[f"a{i}"], arrays[f"b{i}"] = x, w
        # einsum's own loops (not OpenBLAS, whose cores are under test); float32 inputs are exact in float64.
        arrays[f"ref{i}"] = np.einsum("ik,kj->ij", x.astype(np.float64), np.ascontiguousarray(wkn))
        arrays[f"mag{i}"] = np.einsum("ik,kj->ij", np.abs(x).astype(np.float64), np.ascontiguousarray(np.abs(wkn)))
    np.savez(os.path.join(tmp, "inputs.npz"), **arrays)

    results = {name: {"asked": name, "why_tried": why, "rounds": []} for name, why in cands}
    try:
        for _ in range(a.rounds):
            for name, _why in cands:
                env = dict(base, OPENBLAS_CORETYPE=name)
                r = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", tmp, "--threads", str(a.threads),
                                    "--repeat", str(a.repeat)], env=env, capture_output=True, text=True)
                if r.returncode != 0 or not r.stdout.strip():
                    results[name]["rounds"].append({"failed": f"exit status {r.returncode}: {r.stderr.strip()[-300:]}"})
                else:
                    results[name]["rounds"].append(json.loads(r.stdout.strip().splitlines()[-1]))
    finally:
        for f in os.listdir(tmp):
            os.unlink(os.path.join(tmp, f))
        os.rmdir(tmp)

    cores = []
    for name, _why in cands:
        rs = results[name]["rounds"]
        ok = [r for r in rs if "failed" not in r]
        c = {"asked": name, "why_tried": results[name]["why_tried"]}
        if not ok:
            c.update(corename=None, taken=False, correct=False, note=rs[0]["failed"] if rs else "not run")
        else:
            best = max(ok, key=lambda r: r["gflops_all"])
            c.update(corename=ok[0]["corename"], taken=all(r["corename"].lower() == name.lower() for r in ok),
                     correct=len(ok) == len(rs) and all(r["correct"] for r in ok),
                     wrong_products=sorted({s for r in ok for s in r["wrong_products"]}),
                     max_error_over_bound=max(r["max_error_over_bound"] for r in ok),
                     error_over_bound={label: max(r["error_over_bound"][label] for r in ok) for label, *_ in SHAPES},
                     via=ok[0]["via"], gflops_all=best["gflops_all"],
                     gflops_rounds=[r["gflops_all"] for r in ok], gflops=best["gflops"])
        cores.append(c)
    usable = [c for c in cores if c["taken"] and c["correct"]]
    chosen = max(usable, key=lambda c: c["gflops_all"]) if usable else None
    near = [c["asked"] for c in usable if chosen and c is not chosen and c["gflops_all"] >= (1 - NEAR) * chosen["gflops_all"]]
    if chosen:
        why = (f"the fastest of the cores that OpenBLAS took and that computed correctly: "
               f"{chosen['gflops_all']:.1f} GFLOP/s over the shapes on {a.threads} thread(s)")
        if near:
            why += f"; within {NEAR:.0%} of it (the machine's noise): " + ", ".join(near)
    else:
        why = "no candidate core was taken by OpenBLAS and computed correctly"
    doc = {
        "format": "openblas-cores",
        "python": sys.executable,
        "openblas": os.path.realpath(openblas_path()),
        "detected": detected,
        "caller": caller,
        "threads": a.threads, "repeat": a.repeat, "rounds": a.rounds,
        "shapes": [label for label, *_ in SHAPES],
        "tolerance": "|c - c64| <= gamma_K (|A|.|B|) entry by entry, gamma_K = K u / (1 - K u), u = 2^-24",
        "cpu_flags_used": sorted({f for _, need in FLAG_CORES for f in need if f in flags}),
        "not_known_to_this_openblas": skipped,
        "cores": cores,
        "chosen": chosen["asked"] if chosen else None,
        "near": near,
        "why": why,
    }
    print(json.dumps(doc, indent=1))
    for c in cores:
        if c["corename"] is None:
            state = f"failed ({c['note']})"
        else:
            state = (("taken" if c["taken"] else f"not taken (OpenBLAS ran {c['corename']})") + ", "
                     + ("correct" if c["correct"] else "WRONG") + f" (largest error {c['max_error_over_bound']:.2g}"
                     f" of its bound), {c['gflops_all']:.1f} GFLOP/s")
        print(f"openblas_cores: {c['asked']} ({c['why_tried']}): {state}", file=sys.stderr)
    print(f"openblas_cores: chosen {doc['chosen']}: {why}", file=sys.stderr)
    return 0 if chosen else 1


if __name__ == "__main__":
    sys.exit(main())

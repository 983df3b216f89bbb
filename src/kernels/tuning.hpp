// The kernels' tuning: the GEMM's cache blocking and the sizes above which a
// parallel region pays. Plain constants (no xsimd), so that the plan and the
// operations can size scratch and decide on threads without the SIMD templates.
#pragma once

#include <cstddef>

namespace attntrace::simd {

// GEMM cache blocking (see simd/gemm_simd.hpp for the loops), sized for the
// caches measured here (Cascade Lake: L1d 32 KiB, L2 1 MiB per core, L3 35 MiB):
// K block: the A micro-panel (MR x kc, broadcast from) stays in L1 while the
// micro-kernel sweeps the B block: 14·384·4 = 21 KiB with AVX-512.
inline constexpr std::size_t kGemmKC = 384;
// N block: the packed B block (kc x kNC) stays in L2: 384·480·4 = 720 KiB.
// A multiple of every NR (32, 16, 8).
inline constexpr std::size_t kGemmNC = 480;
// M block: the packed A block (kMC x kc) stays in L3: 1680·384·4 = 2.5 MiB.
// A multiple of both MR values (14 and 6).
inline constexpr std::size_t kGemmMC = 1680;
inline constexpr std::size_t gemm_workspace_floats() { return kGemmMC * kGemmKC + kGemmKC * kGemmNC; }

// When a parallel region is worth its threads. Waking a sleeping thread (the
// program asks libgomp to let waiting threads sleep: src/cli/wait_policy.cpp)
// and meeting it at the region's end cost ~10 us here (one-query streaming
// attention over one key: 11 us on one thread, 21-23 us on two), and
// much more when another process holds the second core. A region pays when
// the call takes several times that on one thread, so that half of it saved
// covers the wake-up; smaller calls run on the calling thread. Measured with
// a loop timing each kernel on 1 and 2 threads, interleaved, median of 31
// calls (docs/performance.md, "Waiting threads"); the machine was shared,
// so two threads rarely won outright: these are break-even estimates.
//
// GEMM: the compute loop splits by MR-row panels, so a product of one panel
// (M <= MR: decode's one-row projections) never splits: the other thread
// could only pack B. 1 x 768 x 3072 took 0.64 ms on one thread, 0.78 on two;
// 14 x 3072 x 768 0.53 against 0.74. Above one panel, 2·M·K·N must exceed
// kGemmParallelFlops: ~40 us of work at ~100 GFLOP/s per core.
inline constexpr double kGemmParallelFlops = 4.0e6;
// Streaming attention: NH·ceil(Tq/Br) items, each a block of queries against
// up to T keys. Its time follows items·T·hs more than its flops (a block of
// one query costs nearly what a full one does): one query, 12 heads of 64,
// took 42 us over 64 keys (items·T·hs = 49152) and 77 us over 128 (98304).
// Split above kAttnParallelWork: calls of ~50 us and more.
inline constexpr double kAttnParallelWork = 65536;
// Element-wise passes and softmax rows: more than kParallelFloats floats
// (1 MiB of input; scale_div of 2^18 floats took 21 us on one thread).
inline constexpr std::size_t kParallelFloats = std::size_t{1} << 18;

}  // namespace attntrace::simd

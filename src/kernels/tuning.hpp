// The kernels' tuning: the GEMM's cache blocking and the sizes above which a
// parallel region pays. Plain constants (no xsimd), so that the plan and the
// operations can size scratch and decide on threads without the SIMD templates.
#pragma once

#include <cstddef>

namespace attntrace::simd {

// Outputs of at least this many bytes are stored past the caches
// (simd/stream_store.hpp): above L3 (35 MiB on the Cascade Lake) with room.
inline constexpr std::size_t kStreamBytes = std::size_t{64} << 20;

// The micro-kernel's register tile per instruction set (simd/gemm_simd.hpp):
// MR x 2 accumulators + 2 registers for the B row + 1 broadcast of A.
// AVX-512 (32 zmm): 14 x 2 + 3 = 31; AVX2 and SSE (16 registers): 6 x 2 + 3 = 15.
struct GemmTile {
    std::size_t mr = 0, nr = 0;
};
inline constexpr GemmTile kGemmTileAvx512{14, 32};
inline constexpr GemmTile kGemmTileAvx2{6, 16};
inline constexpr GemmTile kGemmTileSse{6, 8};

// The micro-kernel asks for its B panel this many k steps ahead (two cache
// lines a step: a 32-wide row of B is 128 bytes). The panel streams from L2,
// and the L1 prefetcher alone left the 14 x 32 tile at 145-159 GFLOP/s on
// the Xeon of 2026-11-27 (FMA peak 210): 167-175 with 16 steps (2 KiB)
// ahead; the products 1-3% faster (docs/performance.md). 8 steps ahead,
// tried earlier with another process on the other core, read within that
// run's noise of 16. (A row of B is 64 bytes with AVX2, 32 with SSE: there the
// second hint falls in the first's line.)
inline constexpr std::size_t kGemmPrefetchSteps = 16;

// The GEMM's cache blocks: K by kc, M by mc, N by nc (the loops and what each
// block is kept in: kernels/blocking.hpp, which derives them from the caches
// the machine reports).
struct GemmBlocking {
    std::size_t kc = 0, mc = 0, nc = 0;
};
// The fallback when the machine reports no cache sizes: measured on a Cascade
// Lake (L1d 32 KiB, L2 1 MiB per core, L3 35 MiB) on 2026-11-22. kc: the A
// micro-panel, 14·384·4 = 21 KiB; nc: the B block, 384·480·4 = 720 KiB;
// mc: the A block, 1680·384·4 = 2.5 MiB. mc a multiple of both MR (14, 6),
// nc of every NR (32, 16, 8).
inline constexpr GemmBlocking kGemmMeasured{384, 1680, 480};
// The packed blocks' scratch per thread (mc·kc + kc·nc floats), fixed so that
// the plan can count it without asking the machine: the measured blocking's,
// 3.2 MiB. A derived blocking is kept within it.
inline constexpr std::size_t kGemmWorkspaceFloats =
    kGemmMeasured.mc * kGemmMeasured.kc + kGemmMeasured.kc * kGemmMeasured.nc;
inline constexpr std::size_t gemm_workspace_floats() { return kGemmWorkspaceFloats; }

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
// GEMM: a product of one row panel (M <= MR: decode's one-row projections)
// stays on one thread: when the threads split row panels and shared the
// packed B, 1 x 768 x 3072 took 0.64 ms on one thread, 0.78 on two;
// 14 x 3072 x 768 0.53 against 0.74 (the threads now split columns for such
// shapes: not measured again). Above one panel, 2·M·K·N must exceed
// kGemmParallelFlops: ~40 us of work at ~100 GFLOP/s per core.
inline constexpr double kGemmParallelFlops = 4.0e6;
// GEMV (one row by a matrix: a decode step's products, gemv_simd.hpp): W's
// floats read once from memory, so its time is W's bytes over the read
// bandwidth (~15 GB/s a core here: 512 KiB of W take ~35 us). Split over
// the threads above kGemvParallelFloats floats of W: calls of a few wake-ups
// and more (GPT-2-small's 768 x 768 W^O, 590 K floats, is split; attention's
// per-head products over a short cache are not).
inline constexpr double kGemvParallelFloats = double(std::size_t{1} << 17);
// x·W holds a chunk of y's running sums in L1 while W's rows stream past:
// 4096 floats (16 KiB, beside the four rows' lines in flight on a 32 KiB L1).
inline constexpr std::size_t kGemvColumns = 4096;
// x·W reads 16 rows of W per pass over y's sums on AVX-512 up to this many
// columns (a chunk of sums in L1 then takes 16 rows' lines in flight), 8 beyond:
// measured in gemv_simd.hpp.
inline constexpr std::size_t kGemvNarrow = 1024;
// A GEMV split over the threads is cut in units the threads claim one at a
// time (gemv_simd.hpp): about kGemvUnitFloats of W each (256 KiB, ~20 us of
// reading), so that a thread that wakes late (~30 us in the KVM guest of
// 2026-12-07) still finds work and the threads end within a unit of each
// other. x·W's units are a K block's rows by a chunk of at least
// kGemvUnitColumns columns (4 KiB of each row, or the whole row): chunks of
// 128 or 256 columns balanced better but read 20-25% less a second on two
// threads (768 x 3072: 19 GB/s against 23-24; the Intel Xeon of 2026-12-07,
// docs/performance.md).
inline constexpr std::size_t kGemvUnitFloats = std::size_t{1} << 16;
inline constexpr std::size_t kGemvUnitColumns = 1024;
// The calling thread waits for the others' last units spinning this many
// pauses (~40 ns each), then yielding its core: the thread it waits for
// may be waiting for the core (a busy neighbour; docs/performance.md, "Waiting threads").
inline constexpr std::size_t kGemvSpinPauses = 2000;
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

// GEMM with xsimd: packed panels, cache blocking, an MR x NR register tile.
// Same math as matmul_ref / matmul_nt_ref (c = a·b, c = a·bᵀ); only the loops
// are reorganised, so sums run in another order (tests hold it to _ref within
// a tolerance scaled by √K).
//
// Blocking (Goto/BLIS, with the A block packed once for all of N; the block
// sizes come from the caches the machine reports: kernels/blocking.hpp):
//   for pc in K by kc:
//     for ic in M by mc:         pack a[ic:ic+mc, pc:pc+kc] into MR-tall panels  (L3)
//       for jc in N by nc:       pack b[pc:pc+kc, jc:jc+nc] into NR-wide panels  (L2)
//         for ir in mc by MR:    this A micro-panel stays in L1...
//           for jr in nc by NR:  ...while the B micro-panels stream from L2:
//             micro-kernel: c[MR x NR] += A_panel · B_panel
// The micro-kernel broadcasts A and loads B, so the A micro-panel is the one
// reused from L1 (as BLIS keeps its broadcast operand there). With B reused
// instead (jr outer), its 256 x 32 micro-panel filled all of L1: 56 GFLOP/s
// against 66-74 for this order (512 x 768 x 768, one core).
// Register budget of the micro-kernel: MR x 2 accumulators + 2 for the B row
// + 1 broadcast of A. AVX-512 (32 zmm): MR = 14 -> 28 + 3 = 31. AVX2 and SSE
// (16 registers): MR = 6 -> 12 + 3 = 15.
// Threads: C is cut into one part per thread (rows or columns: gemm_grid),
// and each thread runs the loops above on its part alone, packing into its
// own scratch. Packing is cheap beside the product (AVX-512: 16 x 16
// register transposes), so packing the shared operand twice costs less than
// the barriers a shared packed block needs (three per block, each a futex
// wake-up under the passive wait policy: src/cli/wait_policy.cpp).
#pragma once

#include <immintrin.h>

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>
#include <type_traits>
#include <xsimd/xsimd.hpp>

#include "kernels/simd/gemm_pack_simd.hpp"
#include "kernels/simd/kernels.hpp"
#include "kernels/simd/stream_store.hpp"

namespace attntrace::simd {

// Internal linkage on purpose: this header is compiled once per instruction
// set (arch/*.cpp), and a helper such as pack_a<6> instantiated in both the
// AVX2 and the SSE unit must not be merged by the linker into one copy built
// with AVX2 instructions.
namespace gemm_detail {
namespace {

template <class Arch>
struct Tile {
    using B = xsimd::batch<float, Arch>;
    static constexpr std::size_t W = B::size;
    static constexpr GemmTile kTile = W == 16 ? kGemmTileAvx512 : W == 8 ? kGemmTileAvx2 : kGemmTileSse;
    static constexpr std::size_t NR = kTile.nr;
    static constexpr std::size_t MR = kTile.mr;
    static_assert(NR == 2 * W, "the micro-kernel holds two B registers per row");
};

// acc + a·b, fused where the instruction set has FMA. xsimd 8.1 fuses
// xsimd::fma for fma3<avx2> (_mm256_fmadd_ps) but leaves AVX-512 to the
// compiler's contraction, which the build turns off (-ffp-contract=off):
// without this the AVX-512 micro-kernel runs mul + add and loses half its speed.
template <class Arch>
xsimd::batch<float, Arch> fmadd(xsimd::batch<float, Arch> a, xsimd::batch<float, Arch> b,
                                xsimd::batch<float, Arch> acc) {
    if constexpr (std::is_base_of_v<xsimd::avx512f, Arch>)
        return _mm512_fmadd_ps(a, b, acc);
    else
        return xsimd::fma(a, b, acc);  // fma3<avx2>: vfmadd; sse4_2: mul + add (no FMA there)
}

// c[m x n] (+)= A · bp over kc, m <= R <= MR rows computed, A read from a
// packed MR-panel (ap[k·MR + i]) or, Direct, in place from row-major a
// (a[i·lda + k], whole panels only). A partial tile (m < R or n < NR) goes
// through a local buffer so the loop itself never branches. R < MR for a
// last panel of few rows (M = 512 = 36·14 + 8: an 8-row kernel there does
// 8/14 of the full tile's multiply-adds).
// Stream: a whole tile's C rows are stored past the caches (stream_store.hpp;
// C rows aligned to the register width, as Gemm checks): for a C far larger
// than L3 that nothing reads back at once (the raw scores at n = 2048).
// bias: the tile's n columns of the bias, added after C's sum (the last K
// block's tile; nullptr otherwise).
template <class Arch, bool Direct = false, std::size_t R = Tile<Arch>::MR>
void micro_kernel(std::size_t kc, const float* ap, std::size_t lda, const float* bp, float* c, std::size_t ldc,
                  bool accumulate, std::size_t m, std::size_t n, bool stream = false, const float* bias = nullptr) {
    using T = Tile<Arch>;
    using B = typename T::B;
    constexpr std::size_t MR = T::MR, W = T::W, NR = T::NR;
    static_assert(R <= MR);
    B acc0[R], acc1[R];
    for (std::size_t i = 0; i < R; ++i) acc0[i] = acc1[i] = B(0.0f);
    // C's tile is read or written once, after the k loop: its lines are fetched now, behind the FMAs
    // (a streamed tile's are not fetched at all: fetching them is the read the stream avoids).
    if (!stream)
        for (std::size_t i = 0; i < m; ++i) {
            __builtin_prefetch(c + i * ldc, 1, 3);
            __builtin_prefetch(c + i * ldc + NR - 1, 1, 3);
        }
    for (std::size_t k = 0; k < kc; ++k) {
        // B's panel from L2, kGemmPrefetchSteps rows ahead (tuning.hpp); past its end the hints are dropped
        __builtin_prefetch(bp + kGemmPrefetchSteps * NR, 0, 3);
        __builtin_prefetch(bp + kGemmPrefetchSteps * NR + W, 0, 3);
        const B b0 = B::load_aligned(bp), b1 = B::load_aligned(bp + W);
#pragma GCC unroll 16
        for (std::size_t i = 0; i < R; ++i) {
            const B a(Direct ? ap[i * lda] : ap[i]);
            acc0[i] = fmadd<Arch>(a, b0, acc0[i]);
            acc1[i] = fmadd<Arch>(a, b1, acc1[i]);
        }
        ap += Direct ? 1 : MR;
        bp += NR;
    }
    if (m == R && n == NR) {
        const B bias0 = bias ? B::load_unaligned(bias) : B(0.0f), bias1 = bias ? B::load_unaligned(bias + W) : B(0.0f);
        for (std::size_t i = 0; i < R; ++i) {
            float* ci = c + i * ldc;
            if (accumulate) {
                acc0[i] = B::load_unaligned(ci) + acc0[i];  // C + the block's sum, as the scalar tail below
                acc1[i] = B::load_unaligned(ci + W) + acc1[i];
            }
            if (bias) {
                acc0[i] += bias0;
                acc1[i] += bias1;
            }
            if (stream) {
                store_stream<Arch>(acc0[i], ci);
                store_stream<Arch>(acc1[i], ci + W);
            } else {
                acc0[i].store_unaligned(ci);
                acc1[i].store_unaligned(ci + W);
            }
        }
        return;
    }
    alignas(64) float tile[R * NR];
    for (std::size_t i = 0; i < R; ++i) {
        acc0[i].store_aligned(tile + i * NR);
        acc1[i].store_aligned(tile + i * NR + W);
    }
    for (std::size_t i = 0; i < m; ++i)
        for (std::size_t j = 0; j < n; ++j) {
            const float sum = accumulate ? c[i * ldc + j] + tile[i * NR + j] : tile[i * NR + j];
            c[i * ldc + j] = bias ? sum + bias[j] : sum;
        }
}

// The micro-kernel for a packed panel of m <= MR rows: the 4- or 8-row one when it is enough.
template <class Arch>
void micro_kernel_packed(std::size_t kc, const float* ap, const float* bp, float* c, std::size_t ldc, bool accumulate,
                         std::size_t m, std::size_t n, bool stream, const float* bias) {
    constexpr std::size_t MR = Tile<Arch>::MR;
    if constexpr (MR > 4) {
        if (m <= 4) return micro_kernel<Arch, false, 4>(kc, ap, 0, bp, c, ldc, accumulate, m, n, stream, bias);
    }
    if constexpr (MR > 8) {
        if (m <= 8) return micro_kernel<Arch, false, 8>(kc, ap, 0, bp, c, ldc, accumulate, m, n, stream, bias);
    }
    micro_kernel<Arch>(kc, ap, 0, bp, c, ldc, accumulate, m, n, stream, bias);
}

inline std::size_t round_up(std::size_t x, std::size_t multiple) { return (x + multiple - 1) / multiple * multiple; }

// The block of `n` for a dimension cut into blocks of at most `most`
// (a multiple of `unit`): as many blocks as `most` needs, made equal, so that
// no thin last block pays a whole block's overhead (K = 3072 by kc = 432:
// 7 x 432 + 48, where each block reads and writes C once; now 8 x 384).
inline std::size_t balanced_block(std::size_t n, std::size_t most, std::size_t unit) {
    const std::size_t blocks = (n + most - 1) / most;
    return min_sz(most, round_up((n + blocks - 1) / blocks, unit));
}

// True when `rows` rows `ld` floats apart put more lines in one L1 set than
// its ways but one can hold, taking L1 as 64 sets of 64-byte lines, 8 ways
// (32 KiB; a 48 KiB 12-way L1 has 64 sets too). Such rows read side by
// side, as the in-place micro-kernel reads A, evict one another.
inline bool rows_crowd_l1(std::size_t ld, std::size_t rows) {
    constexpr std::size_t kSets = 64, kLine = 64, kWays = 8;
    const std::size_t bytes = ld * sizeof(float);
    if (bytes % kLine) return false;  // the rows' lines start at different offsets: spread over the sets
    const std::size_t step = bytes / kLine % kSets;
    const std::size_t sets = kSets / std::gcd(step, kSets);  // gcd(0, 64) = 64: all in one set
    return (rows + sets - 1) / sets > kWays - 1;
}

// All of B packed ahead by GemmPackB: for each K block pc (kc rows), every
// column's NR-panel, ld = round_up(N, NR) floats per row of the block; col0:
// the first column of this part of the product (a thread's part of C).
struct PackedB {
    const float* data = nullptr;
    std::size_t ld = 0, col0 = 0;
};

// The blocking a product runs with: blk, or kGemmMeasured when blk does not
// suit the tile; kc balanced over K (it fixes the order of the sums).
template <class Arch>
GemmBlocking blocking_for(GemmBlocking blk, std::size_t K) {
    using T = Tile<Arch>;
    if (blk.kc == 0 || blk.kc % 8 || blk.mc % T::MR || blk.nc % T::NR || blk.mc * blk.kc + blk.kc * blk.nc > kGemmWorkspaceFloats)
        blk = {kGemmMeasured.kc, kGemmMeasured.mc - kGemmMeasured.mc % T::MR, kGemmMeasured.nc};
    const std::size_t kc = balanced_block(K, blk.kc, 8);
    // A balanced kc below blk.kc leaves the A block its bytes: mc grows by
    // blk.kc / kc (what the L3 and workspace rules bound is mc·kc, the A
    // block, and kc·nc only shrinks). On a 48 KiB L1 the derived kc is 728,
    // and the workspace then caps mc at 490; K = 768 runs as 2 x 384, so
    // M = 512 was two row blocks, each packing every B block again. Now mc
    // is 924: one row block. Intel Xeon (2026-11-26), one thread, `bench
    // --tokens 512 --trace none`: docs/performance.md. The sums' order is
    // kc's alone: no result changes.
    if (kc < blk.kc) blk = {kc, std::max(blk.mc, blk.mc * blk.kc / kc / T::MR * T::MR), blk.nc};
    else blk.kc = kc;
    return blk;
}

// Whether n packed floats (a multiple of the register width) are all finite:
// |x| <= FLT_MAX is false for an infinity and a NaN. Read from L2, just packed.
template <class Arch>
bool panel_finite(const float* p, std::size_t n) {
    using V = xsimd::batch<float, Arch>;
    const V most(std::numeric_limits<float>::max());
    auto ok = xsimd::abs(V::load_aligned(p)) <= most;
    for (std::size_t i = V::size; i < n; i += V::size) ok = ok && (xsimd::abs(V::load_aligned(p + i)) <= most);
    return xsimd::all(ok);
}

// c = a·b (or a·bᵀ) on one thread: the loops of the header's comment over
// packed blocks in `work` (mc·kc + kc·nc floats of blk), kc given (it fixes
// the order of the sums: chosen from K alone, so that a C element is summed
// alike whichever thread and sub-product it falls in). S: B's elements as
// stored (gemm_pack_simd.hpp). check_b: each packed B block checked finite
// (panel_finite); false when one was not.
template <class Arch, class S>
bool gemm_one_thread(const float* a, std::size_t lda, const S* b, std::size_t ldb, bool b_transposed, float* c,
                     std::size_t ldc, std::size_t M, std::size_t K, std::size_t N, float* work, GemmBlocking blk,
                     std::size_t kKC, bool stream, const PackedB& packed, const float* bias, bool check_b) {
    bool finite = true;
    using T = Tile<Arch>;
    constexpr std::size_t MR = T::MR, NR = T::NR;
    const std::size_t kMC = balanced_block(M, blk.mc, MR), kNC = balanced_block(N, blk.nc, NR);
    float* ap = work;                // mc x kc, MR-panels
    float* bp = work + blk.mc * blk.kc;  // kc x nc, NR-panels
    // Narrow products (N <= 2·NR: attention's A·V with hs = 64) use each A
    // element for at most two micro-kernels: packing the A block then costs
    // as much memory traffic as the product, so the micro-kernel reads A in
    // place. Mix stage, n = 2048, one thread: 122 ms packed, 83-90 ms direct
    // (OpenBLAS's ratio to ours on the products alone: 0.67 -> 0.89).
    // Unless A's rows crowd into a few of L1's sets (a row of 1024 or 2048
    // floats: every row in one set): each MR-row panel is then packed just
    // before its micro-kernels, into an L1-sized buffer. 12 heads of
    // 2048 x 2048 x 64, one thread: 80 GFLOP/s in place, 89-90 packed by panel
    // (at n = 1280, 1536, 2000: 96 in place, 89 packed).
    const bool direct_a = N <= 2 * NR;
    // Each A panel packed just before its micro-kernels: the crowded narrow
    // products above, and any product of one column block (N <= nc: a part
    // of C split by columns between threads), whose packed A block would be
    // read once, after the B block had pushed it out of L2.
    const bool panel_a = direct_a ? rows_crowd_l1(lda, MR) : N <= kNC;
    for (std::size_t pc = 0; pc < K; pc += kKC) {
        const std::size_t kc = min_sz(kKC, K - pc);
        const bool last = stream && pc + kc == K;  // C's final values: streamed when asked
        const float* bias_k = pc + kc == K ? bias : nullptr;  // and the bias added to them
        for (std::size_t ic = 0; ic < M; ic += kMC) {
            const std::size_t mc = min_sz(kMC, M - ic);
            // A block packed once for every jc (it was packed again for each of N/kNC column blocks: 7 times for
            // the FFN's 768 x 3072, ~15% of the product's time).
            if (!direct_a && !panel_a) pack_a<Arch, MR>(a + ic * lda + pc, lda, mc, kc, ap);
            for (std::size_t jc = 0; jc < N; jc += kNC) {
                const std::size_t nc = min_sz(kNC, N - jc);
                // B's block: packed now, or where the caller packed all of B (gemm_pack_b's layout)
                const float* bpc = packed.data ? packed.data + pc * packed.ld + (packed.col0 + jc) * kc : bp;
                if (!packed.data) {
                    pack_b<Arch, NR>(b_transposed ? b + jc * ldb + pc : b + pc * ldb + jc, ldb, b_transposed, kc, nc, bp);
                    if (check_b && finite) finite = panel_finite<Arch>(bp, kc * round_up(nc, NR));
                }
                for (std::size_t ir = 0; ir < mc; ir += MR) {
                    const std::size_t m = min_sz(MR, mc - ir);
                    const float* ai = a + (ic + ir) * lda + pc;
                    const float* api = panel_a ? ap : ap + ir * kc;
                    // Direct: whole MR-row panels straight from a; a last, partial one (or each, panel_a) packed.
                    if (panel_a || (direct_a && m < MR)) pack_a<Arch, MR>(ai, lda, m, kc, ap);
                    for (std::size_t jr = 0; jr < nc; jr += NR) {
                        float* cij = c + (ic + ir) * ldc + jc + jr;
                        const float* bij = bias_k ? bias_k + jc + jr : nullptr;
                        if (direct_a && m == MR && !panel_a)
                            micro_kernel<Arch, true>(kc, ai, lda, bpc + jr * kc, cij, ldc, pc > 0, m, min_sz(NR, nc - jr),
                                                     last, bij);
                        else
                            micro_kernel_packed<Arch>(kc, direct_a ? ap : api, bpc + jr * kc, cij, ldc, pc > 0, m,
                                                      min_sz(NR, nc - jr), last, bij);
                    }
                }
            }
        }
    }
    return finite;
}

// How `threads` threads split C: a grid of tm x tn parts (tm·tn = threads),
// each part a whole product on its thread, packing its own A rows and B
// columns in its own scratch, with no barrier but the region's end. A
// thread's time is taken as its part's micro-kernel work (whole MR x NR
// tiles, so a grid that leaves one thread an extra panel pays for it) plus
// what it packs: kGemmPackCost tile-k steps per float packed (packing
// 512 x 768 took 0.04 ms with the data in cache, ~0.1 ns a float, against
// ~0.02 ns for a multiply-add lane at ~100 GFLOP/s: 5, and more from memory).
// Split N, each thread packs all of A; split M, all of B. A counts twice
// when N is split: both threads then stream all of A at once, and each
// one's A block, as tall as A, no longer fits its L2 beside its B block.
// Measured (each thread's part timed alone, thread CPU time, best of 9;
// one-thread time over the slower part's): 512 x 768 x 768 1.96 split N,
// 1.91 split M; 2048 x 3072 x 768 1.93 and 2.01; 12 heads of 512 x 64 x 512
// (scores) 1.86 and 1.96. A read in place (narrow N) counts as packed:
// split N, each thread would read all of it for one column panel (12 heads
// of 2048 x 2048 x 64: 1.65 split N, 2.04-2.06 split M).
inline constexpr double kGemmPackCost = 8.0;
struct Grid {
    std::size_t tm = 1, tn = 1;
};
inline Grid gemm_grid(std::size_t threads, std::size_t M, std::size_t K, std::size_t N, std::size_t MR,
                      std::size_t NR) {
    const std::size_t Pm = (M + MR - 1) / MR, Pn = (N + NR - 1) / NR;
    Grid best;
    double best_cost = -1.0;
    for (std::size_t tm = 1; tm <= threads; ++tm) {
        if (threads % tm) continue;
        const std::size_t tn = threads / tm;
        const double rows = static_cast<double>((Pm + tm - 1) / tm * MR), cols = static_cast<double>((Pn + tn - 1) / tn * NR);
        const double packed = rows * K * (tn > 1 ? 2.0 : 1.0) + K * cols;
        const double cost = rows * cols * K + kGemmPackCost * packed;
        if (best_cost < 0 || cost < best_cost) best = {tm, tn}, best_cost = cost;
    }
    return best;
}

// The parallel region of Gemm below, over B's elements as stored (S).
template <class Arch, class S>
void gemm_threads(const float* a, std::size_t lda, const S* b, std::size_t ldb, bool b_transposed, float* c,
                  std::size_t ldc, std::size_t M, std::size_t K, std::size_t N, float* (*workspace)(), GemmBlocking blk,
                  bool stream, const GemmOptions& opt) {
    using T = Tile<Arch>;
    constexpr std::size_t MR = T::MR, NR = T::NR;
    // Each thread computes a part of C, so every C element is summed by one
    // thread in the same k order whatever the number of threads: the result
    // does not depend on it. Inside another parallel region (attention's
    // heads) this runs on the calling thread. Small products, and those of
    // one row panel, stay on one thread (kGemmParallelFlops).
    const bool parallel = M > MR && 2.0 * static_cast<double>(M) * K * N > kGemmParallelFlops;
#pragma omp parallel if (parallel)
    {
        const std::size_t threads = static_cast<std::size_t>(omp_get_num_threads());
        const std::size_t t = static_cast<std::size_t>(omp_get_thread_num());
        const Grid g = gemm_grid(threads, M, K, N, MR, NR);
        const std::size_t Pm = (M + MR - 1) / MR, Pn = (N + NR - 1) / NR;
        const std::size_t i = t / g.tn, j = t % g.tn;
        const std::size_t m0 = min_sz(M, i * Pm / g.tm * MR), m1 = min_sz(M, (i + 1) * Pm / g.tm * MR);
        const std::size_t n0 = min_sz(N, j * Pn / g.tn * NR), n1 = min_sz(N, (j + 1) * Pn / g.tn * NR);
        if (m0 < m1 && n0 < n1 &&
            !gemm_one_thread<Arch, S>(a + m0 * lda, lda, !b ? b : b_transposed ? b + n0 * ldb : b + n0, ldb, b_transposed,
                                      c + m0 * ldc + n0, ldc, m1 - m0, K, n1 - n0, workspace(), blk, blk.kc, stream,
                                      PackedB{opt.b_packed, round_up(N, NR), n0}, opt.bias ? opt.bias + n0 : nullptr,
                                      opt.b_not_finite != nullptr))
            __atomic_store_n(opt.b_not_finite, true, __ATOMIC_RELAXED);  // only ever set: any thread's finding stands
        if (stream) _mm_sfence();  // this thread's streamed stores land before the region ends
    }
}

// B packed whole (GemmPackB), from its elements as stored.
template <class Arch, class S>
void pack_b_whole(const S* b, std::size_t ldb, bool b_transposed, std::size_t K, std::size_t N, GemmBlocking blk,
                  float* out) {
    constexpr std::size_t NR = Tile<Arch>::NR;
    blk = blocking_for<Arch>(blk, K);
    const std::size_t ld = round_up(N, NR);
    for (std::size_t pc = 0; pc < K; pc += blk.kc) {
        const std::size_t kc = min_sz(blk.kc, K - pc);
        pack_b<Arch, NR>(b_transposed ? b + pc : b + pc * ldb, ldb, b_transposed, kc, N, out + pc * ld);
    }
}

}  // namespace
}  // namespace gemm_detail

template <class Arch>
void Gemm::operator()(Arch, const float* a, std::size_t lda, const float* b, std::size_t ldb, bool b_transposed,
                      float* c, std::size_t ldc, std::size_t M, std::size_t K, std::size_t N, float* (*workspace)(),
                      GemmBlocking blk, GemmOptions opt) const {
    using namespace gemm_detail;
    using T = Tile<Arch>;
    if (K == 0) {  // the empty sum, then the bias as the pass after it would add it
        for (std::size_t i = 0; i < M; ++i)
            for (std::size_t j = 0; j < N; ++j) c[i * ldc + j] = opt.bias ? 0.0f + opt.bias[j] : 0.0f;
        return;
    }
    // The blocking must suit this tile (kernels/blocking.hpp: gemm_blocking_valid); else the measured one.
    blk = blocking_for<Arch>(blk, K);
    // Streamed stores need every whole tile's rows aligned: C and its row stride
    // a multiple of the register width (tiles start at multiples of NR columns).
    constexpr std::size_t W = T::W;
    const bool stream = opt.stream_c && reinterpret_cast<std::uintptr_t>(c) % (W * sizeof(float)) == 0 && ldc % W == 0;
    switch (opt.b_stored && !opt.b_packed ? opt.b_type : StoredType::f32) {
        case StoredType::bf16:
            return gemm_threads<Arch>(a, lda, static_cast<const Bf16*>(opt.b_stored), ldb, b_transposed, c, ldc, M, K, N,
                                      workspace, blk, stream, opt);
        case StoredType::f16:
            return gemm_threads<Arch>(a, lda, static_cast<const Half*>(opt.b_stored), ldb, b_transposed, c, ldc, M, K, N,
                                      workspace, blk, stream, opt);
        case StoredType::f32:
            return gemm_threads<Arch>(a, lda, opt.b_stored ? static_cast<const float*>(opt.b_stored) : b, ldb,
                                      b_transposed, c, ldc, M, K, N, workspace, blk, stream, opt);
    }
}

template <class Arch>
void GemmPackB::operator()(Arch, const float* b, std::size_t ldb, bool b_transposed, std::size_t K, std::size_t N,
                           GemmBlocking blk, float* out) const {
    gemm_detail::pack_b_whole<Arch>(b, ldb, b_transposed, K, N, blk, out);
}

template <class Arch>
void GemmPackBStored::operator()(Arch, const void* b, StoredType type, std::size_t ldb, bool b_transposed, std::size_t K,
                                 std::size_t N, GemmBlocking blk, float* out) const {
    using namespace gemm_detail;
    switch (type) {
        case StoredType::bf16: return pack_b_whole<Arch>(static_cast<const Bf16*>(b), ldb, b_transposed, K, N, blk, out);
        case StoredType::f16: return pack_b_whole<Arch>(static_cast<const Half*>(b), ldb, b_transposed, K, N, blk, out);
        case StoredType::f32: return pack_b_whole<Arch>(static_cast<const float*>(b), ldb, b_transposed, K, N, blk, out);
    }
}

template <class Arch>
double GemmMicroKernel::operator()(Arch, std::size_t kc, std::size_t mc, std::size_t nc, const float* ap, const float* bp,
                                   float* c, std::size_t ldc) const {
    using T = gemm_detail::Tile<Arch>;
    constexpr std::size_t MR = T::MR, NR = T::NR;
    for (std::size_t ir = 0; ir + MR <= mc; ir += MR)
        for (std::size_t jr = 0; jr + NR <= nc; jr += NR)
            gemm_detail::micro_kernel<Arch>(kc, ap + ir * kc, 0, bp + jr * kc, c + ir * ldc + jr, ldc, false, MR, NR);
    return 2.0 * static_cast<double>(mc / MR * MR) * static_cast<double>(nc / NR * NR) * static_cast<double>(kc);
}

template <class Arch>
double PeakFma::operator()(Arch, std::size_t iterations) const {
    using B = xsimd::batch<float, Arch>;
    // 12 independent accumulators hide the FMA latency (4 cycles) on 2 ports.
    constexpr int kChains = 12;
    B acc[kChains];
    for (int i = 0; i < kChains; ++i) acc[i] = B(0.001f * static_cast<float>(i));
    const B x(0.9999999f), y(1e-7f);
    for (std::size_t it = 0; it < iterations; ++it)
#pragma GCC unroll 12
        for (int i = 0; i < kChains; ++i) acc[i] = gemm_detail::fmadd<Arch>(acc[i], x, y);
    // Keep the result alive so the loop is not removed.
    B sum = acc[0];
    for (int i = 1; i < kChains; ++i) sum += acc[i];
    volatile float sink = xsimd::hadd(sum);
    (void)sink;
    return 2.0 * B::size * kChains * static_cast<double>(iterations);
}

}  // namespace attntrace::simd

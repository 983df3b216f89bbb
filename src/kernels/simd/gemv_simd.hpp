// GEMV with xsimd: one row times a matrix, y = x·W + b or x·Wᵀ + b (gemv_ref),
// the products of a decode step (one new token's row against every weight).
//
// The GEMM (gemm_simd.hpp) packs B to reuse each packed float across the MR
// rows of an A panel; with one row there is nothing to reuse, and a decode
// token packed every weight again. Here W streams from memory once:
//   x·W:  for each K block, the block's rows of W read in order, a chunk of
//         y's columns at a time held in L1 (8 or 16 rows of W per pass over it);
//   x·Wᵀ: each NR rows of W (NR of y's columns) transposed into an L1 panel
//         one K block at a time (the GEMM's pack_b), then the GEMM's own
//         micro-kernel with one row.
// The sums are the GEMM's, element by element: K cut into the same kc blocks
// (blocking_for), each block's sum from 0 over k ascending with the same
// fused multiply-add (mul + add on SSE), then y + the block's sum, and the
// bias after the last block. So a row of x·W here is the GEMM's row bit for
// bit (tests/test_simd_kernels.cpp), and a decode step's products equal the
// causal run's rows: the decode's check (kDecodeTol) sees no new rounding.
// Threads claim units of W one at a time (Gemv below): x·Wᵀ runs of NR
// panels of y's columns; x·W a K block by a chunk of columns, each block's
// sums kept and then added in block order. Every sum runs in the same order
// whatever their number and whoever computes it: the result does not depend on it.
#pragma once

#include <omp.h>

#include <sched.h>

#include <atomic>
#include <cmath>
#include <type_traits>
#include <vector>
#include <xsimd/xsimd.hpp>

#include "kernels/crew.hpp"
#include "kernels/simd/gemm_simd.hpp"
#include "kernels/simd/kernels.hpp"

namespace attntrace::simd {

namespace gemm_detail {
namespace {  // internal linkage, as gemm_simd.hpp's helpers

// acc + a·b on one float, rounded as fmadd<Arch> rounds each lane: fused
// where the instruction set has FMA, a product then a sum on SSE.
template <class Arch>
float fmadd1(float a, float b, float acc) {
    if constexpr (std::is_base_of_v<xsimd::avx512f, Arch> || std::is_base_of_v<xsimd::fma3<xsimd::avx2>, Arch>)
        return std::fma(a, b, acc);
    else
        return a * b + acc;
}

// acc[0, n) = Σ_{k < kc} x[k]·W[k, 0..n) from 0, k ascending: one K block of
// x·W for n columns, acc in L1 (n <= kGemvColumns). R rows of W per pass over
// acc, their x[k] held in registers: each acc register loaded and stored once
// per R rows, summed in k order. The more rows a pass reads, the fewer
// passes over acc, and the closer W streams to a plain sum's rate: 40
// matrices on the EPYC of 2026-11-29, one thread, a sum at 22-24 GB/s:
// 768 x 768 at 15.7 GB/s with 4 rows, 18.2 with 8, 21.2 with 16; 768 x 3072
// at 20.5, 23 and 21 (AVX-512; x's registers: 16 of its 32).
template <class Arch, std::size_t R>
void gemv_block_rows(const float* x, const float* W, std::size_t ldw, std::size_t kc, std::size_t n, float* acc) {
    using B = xsimd::batch<float, Arch>;
    constexpr std::size_t V = B::size;
    const std::size_t nv = n / V * V;
    for (std::size_t j = 0; j < n; ++j) acc[j] = 0.0f;
    std::size_t k = 0;
    for (; k + R <= kc; k += R) {
        const float* w = W + k * ldw;
        B xs[R];
        for (std::size_t r = 0; r < R; ++r) xs[r] = B(x[k + r]);
        for (std::size_t j = 0; j < nv; j += V) {
            B a = B::load_unaligned(acc + j);
#pragma GCC unroll 16
            for (std::size_t r = 0; r < R; ++r) a = fmadd<Arch>(xs[r], B::load_unaligned(w + r * ldw + j), a);
            a.store_unaligned(acc + j);
        }
        for (std::size_t j = nv; j < n; ++j) {
            float a = acc[j];
            for (std::size_t r = 0; r < R; ++r) a = fmadd1<Arch>(x[k + r], w[r * ldw + j], a);
            acc[j] = a;
        }
    }
    for (; k < kc; ++k) {
        const float* w0 = W + k * ldw;
        const B x0(x[k]);
        for (std::size_t j = 0; j < nv; j += V)
            fmadd<Arch>(x0, B::load_unaligned(w0 + j), B::load_unaligned(acc + j)).store_unaligned(acc + j);
        for (std::size_t j = nv; j < n; ++j) acc[j] = fmadd1<Arch>(x[k], w0[j], acc[j]);
    }
}

// gemv_block_rows with 16 rows a pass for narrow W on AVX-512 (its 32 registers hold x's 16), else 8.
template <class Arch>
void gemv_block(const float* x, const float* W, std::size_t ldw, std::size_t kc, std::size_t n, float* acc) {
    if constexpr (std::is_base_of_v<xsimd::avx512f, Arch>) {
        if (n <= kGemvNarrow) return gemv_block_rows<Arch, 16>(x, W, ldw, kc, n, acc);
    }
    gemv_block_rows<Arch, 8>(x, W, ldw, kc, n, acc);
}

// y[0, n) = x·W + b over n columns of W (K, ·) ld ldw, on the calling thread; `acc`: kGemvColumns floats.
template <class Arch>
void gemv_columns(const float* x, const float* W, std::size_t ldw, const float* bias, float* y, std::size_t K,
                  std::size_t n, std::size_t kKC, float* acc) {
    for (std::size_t j0 = 0; j0 < n; j0 += kGemvColumns) {
        const std::size_t cols = min_sz(kGemvColumns, n - j0);
        for (std::size_t pc = 0; pc < K; pc += kKC) {
            const std::size_t kc = min_sz(kKC, K - pc);
            gemv_block<Arch>(x + pc, W + pc * ldw + j0, ldw, kc, cols, acc);
            // y + the block's sum (the GEMM's C + tile), then the bias after the last block
            float* yj = y + j0;
            if (pc == 0) for (std::size_t j = 0; j < cols; ++j) yj[j] = acc[j];
            else for (std::size_t j = 0; j < cols; ++j) yj[j] = yj[j] + acc[j];
            if (bias && pc + kc == K)
                for (std::size_t j = 0; j < cols; ++j) yj[j] = yj[j] + bias[j0 + j];
        }
    }
}

// y[0, n) = x·Wᵀ + b over n rows of W (·, K) ld ldw, on the calling thread: each NR rows' K block
// packed (pack_b, bᵀ) into `panel` (kc·NR floats), then the micro-kernel of one row.
template <class Arch>
void gemv_t_rows(const float* x, const float* W, std::size_t ldw, const float* bias, float* y, std::size_t K,
                 std::size_t n, std::size_t kKC, float* panel) {
    constexpr std::size_t NR = Tile<Arch>::NR;
    for (std::size_t j = 0; j < n; j += NR) {
        const std::size_t cols = min_sz(NR, n - j);
        for (std::size_t pc = 0; pc < K; pc += kKC) {
            const std::size_t kc = min_sz(kKC, K - pc);
            pack_b<Arch, NR>(W + j * ldw + pc, ldw, true, kc, cols, panel);
            micro_kernel<Arch, true, 1>(kc, x + pc, 0, panel, y + j, 0, pc > 0, 1, cols, false,
                                        bias && pc + kc == K ? bias + j : nullptr);
        }
    }
}

// Waits (spinning, then yielding the core) until `done` reaches `total`:
// the other threads' last units of a GEMV, a few microseconds when they run.
inline void wait_units(const std::atomic<std::size_t>& done, std::size_t total) {
    for (std::size_t spins = 0; done.load(std::memory_order_acquire) < total; ++spins) {
        if (spins < kGemvSpinPauses) _mm_pause();
        else sched_yield();  // the thread it waits for may be waiting for this core
    }
}

}  // namespace
}  // namespace gemm_detail

template <class Arch>
void Gemv::operator()(Arch, const float* x, const float* W, std::size_t ldw, bool w_transposed, const float* bias,
                      float* y, std::size_t K, std::size_t N, float* (*workspace)(), GemmBlocking blk) const {
    using namespace gemm_detail;
    using T = Tile<Arch>;
    if (N == 0) return;
    if (K == 0) {  // the empty sum, then the bias, as the GEMM
        for (std::size_t j = 0; j < N; ++j) y[j] = bias ? 0.0f + bias[j] : 0.0f;
        return;
    }
    const std::size_t kc = blocking_for<Arch>(blk, K).kc;  // the GEMM's K blocks: its order of the sums
    const std::size_t unit = w_transposed ? T::NR : T::W;
    Crew* crew = Crew::leading();  // a decode's threads, kept awake (kernels/crew.hpp): its units go to them
    const bool parallel = static_cast<double>(K) * static_cast<double>(N) > kGemvParallelFloats && N > unit &&
                          (crew ? crew->size() > 1 : omp_get_max_threads() > 1 && !omp_in_parallel());
    if (!parallel) {
        if (w_transposed) gemv_t_rows<Arch>(x, W, ldw, bias, y, K, N, kc, workspace());
        else gemv_columns<Arch>(x, W, ldw, bias, y, K, N, kc, workspace());
        return;
    }
    // Split over the threads in units claimed one at a time from a counter,
    // so that the calling thread starts at once and the others join when
    // they wake (~30 us in a KVM guest whose idle vCPUs halt: docs/performance.md,
    // 2026-12-07), and all end within a unit of each other. The calling thread
    // then waits for the last unit spinning, not asleep (libgomp's barrier
    // puts it to sleep when it arrives first, and waking it costs as much again),
    // and arrives last at the region's end. A unit's sums do not depend on
    // the thread that computes it:
    //   x·Wᵀ: NR-panels of y's columns (W's rows), each y[j] summed whole as on one thread;
    //   x·W:  (K block b, chunk of columns): the block's sums (from 0, k ascending)
    //         kept in S (nb, N), then y = S[0] + S[1] + ... + bias in block order,
    //         by the calling thread once every unit is done: the GEMM's order.
    const std::size_t nb = (K + kc - 1) / kc;  // K blocks
    std::size_t cols = 0, per_block = 1, total = 0;
    if (w_transposed) {
        cols = round_up(std::max<std::size_t>(1, kGemvUnitFloats / K), T::NR);  // W's rows per unit
        total = (N + cols - 1) / cols;
    } else {
        cols = std::min(std::max(round_up(kGemvUnitFloats / kc, T::W), kGemvUnitColumns), kGemvColumns);
        per_block = (N + cols - 1) / cols;
        total = nb * per_block;
    }
    thread_local std::vector<float> block_sums;  // S, the calling thread's
    if (!w_transposed && block_sums.size() < nb * N) block_sums.resize(nb * N);
    float* S = w_transposed ? nullptr : block_sums.data();
    std::atomic<std::size_t> next{0}, done{0};
    auto units = [&] {  // claims units until none is left
        float* work = workspace();
        for (std::size_t u; (u = next.fetch_add(1, std::memory_order_relaxed)) < total;) {
            if (w_transposed) {
                const std::size_t j0 = u * cols, n = min_sz(cols, N - j0);
                gemv_t_rows<Arch>(x, W + j0 * ldw, ldw, bias ? bias + j0 : nullptr, y + j0, K, n, kc, work);
            } else {
                const std::size_t b = u / per_block, j0 = u % per_block * cols, pc = b * kc;
                gemv_block<Arch>(x + pc, W + pc * ldw + j0, ldw, min_sz(kc, K - pc), min_sz(cols, N - j0), S + b * N + j0);
            }
            done.fetch_add(1, std::memory_order_release);
        }
    };
    if (crew) {
        crew->all([](void* f) { (*static_cast<decltype(units)*>(f))(); }, &units);  // returns when every unit is done
    } else {
#pragma omp parallel
        {
            units();
            if (omp_get_thread_num() == 0) wait_units(done, total);
        }
    }
    if (!w_transposed) {  // the calling thread, every unit done: y = S[0] + S[1] + ... + bias, the GEMM's order
        for (std::size_t j = 0; j < N; ++j) y[j] = S[j];
        for (std::size_t b = 1; b < nb; ++b)
            for (std::size_t j = 0; j < N; ++j) y[j] = y[j] + S[b * N + j];
        if (bias)
            for (std::size_t j = 0; j < N; ++j) y[j] = y[j] + bias[j];
    }
}

}  // namespace attntrace::simd

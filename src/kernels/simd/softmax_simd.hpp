// Row softmax with xsimd. Same math as softmax_rows_ref (three passes,
// internals recorded, fully masked rows all 0); only the loops are vectorised,
// exp is xsimd::exp (within 1-2 ulp of std::exp), and the row sum adds lane by
// lane before the horizontal sum.
//
// The three kernels here (SoftmaxRows, which writes every internal;
// SoftmaxRowsInPlace, which writes only m, s and the weights; ExpRows, the
// exps of given shifted scores) share the row helpers below, so a trace that
// derives the shifted scores and exps (trace/derived.hpp) reads the numbers
// SoftmaxRows would have written, bit for bit: each row is split into the
// same lanes and scalar tail whatever the kernel.
#pragma once

#include <limits>
#include <xsimd/xsimd.hpp>

#include "kernels/simd/kernels.hpp"
#include "kernels/simd/stream_store.hpp"

namespace attntrace::simd {

namespace softmax_row {

// m = max_j x[j]   (lanes, then the lanes' max, then the tail)   x: (cols)
template <class Arch>
float max(const float* x, std::size_t cols) {
    using B = xsimd::batch<float, Arch>;
    constexpr std::size_t W = B::size;
    const std::size_t full = cols - cols % W;
    B vmax(-std::numeric_limits<float>::infinity());
    for (std::size_t j = 0; j < full; j += W) vmax = xsimd::max(vmax, B::load_unaligned(x + j));
    alignas(64) float lanes[W];
    vmax.store_aligned(lanes);
    float m = -std::numeric_limits<float>::infinity();
    for (std::size_t l = 0; l < W; ++l) m = lanes[l] > m ? lanes[l] : m;
    for (std::size_t j = full; j < cols; ++j) m = x[j] > m ? x[j] : m;  // tail
    return m;
}

// shifted = x - m (when `shifted` is not null);  e = exp(x - m);  returns s = Σ e
// (lane sums, their horizontal sum, then the tail). x may be e (in place).
template <class Arch>
float shift_exp_sum(const float* x, float m, float* shifted, bool stream, float* e, std::size_t cols) {
    using B = xsimd::batch<float, Arch>;
    constexpr std::size_t W = B::size;
    const std::size_t full = cols - cols % W;
    const B vm(m);
    B vsum(0.0f);
    for (std::size_t j = 0; j < full; j += W) {
        const B s = B::load_unaligned(x + j) - vm;
        const B ex = xsimd::exp(s);
        if (shifted) {
            if (stream) store_stream<Arch>(s, shifted + j);
            else s.store_unaligned(shifted + j);
        }
        ex.store_unaligned(e + j);
        vsum += ex;
    }
    float sum = xsimd::hadd(vsum);
    for (std::size_t j = full; j < cols; ++j) {  // tail
        const float s = x[j] - m;
        if (shifted) shifted[j] = s;
        e[j] = std::exp(s);
        sum += e[j];
    }
    return sum;
}

// e = exp(x), the lanes and tail of shift_exp_sum   x, e: (cols)
template <class Arch>
void exp(const float* x, float* e, std::size_t cols) {
    using B = xsimd::batch<float, Arch>;
    constexpr std::size_t W = B::size;
    const std::size_t full = cols - cols % W;
    for (std::size_t j = 0; j < full; j += W) xsimd::exp(B::load_unaligned(x + j)).store_unaligned(e + j);
    for (std::size_t j = full; j < cols; ++j) e[j] = std::exp(x[j]);
}

// out = e / s   (e may be out)
template <class Arch>
void divide(const float* e, float s, bool stream, float* out, std::size_t cols) {
    using B = xsimd::batch<float, Arch>;
    constexpr std::size_t W = B::size;
    const std::size_t full = cols - cols % W;
    const B vs(s);
    for (std::size_t j = 0; j < full; j += W) {
        if (stream) store_stream<Arch>(B::load_unaligned(e + j) / vs, out + j);
        else (B::load_unaligned(e + j) / vs).store_unaligned(out + j);
    }
    for (std::size_t j = full; j < cols; ++j) out[j] = e[j] / s;  // tail
}

// Outputs far larger than L3 bypass the caches (see stream_store.hpp), only
// when every row starts aligned: big steps are 2 MiB-aligned.
template <class Arch>
bool streams(std::size_t rows, std::size_t cols, std::initializer_list<const float*> outputs) {
    constexpr std::size_t W = xsimd::batch<float, Arch>::size;
    if (rows * cols * sizeof(float) < kStreamBytes || cols % W != 0) return false;
    for (const float* p : outputs)
        if (reinterpret_cast<std::uintptr_t>(p) % (W * sizeof(float)) != 0) return false;
    return true;
}

}  // namespace softmax_row

template <class Arch>
std::size_t SoftmaxRows::operator()(Arch, const float* x, std::size_t rows, std::size_t cols, float* row_max,
                                    float* shifted, float* e, float* row_sum, float* out) const {
    const float neg_inf = -std::numeric_limits<float>::infinity();
    std::size_t empty_rows = 0;
    // Shifted scores and weights stream past the caches when huge; e stays
    // cached, as pass 3 reads it back at once.
    const bool stream = softmax_row::streams<Arch>(rows, cols, {shifted, out});
    // Rows are independent: split across threads when there is enough work (kParallelFloats, kernels.hpp).
#pragma omp parallel for schedule(static) reduction(+ : empty_rows) if (rows * cols > kParallelFloats)
    for (std::size_t i = 0; i < rows; ++i) {
        const float* xi = x + i * cols;
        float* si = shifted + i * cols;
        float* ei = e + i * cols;
        float* oi = out + i * cols;
        const float m = softmax_row::max<Arch>(xi, cols);  // pass 1
        row_max[i] = m;
        if (m == neg_inf) {  // every key masked: no distribution, all 0 (never NaN)
            ++empty_rows;
            for (std::size_t j = 0; j < cols; ++j) si[j] = neg_inf, ei[j] = 0.0f, oi[j] = 0.0f;
            row_sum[i] = 0.0f;
            continue;
        }
        const float s = softmax_row::shift_exp_sum<Arch>(xi, m, si, stream, ei, cols);  // pass 2
        row_sum[i] = s;
        softmax_row::divide<Arch>(ei, s, stream, oi, cols);  // pass 3
        if (stream) _mm_sfence();  // this thread's streamed stores land before the region ends
    }
    return empty_rows;
}

template <class Arch>
std::size_t SoftmaxRowsInPlace::operator()(Arch, float* x, std::size_t rows, std::size_t cols, float* row_max,
                                           float* row_sum) const {
    const float neg_inf = -std::numeric_limits<float>::infinity();
    std::size_t empty_rows = 0;
    // The exps are written over x and read back at once; only the weights may stream.
    const bool stream = softmax_row::streams<Arch>(rows, cols, {x});
#pragma omp parallel for schedule(static) reduction(+ : empty_rows) if (rows * cols > kParallelFloats)
    for (std::size_t i = 0; i < rows; ++i) {
        float* xi = x + i * cols;
        const float m = softmax_row::max<Arch>(xi, cols);
        row_max[i] = m;
        if (m == neg_inf) {
            ++empty_rows;
            for (std::size_t j = 0; j < cols; ++j) xi[j] = 0.0f;
            row_sum[i] = 0.0f;
            continue;
        }
        const float s = softmax_row::shift_exp_sum<Arch>(xi, m, nullptr, false, xi, cols);
        row_sum[i] = s;
        softmax_row::divide<Arch>(xi, s, stream, xi, cols);
        if (stream) _mm_sfence();
    }
    return empty_rows;
}

template <class Arch>
void ExpRows::operator()(Arch, const float* x, float* e, std::size_t rows, std::size_t cols) const {
#pragma omp parallel for schedule(static) if (rows * cols > kParallelFloats)
    for (std::size_t i = 0; i < rows; ++i) softmax_row::exp<Arch>(x + i * cols, e + i * cols, cols);
}

}  // namespace attntrace::simd

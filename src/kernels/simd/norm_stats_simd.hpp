// LayerNorm's and RMSNorm's row statistics (row_mean_ref, row_var_ref,
// row_mean_square_ref in layernorm.hpp), bit for bit: each row's sum runs in
// double over c ascending exactly as the _ref's does. One row alone waits on
// every add's latency (a chain of C dependent adds); kRows rows side by side
// give the adds kRows independent chains, which is the whole gain. The order
// of each row's terms is the definition (explain recomputes it), so no lane
// splits a row.
#pragma once

#include <xsimd/xsimd.hpp>

#include "kernels/simd/kernels.hpp"
#include "kernels/simd/parallel.hpp"

namespace attntrace::simd {

namespace norm_detail {
namespace {  // internal linkage: compiled once per instruction set (see gemm_simd.hpp)

// Rows side by side: 8 chains cover the 4-cycle latency of two add ports.
constexpr std::size_t kRows = 8;

// out[i] = final(Σ_c term(i, x[i, c]))   (Σ in double, c ascending)   x: (rows, C)   out: (rows)
// Rows split over the threads in groups of kRows past kParallelFloats (split_ranges): a row's sum
// is the same whichever thread, and whichever group, computes it.
template <class Term, class Final>
void rows_sum(const float* x, std::size_t rows, std::size_t C, float* out, Term term, Final final) {
    split_ranges(rows, kRows, rows * C, [&](std::size_t r0, std::size_t r1) {
        std::size_t i = r0;
        for (; i + kRows <= r1; i += kRows) {
            double acc[kRows] = {};
            for (std::size_t c = 0; c < C; ++c)
#pragma GCC unroll 8
                for (std::size_t r = 0; r < kRows; ++r) acc[r] += term(i + r, x[(i + r) * C + c]);
            for (std::size_t r = 0; r < kRows; ++r) out[i + r] = final(acc[r]);
        }
        for (; i < r1; ++i) {  // tail: the last rows one at a time
            double acc = 0.0;
            for (std::size_t c = 0; c < C; ++c) acc += term(i, x[i * C + c]);
            out[i] = final(acc);
        }
    });
}

}  // namespace
}  // namespace norm_detail

template <class Arch>
void RowMean::operator()(Arch, const float* x, std::size_t rows, std::size_t C, float* mean) const {
    // μ = Σ x / C
    norm_detail::rows_sum(x, rows, C, mean, [](std::size_t, float v) { return static_cast<double>(v); },
                          [C](double s) { return static_cast<float>(s / static_cast<double>(C)); });
}

template <class Arch>
void RowVar::operator()(Arch, const float* x, const float* mean, std::size_t rows, std::size_t C, float* var,
                        std::size_t ddof) const {
    // σ² = Σ (x - μ)² / (C - ddof)
    norm_detail::rows_sum(
        x, rows, C, var,
        [mean](std::size_t i, float v) {
            const double d = static_cast<double>(v) - mean[i];
            return d * d;
        },
        [C, ddof](double s) { return static_cast<float>(s / static_cast<double>(C - ddof)); });
}

template <class Arch>
void RowMeanSquare::operator()(Arch, const float* x, std::size_t rows, std::size_t C, float* ms) const {
    // ms = Σ x² / C
    norm_detail::rows_sum(x, rows, C, ms, [](std::size_t, float v) { return static_cast<double>(v) * v; },
                          [C](double s) { return static_cast<float>(s / static_cast<double>(C)); });
}

}  // namespace attntrace::simd

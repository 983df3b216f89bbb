// Row softmax with xsimd. Same math as softmax_rows_ref (three passes,
// internals recorded, fully masked rows all 0); only the loops are vectorised,
// exp is xsimd::exp (within 1-2 ulp of std::exp), and the row sum adds lane by
// lane before the horizontal sum.
#pragma once

#include <limits>
#include <xsimd/xsimd.hpp>

#include "kernels/simd/kernels.hpp"
#include "kernels/simd/stream_store.hpp"

namespace attntrace::simd {

template <class Arch>
std::size_t SoftmaxRows::operator()(Arch, const float* x, std::size_t rows, std::size_t cols, float* row_max,
                                    float* shifted, float* e, float* row_sum, float* out) const {
    using B = xsimd::batch<float, Arch>;
    constexpr std::size_t W = B::size;
    const float neg_inf = -std::numeric_limits<float>::infinity();
    const std::size_t full = cols - cols % W;
    std::size_t empty_rows = 0;
    // Shifted scores and weights far larger than L3 bypass the caches (see
    // stream_store.hpp); e stays cached, as pass 3 reads it back at once.
    // Only when every row starts aligned: big steps are 2 MiB-aligned.
    const std::uintptr_t align = W * sizeof(float);
    const bool stream = rows * cols * sizeof(float) >= kStreamBytes && cols % W == 0 &&
                        reinterpret_cast<std::uintptr_t>(shifted) % align == 0 &&
                        reinterpret_cast<std::uintptr_t>(out) % align == 0;
    // Rows are independent: split across threads when there is enough work (kParallelFloats, kernels.hpp).
#pragma omp parallel for schedule(static) reduction(+ : empty_rows) if (rows * cols > kParallelFloats)
    for (std::size_t i = 0; i < rows; ++i) {
        const float* xi = x + i * cols;
        float* si = shifted + i * cols;
        float* ei = e + i * cols;
        float* oi = out + i * cols;
        // pass 1: m = max_j x[j]   (lanes, then the lanes' max, then the tail)
        B vmax(neg_inf);
        for (std::size_t j = 0; j < full; j += W) vmax = xsimd::max(vmax, B::load_unaligned(xi + j));
        alignas(64) float lanes[W];
        vmax.store_aligned(lanes);
        float m = neg_inf;
        for (std::size_t l = 0; l < W; ++l) m = lanes[l] > m ? lanes[l] : m;
        for (std::size_t j = full; j < cols; ++j) m = xi[j] > m ? xi[j] : m;  // tail
        row_max[i] = m;
        if (m == neg_inf) {  // every key masked: no distribution, all 0 (never NaN)
            ++empty_rows;
            for (std::size_t j = 0; j < cols; ++j) si[j] = neg_inf, ei[j] = 0.0f, oi[j] = 0.0f;
            row_sum[i] = 0.0f;
            continue;
        }
        // pass 2: shifted = x - m; e = exp(shifted); s = Σ e
        const B vm(m);
        B vsum(0.0f);
        for (std::size_t j = 0; j < full; j += W) {
            const B s = B::load_unaligned(xi + j) - vm;
            const B ex = xsimd::exp(s);
            if (stream) store_stream<Arch>(s, si + j);
            else s.store_unaligned(si + j);
            ex.store_unaligned(ei + j);
            vsum += ex;
        }
        float s = xsimd::hadd(vsum);
        for (std::size_t j = full; j < cols; ++j) {  // tail
            si[j] = xi[j] - m;
            ei[j] = std::exp(si[j]);
            s += ei[j];
        }
        row_sum[i] = s;
        // pass 3: out = e / s
        const B vs(s);
        for (std::size_t j = 0; j < full; j += W) {
            if (stream) store_stream<Arch>(B::load_unaligned(ei + j) / vs, oi + j);
            else (B::load_unaligned(ei + j) / vs).store_unaligned(oi + j);
        }
        for (std::size_t j = full; j < cols; ++j) oi[j] = ei[j] / s;  // tail
        if (stream) _mm_sfence();  // this thread's streamed stores land before the region ends
    }
    return empty_rows;
}

}  // namespace attntrace::simd

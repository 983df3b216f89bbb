// The FFN's activations and the norms' element-wise passes with xsimd: GELU's
// tanh form, SwiGLU's gated SiLU, a row divided by its own number, the gain,
// DyT's tanh(α·x).
// Same operations in the same order as their _ref twins (no fused
// multiply-add: the build sets -ffp-contract=off), so the row passes are
// identical; the activations differ only where xsimd::tanh and xsimd::exp
// differ from std::tanh and std::exp (a few ulp). The activations' last,
// partial register goes through the same vector code on a padded copy, so an
// element's value does not depend on where it falls in the array (a decoded
// row gets the numbers of the same row in the whole run).
#pragma once

#include <cmath>

#include <xsimd/xsimd.hpp>

#include "kernels/simd/kernels.hpp"
#include "kernels/simd/parallel.hpp"

namespace attntrace::simd {

namespace activation_detail {
namespace {  // internal linkage: compiled once per instruction set (see gemm_simd.hpp)

// y[i] = f(x[i]...) over whole registers (split over the threads past
// kParallelFloats: split_ranges), then the tail through one padded register.
template <class Arch, class F>
void map1(const float* x, float* y, std::size_t n, F f) {
    using B = xsimd::batch<float, Arch>;
    constexpr std::size_t W = B::size;
    const std::size_t i = n - n % W;
    split_ranges(i, W, 2 * n, [&](std::size_t begin, std::size_t end) {
        for (std::size_t j = begin; j < end; j += W) f(B::load_unaligned(x + j)).store_unaligned(y + j);
    });
    if (i == n) return;
    // tail: padded with 0, which every f here maps to a finite value
    alignas(64) float buf[W] = {};
    for (std::size_t j = i; j < n; ++j) buf[j - i] = x[j];
    f(B::load_aligned(buf)).store_aligned(buf);
    for (std::size_t j = i; j < n; ++j) y[j] = buf[j - i];
}

template <class Arch, class F>
void map2(const float* a, const float* b, float* y, std::size_t n, F f) {
    using B = xsimd::batch<float, Arch>;
    constexpr std::size_t W = B::size;
    const std::size_t i = n - n % W;
    split_ranges(i, W, 3 * n, [&](std::size_t begin, std::size_t end) {
        for (std::size_t j = begin; j < end; j += W)
            f(B::load_unaligned(a + j), B::load_unaligned(b + j)).store_unaligned(y + j);
    });
    if (i == n) return;
    alignas(64) float ba[W] = {}, bb[W] = {};
    for (std::size_t j = i; j < n; ++j) ba[j - i] = a[j], bb[j - i] = b[j];
    f(B::load_aligned(ba), B::load_aligned(bb)).store_aligned(ba);
    for (std::size_t j = i; j < n; ++j) y[j] = ba[j - i];
}

}  // namespace
}  // namespace activation_detail

template <class Arch>
void GeluTanh::operator()(Arch, const float* x, float* y, std::size_t n) const {
    using B = xsimd::batch<float, Arch>;
    // y = 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x·x·x)))   (gelu_tanh_ref's order, left to right)
    activation_detail::map1<Arch>(x, y, n, [](B v) {
        const B k(0.7978845608028654f), c(0.044715f), half(0.5f), one(1.0f);
        return half * v * (one + xsimd::tanh(k * (v + c * v * v * v)));
    });
}

template <class Arch>
void Swiglu::operator()(Arch, const float* g, const float* u, float* y, std::size_t n) const {
    using B = xsimd::batch<float, Arch>;
    // y = g / (1 + e^-g) · u   (swiglu_ref's order)
    activation_detail::map2<Arch>(g, u, y, n, [](B vg, B vu) { return vg / (B(1.0f) + xsimd::exp(-vg)) * vu; });
}

template <class Arch>
void DivideRows::operator()(Arch, const float* e, const float* s, std::size_t rows, std::size_t cols,
                            float* out) const {
    using B = xsimd::batch<float, Arch>;
    constexpr std::size_t W = B::size;
    const std::size_t full = cols - cols % W;
    split_ranges(rows, 1, 2 * rows * cols, [&](std::size_t r0, std::size_t r1) {
        for (std::size_t i = r0; i < r1; ++i) {
            const float* ei = e + i * cols;
            float* oi = out + i * cols;
            if (s[i] == 0.0f) {  // as divide_rows_ref: a zero divisor gives 0
                for (std::size_t j = 0; j < cols; ++j) oi[j] = 0.0f;
                continue;
            }
            // out = e / s
            const B vs(s[i]);
            for (std::size_t j = 0; j < full; j += W) (B::load_unaligned(ei + j) / vs).store_unaligned(oi + j);
            for (std::size_t j = full; j < cols; ++j) oi[j] = ei[j] / s[i];  // tail
        }
    });
}

template <class Arch>
void Gain::operator()(Arch, const float* xhat, const float* gamma, std::size_t rows, std::size_t C, float* out) const {
    using B = xsimd::batch<float, Arch>;
    constexpr std::size_t W = B::size;
    const std::size_t full = C - C % W;
    split_ranges(rows, 1, 2 * rows * C, [&](std::size_t r0, std::size_t r1) {
        for (std::size_t i = r0; i < r1; ++i) {
            const float* hi = xhat + i * C;
            float* oi = out + i * C;
            // out = γ ⊙ x̂
            for (std::size_t c = 0; c < full; c += W)
                (B::load_unaligned(gamma + c) * B::load_unaligned(hi + c)).store_unaligned(oi + c);
            for (std::size_t c = full; c < C; ++c) oi[c] = gamma[c] * hi[c];  // tail
        }
    });
}

template <class Arch>
void DytTanh::operator()(Arch, const float* x, float alpha, float* y, std::size_t n) const {
    using B = xsimd::batch<float, Arch>;
    // y = tanh(α·x): the product in registers, then std::tanh of each lane, as dyt_tanh_ref (bit for bit)
    activation_detail::map1<Arch>(x, y, n, [alpha](B v) {
        alignas(64) float lanes[B::size];
        (B(alpha) * v).store_aligned(lanes);
        for (float& t : lanes) t = std::tanh(t);
        return B::load_aligned(lanes);
    });
}

template <class Arch>
void RotatePairs::operator()(Arch, const float* x, float* y, std::size_t heads, std::size_t hs, const float* cos_d,
                             const float* sin_d, const int* partner) const {
    using B = xsimd::batch<float, Arch>;
    using I = xsimd::batch<int, Arch>;
    constexpr std::size_t W = B::size;
    static_assert(I::size == W, "one index per lane");
    const std::size_t full = hs - hs % W;
    for (std::size_t h = 0; h < heads; ++h) {
        const float* xh = x + h * hs;
        float* yh = y + h * hs;
        // y[d] = x[d]·cos_d[d] + x[partner(d)]·sin_d[d]   (sin_d carries the pair's sign: -sin for its first member)
        for (std::size_t d = 0; d < full; d += W) {
            const B xp = B::gather(xh, I::load_unaligned(partner + d));
            (B::load_unaligned(xh + d) * B::load_unaligned(cos_d + d) + xp * B::load_unaligned(sin_d + d))
                .store_unaligned(yh + d);
        }
        for (std::size_t d = full; d < hs; ++d) yh[d] = xh[d] * cos_d[d] + xh[partner[d]] * sin_d[d];  // tail
    }
}

}  // namespace attntrace::simd

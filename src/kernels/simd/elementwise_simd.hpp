// Element-wise kernels with xsimd: LayerNorm's normalisation and affine,
// ReLU, GELU, residual add, the scale and mask stages (the bias is added by
// the GEMM: GemmOptions::bias). Same operations in the same order as
// their _ref twins (no fused multiply-add), so results are identical except
// GELU, whose erf is xsimd::erf (within a few ulp of std::erf). Passes past
// kParallelFloats are split over the threads (split_ranges, parallel.hpp):
// each element or row is computed alone, so the split changes no bit.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <xsimd/xsimd.hpp>

#include "kernels/activations.hpp"  // float_bits_max_ref: the tail
#include "kernels/simd/kernels.hpp"
#include "kernels/simd/parallel.hpp"
#include "kernels/simd/stream_store.hpp"

namespace attntrace::simd {

template <class Arch>
void NormalizeRows::operator()(Arch, const float* x, std::size_t rows, std::size_t C, const float* mean,
                               const float* sigma, const float* gamma, const float* beta, float* xhat,
                               float* out) const {
    using B = xsimd::batch<float, Arch>;
    constexpr std::size_t W = B::size;
    const std::size_t full = C - C % W;
    split_ranges(rows, 1, 3 * rows * C, [&](std::size_t r0, std::size_t r1) {
        for (std::size_t i = r0; i < r1; ++i) {
            const float* xi = x + i * C;
            float* hi = xhat + i * C;
            const B mu(mean[i]), sd(sigma[i]);
            // x̂ = (x - μ) / σ
            for (std::size_t c = 0; c < full; c += W) ((B::load_unaligned(xi + c) - mu) / sd).store_unaligned(hi + c);
            for (std::size_t c = full; c < C; ++c) hi[c] = (xi[c] - mean[i]) / sigma[i];  // tail
            if (!out) continue;
            // out = γ ⊙ x̂ + β
            float* oi = out + i * C;
            for (std::size_t c = 0; c < full; c += W)
                (B::load_unaligned(gamma + c) * B::load_unaligned(hi + c) + B::load_unaligned(beta + c))
                    .store_unaligned(oi + c);
            for (std::size_t c = full; c < C; ++c) oi[c] = gamma[c] * hi[c] + beta[c];  // tail
        }
    });
}

template <class Arch>
void Relu::operator()(Arch, const float* x, float* y, std::size_t n) const {
    using B = xsimd::batch<float, Arch>;
    constexpr std::size_t W = B::size;
    const B zero(0.0f);
    split_ranges(n, W, 2 * n, [&](std::size_t begin, std::size_t end) {
        const std::size_t full = end - (end - begin) % W;
        // select, not max: max(0, x) and x > 0 ? x : 0 differ on -0.0 and NaN; _ref uses the latter
        for (std::size_t i = begin; i < full; i += W) {
            const B v = B::load_unaligned(x + i);
            xsimd::select(v > zero, v, zero).store_unaligned(y + i);
        }
        for (std::size_t i = full; i < end; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;  // tail
    });
}

template <class Arch>
void Gelu::operator()(Arch, const float* x, float* y, std::size_t n) const {
    using B = xsimd::batch<float, Arch>;
    constexpr std::size_t W = B::size;
    const float inv_sqrt2 = 0.70710678118654752f;
    const B half(0.5f), one(1.0f), k(inv_sqrt2);
    split_ranges(n, W, 2 * n, [&](std::size_t begin, std::size_t end) {
        const std::size_t full = end - (end - begin) % W;
        // y = 0.5·x·(1 + erf(x/√2))
        for (std::size_t i = begin; i < full; i += W) {
            const B v = B::load_unaligned(x + i);
            (half * v * (one + xsimd::erf(v * k))).store_unaligned(y + i);
        }
        for (std::size_t i = full; i < end; ++i) y[i] = 0.5f * x[i] * (1.0f + std::erf(x[i] * inv_sqrt2));  // tail
    });
}

template <class Arch>
FloatBitsMax BitsMax::operator()(Arch, const float* x, std::size_t n) const {
    using I = xsimd::batch<std::int32_t, Arch>;
    constexpr std::size_t W = I::size;
    // the maxima of [begin, end), end - begin a multiple of W but for the last range
    auto range_max = [x](std::size_t begin, std::size_t end) {
        const I clear_sign(0x7fffffff);
        I magnitude(0), raw(INT32_MIN);
        const std::size_t full = end - (end - begin) % W;
        for (std::size_t i = begin; i < full; i += W) {
            std::int32_t lanes[W];
            std::memcpy(lanes, x + i, sizeof lanes);  // the floats' bits (a plain load once compiled)
            const I b = I::load_unaligned(lanes);
            raw = xsimd::max(raw, b);
            magnitude = xsimd::max(magnitude, b & clear_sign);
        }
        alignas(64) std::int32_t m[W], r[W];
        magnitude.store_aligned(m);
        raw.store_aligned(r);
        FloatBitsMax out = float_bits_max_ref(x + full, end - full);  // tail
        for (std::size_t j = 0; j < W; ++j) {
            out.magnitude = std::max(out.magnitude, m[j]);
            out.raw = std::max(out.raw, r[j]);
        }
        return out;
    };
    // the threads' maxima merged (a max is exact: any split gives the same two numbers)
    std::int32_t magnitude = 0, raw = INT32_MIN;
    split_ranges(n, W, n, [&](std::size_t begin, std::size_t end) {
        const FloatBitsMax part = range_max(begin, end);
#pragma omp critical(attntrace_bits_max)
        {
            magnitude = std::max(magnitude, part.magnitude);
            raw = std::max(raw, part.raw);
        }
    });
    return {magnitude, raw};
}

template <class Arch>
void CopyStreamed::operator()(Arch, const float* x, float* y, std::size_t n) const {
    using B = xsimd::batch<float, Arch>;
    constexpr std::size_t W = B::size;
    std::size_t i = 0;
    for (; i < n && reinterpret_cast<std::uintptr_t>(y + i) % (W * sizeof(float)); ++i) y[i] = x[i];  // to y's alignment
    for (; i + W <= n; i += W) store_stream<Arch>(B::load_unaligned(x + i), y + i);
    for (; i < n; ++i) y[i] = x[i];  // tail
    _mm_sfence();  // the streamed stores land before anything reads y
}

template <class Arch>
void Add::operator()(Arch, const float* a, const float* b, float* y, std::size_t n) const {
    using B = xsimd::batch<float, Arch>;
    constexpr std::size_t W = B::size;
    split_ranges(n, W, 3 * n, [&](std::size_t begin, std::size_t end) {
        const std::size_t full = end - (end - begin) % W;
        for (std::size_t i = begin; i < full; i += W)
            (B::load_unaligned(a + i) + B::load_unaligned(b + i)).store_unaligned(y + i);
        for (std::size_t i = full; i < end; ++i) y[i] = a[i] + b[i];  // tail
    });
}

// Large element-wise passes are split across threads in chunks of whole
// registers; below kParallelFloats (kernels.hpp) waking the other threads
// costs more than it saves. Element-wise, so any split gives the same bits.
inline constexpr std::size_t kChunkFloats = 1 << 14;


// y = op(x) over chunks of kChunkFloats, streamed past kStreamBytes. op takes
// a batch or a float and does one IEEE operation on it, so every lane and the
// scalar tail round alike.
template <class Arch, class Op>
void scale_chunks(const float* x, float* y, std::size_t n, Op op) {
    using B = xsimd::batch<float, Arch>;
    constexpr std::size_t W = B::size;
    const std::size_t chunks = (n + kChunkFloats - 1) / kChunkFloats;
#pragma omp parallel for schedule(static) if (n > kParallelFloats)
    for (std::size_t c = 0; c < chunks; ++c) {
        const std::size_t begin = c * kChunkFloats, end = n - begin < kChunkFloats ? n : begin + kChunkFloats;
        std::size_t i = begin;
        if (n * sizeof(float) >= kStreamBytes) {
            for (; i < end && reinterpret_cast<std::uintptr_t>(y + i) % (W * sizeof(float)); ++i) y[i] = op(x[i]);
            for (; i + W <= end; i += W) store_stream<Arch>(op(B::load_unaligned(x + i)), y + i);
        }
        for (; i + W <= end; i += W) op(B::load_unaligned(x + i)).store_unaligned(y + i);
        for (; i < end; ++i) y[i] = op(x[i]);  // tail
        _mm_sfence();  // this thread's streamed stores land before the region ends
    }
}

template <class Arch>
void ScaleDiv::operator()(Arch, const float* x, float divisor, float* y, std::size_t n) const {
    // y = x / divisor: a division, not a product with 1/divisor (which rounds differently for most
    // divisors), but where 1/divisor is exact (a power of two: kernels.hpp, exact_reciprocal)
    if (const float r = exact_reciprocal(divisor); r != 0.0f)
        scale_chunks<Arch>(x, y, n, [r](auto v) { return v * decltype(v)(r); });
    else
        scale_chunks<Arch>(x, y, n, [divisor](auto v) { return v / decltype(v)(divisor); });
}

template <class Arch>
void ScaleMul::operator()(Arch, const float* x, float factor, float* y, std::size_t n) const {
    scale_chunks<Arch>(x, y, n, [factor](auto v) { return v * decltype(v)(factor); });
}

template <class Arch>
void AddMaskHeads::operator()(Arch, const float* s, const float* mask, float* y, std::size_t NH,
                              std::size_t plane) const {
    using B = xsimd::batch<float, Arch>;
    constexpr std::size_t W = B::size;
    const std::size_t chunks = (plane + kChunkFloats - 1) / kChunkFloats;  // per head
    // y[h, i] = s[h, i] + mask[i]   (NH, plane) + (plane) broadcast over heads
#pragma omp parallel for schedule(static) if (NH * plane > kParallelFloats)
    for (std::size_t item = 0; item < NH * chunks; ++item) {
        const std::size_t h = item / chunks, begin = item % chunks * kChunkFloats;
        const std::size_t end = plane - begin < kChunkFloats ? plane : begin + kChunkFloats;
        const float* sh = s + h * plane;
        float* yh = y + h * plane;
        std::size_t i = begin;
        if (NH * plane * sizeof(float) >= kStreamBytes) {
            for (; i < end && reinterpret_cast<std::uintptr_t>(yh + i) % (W * sizeof(float)); ++i) yh[i] = sh[i] + mask[i];
            for (; i + W <= end; i += W)
                store_stream<Arch>(B::load_unaligned(sh + i) + B::load_unaligned(mask + i), yh + i);
        }
        for (; i + W <= end; i += W) (B::load_unaligned(sh + i) + B::load_unaligned(mask + i)).store_unaligned(yh + i);
        for (; i < end; ++i) yh[i] = sh[i] + mask[i];  // tail
        _mm_sfence();  // this thread's streamed stores land before the region ends
    }
}

}  // namespace attntrace::simd

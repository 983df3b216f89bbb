// MapFoldRow: map_fold_row_ref's fold, a register of cells at a time.
#pragma once

#include <xsimd/xsimd.hpp>

#include <algorithm>
#include <cstddef>
#include <limits>

#include "kernels/map_fold.hpp"
#include "kernels/simd/kernels.hpp"

namespace attntrace::simd {

template <class Arch>
void MapFoldRow::operator()(Arch, const float* x, std::size_t cols, std::size_t f, const MapMask& mask,
                            MapFold* folds) const {
    using B = xsimd::batch<float, Arch>;
    using M = xsimd::batch_bool<float, Arch>;
    constexpr std::size_t W = B::size;
    constexpr float kInf = std::numeric_limits<float>::infinity();
    const B inf(kInf), neg_inf(-kInf), zero(0.0f), one(1.0f), blocked_value(mask.blocked_value);
    for (std::size_t c0 = 0, p = 0; c0 < cols; c0 += f, ++p) {
        const std::size_t c1 = std::min(cols, c0 + f), full = c0 + (c1 - c0) / W * W;
        // Lane sums in float over at most f / W cells each, then added in double: a
        // mean shown as a colour (a fifth of the scale), never printed as a number.
        B sum(0.0f), count(0.0f), best(neg_inf), lo(inf), hi(neg_inf);
        for (std::size_t c = c0; c < full; c += W) {
            const B v = B::load_unaligned(x + c);
            const M finite = xsimd::abs(v) < inf;  // false for a NaN
            lo = xsimd::select(finite & (v < lo), v, lo);
            hi = xsimd::select(finite & (v > hi), v, hi);
            // "not equal" as the twin's !(a == b): a NaN is let through (an ordered != would block it)
            M through = !(v == neg_inf);
            if (mask.zero) through = through & !(v == zero);
            if (mask.blocks) through = through & !(B::load_unaligned(mask.blocks + c) == blocked_value);
            sum += xsimd::select(through, v, zero);
            count += xsimd::select(through, one, zero);
            best = xsimd::select(through & (v > best), v, best);
        }
        alignas(64) float s[W], n[W], b[W], l[W], h[W];
        sum.store_aligned(s);
        count.store_aligned(n);
        best.store_aligned(b);
        lo.store_aligned(l);
        hi.store_aligned(h);
        MapFold& fd = folds[p];
        for (std::size_t j = 0; j < W; ++j) {
            fd.sum += s[j];
            fd.n += static_cast<std::size_t>(n[j]);
            fd.best = std::max(fd.best, b[j]);
            fd.lo = std::min(fd.lo, l[j]);
            fd.hi = std::max(fd.hi, h[j]);
        }
        // the tail, as the twin folds it, into this pooled cell (f need not be a multiple of W)
        if (full < c1) {
            MapMask tail = mask;
            if (tail.blocks) tail.blocks += full;
            map_fold_row_ref(x + full, c1 - full, c1 - full, tail, &fd);
        }
    }
}

}  // namespace attntrace::simd

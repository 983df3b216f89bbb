// The fold a heatmap pools its cells with (render/dense_map.cpp): a map
// wider than the terminal shows each f x f block of cells as one, its max or
// mean over the cells the mask lets through, coloured on the finite values'
// range. An 8192-token step is 800M cells a map reads once: this is its loop.
#pragma once

#include <cstddef>
#include <limits>

namespace attntrace {

// What a pooled cell has seen of its cells: the sum, count and maximum of the
// cells the mask lets through, and the range of every finite value (masked
// or not: a score map's scale is its finite values').
struct MapFold {
    double sum = 0;
    std::size_t n = 0;
    float best = -std::numeric_limits<float>::infinity();
    float lo = std::numeric_limits<float>::infinity(), hi = -std::numeric_limits<float>::infinity();
};

// Which cells a map's mask blocks: x = -inf always (masked scores); x = 0
// when `zero` (a mask that multiplies the weights, drawn as itself); and,
// when `blocks` is given, cell c where blocks[c] == blocked_value (the mask
// beside the weights: 0 when it multiplies them, -inf when it is added).
struct MapMask {
    bool zero = false;
    const float* blocks = nullptr;  // (cols), or null
    float blocked_value = 0;
};

// One row of a map folded into its pooled cells: cells [p·f, p·f + f) of x
// into folds[p], p < ceil(cols / f).   x: (cols)   folds: (ceil(cols / f))
// A cell is let through unless the mask blocks it; a NaN is let through into
// the sum (and so the mean) but never becomes a maximum or a range's end.
// The SIMD twin (simd/map_fold_simd.hpp) sums each pooled cell's cells in
// float lanes, then the lanes in double: counts, maxima and ranges are the
// twin's exactly; a sum is within kMapFoldSumTol · k · Σ|x| of it, k the
// cells a lane adds (each addition rounds once, by at most half a float ulp).
inline constexpr double kMapFoldSumTol = 0x1p-24;
void map_fold_row_ref(const float* x, std::size_t cols, std::size_t f, const MapMask& mask, MapFold* folds);

}  // namespace attntrace

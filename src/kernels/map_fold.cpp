#include "kernels/map_fold.hpp"

#include <algorithm>

namespace attntrace {

void map_fold_row_ref(const float* x, std::size_t cols, std::size_t f, const MapMask& mask, MapFold* folds) {
    constexpr float kInf = std::numeric_limits<float>::infinity();
    for (std::size_t c = 0; c < cols; ++c) {
        MapFold& fd = folds[c / f];
        const float v = x[c];
        if (v - v == 0.0f) {  // finite: neither an infinity nor a NaN
            fd.lo = std::min(fd.lo, v);
            fd.hi = std::max(fd.hi, v);
        }
        const bool blocked = v == -kInf || (mask.zero && v == 0.0f) || (mask.blocks && mask.blocks[c] == mask.blocked_value);
        if (blocked) continue;
        fd.sum += v;
        ++fd.n;
        if (v > fd.best) fd.best = v;
    }
}

}  // namespace attntrace

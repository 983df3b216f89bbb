#include "kernels/softmax.hpp"

#include <cmath>
#include <limits>

namespace attntrace {

std::size_t softmax_rows_ref(const float* x, std::size_t rows, std::size_t cols, float* row_max,
                             float* shifted, float* e, float* row_sum, float* out) {
    const float neg_inf = -std::numeric_limits<float>::infinity();
    std::size_t empty_rows = 0;
    for (std::size_t i = 0; i < rows; ++i) {
        const float* xi = x + i * cols;
        float* si = shifted + i * cols;
        float* ei = e + i * cols;
        float* oi = out + i * cols;
        // pass 1: m = max_j x[j]   (subtracting it only guards exp against overflow)
        float m = neg_inf;
        for (std::size_t j = 0; j < cols; ++j) m = xi[j] > m ? xi[j] : m;
        row_max[i] = m;
        if (m == neg_inf) {
            ++empty_rows;
            for (std::size_t j = 0; j < cols; ++j) si[j] = neg_inf, ei[j] = 0.0f, oi[j] = 0.0f;
            row_sum[i] = 0.0f;
            continue;
        }
        // pass 2: shifted = x - m; e = exp(shifted); s = Σ e   (exp(-inf) = 0 exactly)
        float s = 0.0f;
        for (std::size_t j = 0; j < cols; ++j) {
            si[j] = xi[j] - m;
            ei[j] = std::exp(si[j]);
            s += ei[j];
        }
        row_sum[i] = s;
        // pass 3: out = e / s   (s >= 1: the max cell contributes exp(0) = 1)
        for (std::size_t j = 0; j < cols; ++j) oi[j] = ei[j] / s;
    }
    return empty_rows;
}

}  // namespace attntrace

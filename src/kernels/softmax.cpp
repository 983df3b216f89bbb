#include "kernels/softmax.hpp"

#include <cmath>
#include <limits>

namespace attntrace {

namespace {
constexpr float kNegInf = -std::numeric_limits<float>::infinity();
}

void row_max_ref(const float* x, std::size_t rows, std::size_t cols, float* m) {
    // subtracting the max only guards exp against overflow: softmax(x - m) = softmax(x)
    for (std::size_t i = 0; i < rows; ++i) {
        float best = kNegInf;
        for (std::size_t j = 0; j < cols; ++j) best = x[i * cols + j] > best ? x[i * cols + j] : best;
        m[i] = best;
    }
}

void shift_rows_ref(const float* x, const float* m, std::size_t rows, std::size_t cols, float* shifted) {
    for (std::size_t i = 0; i < rows; ++i)
        for (std::size_t j = 0; j < cols; ++j)
            // a fully masked row (m = -inf) stays -inf rather than -inf - -inf = NaN
            shifted[i * cols + j] = m[i] == kNegInf ? kNegInf : x[i * cols + j] - m[i];
}

void exp_ref(const float* x, float* y, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) y[i] = std::exp(x[i]);
}

void row_sum_ref(const float* e, std::size_t rows, std::size_t cols, float* s) {
    for (std::size_t i = 0; i < rows; ++i) {
        float sum = 0.0f;
        for (std::size_t j = 0; j < cols; ++j) sum += e[i * cols + j];
        s[i] = sum;
    }
}

void divide_rows_ref(const float* e, const float* s, std::size_t rows, std::size_t cols, float* out) {
    for (std::size_t i = 0; i < rows; ++i)
        for (std::size_t j = 0; j < cols; ++j) out[i * cols + j] = s[i] == 0.0f ? 0.0f : e[i * cols + j] / s[i];
}

void row_sum_unblocked_ref(const float* x, std::size_t rows, std::size_t cols, float* s) {
    for (std::size_t i = 0; i < rows; ++i) {
        float sum = 0.0f;
        for (std::size_t j = 0; j < cols; ++j)
            if (x[i * cols + j] != kNegInf) sum += x[i * cols + j];
        s[i] = sum;
    }
}

void divide_rows_unblocked_ref(const float* x, const float* s, std::size_t rows, std::size_t cols, float* out) {
    for (std::size_t i = 0; i < rows; ++i)
        for (std::size_t j = 0; j < cols; ++j)
            out[i * cols + j] = x[i * cols + j] == kNegInf ? 0.0f : x[i * cols + j] / s[i];
}

void unblock_ref(const float* x, float* out, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) out[i] = x[i] == kNegInf ? 0.0f : x[i];
}

void zero_blocked_heads_ref(const float* a, const float* keep, float* y, std::size_t NH, std::size_t plane) {
    for (std::size_t h = 0; h < NH; ++h)
        for (std::size_t p = 0; p < plane; ++p) y[h * plane + p] = a[h * plane + p] * keep[p];
}

std::size_t softmax_rows_ref(const float* x, std::size_t rows, std::size_t cols, float* row_max, float* shifted,
                             float* e, float* row_sum, float* out) {
    row_max_ref(x, rows, cols, row_max);                // pass 1
    shift_rows_ref(x, row_max, rows, cols, shifted);    // pass 2
    exp_ref(shifted, e, rows * cols);
    row_sum_ref(e, rows, cols, row_sum);
    divide_rows_ref(e, row_sum, rows, cols, out);       // pass 3
    std::size_t empty_rows = 0;
    for (std::size_t i = 0; i < rows; ++i) empty_rows += row_max[i] == kNegInf;
    return empty_rows;
}

std::size_t softmax_rows_inplace_ref(float* x, std::size_t rows, std::size_t cols, float* row_max, float* row_sum) {
    row_max_ref(x, rows, cols, row_max);                 // pass 1
    shift_rows_ref(x, row_max, rows, cols, x);           // pass 2, over x
    exp_ref(x, x, rows * cols);
    row_sum_ref(x, rows, cols, row_sum);
    divide_rows_ref(x, row_sum, rows, cols, x);          // pass 3
    std::size_t empty_rows = 0;
    for (std::size_t i = 0; i < rows; ++i) empty_rows += row_max[i] == kNegInf;
    return empty_rows;
}

void exp_rows_ref(const float* x, float* e, std::size_t rows, std::size_t cols) { exp_ref(x, e, rows * cols); }

}  // namespace attntrace

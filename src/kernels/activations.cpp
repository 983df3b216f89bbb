#include "kernels/activations.hpp"

#include <cmath>

namespace attntrace {

void relu_ref(const float* x, float* y, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

void gelu_ref(const float* x, float* y, std::size_t n) {
    const float inv_sqrt2 = 0.70710678118654752f;
    for (std::size_t i = 0; i < n; ++i) y[i] = 0.5f * x[i] * (1.0f + std::erf(x[i] * inv_sqrt2));
}

void add_ref(const float* a, const float* b, float* y, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) y[i] = a[i] + b[i];
}

}  // namespace attntrace

#include <cstring>
#include <algorithm>
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

void gelu_tanh_ref(const float* x, float* y, std::size_t n) {
    const float k = 0.7978845608028654f;  // √(2/π)
    for (std::size_t i = 0; i < n; ++i)
        y[i] = 0.5f * x[i] * (1.0f + std::tanh(k * (x[i] + 0.044715f * x[i] * x[i] * x[i])));
}

void swiglu_ref(const float* g, const float* u, float* y, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) y[i] = g[i] / (1.0f + std::exp(-g[i])) * u[i];
}

void add_ref(const float* a, const float* b, float* y, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) y[i] = a[i] + b[i];
}

FloatBitsMax float_bits_max_ref(const float* x, std::size_t n) {
    FloatBitsMax m;
    for (std::size_t i = 0; i < n; ++i) {
        std::int32_t b;
        std::memcpy(&b, x + i, sizeof b);
        m.raw = std::max(m.raw, b);
        m.magnitude = std::max(m.magnitude, b & 0x7fffffff);
    }
    return m;
}

void copy_ref(const float* x, float* y, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) y[i] = x[i];
}

}  // namespace attntrace

// Element-wise activations of the FFN.
#pragma once

#include <cstddef>
#include <cstdint>

namespace attntrace {

// y = max(0, x)                                  x, y: (n)
void relu_ref(const float* x, float* y, std::size_t n);
// y = x·Φ(x) = x·(1 + erf(x/√2))/2   (exact form, torch.nn.GELU's default)
void gelu_ref(const float* x, float* y, std::size_t n);
// y = x/2·(1 + tanh(√(2/π)·(x + 0.044715·x³)))   (torch.nn.GELU(approximate="tanh"))
void gelu_tanh_ref(const float* x, float* y, std::size_t n);
// y = SiLU(g)·u = g/(1 + e^-g)·u   (SwiGLU's gated unit)   g, u, y: (n)
void swiglu_ref(const float* g, const float* u, float* y, std::size_t n);
// Each has a SIMD twin (simd/elementwise_simd.hpp, simd/activations_simd.hpp),
// held to it by tests/test_simd_kernels.cpp.
// y = a + b   (residual add)                     a, b, y: (n)
void add_ref(const float* a, const float* b, float* y, std::size_t n);
// Max over i of bits(x[i]) & 0x7fffffff, and of bits(x[i]), as int32 (n = 0: 0 and INT32_MIN).
struct FloatBitsMax {
    std::int32_t magnitude = 0;
    std::int32_t raw = INT32_MIN;
};
FloatBitsMax float_bits_max_ref(const float* x, std::size_t n);
// y = x   (copy_streamed's twin: a block of a step written out)   x, y: (n)
void copy_ref(const float* x, float* y, std::size_t n);

}  // namespace attntrace

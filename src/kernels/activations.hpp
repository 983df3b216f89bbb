// Element-wise activations of the FFN.
#pragma once

#include <cstddef>

namespace attntrace {

// y = max(0, x)                                  x, y: (n)
void relu_ref(const float* x, float* y, std::size_t n);
// y = x·Φ(x) = x·(1 + erf(x/√2))/2   (exact form, torch.nn.GELU's default)
void gelu_ref(const float* x, float* y, std::size_t n);
// y = a + b   (residual add)                     a, b, y: (n)
void add_ref(const float* a, const float* b, float* y, std::size_t n);

}  // namespace attntrace

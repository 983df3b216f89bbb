// LayerNorm over the last axis, as PyTorch: biased variance, eps inside the sqrt.
#pragma once

#include <cstddef>

namespace attntrace {

// x, xhat, out: (rows, C)   mean, var, std: (rows)   gamma, beta: (C)
// pass 1: μ = Σ x / C
// pass 2: σ² = Σ (x - μ)² / C          (biased, as torch.nn.LayerNorm)
// pass 3: σ = √(σ² + eps);  x̂ = (x - μ) / σ
// pass 4: out = γ ⊙ x̂ + β             (skipped when gamma or beta is null)
// μ and σ² are accumulated in double: the sum of C copies of a float is then
// exact, so a constant row gives μ equal to its value and x̂ exactly 0 (with a
// float sum, 123.456 over 768 columns gave x̂ = 0.21: the mean's rounding
// error divided by √eps). Two passes for the variance, not E[x²] - μ², for the
// same reason.
void layernorm_rows_ref(const float* x, std::size_t rows, std::size_t C, float eps, const float* gamma,
                        const float* beta, float* mean, float* var, float* sigma, float* xhat, float* out);

// Passes 1-3's statistics alone: μ, σ², σ per row (the SIMD LayerNorm keeps
// these scalar and in double, and vectorises the element-wise passes).
void layernorm_stats_ref(const float* x, std::size_t rows, std::size_t C, float eps, float* mean, float* var,
                         float* sigma);

}  // namespace attntrace

// LayerNorm over the last axis, as PyTorch: biased variance, eps inside the sqrt.
#pragma once

#include <cstddef>

namespace attntrace {

// x, xhat, out: (rows, C)   mean, var, std: (rows)   gamma, beta: (C)
// pass 1: μ = Σ x / C
// pass 2: σ² = Σ (x - μ)² / C          (biased, as torch.nn.LayerNorm)
// pass 3: σ = √(σ² + eps);  x̂ = (x - μ) / σ
// pass 4: out = γ ⊙ x̂ + β             (skipped when gamma or beta is null)
// Two passes for the variance (not E[x²] - μ²) so constant rows give exactly 0.
void layernorm_rows_ref(const float* x, std::size_t rows, std::size_t C, float eps, const float* gamma,
                        const float* beta, float* mean, float* var, float* std, float* xhat, float* out);

}  // namespace attntrace

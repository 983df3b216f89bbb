// LayerNorm over the last axis, as PyTorch: biased variance, eps inside the sqrt.
#pragma once

#include <cstddef>

namespace attntrace {

// x, xhat, out: (rows, C)   mean, var, sigma: (rows)   gamma, beta: (C)
// pass 1: μ = Σ x / C
// pass 2: σ² = Σ (x - μ)² / C          (biased, as torch.nn.LayerNorm)
// pass 3: σ = √(σ² + eps);  x̂ = (x - μ) / σ
// pass 4: out = γ ⊙ x̂ + β             (skipped when gamma, beta or out is null)
// μ and σ² are accumulated in double: the sum of C copies of a float is then
// exact, so a constant row gives μ equal to its value and x̂ exactly 0 (with a
// float sum, 123.456 over 768 columns gave x̂ = 0.21: the mean's rounding
// error divided by √eps). Two passes for the variance, not E[x²] - μ², for the
// same reason. Defined as the passes below, one after the other.
void layernorm_rows_ref(const float* x, std::size_t rows, std::size_t C, float eps, const float* gamma,
                        const float* beta, float* mean, float* var, float* sigma, float* xhat, float* out);

// The statistics alone (passes 1, 2 and σ). The SIMD LayerNorm computes the
// same numbers with rows side by side (simd/norm_stats_simd.hpp: each row's
// double sum in this order, bit for bit) and vectorises the element-wise passes.
void layernorm_stats_ref(const float* x, std::size_t rows, std::size_t C, float eps, float* mean, float* var,
                         float* sigma);

// The passes, one step each, for lessons that give or round an intermediate
// (an article that rounds σ before dividing by it).
void row_mean_ref(const float* x, std::size_t rows, std::size_t C, float* mean);
// σ² = Σ (x - μ)² / (C - ddof): ddof 0 the biased variance (LayerNorm's), 1 Bessel's (torch.var's default)
void row_var_ref(const float* x, const float* mean, std::size_t rows, std::size_t C, float* var, std::size_t ddof = 0);
// LayerNorm as taught (config.norm_steps "all"), its deviations as steps: x - μ is
// softmax.hpp's shift_rows_ref; then each squared, and σ² from those squares as
// recorded: Σ_c sq[i,c] / (C - ddof), summed in double, c ascending
// x, y, sq: (rows, C)   var: (rows)
void square_ref(const float* x, float* y, std::size_t n);
void row_var_from_squares_ref(const float* sq, std::size_t rows, std::size_t C, float* var, std::size_t ddof);
void std_eps_ref(const float* var, std::size_t rows, float eps, float* sigma);
void standardize_ref(const float* x, const float* mean, const float* sigma, std::size_t rows, std::size_t C,
                     float* xhat);
// RMSNorm (torch.nn.RMSNorm), pass by pass; σ is std_eps_ref of the mean
// square, x̂ softmax.hpp's divide_rows_ref (each row by its own number):
//   ms = Σ x² / C (accumulated in double, as μ above);  σ = √(ms + eps);
//   x̂ = x / σ;  out = γ ⊙ x̂
void row_mean_square_ref(const float* x, std::size_t rows, std::size_t C, float* ms);
void gain_ref(const float* xhat, const float* gamma, std::size_t rows, std::size_t C, float* out);
void affine_ref(const float* xhat, const float* gamma, const float* beta, std::size_t rows, std::size_t C,
                float* out);
// DyT (Dynamic Tanh, config.norm "dyt"): no statistics, each number squashed
// on its own, x̂ = tanh(α·x) (α·x one float product, then std::tanh), and
// out = γ ⊙ x̂ + β by affine_ref.   x, y: (n)
void dyt_tanh_ref(const float* x, float alpha, float* y, std::size_t n);

}  // namespace attntrace

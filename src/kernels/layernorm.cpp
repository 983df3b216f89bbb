#include "kernels/layernorm.hpp"

#include <cmath>

namespace attntrace {

void layernorm_stats_ref(const float* x, std::size_t rows, std::size_t C, float eps, float* mean, float* var,
                         float* sigma) {
    for (std::size_t i = 0; i < rows; ++i) {
        const float* xi = x + i * C;
        // pass 1: μ   (double accumulation: see the header)
        double sum = 0.0;
        for (std::size_t c = 0; c < C; ++c) sum += xi[c];
        const float mu = static_cast<float>(sum / static_cast<double>(C));
        // pass 2: σ² (biased)
        double sq = 0.0;
        for (std::size_t c = 0; c < C; ++c) {
            const double d = static_cast<double>(xi[c]) - mu;
            sq += d * d;
        }
        const float v = static_cast<float>(sq / static_cast<double>(C));
        mean[i] = mu;
        var[i] = v;
        // pass 3 (first half): σ = √(σ² + eps)
        sigma[i] = std::sqrt(v + eps);
    }
}

void layernorm_rows_ref(const float* x, std::size_t rows, std::size_t C, float eps, const float* gamma,
                        const float* beta, float* mean, float* var, float* sigma, float* xhat, float* out) {
    layernorm_stats_ref(x, rows, C, eps, mean, var, sigma);
    for (std::size_t i = 0; i < rows; ++i) {
        const float* xi = x + i * C;
        // pass 3: x̂ = (x - μ) / σ
        float* hi = xhat + i * C;
        for (std::size_t c = 0; c < C; ++c) hi[c] = (xi[c] - mean[i]) / sigma[i];
        // pass 4: affine
        if (gamma && beta && out) {
            float* oi = out + i * C;
            for (std::size_t c = 0; c < C; ++c) oi[c] = gamma[c] * hi[c] + beta[c];
        }
    }
}

}  // namespace attntrace

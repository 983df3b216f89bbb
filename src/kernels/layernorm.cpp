#include "kernels/layernorm.hpp"

#include <cmath>

namespace attntrace {

void row_mean_ref(const float* x, std::size_t rows, std::size_t C, float* mean) {
    for (std::size_t i = 0; i < rows; ++i) {
        double sum = 0.0;  // double: see the header
        for (std::size_t c = 0; c < C; ++c) sum += x[i * C + c];
        mean[i] = static_cast<float>(sum / static_cast<double>(C));
    }
}

void row_var_from_squares_ref(const float* sq, std::size_t rows, std::size_t C, float* var, std::size_t ddof) {
    for (std::size_t i = 0; i < rows; ++i) {
        double s = 0.0;
        for (std::size_t c = 0; c < C; ++c) s += sq[i * C + c];
        var[i] = static_cast<float>(s / static_cast<double>(C - ddof));
    }
}

void square_ref(const float* x, float* y, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) y[i] = x[i] * x[i];
}

void row_var_ref(const float* x, const float* mean, std::size_t rows, std::size_t C, float* var, std::size_t ddof) {
    for (std::size_t i = 0; i < rows; ++i) {
        double sq = 0.0;
        for (std::size_t c = 0; c < C; ++c) {
            const double d = static_cast<double>(x[i * C + c]) - mean[i];
            sq += d * d;
        }
        var[i] = static_cast<float>(sq / static_cast<double>(C - ddof));
    }
}

void std_eps_ref(const float* var, std::size_t rows, float eps, float* sigma) {
    for (std::size_t i = 0; i < rows; ++i) sigma[i] = std::sqrt(var[i] + eps);
}

void standardize_ref(const float* x, const float* mean, const float* sigma, std::size_t rows, std::size_t C,
                     float* xhat) {
    for (std::size_t i = 0; i < rows; ++i)
        for (std::size_t c = 0; c < C; ++c) xhat[i * C + c] = (x[i * C + c] - mean[i]) / sigma[i];
}

void affine_ref(const float* xhat, const float* gamma, const float* beta, std::size_t rows, std::size_t C,
                float* out) {
    for (std::size_t i = 0; i < rows; ++i)
        for (std::size_t c = 0; c < C; ++c) out[i * C + c] = gamma[c] * xhat[i * C + c] + beta[c];
}

void row_mean_square_ref(const float* x, std::size_t rows, std::size_t C, float* ms) {
    for (std::size_t i = 0; i < rows; ++i) {
        double sq = 0.0;  // double: see the header
        for (std::size_t c = 0; c < C; ++c) sq += static_cast<double>(x[i * C + c]) * x[i * C + c];
        ms[i] = static_cast<float>(sq / static_cast<double>(C));
    }
}

void gain_ref(const float* xhat, const float* gamma, std::size_t rows, std::size_t C, float* out) {
    for (std::size_t i = 0; i < rows; ++i)
        for (std::size_t c = 0; c < C; ++c) out[i * C + c] = gamma[c] * xhat[i * C + c];
}

void dyt_tanh_ref(const float* x, float alpha, float* y, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) y[i] = std::tanh(alpha * x[i]);
}

void layernorm_stats_ref(const float* x, std::size_t rows, std::size_t C, float eps, float* mean, float* var,
                         float* sigma) {
    row_mean_ref(x, rows, C, mean);          // pass 1
    row_var_ref(x, mean, rows, C, var);      // pass 2
    std_eps_ref(var, rows, eps, sigma);      // pass 3 (σ)
}

void layernorm_rows_ref(const float* x, std::size_t rows, std::size_t C, float eps, const float* gamma,
                        const float* beta, float* mean, float* var, float* sigma, float* xhat, float* out) {
    layernorm_stats_ref(x, rows, C, eps, mean, var, sigma);
    standardize_ref(x, mean, sigma, rows, C, xhat);                     // pass 3 (x̂)
    if (gamma && beta && out) affine_ref(xhat, gamma, beta, rows, C, out);  // pass 4
}

}  // namespace attntrace

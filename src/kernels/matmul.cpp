#include "kernels/matmul.hpp"

namespace attntrace {

void matmul_ref(const float* a, std::size_t lda, const float* b, std::size_t ldb, float* c,
                std::size_t ldc, std::size_t M, std::size_t K, std::size_t N) {
    for (std::size_t i = 0; i < M; ++i) {
        float* ci = c + i * ldc;
        for (std::size_t j = 0; j < N; ++j) ci[j] = 0.0f;
        // i-k-j order: the inner loop walks rows of b and c contiguously.
        for (std::size_t k = 0; k < K; ++k) {
            const float aik = a[i * lda + k];
            const float* bk = b + k * ldb;
            for (std::size_t j = 0; j < N; ++j) ci[j] += aik * bk[j];
        }
    }
}

void matmul_nt_ref(const float* a, std::size_t lda, const float* b, std::size_t ldb, float* c,
                   std::size_t ldc, std::size_t M, std::size_t K, std::size_t N) {
    for (std::size_t i = 0; i < M; ++i)
        for (std::size_t j = 0; j < N; ++j) {
            float acc = 0.0f;
            for (std::size_t k = 0; k < K; ++k) acc += a[i * lda + k] * b[j * ldb + k];
            c[i * ldc + j] = acc;
        }
}

void pack_b_ref(const float* b, std::size_t ldb, bool b_transposed, std::size_t K, std::size_t N, float* out) {
    for (std::size_t k = 0; k < K; ++k)
        for (std::size_t j = 0; j < N; ++j) out[k * N + j] = b_transposed ? b[j * ldb + k] : b[k * ldb + j];
}

void linear_ref(const float* x, const float* W, const float* b, float* y, std::size_t M, std::size_t K,
                std::size_t N) {
    matmul_ref(x, K, W, N, y, N, M, K, N);
    if (b) add_bias_rows_ref(y, N, b, M, N);
}

void gemv_ref(const float* x, const float* W, std::size_t ldw, bool w_transposed, const float* b, float* y,
              std::size_t K, std::size_t N) {
    for (std::size_t j = 0; j < N; ++j) {
        float acc = 0.0f;
        for (std::size_t k = 0; k < K; ++k) acc += x[k] * (w_transposed ? W[j * ldw + k] : W[k * ldw + j]);
        y[j] = b ? acc + b[j] : acc;
    }
}

void add_bias_rows_ref(float* c, std::size_t ldc, const float* bias, std::size_t M, std::size_t N) {
    for (std::size_t i = 0; i < M; ++i)
        for (std::size_t j = 0; j < N; ++j) c[i * ldc + j] += bias[j];
}

}  // namespace attntrace

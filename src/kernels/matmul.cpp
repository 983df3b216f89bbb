#include "kernels/matmul.hpp"

#include <cmath>
#include <cstring>

namespace attntrace {

float bf16_to_float_ref(std::uint16_t h) {
    const std::uint32_t bits = static_cast<std::uint32_t>(h) << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}

float half_to_float_ref(std::uint16_t h) {
    const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
    std::uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu, bits;
    if (exp == 0x1f) {
        bits = sign | 0x7f800000u | (mant << 13);  // inf, NaN
    } else if (exp != 0) {
        bits = sign | ((exp + 112) << 23) | (mant << 13);  // 127 - 15 = 112
    } else if (mant == 0) {
        bits = sign;  // ±0
    } else {
        // subnormal: mant · 2^-24, normalised into float32's exponent range
        int e = -1;
        do {
            ++e;
            mant <<= 1;
        } while ((mant & 0x400u) == 0);
        bits = sign | (static_cast<std::uint32_t>(112 - e) << 23) | ((mant & 0x3ffu) << 13);
    }
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}

float stored_at_ref(const StoredMatrix& w, std::size_t k, std::size_t j) {
    const std::size_t at = w.transposed ? j * w.ld + k : k * w.ld + j;
    switch (w.type) {
        case StoredType::f32: return static_cast<const float*>(w.data)[at];
        case StoredType::f16: return half_to_float_ref(static_cast<const std::uint16_t*>(w.data)[at]);
        case StoredType::bf16: return bf16_to_float_ref(static_cast<const std::uint16_t*>(w.data)[at]);
    }
    return 0.0f;
}

void pack_b_stored_ref(const StoredMatrix& w, std::size_t K, std::size_t N, float* out) {
    for (std::size_t k = 0; k < K; ++k)
        for (std::size_t j = 0; j < N; ++j) out[k * N + j] = stored_at_ref(w, k, j);
}

bool linear_stored_ref(const float* x, const StoredMatrix& W, const float* b, float* y, std::size_t M, std::size_t K,
                       std::size_t N) {
    bool finite = true;
    if (W.type != StoredType::f32 && M > 0)
        for (std::size_t k = 0; k < K; ++k)
            for (std::size_t j = 0; j < N; ++j) finite = finite && std::isfinite(stored_at_ref(W, k, j));
    // matmul_ref's i-k-j order, then the bias pass: linear_ref's numbers on the widened W
    for (std::size_t i = 0; i < M; ++i) {
        float* yi = y + i * N;
        for (std::size_t j = 0; j < N; ++j) yi[j] = 0.0f;
        for (std::size_t k = 0; k < K; ++k) {
            const float xik = x[i * K + k];
            for (std::size_t j = 0; j < N; ++j) yi[j] += xik * stored_at_ref(W, k, j);
        }
    }
    if (b) add_bias_rows_ref(y, N, b, M, N);
    if (W.type == StoredType::f32)  // a float32 W's value not finite makes its column of y so (x finite)
        for (std::size_t i = 0; i < M * N; ++i) finite = finite && std::isfinite(y[i]);
    return finite;
}

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

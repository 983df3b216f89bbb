// Matrix products on raw row-major buffers with leading dimensions, so that a
// head's slice of Q (T, NH, hs) is passed as (T, hs) with ld = C, no copy.
#pragma once

#include <cstddef>
#include <cstdint>

namespace attntrace {

// A weight matrix as a checkpoint stores it, read in place: float32, or the
// 16-bit bfloat16 and IEEE half, each widened to float32 exactly (every
// bfloat16 and half value is a float32). The (K, N) matrix W it stands for:
//   W[k, j] = data[k·ld + j], or with transposed (nn.Linear's (N, K) layout)
//   W[k, j] = data[j·ld + k]; in elements of `type`.
enum class StoredType : std::uint8_t { f32, f16, bf16 };
struct StoredMatrix {
    const void* data = nullptr;
    StoredType type = StoredType::f32;
    std::size_t ld = 0;
    bool transposed = false;
};

// bfloat16 -> float32 (float32's top half) and IEEE 754 half -> float32,
// exactly: subnormals, infinities and NaN (payload and quiet bit as they are) kept.
float bf16_to_float_ref(std::uint16_t h);
float half_to_float_ref(std::uint16_t h);
// W[k, j] of a stored matrix, widened.
float stored_at_ref(const StoredMatrix& w, std::size_t k, std::size_t j);
// out = W as (K, N) float32 row-major: pack_b_ref of the widened matrix
// (gemm_pack_b_stored's scalar twin)
void pack_b_stored_ref(const StoredMatrix& w, std::size_t K, std::size_t N, float* out);
// y = x·W + b with W read as stored: linear_ref's sums on the widened values
//   x: (M, K)   W: (K, N) as above   b: (N) or null   y: (M, N)
// False when W is 16-bit and a value of it is not finite, or float32 and a value of y is not (as linear_stored).
bool linear_stored_ref(const float* x, const StoredMatrix& W, const float* b, float* y, std::size_t M, std::size_t K,
                       std::size_t N);

// c = a·b        a: (M, K) ld lda   b: (K, N) ld ldb   c: (M, N) ld ldc
void matmul_ref(const float* a, std::size_t lda, const float* b, std::size_t ldb, float* c,
                std::size_t ldc, std::size_t M, std::size_t K, std::size_t N);

// c = a·bᵀ       a: (M, K) ld lda   b: (N, K) ld ldb   c: (M, N) ld ldc
// (Q·Kᵀ without forming Kᵀ)
void matmul_nt_ref(const float* a, std::size_t lda, const float* b, std::size_t ldb, float* c,
                   std::size_t ldc, std::size_t M, std::size_t K, std::size_t N);

// out = b as (K, N) row-major: b: (K, N) ld ldb, or bᵀ of b_transposed b: (N, K) ld ldb
// (gemm_pack_b's scalar twin: what matmul_ref then reads with ldb = N)
void pack_b_ref(const float* b, std::size_t ldb, bool b_transposed, std::size_t K, std::size_t N, float* out);

// y = x·W + b   x: (M, K)   W: (K, N)   b: (N) or null (zero)   y: (M, N); all contiguous
// (the projections: Q, K, V, W^O, the FFN's two layers)
void linear_ref(const float* x, const float* W, const float* b, float* y, std::size_t M, std::size_t K,
                std::size_t N);

// One row against a matrix, the decode's product (a new token's row by a weight):
//   y = x·W + b    x: (K)   W: (K, N) ld ldw   b: (N) or null   y: (N)
//   y = x·Wᵀ + b   with w_transposed, W: (N, K) ld ldw (the tied unembedding's W_E)
// matmul_ref's (matmul_nt_ref's) row with the bias added after the whole
// sum: each y[j] summed over k ascending from 0.
void gemv_ref(const float* x, const float* W, std::size_t ldw, bool w_transposed, const float* b, float* y,
              std::size_t K, std::size_t N);

// c[i, :] += bias   c: (M, N) ld ldc   bias: (N)
void add_bias_rows_ref(float* c, std::size_t ldc, const float* bias, std::size_t M, std::size_t N);

}  // namespace attntrace

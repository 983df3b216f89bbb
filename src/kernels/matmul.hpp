// Matrix products on raw row-major buffers with leading dimensions, so that a
// head's slice of Q (T, NH, hs) is passed as (T, hs) with ld = C, no copy.
#pragma once

#include <cstddef>

namespace attntrace {

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

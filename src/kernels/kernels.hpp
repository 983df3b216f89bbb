// The kernels the pipeline calls. Each runs the best SIMD version the CPU
// supports (AVX-512, AVX2+FMA, SSE4.2; see simd/kernels.hpp), or its scalar
// *_ref twin when the build has ATTNTRACE_SIMD=OFF, the CPU has none of them,
// or $ATTNTRACE_KERNELS says "ref". The _ref twins, in matmul.hpp,
// softmax.hpp, layernorm.hpp, activations.hpp and attention.hpp, are the
// definitions.
#pragma once

#include <cstddef>
#include <string_view>

#include "kernels/activations.hpp"  // FloatBitsMax
#include "kernels/attention.hpp"  // KeyWindow
#include "kernels/map_fold.hpp"  // MapFold, MapMask
#include "kernels/matmul.hpp"  // StoredMatrix

namespace attntrace {

// Which kernels run: "avx512", "avx2", "sse4.2" or "ref". $ATTNTRACE_KERNELS
// may force a lower one (or "ref") for comparisons; a higher one than the
// CPU has is refused with an InputError.
std::string_view kernel_isa();

// The GEMM's cache blocking for the kernels in use, derived once per process
// from the caches this CPU reports (kernels/blocking.hpp), or the measured
// fallback when it reports none.
struct GemmBlockingInUse;  // kernels/blocking.hpp
const GemmBlockingInUse& gemm_blocking_in_use();

// matmul, matmul_nt and linear of one row (M = 1: a decode step's products)
// run as gemv, with the same numbers.
void matmul(const float* a, std::size_t lda, const float* b, std::size_t ldb, float* c, std::size_t ldc,
            std::size_t M, std::size_t K, std::size_t N);
void matmul_nt(const float* a, std::size_t lda, const float* b, std::size_t ldb, float* c, std::size_t ldc,
               std::size_t M, std::size_t K, std::size_t N);
// matmul_nt with c's values stored past the caches where its rows allow
// (simd::Gemm's stream_c): for a c far larger than L3 that is not read back
// at once, which plain stores would first read in. The same numbers.
void matmul_nt_streamed(const float* a, std::size_t lda, const float* b, std::size_t ldb, float* c, std::size_t ldc,
                        std::size_t M, std::size_t K, std::size_t N);
// B packed once for many products of row blocks of A (matmul_packed): in
// the layout of the kernels in use (pack_b_ref's, B row-major, for the
// scalar ones), gemm_packed_b_floats(K, N) floats at most, `out` 64-byte aligned.
//   b: (K, N) ld ldb, or with b_transposed bᵀ: (N, K) ld ldb
std::size_t gemm_packed_b_floats(std::size_t K, std::size_t N);
void gemm_pack_b(const float* b, std::size_t ldb, bool b_transposed, std::size_t K, std::size_t N, float* out);
// c = a·b with b as gemm_pack_b packed it: the same numbers as matmul (and
// matmul_nt, b_transposed) on any rows of a: each element's sum over K runs
// in the same blocks and order.   a: (M, K) ld lda   c: (M, N) ld ldc
void matmul_packed(const float* a, std::size_t lda, const float* bp, float* c, std::size_t ldc, std::size_t M,
                   std::size_t K, std::size_t N);
void linear(const float* x, const float* W, const float* b, float* y, std::size_t M, std::size_t K, std::size_t N);
// gemm_pack_b of a matrix as stored (StoredMatrix, kernels/matmul.hpp), widened
// to float32 as it is packed: gemm_pack_b's floats for the matrix widened
// first, bit for bit (pack_b_stored_ref for the scalar kernels).
void gemm_pack_b_stored(const StoredMatrix& b, std::size_t K, std::size_t N, float* out);
// y = x·W + b with W read as stored and widened as the GEMM packs it: linear's
// numbers on the widened W, bit for bit, with no float32 copy of W but the
// product's packed panels (linear_stored_ref).   x: (M, K)   W: (K, N)   b: (N) or null   y: (M, N)
// False when W is 16-bit and a value of it is an infinity or a NaN (each
// value checked as it is packed), or W is float32 and a value of y is not
// finite (which any value of W not finite gives, x finite; the caller then
// checks W itself: WeightSource::refuse_if_not_finite).
bool linear_stored(const float* x, const StoredMatrix& W, const float* b, float* y, std::size_t M, std::size_t K,
                   std::size_t N);
// y = x·W + b, or x·Wᵀ + b with w_transposed (gemv_ref): W streamed once, not
// packed; the GEMM's row bit for bit (simd::Gemv), its units shared among the threads.
//   x: (K)   W: (K, N) ld ldw, or (N, K) ld ldw   b: (N) or null   y: (N)
void gemv(const float* x, const float* W, std::size_t ldw, bool w_transposed, const float* b, float* y, std::size_t K,
          std::size_t N);
std::size_t softmax_rows(const float* x, std::size_t rows, std::size_t cols, float* row_max, float* shifted, float* e,
                         float* row_sum, float* out);
// softmax_rows_inplace_ref, exp_rows_ref: equal to softmax_rows' m, s, out and e bit for bit
std::size_t softmax_rows_inplace(float* x, std::size_t rows, std::size_t cols, float* row_max, float* row_sum);
void exp_rows(const float* x, float* e, std::size_t rows, std::size_t cols);
void layernorm_rows(const float* x, std::size_t rows, std::size_t C, float eps, const float* gamma, const float* beta,
                    float* mean, float* var, float* sigma, float* xhat, float* out);
// The FMA peak of the kernels in use, in GFLOP/s, measured now over about
// `seconds` on `threads` threads (0 for the scalar kernels).
double measure_fma_peak(int threads, double seconds);
// The GEMM's micro-kernel alone (simd::GemmMicroKernel) on one thread, in
// GFLOP/s over about `seconds`: the blocking in use (its kc and nc, and mc
// of kMicroKernelPanels A panels), both packed blocks in cache, as in the
// product's inner loops (0 for the scalar kernels, which have no tile).
inline constexpr std::size_t kMicroKernelPanels = 8;
double measure_micro_kernel(double seconds);

// Z_h = softmax(mask(Q_h·K_gᵀ / divisor))·V_g for every head h, g = h / (NH/KVH),
// over key blocks with an online softmax: no (Tq, T) matrix is ever held.
// q, z: (Tq, NH, hs), row stride NH·hs   k, v: (T, KVH, hs), row stride KVH·hs; KVH divides NH.
// keys: query i, at position p = i + (T - Tq), sees keys.sees(p, j) (KeyWindow in
// attention.hpp: none, causal, or a window); requires T >= Tq unless none, and T >= 1.
// Block sizes and passes: attention_streaming_ref in attention.hpp.
// Threads split (head, query block) pairs: the result does not depend on their number.
void attention_streaming(const float* q, const float* k, const float* v, float* z, std::size_t Tq, std::size_t T,
                         std::size_t NH, std::size_t KVH, std::size_t hs, float divisor, KeyWindow keys);
// y = x / divisor (a true division: equals scale_div_ref bit for bit)        x, y: (n)
void scale_div(const float* x, float divisor, float* y, std::size_t n);
// y = x · factor (equals scale_mul_ref bit for bit)                          x, y: (n)
void scale_mul(const float* x, float factor, float* y, std::size_t n);
// y[h·plane + i] = s[h·plane + i] + mask[i]   s, y: (NH, plane)  mask: (plane), e.g. plane = Tq·T
void add_mask_heads(const float* s, const float* mask, float* y, std::size_t NH, std::size_t plane);

void relu(const float* x, float* y, std::size_t n);
void gelu(const float* x, float* y, std::size_t n);
void add(const float* a, const float* b, float* y, std::size_t n);
// The largest bit patterns of x's floats as int32 (float_bits_max_ref):
// `magnitude` with the sign bit cleared (>= 0x7f800000: an infinity or a NaN
// is there, > 0x7f800000: a NaN), `raw` as they are (>= 0x7f800000: +inf or
// a NaN with the sign bit clear). Integers, so one pass of vector max with no
// NaN rules: the run's scan of every step for non-finite values, and max|x|.
FloatBitsMax float_bits_max(const float* x, std::size_t n);
// A heatmap's row folded into its pooled cells (map_fold_row_ref; the sums
// in float lanes, within kMapFoldSumTol of the twin's)
void map_fold_row(const float* x, std::size_t cols, std::size_t f, const MapMask& mask, MapFold* folds);
// y = x past the caches (copy_ref's numbers): a block computed in cache, written
// once to a step far larger than L3 that nothing reads back at once
void copy_streamed(const float* x, float* y, std::size_t n);
void gelu_tanh(const float* x, float* y, std::size_t n);
void swiglu(const float* g, const float* u, float* y, std::size_t n);
// RMSNorm's mean square Σ x² / C (row_mean_square_ref, bit for bit)     x: (rows, C)   ms: (rows)
void row_mean_square(const float* x, std::size_t rows, std::size_t C, float* ms);
// RMSNorm's x̂ = x / σ and γ ⊙ x̂ (and softmax's e / s): divide_rows_ref, gain_ref
void divide_rows(const float* e, const float* s, std::size_t rows, std::size_t cols, float* out);
void gain(const float* xhat, const float* gamma, std::size_t rows, std::size_t C, float* out);
// DyT's x̂ = tanh(α·x) (dyt_tanh_ref, bit for bit)                        x, y: (n)
void dyt_tanh(const float* x, float alpha, float* y, std::size_t n);
// rope_rows (positions.hpp): the angles as there, the rotation vectorised (bit for bit)
void rope_rotate_rows(const float* x, float* y, std::size_t rows, std::size_t heads, std::size_t hs, std::size_t rotary,
                      std::size_t pos0, double base, bool interleaved);

}  // namespace attntrace

// Routes each kernel to its SIMD version for the best instruction set this
// CPU has (xsimd::dispatch over simd::Archs), or to its _ref twin.
#include <algorithm>
#include <cassert>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include <omp.h>

#include "core/error.hpp"
#include "kernels/activations.hpp"
#include "kernels/attention.hpp"
#include "kernels/blocking.hpp"
#include "kernels/kernels.hpp"
#include "kernels/layernorm.hpp"
#include "kernels/matmul.hpp"
#include "kernels/positions.hpp"
#include "kernels/softmax.hpp"

#ifndef ATTNTRACE_SCALAR_ONLY
#include "kernels/simd/kernels.hpp"
#endif

namespace attntrace {

namespace {

enum class Isa { ref, sse4_2, avx2, avx512 };

// The best set this build and this CPU have.
Isa best_available() {
#ifdef ATTNTRACE_SCALAR_ONLY
    return Isa::ref;
#else
    const auto have = xsimd::available_architectures();
    return have.avx512bw ? Isa::avx512 : have.fma3_avx2 ? Isa::avx2 : have.sse4_2 ? Isa::sse4_2 : Isa::ref;
#endif
}

Isa detect() {
    const Isa best = best_available();
    const char* env = std::getenv("ATTNTRACE_KERNELS");
    if (!env || !*env) return best;
    std::string want = env;
    Isa forced = want == "ref" ? Isa::ref : want == "sse4.2" ? Isa::sse4_2 : want == "avx2" ? Isa::avx2
                 : want == "avx512" ? Isa::avx512 : best;
    if (want != "ref" && want != "sse4.2" && want != "avx2" && want != "avx512")
        fail_file("ATTNTRACE_KERNELS", "ref, sse4.2, avx2 or avx512", "\"" + want + "\"");
    if (forced > best)
        fail_file("ATTNTRACE_KERNELS", "an instruction set this build and CPU have", "\"" + want + "\"");
    return forced;
}

Isa isa() {
    static const Isa chosen = detect();
    return chosen;
}

#ifndef ATTNTRACE_SCALAR_ONLY
bool forced() {
    const char* env = std::getenv("ATTNTRACE_KERNELS");
    return env && *env;
}

// Runs functor F for the chosen instruction set: xsimd::dispatch over the
// whole list when nothing is forced, else the forced one directly.
template <class F, class... Args>
auto simd_call(F f, Args... args) {
    static const bool by_env = forced();
    if (!by_env) return xsimd::dispatch<simd::Archs>(f)(args...);
    switch (isa()) {
        case Isa::avx512: return f(xsimd::avx512bw{}, args...);
        case Isa::avx2: return f(xsimd::fma3<xsimd::avx2>{}, args...);
        default: return f(xsimd::sse4_2{}, args...);
    }
}

// Packed panels for the GEMM, one per thread (each thread of a parallel product asks for its own), 64-byte aligned.
float* gemm_workspace() {
    thread_local std::vector<float> buffer;
    if (buffer.empty()) buffer.resize(simd::gemm_workspace_floats() + 16);
    auto p = reinterpret_cast<std::uintptr_t>(buffer.data());
    return reinterpret_cast<float*>((p + 63) & ~std::uintptr_t{63});
}

// Streaming attention's scratch for `threads` threads of one call, 64-byte
// aligned; grows to the largest call seen on this calling thread.
float* attention_workspace(std::size_t floats) {
    thread_local std::vector<float> buffer;
    if (buffer.size() < floats + 16) buffer.resize(floats + 16);
    auto p = reinterpret_cast<std::uintptr_t>(buffer.data());
    return reinterpret_cast<float*>((p + 63) & ~std::uintptr_t{63});
}
#endif

}  // namespace

const GemmBlockingInUse& gemm_blocking_in_use() {
    static const GemmBlockingInUse chosen = [] {
        GemmBlockingInUse b;
        switch (isa()) {
            case Isa::avx512: b.tile = simd::kGemmTileAvx512; break;
            case Isa::avx2: b.tile = simd::kGemmTileAvx2; break;
            case Isa::sse4_2: b.tile = simd::kGemmTileSse; break;
            case Isa::ref: return b;
        }
        b.caches = read_cache_info();
        b.derived = !b.caches.source.empty();
        b.blocking = derive_gemm_blocking(b.caches, b.tile, sizeof(float));
        return b;
    }();
    return chosen;
}

std::string_view kernel_isa() {
    switch (isa()) {
        case Isa::avx512: return "avx512";
        case Isa::avx2: return "avx2";
        case Isa::sse4_2: return "sse4.2";
        case Isa::ref: return "ref";
    }
    return "ref";
}

#ifdef ATTNTRACE_SCALAR_ONLY
// isa() still runs once: it validates ATTNTRACE_KERNELS in this build too.
#define ATTNTRACE_SIMD_OR_REF(simd_expr, ref_expr) \
    (void)isa();                                   \
    return ref_expr
#else
#define ATTNTRACE_SIMD_OR_REF(simd_expr, ref_expr) \
    if (isa() == Isa::ref) return ref_expr;         \
    return simd_expr
#endif

void gemv(const float* x, const float* W, std::size_t ldw, bool w_transposed, const float* b, float* y, std::size_t K,
          std::size_t N) {
    ATTNTRACE_SIMD_OR_REF(simd_call(simd::Gemv{}, x, W, ldw, w_transposed, b, y, K, N, &gemm_workspace,
                                   gemm_blocking_in_use().blocking),
                          gemv_ref(x, W, ldw, w_transposed, b, y, K, N));
}

void matmul(const float* a, std::size_t lda, const float* b, std::size_t ldb, float* c, std::size_t ldc,
            std::size_t M, std::size_t K, std::size_t N) {
    if (M == 1) return gemv(a, b, ldb, false, nullptr, c, K, N);
    ATTNTRACE_SIMD_OR_REF(simd_call(simd::Gemm{}, a, lda, b, ldb, false, c, ldc, M, K, N, &gemm_workspace,
                                   gemm_blocking_in_use().blocking),
                          matmul_ref(a, lda, b, ldb, c, ldc, M, K, N));
}

void matmul_nt(const float* a, std::size_t lda, const float* b, std::size_t ldb, float* c, std::size_t ldc,
               std::size_t M, std::size_t K, std::size_t N) {
    if (M == 1) return gemv(a, b, ldb, true, nullptr, c, K, N);
    ATTNTRACE_SIMD_OR_REF(simd_call(simd::Gemm{}, a, lda, b, ldb, true, c, ldc, M, K, N, &gemm_workspace,
                                   gemm_blocking_in_use().blocking),
                          matmul_nt_ref(a, lda, b, ldb, c, ldc, M, K, N));
}

void matmul_nt_streamed(const float* a, std::size_t lda, const float* b, std::size_t ldb, float* c, std::size_t ldc,
                        std::size_t M, std::size_t K, std::size_t N) {
    ATTNTRACE_SIMD_OR_REF(simd_call(simd::Gemm{}, a, lda, b, ldb, true, c, ldc, M, K, N, &gemm_workspace,
                                   gemm_blocking_in_use().blocking, simd::GemmOptions{true, nullptr}),
                          matmul_nt_ref(a, lda, b, ldb, c, ldc, M, K, N));
}

std::size_t gemm_packed_b_floats(std::size_t K, std::size_t N) {
    constexpr std::size_t kWidestNR = simd::kGemmTileAvx512.nr;
    return K * ((N + kWidestNR - 1) / kWidestNR * kWidestNR);
}

void gemm_pack_b(const float* b, std::size_t ldb, bool b_transposed, std::size_t K, std::size_t N, float* out) {
    ATTNTRACE_SIMD_OR_REF(simd_call(simd::GemmPackB{}, b, ldb, b_transposed, K, N, gemm_blocking_in_use().blocking, out),
                          pack_b_ref(b, ldb, b_transposed, K, N, out));
}

void matmul_packed(const float* a, std::size_t lda, const float* bp, float* c, std::size_t ldc, std::size_t M,
                   std::size_t K, std::size_t N) {
    ATTNTRACE_SIMD_OR_REF(simd_call(simd::Gemm{}, a, lda, nullptr, 0, false, c, ldc, M, K, N, &gemm_workspace,
                                   gemm_blocking_in_use().blocking, simd::GemmOptions{false, bp}),
                          matmul_ref(a, lda, bp, N, c, ldc, M, K, N));
}

void linear(const float* x, const float* W, const float* b, float* y, std::size_t M, std::size_t K, std::size_t N) {
    if (M == 1) return gemv(x, W, N, false, b, y, K, N);
    // the bias added as the product stores its tiles (GemmOptions::bias): no pass reading y back
    ATTNTRACE_SIMD_OR_REF(simd_call(simd::Gemm{}, x, K, W, N, false, y, N, M, K, N, &gemm_workspace,
                                   gemm_blocking_in_use().blocking, simd::GemmOptions{false, nullptr, b}),
                          (matmul_ref(x, K, W, N, y, N, M, K, N), b ? add_bias_rows_ref(y, N, b, M, N) : void()));
}

void gemm_pack_b_stored(const StoredMatrix& b, std::size_t K, std::size_t N, float* out) {
    ATTNTRACE_SIMD_OR_REF(simd_call(simd::GemmPackBStored{}, b.data, b.type, b.ld, b.transposed, K, N,
                                   gemm_blocking_in_use().blocking, out),
                          pack_b_stored_ref(b, K, N, out));
}

bool linear_stored(const float* x, const StoredMatrix& W, const float* b, float* y, std::size_t M, std::size_t K,
                   std::size_t N) {
    // float32: linear's route (one row by gemv); else the GEMM, one row too (gemv reads float32 only):
    // its row is gemv's bit for bit (simd::Gemv). Not checked as read: a value of W not finite makes
    // its column's sums so (inf·0 and NaN·x are NaN), found in y by one integer pass over M·N floats.
    if (W.type == StoredType::f32) {
        if (M == 1) gemv(x, static_cast<const float*>(W.data), W.ld, W.transposed, b, y, K, N);
        else if (isa() == Isa::ref) return linear_stored_ref(x, W, b, y, M, K, N);
#ifndef ATTNTRACE_SCALAR_ONLY
        else
            simd_call(simd::Gemm{}, x, K, static_cast<const float*>(W.data), W.ld, W.transposed, y, N, M, K, N,
                      &gemm_workspace, gemm_blocking_in_use().blocking, simd::GemmOptions{false, nullptr, b});
#endif
        return M * N == 0 || float_bits_max(y, M * N).magnitude < 0x7f800000;
    }
#ifndef ATTNTRACE_SCALAR_ONLY
    if (isa() != Isa::ref) {
        bool not_finite = false;
        simd_call(simd::Gemm{}, x, K, static_cast<const float*>(nullptr), W.ld, W.transposed, y, N, M, K, N,
                  &gemm_workspace, gemm_blocking_in_use().blocking,
                  simd::GemmOptions{false, nullptr, b, W.data, W.type, &not_finite});
        return !not_finite;
    }
#endif
    return linear_stored_ref(x, W, b, y, M, K, N);
}

std::size_t softmax_rows(const float* x, std::size_t rows, std::size_t cols, float* row_max, float* shifted, float* e,
                         float* row_sum, float* out) {
    ATTNTRACE_SIMD_OR_REF(simd_call(simd::SoftmaxRows{}, x, rows, cols, row_max, shifted, e, row_sum, out),
                          softmax_rows_ref(x, rows, cols, row_max, shifted, e, row_sum, out));
}

std::size_t softmax_rows_inplace(float* x, std::size_t rows, std::size_t cols, float* row_max, float* row_sum) {
    ATTNTRACE_SIMD_OR_REF(simd_call(simd::SoftmaxRowsInPlace{}, x, rows, cols, row_max, row_sum),
                          softmax_rows_inplace_ref(x, rows, cols, row_max, row_sum));
}

void exp_rows(const float* x, float* e, std::size_t rows, std::size_t cols) {
    ATTNTRACE_SIMD_OR_REF(simd_call(simd::ExpRows{}, x, e, rows, cols), exp_rows_ref(x, e, rows, cols));
}

void layernorm_rows(const float* x, std::size_t rows, std::size_t C, float eps, const float* gamma, const float* beta,
                    float* mean, float* var, float* sigma, float* xhat, float* out) {
#ifndef ATTNTRACE_SCALAR_ONLY
    if (isa() != Isa::ref) {
        // The statistics in double, each row's terms in the definition's order (rows side by side),
        // then the element-wise passes vectorised: layernorm_rows_ref's numbers bit for bit.
        simd_call(simd::RowMean{}, x, rows, C, mean);
        simd_call(simd::RowVar{}, x, static_cast<const float*>(mean), rows, C, var, std::size_t{0});
        std_eps_ref(var, rows, eps, sigma);
        const bool affine = gamma && beta && out;
        simd_call(simd::NormalizeRows{}, x, rows, C, static_cast<const float*>(mean), static_cast<const float*>(sigma),
                  gamma, beta, xhat, affine ? out : nullptr);
        return;
    }
#endif
    layernorm_rows_ref(x, rows, C, eps, gamma, beta, mean, var, sigma, xhat, out);
}

double measure_fma_peak(int threads, double seconds) {
#ifdef ATTNTRACE_SCALAR_ONLY
    (void)threads;
    (void)seconds;
    return 0.0;
#else
    if (isa() == Isa::ref) return 0.0;
    // Calibrate the iteration count on one short run, then time the real one.
    std::size_t iterations = 1 << 20;
    auto t0 = std::chrono::steady_clock::now();
    simd_call(simd::PeakFma{}, iterations);
    double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    iterations = static_cast<std::size_t>(static_cast<double>(iterations) * seconds / std::max(dt, 1e-6));
    double flops = 0.0;
    t0 = std::chrono::steady_clock::now();
#pragma omp parallel num_threads(threads) reduction(+ : flops)
    flops += simd_call(simd::PeakFma{}, iterations);
    dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return flops / dt / 1e9;
#endif
}

double measure_micro_kernel(double seconds) {
#ifdef ATTNTRACE_SCALAR_ONLY
    (void)seconds;
    return 0.0;
#else
    if (isa() == Isa::ref) return 0.0;
    const GemmBlockingInUse& in_use = gemm_blocking_in_use();
    const std::size_t kc = in_use.blocking.kc, nc = in_use.blocking.nc, mc = kMicroKernelPanels * in_use.tile.mr;
    // Both blocks and C in one 64-byte aligned buffer; values that stay finite over any number of sweeps.
    std::vector<float> buffer(mc * kc + kc * nc + mc * nc + 16, 0.0f);
    auto p = reinterpret_cast<std::uintptr_t>(buffer.data());
    float* ap = reinterpret_cast<float*>((p + 63) & ~std::uintptr_t{63});
    float* bp = ap + mc * kc;
    float* c = bp + kc * nc;
    for (std::size_t i = 0; i < mc * kc; ++i) ap[i] = 1e-3f * static_cast<float>(i % 97);
    for (std::size_t i = 0; i < kc * nc; ++i) bp[i] = 1e-3f * static_cast<float>(i % 89);
    // One sweep to warm the caches and calibrate, then sweeps for about `seconds`.
    auto t0 = std::chrono::steady_clock::now();
    simd_call(simd::GemmMicroKernel{}, kc, mc, nc, ap, bp, c, nc);
    const double once = std::max(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 1e-7);
    const std::size_t sweeps = std::max<std::size_t>(1, static_cast<std::size_t>(seconds / once));
    double flops = 0.0;
    t0 = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < sweeps; ++i) flops += simd_call(simd::GemmMicroKernel{}, kc, mc, nc, ap, bp, c, nc);
    const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return flops / dt / 1e9;
#endif
}

void attention_streaming(const float* q, const float* k, const float* v, float* z, std::size_t Tq, std::size_t T,
                         std::size_t NH, std::size_t KVH, std::size_t hs, float divisor, KeyWindow keys) {
    assert(T >= 1 && ((keys.before == kAllKeys && keys.after == kAllKeys) || T >= Tq));
    if (Tq == 0 || NH == 0 || hs == 0) return;  // z is empty
    assert(KVH >= 1 && NH % KVH == 0);
#ifndef ATTNTRACE_SCALAR_ONLY
    if (isa() != Isa::ref) {
        const int threads = std::max(1, omp_get_max_threads());
        float* work = attention_workspace(static_cast<std::size_t>(threads) * simd::attention_workspace_floats(hs));
        simd_call(simd::AttentionStreaming{}, q, k, v, z, Tq, T, NH, KVH, hs, divisor, keys, work, threads);
        return;
    }
#endif
    attention_streaming_ref(q, k, v, z, Tq, T, NH, KVH, hs, divisor, keys);
}
void scale_div(const float* x, float divisor, float* y, std::size_t n) {
    ATTNTRACE_SIMD_OR_REF(simd_call(simd::ScaleDiv{}, x, divisor, y, n), scale_div_ref(x, divisor, y, n));
}
void scale_mul(const float* x, float factor, float* y, std::size_t n) {
    ATTNTRACE_SIMD_OR_REF(simd_call(simd::ScaleMul{}, x, factor, y, n), scale_mul_ref(x, factor, y, n));
}
void add_mask_heads(const float* s, const float* mask, float* y, std::size_t NH, std::size_t plane) {
    ATTNTRACE_SIMD_OR_REF(simd_call(simd::AddMaskHeads{}, s, mask, y, NH, plane),
                          add_mask_heads_ref(s, mask, y, NH, plane));
}

void relu(const float* x, float* y, std::size_t n) {
    ATTNTRACE_SIMD_OR_REF(simd_call(simd::Relu{}, x, y, n), relu_ref(x, y, n));
}
void gelu(const float* x, float* y, std::size_t n) {
    ATTNTRACE_SIMD_OR_REF(simd_call(simd::Gelu{}, x, y, n), gelu_ref(x, y, n));
}
FloatBitsMax float_bits_max(const float* x, std::size_t n) {
    ATTNTRACE_SIMD_OR_REF(simd_call(simd::BitsMax{}, x, n), float_bits_max_ref(x, n));
}
void map_fold_row(const float* x, std::size_t cols, std::size_t f, const MapMask& mask, MapFold* folds) {
    ATTNTRACE_SIMD_OR_REF(simd_call(simd::MapFoldRow{}, x, cols, f, mask, folds), map_fold_row_ref(x, cols, f, mask, folds));
}
void copy_streamed(const float* x, float* y, std::size_t n) {
    ATTNTRACE_SIMD_OR_REF(simd_call(simd::CopyStreamed{}, x, y, n), copy_ref(x, y, n));
}
void add(const float* a, const float* b, float* y, std::size_t n) {
    ATTNTRACE_SIMD_OR_REF(simd_call(simd::Add{}, a, b, y, n), add_ref(a, b, y, n));
}

void row_mean_square(const float* x, std::size_t rows, std::size_t C, float* ms) {
    ATTNTRACE_SIMD_OR_REF(simd_call(simd::RowMeanSquare{}, x, rows, C, ms), row_mean_square_ref(x, rows, C, ms));
}
void gelu_tanh(const float* x, float* y, std::size_t n) {
    ATTNTRACE_SIMD_OR_REF(simd_call(simd::GeluTanh{}, x, y, n), gelu_tanh_ref(x, y, n));
}
void swiglu(const float* g, const float* u, float* y, std::size_t n) {
    ATTNTRACE_SIMD_OR_REF(simd_call(simd::Swiglu{}, g, u, y, n), swiglu_ref(g, u, y, n));
}
void divide_rows(const float* e, const float* s, std::size_t rows, std::size_t cols, float* out) {
    ATTNTRACE_SIMD_OR_REF(simd_call(simd::DivideRows{}, e, s, rows, cols, out), divide_rows_ref(e, s, rows, cols, out));
}
void gain(const float* xhat, const float* gamma, std::size_t rows, std::size_t C, float* out) {
    ATTNTRACE_SIMD_OR_REF(simd_call(simd::Gain{}, xhat, gamma, rows, C, out), gain_ref(xhat, gamma, rows, C, out));
}
void dyt_tanh(const float* x, float alpha, float* y, std::size_t n) {
    ATTNTRACE_SIMD_OR_REF(simd_call(simd::DytTanh{}, x, alpha, y, n), dyt_tanh_ref(x, alpha, y, n));
}

void rope_rotate_rows(const float* x, float* y, std::size_t rows, std::size_t heads, std::size_t hs, std::size_t rotary,
                      std::size_t pos0, double base, bool interleaved) {
#ifndef ATTNTRACE_SCALAR_ONLY
    if (isa() != Isa::ref) {
        // Per row: the angles as rope_rows computes them (its pass 1), spread to each dimension with
        // the pair's sign; then every head's rotation (its pass 2) in registers.
        std::vector<float> cos_d(hs), sin_d(hs);
        std::vector<int> partner(hs);
        for (std::size_t r = 0; r < rows; ++r) {
            rope_row_tables(pos0 + r, hs, rotary, base, interleaved, cos_d.data(), sin_d.data(), partner.data());
            simd_call(simd::RotatePairs{}, x + r * heads * hs, y + r * heads * hs, heads, hs,
                      static_cast<const float*>(cos_d.data()), static_cast<const float*>(sin_d.data()),
                      static_cast<const int*>(partner.data()));
        }
        return;
    }
#endif
    rope_rows(x, y, rows, heads, hs, rotary, pos0, base, interleaved);
}

}  // namespace attntrace

// The matrix products of each stage, timed alone on warm buffers, with our
// kernels or with OpenBLAS's cblas_sgemm (when CMake found OpenBLAS): the
// kernel-to-kernel comparison, apart from what recording the trace costs.
#include <algorithm>
#include <chrono>
#include <vector>

#include "bench/bench.hpp"
#include "core/tensor.hpp"
#include "kernels/kernels.hpp"

#ifdef ATTNTRACE_HAVE_OPENBLAS
#include <cblas.h>
extern "C" void openblas_set_num_threads(int);
#endif

namespace attntrace {

namespace {

// c (M x N) = a (M x K) · b (K x N, or N x K when trans_b), row-major, leading dimensions.
void gemm(Backend backend, bool trans_b, std::size_t M, std::size_t N, std::size_t K, const float* a, std::size_t lda,
          const float* b, std::size_t ldb, float* c, std::size_t ldc) {
#ifdef ATTNTRACE_HAVE_OPENBLAS
    if (backend == Backend::openblas) {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, static_cast<int>(M),
                    static_cast<int>(N), static_cast<int>(K), 1.0f, a, static_cast<int>(lda), b,
                    static_cast<int>(ldb), 0.0f, c, static_cast<int>(ldc));
        return;
    }
#endif
    (void)backend;
    if (trans_b) matmul_nt(a, lda, b, ldb, c, ldc, M, K, N);
    else matmul(a, lda, b, ldb, c, ldc, M, K, N);
}

}  // namespace

bool have_openblas() {
#ifdef ATTNTRACE_HAVE_OPENBLAS
    return true;
#else
    return false;
#endif
}

double products_seconds(Backend backend, Stage stage, const Dims& d, int repeat, int threads, Activation activation) {
#ifdef ATTNTRACE_HAVE_OPENBLAS
    if (backend == Backend::openblas) openblas_set_num_threads(threads);
#else
    if (backend == Backend::openblas) return 0.0;
    (void)threads;
#endif
    const std::size_t T = d.T, Tq = d.Tq, C = d.C, F = d.F, NH = d.NH, hs = d.hs, hv = d.hv;
    // Q, K, V and concat(Z)'s widths (Q, Z: C and K, V: KVH·hs when heads split d_model)
    const std::size_t QW = NH * hs, KW = d.KVH * hs, VW = d.KVH * hv, ZW = NH * hv;
    const std::size_t W = std::max({C, F, QW, ZW});
    // Allocated as the stage's steps are (core/tensor.hpp: big buffers 2 MiB-aligned, huge pages), so that
    // rows start where they start in the stage: a std::vector's 16-byte-aligned rows put every 64-byte load
    // and store of C across two cache lines (scores, n = 512: 4-6% of our time, 0-2% of OpenBLAS's).
    FloatBuffer x(T * W, 0.5f), w(W * W, 0.25f), y(std::max(T * W, NH * Tq * T), 0.0f), s(NH * Tq * T, 0.125f);
    // The unembedding's table (V, C) and logits (T, V), only for its stage (V is the vocabulary: large).
    const std::size_t V = stage == Stage::unembed ? d.V : 0;
    FloatBuffer table(V * C, 0.25f), logits(T * V, 0.0f);
    // The same products, in the same shapes and layouts, as the stage.
    auto once = [&] {
        switch (stage) {
            case Stage::qkv:  // Q: NH·hs columns; K: KVH·hs; V: KVH·hv
                gemm(backend, false, T, QW, C, x.data(), C, w.data(), QW, y.data(), QW);
                gemm(backend, false, T, KW, C, x.data(), C, w.data(), KW, y.data(), KW);
                gemm(backend, false, T, VW, C, x.data(), C, w.data(), VW, y.data(), VW);
                break;
            case Stage::scores:  // per head: Q_h (Tq x hs, ld NH·hs) · K_gᵀ (T x hs, ld KVH·hs)
                for (std::size_t h = 0; h < NH; ++h)
                    gemm(backend, true, Tq, T, hs, x.data() + h * hs, QW, w.data() + d.kv_of(h) * hs, KW,
                         y.data() + h * Tq * T, T);
                break;
            case Stage::mix:  // per head: A_h (Tq x T) · V_g (T x hv, ld KVH·hv), into Z (ld NH·hv)
                for (std::size_t h = 0; h < NH; ++h)
                    gemm(backend, false, Tq, hv, T, s.data() + h * Tq * T, T, x.data() + d.kv_of(h) * hv, VW,
                         y.data() + h * hv, ZW);
                break;
            case Stage::out: gemm(backend, false, Tq, C, ZW, x.data(), ZW, w.data(), C, y.data(), C); break;
            case Stage::ffn:  // X·W_1 (and SwiGLU's X·W_3), then H·W_2
                gemm(backend, false, T, F, C, x.data(), C, w.data(), F, y.data(), F);
                if (activation == Activation::swiglu) gemm(backend, false, T, F, C, x.data(), C, w.data(), F, y.data(), F);
                gemm(backend, false, T, C, F, x.data(), F, w.data(), C, y.data(), C);
                break;
            case Stage::unembed:  // x (T x C) · W_Eᵀ (V x C), as the tied unembedding (x·W_U costs the same)
                gemm(backend, true, T, V, C, x.data(), C, table.data(), C, logits.data(), V);
                break;
            default: break;
        }
    };
    once();  // warm-up
    std::vector<double> samples;
    for (int i = 0; i < repeat; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        once();
        samples.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(samples.begin(), samples.end());
    return samples[samples.size() / 2];
}

}  // namespace attntrace

// Operation scores: every query against every key, per head.
#include <cstdint>
#include <cstring>
#include <limits>

#include "kernels/kernels.hpp"
#include "kernels/tuning.hpp"
#include "pipeline/stages.hpp"

namespace attntrace {

namespace {

// A float32 sum of n products, each at most p in magnitude, stays within
// n·p·(1 + u)^n (u = 2^-24: each product and each addition rounds by at most
// a factor 1 + u): for n up to 2^16 terms, (1 + u)^n < 1.004. 1.01 covers it
// with room; longer sums get no bound (their scores are scanned).
constexpr double kDotBoundSlack = 1.01;
constexpr std::size_t kDotBoundMaxTerms = std::size_t{1} << 16;

// max |x| over a tensor: the largest of the bit patterns with the sign bit
// cleared, which order as the magnitudes do. A NaN or an infinity gives +inf.
double max_abs(const Tensor& t) {
    constexpr std::int32_t kInfBits = 0x7f800000;
    const std::int32_t m = float_bits_max(t.ptr(), t.size()).magnitude;
    if (m >= kInfBits) return std::numeric_limits<double>::infinity();
    float f;
    std::memcpy(&f, &m, sizeof f);
    return f;
}

}  // namespace

void scores_forward(Run& run) {
    const Dims& d = run.dims();
    // With RoPE the scores read the rotated Q and K (rope.cpp).
    const bool rope = run.config().positions.kind == PositionKind::rope;
    const std::string qn = run.name(scores_query(rope));
    const std::string kn = run.name(scores_key(rope));
    const Tensor* q = run.value(qn);
    const Tensor* k = run.value(kn);
    // S_h = Q_h·K_gᵀ, g = h / (NH/KVH)   Q_h: (Tq, hs) at q + h·hs, row stride NH·hs
    //   K_g: (T, hs) at k + g·hs, row stride KVH·hs   S_h: (Tq, T)
    if (float* s = run.open(run.name(Leaf::scores_raw), {{qn, q}, {kn, k}})) {
        const std::string raw = run.name(Leaf::scores_raw);
        // |S| <= hs · max|Q| · max|K| (rounding included): within float32's range, the raw
        // scores are finite by construction and close() need not scan them (NH·Tq·T floats:
        // 201 MB at BERT-base's n = 2048).
        // Q and K are (T, NH·hs) and (T, KVH·hs): their scans cost 2·C/(NH·T) of the scores'.
        if (d.hs <= kDotBoundMaxTerms)
            run.finite_by_bound(raw, static_cast<double>(d.hs) * max_abs(*q) * max_abs(*k) * kDotBoundSlack);
        // Fused attention: the softmax pass computes them a row block at a time (scores_block).
        if (run.fuses_attention() && run.is_finite_by_construction(raw)) {
            run.defer(raw);
            return run.close();
        }
        // One head per thread (each GEMM then runs on its thread): heads write
        // disjoint planes, so the result does not depend on the thread count.
        const bool parallel = d.NH > 1 && product_flops(Stage::scores, {d, double(d.Tq) * d.T}) > simd::kGemmParallelFlops;
        // Scores far larger than L3 (201 MB at BERT-base's n = 2048) are stored past the caches: the
        // softmax pass reads them back a row block at a time, long after they would have left L3.
        const bool stream = d.NH * d.Tq * d.T * sizeof(float) >= simd::kStreamBytes;
#pragma omp parallel for schedule(static) if (parallel)
        for (std::size_t h = 0; h < d.NH; ++h)
            (stream ? matmul_nt_streamed : matmul_nt)(q->ptr() + h * d.hs, d.NH * d.hs, k->ptr() + d.kv_of(h) * d.hs,
                                                      d.KVH * d.hs, s + h * d.Tq * d.T, d.T, d.Tq, d.hs, d.T);
    }
    run.close();
}

void pack_scores_keys(const Tensor& k, const Dims& d, std::size_t g, float* keys) {
    // K_gᵀ for the product Q_h·K_gᵀ: K_g (T, hs) at k + g·hs, row stride KVH·hs
    gemm_pack_b(k.ptr() + g * d.hs, d.KVH * d.hs, true, d.hs, d.T, keys);
}

void scores_block(const Tensor& q, const float* keys, const Dims& d, std::size_t h, std::size_t i0, std::size_t n,
                  float* s) {
    // S_h[i0 .. i0+n) = Q_h[i0 .. i0+n)·K_gᵀ   (n, hs)·(hs, T): scores_forward's product on these rows
    matmul_packed(q.ptr() + i0 * d.NH * d.hs + h * d.hs, d.NH * d.hs, keys, s, d.T, n, d.hs, d.T);
}

// hook_scores_raw at (h, i, j): query i of head h against key j of its K/V head
float scores_explain(Cell& c) {
    const Dims d = c.dims();
    const std::size_t h = c.at[0], i = c.at[1], j = c.at[2];
    const std::string hn = Cell::label(c.step, 0, h), q = Cell::label(c.step, 1, i), k = Cell::label(c.step, 2, j);
    const bool rope = c.attn_config().positions.kind == PositionKind::rope;
    const Step& Q = c.input(scores_query(rope));
    const Step& K = c.input(scores_key(rope));
    if (rope) c.line("RoPE: the rotated queries and keys (hook_rot_q, hook_rot_k)");
    const std::size_t g = d.kv_of(h);
    const std::string gn = Cell::label(K, 1, g);
    c.line("S[{},{},{}] = Σ_e Q[{},{},e] · K[{},{},e]   (hs = {} terms: query {} against key {})", hn, q, k, q, hn, k,
           gn, d.hs, q, k);
    c.line("{}", kv_group_line(d, hn, h, gn));
    return write_dot(
        c, d.hs, [&](std::size_t e) { return fmt::format("Q[{},{},d{}]", q, hn, e); },
        [&](std::size_t e) { return get(Q, {i, h, e}); },
        [&](std::size_t e) { return fmt::format("K[{},{},d{}]", k, gn, e); },
        [&](std::size_t e) { return get(K, {j, g, e}); });
}

// NH products of (Tq, hs) by (hs, T), over the pairs computed.
std::vector<CostTerm> scores_cost(const CostQuery& q) {
    const Dims& d = q.d;
    const bool w = q.window > 0;
    return {{"scores S = Q·Kᵀ", w ? "NH, n, w" : "NH, n, n", {d.NH, d.Tq, w ? q.window : d.T}, d.NH * q.stored,
             2 * d.NH * q.pairs * double(d.hs), true, true}};
}

}  // namespace attntrace

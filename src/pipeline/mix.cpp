// Operation mix: each query's new vector is the attention-weighted sum of the values.
#include <cmath>
#include <optional>

#include "kernels/kernels.hpp"
#include "kernels/tuning.hpp"
#include "pipeline/mask_pattern.hpp"
#include "pipeline/stages.hpp"

namespace attntrace {

namespace {

// Z from Q, K and V over key blocks with an online softmax (see
// kernels/attention.hpp): the steps of scores..softmax are neither kept nor
// given, so none of the T x T matrices is ever held.
void mix_streaming(Run& run) {
    const Dims& d = run.dims();
    // With RoPE, the rotated Q and K (rope.cpp). (ALiBi never streams: see plan.cpp.)
    const bool rope = run.config().positions.kind == PositionKind::rope;
    const std::string qn = run.name(scores_query(rope));
    const std::string kn = run.name(scores_key(rope));
    const Tensor* q = run.value(qn);
    const Tensor* k = run.value(kn);
    const Tensor* v = run.value(run.name(Leaf::v));
    // Z_h = softmax(mask(Q_h·K_gᵀ / √hs))·V_g, g = h / (NH/KVH)   Q: (Tq, NH, hs)   K, V: (T, KVH, hs)   Z: (Tq, NH, hs)
    // (the plan streams only when hv = hs)
    if (float* z = run.open(run.name(Leaf::z), {{qn, q}, {kn, k}, {run.name(Leaf::v), v}})) {
        // the scale operation's divisor (the plan never streams a multiply_by scale)
        const float divisor = scale_op(run.config(), d).s;
        // the plan streams only masks a KeyWindow expresses (none, causal, window)
        attention_streaming(q->ptr(), k->ptr(), v->ptr(), z, d.Tq, d.T, d.NH, d.KVH, d.hs, divisor,
                            key_window(run.config()).value());
    }
    run.close();
    if (Step* s = run.recorded(run.name(Leaf::z)); s && s->source == StepSource::computed)
        s->note = "streamed: softmax(QKᵀ/√hs)·V over blocks of keys with a running max and sum; the scores and "
                  "weights were never held whole (trace policy keeps none of them)";
}

}  // namespace

void mix_forward(Run& run) {
    if (run.plan().stream_attention) return mix_streaming(run);
    const Dims& d = run.dims();
    const Tensor* a = run.value(run.name(Leaf::pattern));
    const Tensor* v = run.value(run.name(Leaf::v));
    // Fused attention: the softmax pass computed Z a row block at a time (mix_block).
    if (std::optional<Tensor> ahead = run.take_ahead(run.name(Leaf::z))) {
        run.open_with(run.name(Leaf::z), {{run.name(Leaf::pattern), a}, {run.name(Leaf::v), v}}, std::move(*ahead));
        return run.close();
    }
    // Z_h = A_h·V_g, g = h / (NH/KVH)   A_h: (Tq, T)   V_g: (T, hv) at v + g·hv, stride KVH·hv
    //   Z_h: (Tq, hv) at z + h·hv, stride NH·hv (= C when heads split d_model)
    // Writing each head into its own columns of Z is the concatenation.
    if (float* z = run.open(run.name(Leaf::z),
                            {{run.name(Leaf::pattern), a}, {run.name(Leaf::v), v}})) {
        // One head per thread, writing disjoint columns of Z (see scores.cpp).
        const bool parallel = d.NH > 1 && product_flops(Stage::mix, {d, double(d.Tq) * d.T}) > simd::kGemmParallelFlops;
#pragma omp parallel for schedule(static) if (parallel)
        for (std::size_t h = 0; h < d.NH; ++h)
            matmul(a->ptr() + h * d.Tq * d.T, d.T, v->ptr() + d.kv_of(h) * d.hv, d.KVH * d.hv, z + h * d.hv,
                   d.NH * d.hv, d.Tq, d.T, d.hv);
    }
    run.close();
}

void pack_mix_values(const Tensor& v, const Dims& d, std::size_t g, float* values) {
    // V_g (T, hv) at v + g·hv, row stride KVH·hv
    gemm_pack_b(v.ptr() + g * d.hv, d.KVH * d.hv, false, d.T, d.hv, values);
}

void mix_block(const float* a, const float* values, const Dims& d, std::size_t h, std::size_t i0, std::size_t n,
               float* z) {
    // Z_h[i0 .. i0+n) = A_h[i0 .. i0+n)·V_g   (n, T)·(T, hv): mix_forward's product on these rows
    matmul_packed(a, d.T, values, z + i0 * d.NH * d.hv + h * d.hv, d.NH * d.hv, n, d.T, d.hv);
}

// hook_z at (i, h, e): query i of head h mixes the values of its K/V head
float mix_explain(Cell& c) {
    const Dims d = c.dims();
    const std::size_t i = c.at[0], h = c.at[1], e = c.at[2];
    const Step& A = c.input(Leaf::pattern);
    const Step& V = c.input(Leaf::v);
    const std::size_t g = d.kv_of(h);
    const std::string q = Cell::label(c.step, 0, i), hn = Cell::label(c.step, 1, h), gn = Cell::label(V, 1, g);
    c.line("Z[{},{},d{}] = Σ_j A[{},{},j] · V[j,{},d{}]   (query {} mixes the values of {} keys)", q, hn, e, hn, q,
           gn, e, q, d.T);
    c.line("{}", kv_group_line(d, hn, h, gn));
    return write_dot(
        c, d.T, [&](std::size_t j) { return fmt::format("A[{},{},{}]", hn, q, Cell::label(A, 2, j)); },
        [&](std::size_t j) { return get(A, {h, i, j}); },
        [&](std::size_t j) { return fmt::format("V[{},{},d{}]", Cell::label(V, 0, j), gn, e); },
        [&](std::size_t j) { return get(V, {j, g, e}); });
}

// NH products of (Tq, T) by (T, hv), over the pairs computed.
std::vector<CostTerm> mix_cost(const CostQuery& q) {
    const Dims& d = q.d;
    const std::size_t zw = d.NH * d.hv;  // = C when heads split d_model
    return {{"Z = A·V", zw == d.C ? "n, C" : "n, NH·hv", {d.Tq, zw}, double(d.Tq) * zw,
             2 * d.NH * q.pairs * double(d.hv), true, true}};
}

}  // namespace attntrace

// The softmax's fast paths (pipeline/softmax_fast.hpp): derived row blocks
// and the fused attention, each bit-equal to the reference passes.
#include "pipeline/softmax_fast.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <vector>

#include "kernels/kernels.hpp"
#include "kernels/softmax.hpp"
#include "kernels/tuning.hpp"
#include "pipeline/stages.hpp"

namespace attntrace {

namespace {

// Floats per row block of the derived softmax (softmax_derived): 512 KiB, within L2.
constexpr std::size_t kDerivedBlockFloats = std::size_t{1} << 17;
const Tensor kNoValues;

// Rows per block of the fused attention (softmax_fused): about 384 KiB of
// scores, floored to whole GEMM row panels (42: a multiple of every
// instruction set's MR, 14 and 6). At T = 2048: 42 rows, so that the block's
// raw scores and weights (2 x 336 KiB, each thread's own scratch) and the
// head's packed K and V (2 x 512 KiB) stay in a 2 MiB L2 between the
// products and the softmax (fused_attention_scratch_floats: the plan counts it).
constexpr std::size_t kFusedBlockFloats = std::size_t{96} << 10;
constexpr std::size_t kFusedRowUnit = 42;

// Rows per block for rows of `cols` keys and `rows` queries per head (no more than a head has).
std::size_t fused_block_rows(std::size_t cols, std::size_t rows) {
    const std::size_t fit = kFusedBlockFloats / std::max<std::size_t>(cols, 1);
    return std::max<std::size_t>(1, std::min(rows, std::max(kFusedRowUnit, fit / kFusedRowUnit * kFusedRowUnit)));
}

// A float buffer aligned to 64 bytes (gemm_pack_b's output; whole registers for copy_streamed).
struct Aligned {
    std::vector<float> buffer;
    float* p;
    explicit Aligned(std::size_t n) : buffer(n + 16) {
        const std::size_t off = reinterpret_cast<std::uintptr_t>(buffer.data()) / sizeof(float) % 16;
        p = buffer.data() + (16 - off) % 16;
    }
};

// plan.fuse_attention: per row block of one head, the raw scores (the scores
// operation's product, scores_block), the weights as softmax_derived computes
// them, and Z's rows (the mix operation's product, mix_block), in the
// thread's scratch in L2; then the block's raw scores and weights are copied
// to their steps past the caches. So each is written to memory once and never
// read back, and no plain store first reads a line of them in (the
// materialised passes moved ~1.2 GB at n = 2048 for 0.4 GB of steps). Z is
// held for the mix pass (Run::hold_ahead). Every number is the one the
// passes compute separately (tests/test_fused_attention.cpp).
void softmax_fused(Run& run, const Derivation& x, float* a, float* m, float* s) {
    const Dims& d = run.dims();
    const std::size_t cols = d.T;
    const bool rope = run.config().positions.kind == PositionKind::rope;
    const Tensor& q = *run.value(run.name(scores_query(rope)));
    const Tensor& k = *run.value(run.name(scores_key(rope)));
    const Tensor* v = run.value(run.name(Leaf::v));
    float* raw = run.recorded(run.name(Leaf::scores_raw))->buffer().ptr();
    const StepFinder find = run.finder();
    const std::size_t block = fused_block_rows(cols, d.Tq);
    const std::size_t per_head = (d.Tq + block - 1) / block, blocks = d.NH * per_head;
    std::optional<Tensor> z;
    if (v) z = run.scratch({d.Tq, d.NH, d.hv});  // recorded by the mix pass (open_with), its buffer then the step's
    float* zp = z ? z->ptr() : nullptr;
#pragma omp parallel if (blocks > 1 && d.NH * d.Tq * cols > simd::kParallelFloats)
    {
        Aligned keys(gemm_packed_b_floats(d.hs, d.T)), values(v ? gemm_packed_b_floats(d.T, d.hv) : 0);
        Aligned scores(block * cols), weights(block * cols);
        std::size_t packed = d.KVH;  // the K/V head packed in keys and values (none yet)
#pragma omp for schedule(static)
        for (std::size_t b = 0; b < blocks; ++b) {
            const std::size_t h = b / per_head, i0 = b % per_head * block, nr = std::min(block, d.Tq - i0);
            const std::size_t r0 = h * d.Tq + i0;
            if (d.kv_of(h) != packed) {
                packed = d.kv_of(h);
                pack_scores_keys(k, d, packed, keys.p);
                if (v) pack_mix_values(*v, d, packed, values.p);
            }
            scores_block(q, keys.p, d, h, i0, nr, scores.p);
            derive_rows(x, find, weights.p, r0, nr, cols, scores.p);
            copy_streamed(scores.p, raw + r0 * cols, nr * cols);
            softmax_rows_inplace(weights.p, nr, cols, m + r0, s + r0);
            if (v) mix_block(weights.p, values.p, d, h, i0, nr, zp);
            copy_streamed(weights.p, a + r0 * cols, nr * cols);
        }
    }
    run.filled(run.name(Leaf::scores_raw));
    if (z) run.hold_ahead(run.name(Leaf::z), std::move(*z));
}

}  // namespace

std::size_t fused_attention_scratch_floats(const Dims& d) {
    // as softmax_fused allocates it: packed K and V, the block's scores and weights, each aligned
    return gemm_packed_b_floats(d.hs, d.T) + gemm_packed_b_floats(d.T, d.hv) + 2 * fused_block_rows(d.T, d.Tq) * d.T + 64;
}

// plan.derive_attention: the weights from the raw scores, row block by row
// block: each block's masked scores S̃ + M derived into the weights' buffer
// (the chain the scale and mask passes recorded), then softmax over them in
// place. m and s are recorded; the shifted scores and exps become derived
// steps of m (the kernels' own lanes: the numbers softmax_rows writes).
void softmax_derived(Run& run, std::size_t rows, std::size_t cols) {
    const SoftmaxNames n(run);
    const Tensor* ready = run.computable(n.in) ? &kNoValues : nullptr;  // present: a derivation, not a buffer
    // Recorded in the catalogue's order: m, then the shifted scores and exps derived from it, then s and A.
    float* m = run.open(n.max, {{n.in, ready}});
    // shifted = (S̃ + M) - m_i, a blocked row (m = -inf) staying -inf;  e = exp(shifted)
    DerivedOp shift;
    shift.reads = {n.max};
    shift.apply = [](std::span<const Tensor* const> in, const float* x, float* y, std::size_t r0, std::size_t nr,
                     std::size_t c) {
        shift_rows_ref(x, in[0]->ptr() + r0, nr, c, y);
    };
    run.derive(n.shifted, n.in, std::move(shift));
    DerivedOp exp;
    exp.apply = [](std::span<const Tensor* const>, const float* x, float* y, std::size_t, std::size_t nr, std::size_t c) {
        exp_rows(x, y, nr, c);
    };
    run.derive(n.exp, n.shifted, std::move(exp));
    // Their inputs as the fused kernel's steps list them (every step of the softmax reads the masked scores),
    // so that the trace is the one a buffered run writes.
    for (const std::string* step : {&n.shifted, &n.exp})
        if (Step* st = run.recorded(*step)) {
            st->inputs = {n.in};
            if (st->source == StepSource::not_computable) st->note = fmt::format("needs {}, which is not available", n.in);
        }
    float* s = run.open(n.sum, {{n.in, ready}});
    float* a = run.open(n.pattern, {{n.in, ready}});
    // The fused attention (plan.fuse_attention) left the raw scores to this pass.
    const bool fused = run.deferred(run.name(Leaf::scores_raw));
    if (fused && !a) throw std::logic_error("attntrace: the fused attention's weights are not computable");
    if (a) {
        const Derivation x = run.derivation_of(n.in);
        if (fused) {
            softmax_fused(run, x, a, m, s);
        } else {
            const StepFinder find = run.finder();
            // Rows per block: a block's scores stay in L2 between the chain and the softmax.
            const std::size_t block = std::max<std::size_t>(1, kDerivedBlockFloats / std::max<std::size_t>(cols, 1));
            const std::size_t blocks = (rows + block - 1) / block;
#pragma omp parallel for schedule(static) if (blocks > 1 && rows * cols > simd::kParallelFloats)
            for (std::size_t b = 0; b < blocks; ++b) {
                const std::size_t r0 = b * block, nr = std::min(block, rows - r0);
                derive_rows(x, find, a + r0 * cols, r0, nr, cols);
                softmax_rows_inplace(a + r0 * cols, nr, cols, m + r0, s + r0);
            }
        }
        // A score past float32's range (an overflowing scale): refused naming the step it happened in.
        if (std::any_of(m, m + rows, [](float v) { return std::isnan(v) || v == std::numeric_limits<float>::infinity(); }))
            for (const std::string& step : {run.name(Leaf::scores_scaled), n.in}) run.check_derived(step);
        else  // every row max finite or -inf: each weight is exp(x - m) <= 1 over a sum >= 1 (the max's exp(0)),
              // or 0 in a blocked row
            run.finite_by_construction(n.pattern);
    }
    run.close();
}

}  // namespace attntrace

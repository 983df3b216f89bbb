// Operation mask: which keys each query may see, and the scores with the mask
// added: to the scaled scores (the default), or to the raw ones, which it then
// scales as the scale operation does (config.mask_at "raw"). With "weights" M
// holds 1 and 0 and nothing is added: softmax.cpp zeroes the weights with it.
#include <algorithm>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include "kernels/kernels.hpp"
#include "pipeline/mask_pattern.hpp"
#include "pipeline/stages.hpp"

namespace attntrace {

namespace {

// config.mask_at "raw": S + M   (NH, Tq, T), then (S + M) / s, scaled as the
// scale operation scales (apply_scale, with the recorded factor when there is one).
void mask_raw_then_scale(Run& run, const Tensor* mask) {
    const Dims& d = run.dims();
    const std::string raw = run.name(Leaf::scores_raw), masked = run.name(Leaf::scores_masked),
                      factor = run.name(Leaf::scale_factor), out = run.name(Leaf::attn_scores);
    const Tensor* s = run.value(raw);
    if (float* m = run.open(masked, {{raw, s}, {run.name(Leaf::mask), mask}}))
        add_mask_heads(s->ptr(), mask->ptr(), m, d.NH, d.Tq * d.T);
    run.close();
    const Tensor* sm = run.value(masked);
    const Tensor* f = run.config().scale.recorded ? run.value(factor) : nullptr;
    const ScaleOp op = scale_op(run.config(), d);
    float* y = run.config().scale.recorded ? run.open(out, {{masked, sm}, {factor, f}}) : run.open(out, {{masked, sm}});
    if (y) apply_scale(op, f ? f->ptr() : nullptr, sm->ptr(), y, d.NH, d.Tq * d.T);
    run.close();
    run.set_formula(out, fmt::format("(S_h + M) {} s   (config.mask_at \"raw\": masked, then scaled)", op.multiply ? "·" : "/"),
                    "The scores softmax sees: the masked raw scores scaled; blocked cells stay -inf.");
}

// config.mask_at "weights": nothing is added; the normaliser reads S̃ and the mask zeroes its weights (softmax.cpp).
void mask_weights_later(Run& run) {
    const std::string scaled = run.name(Leaf::scores_scaled), out = run.name(Leaf::attn_scores);
    const Tensor* s = run.value(scaled);
    if (float* y = run.open(out, {{scaled, s}})) std::copy_n(s->ptr(), s->size(), y);
    run.close();
    run.set_formula(out, "S̃_h   (config.mask_at \"weights\": no mask added; it zeroes the weights after the normaliser)",
                    "The scores the normaliser sees, every key's: the mask applies to the weights instead.");
}

}  // namespace

DerivedOp mask_rows(const std::string& mask, std::size_t Tq, bool same_rows) {
    DerivedOp d;
    d.reads = {mask};
    // row r of (NH, Tq, T) is query r % Tq's: M's row
    d.apply = [Tq, same_rows](std::span<const Tensor* const> in, const float* x, float* y, std::size_t r0, std::size_t n,
                              std::size_t cols) {
        // M's rows all alike (no mask, or one every query shares): every row adds row 0, which stays in L1;
        // M itself (T x T: 16 MiB at n = 2048) is then not read once per head. The same additions.
        if (same_rows) return add_mask_heads(x, in[0]->ptr(), y, n, cols);
        // one kernel call per run of rows up to M's last row (element-wise: the numbers are the same as row by
        // row; a call per row cost ~0.15 us each, 1.8 ms of the BERT-base softmax pass at n = 512)
        for (std::size_t i = 0; i < n;) {
            const std::size_t q = (r0 + i) % Tq, k = std::min(n - i, Tq - q);
            add_mask_heads(x + i * cols, in[0]->ptr() + q * cols, y + i * cols, 1, k * cols);
            i += k;
        }
    };
    return d;
}

namespace {

// Whether every row of M (rows x cols) holds row 0's bits.
bool rows_alike(const Tensor& m, std::size_t rows, std::size_t cols) {
    for (std::size_t r = 1; r < rows; ++r)
        if (std::memcmp(m.ptr(), m.ptr() + r * cols, cols * sizeof(float)) != 0) return false;
    return true;
}

}  // namespace

void mask_forward(Run& run) {
    const Dims& d = run.dims();
    const MaskAt at = run.config().mask_at;
    // M: (Tq, T), 0 where query i may see key j, else -inf (1 and 0 when it
    // multiplies the weights); the pattern of config.mask (mask_pattern.hpp:
    // query i sits at position i + T - Tq).
    const std::string mask_name = run.name(Leaf::mask);
    if (float* m = run.open(mask_name, {})) MaskPattern(run.config(), d.Tq, d.T).fill(m);
    run.close();
    if (at == MaskAt::weights)
        run.set_formula(mask_name, "M[i,j] = 1 where query i may see key j, 0 where it may not   (config.mask_at \"weights\")",
                        "Multiplies the weights after the normaliser: a blocked key's weight becomes exactly 0.");
    alibi_forward(run);  // alibi.cpp: with ALiBi, its slopes and bias (NH, Tq, T)
    const Tensor* mask = run.value(mask_name);
    if (at != MaskAt::scaled) {
        if (at == MaskAt::raw) mask_raw_then_scale(run, mask);
        else mask_weights_later(run);
        return;
    }
    if (run.config().positions.kind == PositionKind::alibi) {
        const Tensor* s = run.value(run.name(Leaf::scores_scaled));
        const Tensor* bias = run.value(run.name(Leaf::alibi));
        // S̃ + bias + M   (NH, Tq, T)
        if (float* out = run.open(run.name(Leaf::attn_scores), {{run.name(Leaf::scores_scaled), s},
                                                                     {run.name(Leaf::alibi), bias},
                                                                     {mask_name, mask}}))
            add_alibi_mask(s->ptr(), bias->ptr(), mask->ptr(), out, d.NH, d.Tq * d.T);
        run.close();
        return;
    }
    // S̃ + M   (NH, Tq, T) + (Tq, T) broadcast over heads; -inf + finite = -inf
    if (run.plan().derive_attention) {
        run.derive(run.name(Leaf::attn_scores), run.name(Leaf::scores_scaled),
                   mask_rows(mask_name, d.Tq, mask && rows_alike(*mask, d.Tq, d.T)));
        return run.close();
    }
    const Tensor* s = run.value(run.name(Leaf::scores_scaled));
    if (float* out = run.open(run.name(Leaf::attn_scores), {{run.name(Leaf::scores_scaled), s}, {mask_name, mask}}))
        add_mask_heads(s->ptr(), mask->ptr(), out, d.NH, d.Tq * d.T);
    run.close();
}

// hook_mask at (i, j); hook_attn_scores at (h, i, j); ALiBi's steps (alibi.cpp)
float mask_explain(Cell& c) {
    constexpr float kNegInf = -std::numeric_limits<float>::infinity();
    const Dims d = c.dims();
    const Config cfg = c.attn_config();
    if (c.leaf() == Leaf::alibi_slopes || c.leaf() == Leaf::alibi) return alibi_explain(c);
    if (c.leaf() == Leaf::mask) {
        const std::size_t i = c.at[0], j = c.at[1];
        const MaskPattern pattern(cfg, d.Tq, d.T);
        for (const std::string& l : pattern.reason(i, j, Cell::label(c.step, 0, i), Cell::label(c.step, 1, j)))
            c.line("{}", l);
        if (cfg.mask_at == MaskAt::weights) return pattern.allows(i, j) ? 1.0f : 0.0f;
        return pattern.allows(i, j) ? 0.0f : kNegInf;
    }
    // hook_attn_scores: S̃ + M, or (S̃ + bias) + M with ALiBi; (S + M) / s with the mask before the scaling
    const std::size_t h = c.at[0], i = c.at[1], j = c.at[2];
    const std::string hn = Cell::label(c.step, 0, h), q = Cell::label(c.step, 1, i), k = Cell::label(c.step, 2, j);
    if (cfg.mask_at == MaskAt::weights) {
        const float s = get(c.input(Leaf::scores_scaled), {h, i, j});
        c.line("S̃[{},{},{}] = {}   (config.mask_at \"weights\": no mask is added to the scores)", hn, q, k, c.num(s));
        return s;
    }
    if (cfg.mask_at == MaskAt::raw && c.leaf() == Leaf::attn_scores)
        return explain_scale(c, get(c.input(Leaf::scores_masked), {h, i, j}), h,
                             fmt::format("(S + M)[{},{},{}]", hn, q, k));
    const bool raw = cfg.mask_at == MaskAt::raw;  // hook_scores_masked: S + M
    const float s = get(c.input(raw ? Leaf::scores_raw : Leaf::scores_scaled), {h, i, j});
    const float m = get(c.input(Leaf::mask), {i, j});
    const char* seen = m == 0.0f ? "   (key visible to the query)" : "   (key blocked for this query)";
    float r = 0;
    if (cfg.positions.kind == PositionKind::alibi) {
        const float b = get(c.input(Leaf::alibi), {h, i, j});
        c.line("(S̃[{},{},{}] + bias[{},{},{}]) + M[{},{}] = ({} + {}) + {}{}", hn, q, k, hn, q, k, q, k, c.num(s),
               c.num(b), c.num(m), seen);
        r = (s + b) + m;
    } else {
        c.line("{}[{},{},{}] + M[{},{}] = {} + {}{}", raw ? "S" : "S̃", hn, q, k, q, k, c.num(s), c.num(m), seen);
        r = s + m;
    }
    c.line("  = {}", c.num(r));
    return r;
}

}  // namespace attntrace

// Operation mask: which keys each query may see, and the scores with the mask added.
#include <limits>

#include "kernels/kernels.hpp"
#include "pipeline/mask_pattern.hpp"
#include "pipeline/stages.hpp"

namespace attntrace {

void mask_forward(Run& run) {
    const Dims& d = run.dims();
    // M: (Tq, T), 0 where query i may see key j, else -inf; the pattern of
    // config.mask (mask_pattern.hpp: query i sits at position i + T - Tq).
    if (float* m = run.open(run.name(Leaf::mask), {})) MaskPattern(run.config(), d.Tq, d.T).fill(m);
    run.close();
    alibi_forward(run);  // alibi.cpp: with ALiBi, its slopes and bias (NH, Tq, T)
    const Tensor* mask = run.value(run.name(Leaf::mask));
    const Tensor* s = run.value(run.name(Leaf::scores_scaled));
    if (run.config().positions.kind == PositionKind::alibi) {
        const Tensor* bias = run.value(run.name(Leaf::alibi));
        // S̃ + bias + M   (NH, Tq, T)
        if (float* out = run.open(run.name(Leaf::attn_scores), {{run.name(Leaf::scores_scaled), s},
                                                                     {run.name(Leaf::alibi), bias},
                                                                     {run.name(Leaf::mask), mask}}))
            add_alibi_mask(s->ptr(), bias->ptr(), mask->ptr(), out, d.NH, d.Tq * d.T);
        run.close();
        return;
    }
    // S̃ + M   (NH, Tq, T) + (Tq, T) broadcast over heads; -inf + finite = -inf
    if (float* out = run.open(run.name(Leaf::attn_scores),
                              {{run.name(Leaf::scores_scaled), s}, {run.name(Leaf::mask), mask}})) {
        add_mask_heads(s->ptr(), mask->ptr(), out, d.NH, d.Tq * d.T);
    }
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
        return pattern.allows(i, j) ? 0.0f : kNegInf;
    }
    // hook_attn_scores: S̃ + M, or (S̃ + bias) + M with ALiBi
    const std::size_t h = c.at[0], i = c.at[1], j = c.at[2];
    const std::string hn = Cell::label(c.step, 0, h), q = Cell::label(c.step, 1, i), k = Cell::label(c.step, 2, j);
    const float s = get(c.input(Leaf::scores_scaled), {h, i, j});
    const float m = get(c.input(Leaf::mask), {i, j});
    const char* seen = m == 0.0f ? "   (key visible to the query)" : "   (key blocked for this query)";
    float r = 0;
    if (cfg.positions.kind == PositionKind::alibi) {
        const float b = get(c.input(Leaf::alibi), {h, i, j});
        c.line("(S̃[{},{},{}] + bias[{},{},{}]) + M[{},{}] = ({} + {}) + {}{}", hn, q, k, hn, q, k, q, k, c.num(s),
               c.num(b), c.num(m), seen);
        r = (s + b) + m;
    } else {
        c.line("S̃[{},{},{}] + M[{},{}] = {} + {}{}", hn, q, k, q, k, c.num(s), c.num(m), seen);
        r = s + m;
    }
    c.line("  = {}", c.num(r));
    return r;
}

}  // namespace attntrace

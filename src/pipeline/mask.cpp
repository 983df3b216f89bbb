// Stage mask: which keys each query may see, and the scores with the mask added.
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

}  // namespace attntrace

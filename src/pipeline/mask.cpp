// Stage mask: which keys each query may see, and the scores with the mask added.
#include "kernels/kernels.hpp"
#include "pipeline/stages.hpp"

namespace attntrace {

void mask_forward(Run& run) {
    const Dims& d = run.dims();
    // M: (Tq, T). Causal: query i sits at position i + (T - Tq) (the last Tq
    // positions, as when a model decodes with a cache) and sees keys up to it.
    if (float* m = run.open("blocks.0.attn.hook_mask", {})) {
        const bool causal = run.lesson().config.mask == MaskKind::causal;
        const std::size_t offset = d.T - d.Tq;
        for (std::size_t i = 0; i < d.Tq; ++i)
            for (std::size_t j = 0; j < d.T; ++j) m[i * d.T + j] = causal && j > i + offset ? kNegInf : 0.0f;
    }
    run.close();
    alibi_forward(run);  // alibi.cpp: with ALiBi, its slopes and bias (NH, Tq, T)
    const Tensor* mask = run.value("blocks.0.attn.hook_mask");
    const Tensor* s = run.value("blocks.0.attn.hook_scores_scaled");
    if (run.lesson().config.positions.kind == PositionKind::alibi) {
        const Tensor* bias = run.value("blocks.0.attn.hook_alibi");
        // S̃ + bias + M   (NH, Tq, T)
        if (float* out = run.open("blocks.0.attn.hook_attn_scores", {{"blocks.0.attn.hook_scores_scaled", s},
                                                                     {"blocks.0.attn.hook_alibi", bias},
                                                                     {"blocks.0.attn.hook_mask", mask}}))
            add_alibi_mask(s->ptr(), bias->ptr(), mask->ptr(), out, d.NH, d.Tq * d.T);
        run.close();
        return;
    }
    // S̃ + M   (NH, Tq, T) + (Tq, T) broadcast over heads; -inf + finite = -inf
    if (float* out = run.open("blocks.0.attn.hook_attn_scores",
                              {{"blocks.0.attn.hook_scores_scaled", s}, {"blocks.0.attn.hook_mask", mask}})) {
        add_mask_heads(s->ptr(), mask->ptr(), out, d.NH, d.Tq * d.T);
    }
    run.close();
}

}  // namespace attntrace

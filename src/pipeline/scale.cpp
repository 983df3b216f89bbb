// Operation scale: divide the scores by √hs (or not, to show why it exists).
#include <cmath>

#include "kernels/kernels.hpp"
#include "pipeline/stages.hpp"

namespace attntrace {

float scale_divisor(const Config& c, const Dims& d) { return c.scale ? std::sqrt(static_cast<float>(d.hs)) : 1.0f; }

void scale_forward(Run& run) {
    const Tensor* s = run.value(run.name(Leaf::scores_raw));
    // S̃ = S / √hs   (NH, Tq, T); with config.scale false, S̃ = S
    if (float* out = run.open(run.name(Leaf::scores_scaled), {{run.name(Leaf::scores_raw), s}}))
        scale_div(s->ptr(), scale_divisor(run.config(), run.dims()), out, s->size());
    run.close();
    Step* step = run.recorded(run.name(Leaf::scores_scaled));
    if (!run.config().scale && step->source == StepSource::computed)
        step->note = "scaling is switched off (config.scale = false): S̃ = S";
}

// hook_scores_scaled at (h, i, j)
float scale_explain(Cell& c) {
    const std::size_t h = c.at[0], i = c.at[1], j = c.at[2];
    const float s = get(c.input(Leaf::scores_raw), {h, i, j});
    const Config cfg = c.attn_config();
    const float div = scale_divisor(cfg, c.dims());
    if (!cfg.scale)
        c.line("scaling is off (config.scale false): S̃ = S = {}", c.num(s));
    else
        c.line("S̃ = S / √hs = {} / √{} = {} / {}", c.num(s), c.dims().hs, c.num(s), c.num(div));
    const float r = s / div;
    c.line("  = {}", c.num(r));
    return r;
}

// One division per pair and head (docs/cost.md).
std::vector<CostTerm> scale_cost(const CostQuery& q) {
    const Dims& d = q.d;
    const bool w = q.window > 0;
    return {{"scaled S / √hs", w ? "NH, n, w" : "NH, n, n", {d.NH, d.Tq, w ? q.window : d.T}, d.NH * q.stored,
             d.NH * q.pairs, false, true}};
}

}  // namespace attntrace

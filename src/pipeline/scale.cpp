// Stage scale: divide the scores by √hs (or not, to show why it exists).
#include <cmath>

#include "kernels/kernels.hpp"
#include "pipeline/stages.hpp"

namespace attntrace {

void scale_forward(Run& run) {
    const Dims& d = run.dims();
    const Tensor* s = run.value(run.name(Leaf::scores_raw));
    // S̃ = S / √hs   (NH, Tq, T); with config.scale false, S̃ = S
    if (float* out = run.open(run.name(Leaf::scores_scaled), {{run.name(Leaf::scores_raw), s}})) {
        const float divisor = run.config().scale ? std::sqrt(static_cast<float>(d.hs)) : 1.0f;
        scale_div(s->ptr(), divisor, out, s->size());
    }
    run.close();
    Step* step = run.trace().find(run.name(Leaf::scores_scaled));
    if (!run.config().scale && step->source == StepSource::computed)
        step->note = "scaling is switched off (config.scale = false): S̃ = S";
}

}  // namespace attntrace

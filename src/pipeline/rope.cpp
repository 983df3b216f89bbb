// Stage rope: rotary position embeddings, applied to Q and K after their
// projections (config.positions {"kind": "rope"}; otherwise nothing).
#include <fmt/format.h>

#include "kernels/positions.hpp"
#include "pipeline/stages.hpp"

namespace attntrace {

namespace {

// out = RoPE(x)   x, out: (rows, heads, hs) as recorded; row r at position pos0 + r.
// The head count is read from the tensor's own shape, never assumed to be NH
// (with grouped-query attention K has fewer heads than Q). Rows [0, from) of
// out are a decode's cache (run.hpp, RowWindow); the rest are rotated here.
void rotate(Run& run, const std::string& step, const std::string& input, std::size_t pos0, std::size_t from) {
    const Positions& p = run.config().positions;
    const Tensor* x = run.value(input);
    if (float* out = run.open(step, {{input, x}})) {
        const Shape& s = x->shape;  // (rows, heads, hs)
        const std::size_t row = s[1] * s[2];
        rope_rows(x->ptr() + from * row, out + from * row, s[0] - from, s[1], s[2], pos0 + from, p.base,
                  p.layout == RopeLayout::interleaved);
    }
    run.close();
    if (Step* s = run.trace().find(step); s && s->source == StepSource::computed)
        s->note = fmt::format("RoPE, {} layout ({}), base {:g}", rope_layout_name(p.layout),
                              p.layout == RopeLayout::half ? "pairs d, d + hs/2" : "pairs 2i, 2i+1", p.base);
}

}  // namespace

void rope_forward(Run& run) {
    if (run.config().positions.kind != PositionKind::rope) return;
    const Dims& d = run.dims();
    // Queries are the last Tq positions; keys are positions 0..T-1.
    rotate(run, run.name(Leaf::rot_q), run.name(Leaf::q), d.T - d.Tq, 0);
    rotate(run, run.name(Leaf::rot_k), run.name(Leaf::k), 0, run.cached_rows(run.name(Leaf::rot_k)));
}

}  // namespace attntrace

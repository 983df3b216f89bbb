// Stage rope: rotary position embeddings, applied to Q and K after their
// projections (config.positions {"kind": "rope"}; otherwise nothing).
#include <fmt/format.h>

#include "kernels/kernels.hpp"
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
        rope_rotate_rows(x->ptr() + from * row, out + from * row, s[0] - from, s[1], s[2], p.rotated(s[2]), pos0 + from,
                         p.base, p.layout == RopeLayout::interleaved);
    }
    run.close();
    if (Step* s = run.recorded(step); s && s->source == StepSource::computed)
        s->note = fmt::format("RoPE, {} layout ({}), base {:g}{}", rope_layout_name(p.layout),
                              p.layout == RopeLayout::half ? "pairs d, d + hs/2" : "pairs 2i, 2i+1", p.base,
                              p.rotary_dims ? fmt::format(", the first {} dimensions of each head rotated", p.rotary_dims)
                                            : std::string());
}

}  // namespace

void rope_forward(Run& run) {
    if (run.config().positions.kind != PositionKind::rope) return;
    const Dims& d = run.dims();
    // Queries are the last Tq positions; keys are positions 0..T-1.
    rotate(run, run.name(Leaf::rot_q), run.name(Leaf::q), d.T - d.Tq, 0);
    rotate(run, run.name(Leaf::rot_k), run.name(Leaf::k), 0, run.cached_rows(run.name(Leaf::rot_k)));
}

// hook_rot_q (query, head, d_head), hook_rot_k (key, head, d_head)
float rope_explain(Cell& c) {
    const Positions& pos = c.lesson.config.positions;
    const Dims dims = c.dims();
    const bool is_q = c.leaf() == Leaf::rot_q;
    const Step& X = c.input(is_q ? Leaf::q : Leaf::k);
    const std::size_t r = c.at[0], h = c.at[1], d = c.at[2], rd = pos.rotated(X.shape[2]);
    const std::size_t p = is_q ? r + (dims.T - dims.Tq) : r;
    const bool interleaved = pos.layout == RopeLayout::interleaved;
    const char L = is_q ? 'q' : 'k';
    const std::string tok = Cell::label(c.step, 0, r), hn = Cell::label(c.step, 1, h);
    if (d >= rd) {  // partial rotation: past the rotated dimensions, passed through
        const float y = get(X, {r, h, d});
        c.line("d{} is past the {} rotated dimensions of each head (config.positions.rotary_dims): passed through", d, rd);
        c.line("{}'[d{}] = {}[d{}] = {}   (head {})", L, d, L, d, c.num(y), hn);
        return y;
    }
    const std::size_t hs = rd;  // the rotation sees the rotated dimensions as its head
    const RopePair pr = rope_pair(d, hs, interleaved);
    const CosSin cs = rope_cos_sin(p, pr.i, hs, pos.base);
    c.line("{} {} sits at position p = {}", is_q ? "query" : "key", tok, p);
    c.line("{} layout: pairs {}; d{} pairs with d{}, its partner dimension (pair i = {}, d{} is its {} member)",
           rope_layout_name(pos.layout), interleaved ? "(2i, 2i+1)" : "(i, i + hs/2)", d, pr.partner, pr.i, d,
           pr.first ? "first" : "second");
    const double theta = rope_theta(pr.i, hs, pos.base);
    c.line("θ_{} = base^(-2i/hs) = {:g}^(-{}/{}) = {:.9g};  angle = p·θ = {:.9g} rad   (in double)", pr.i, pos.base,
           2 * pr.i, hs, theta, double(p) * theta);
    c.line("cos = {},  sin = {}   (rounded to float32)", c.num(cs.cos), c.num(cs.sin));
    c.quantities = {{"angle", double(p) * theta}, {"frequency", theta}};
    const float a = get(X, {r, h, d}), b = get(X, {r, h, pr.partner});
    if (pr.first)
        c.line("{}'[d{}] = {}[d{}]·cos - {}[d{}]·sin = {} · {} - {} · {}", L, d, L, d, L, pr.partner, c.num(a),
               c.num(cs.cos), c.num(b), c.num(cs.sin));
    else
        c.line("{}'[d{}] = {}[d{}]·cos + {}[d{}]·sin = {} · {} + {} · {}", L, d, L, d, L, pr.partner, c.num(a),
               c.num(cs.cos), c.num(b), c.num(cs.sin));
    const float y = rope_rotate(a, b, cs, pr.first);
    c.line("  = {}   (head {})", c.num(y), hn);
    return y;
}

}  // namespace attntrace

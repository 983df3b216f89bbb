// explain: positional encodings — the sinusoidal or learned vector added at
// the embed stage, RoPE's rotation of Q and K, ALiBi's slopes and bias.
// Recomputed with the functions the pipeline uses (kernels/positions.hpp).
#include <cmath>

#include "kernels/positions.hpp"
#include "render/explain_detail.hpp"

namespace attntrace::explain_detail {

// hook_pos_embed at (p, d)
float explain_pos_embed(Ctx& c) {
    const std::size_t p = c.at[0], d = c.at[1], C = c.lesson.dims_of(c.pass()).C;
    const std::string tok = Ctx::label(c.step, 0, p);
    if (c.lesson.config.positions.kind == PositionKind::learned) {
        const Tensor& table = c.lesson.inputs.at("positions");
        c.line("learned: token {} sits at position {}: row {} of the lesson's inputs.positions, column {}", tok, p, p, d);
        return table.data[p * table.shape[1] + d];
    }
    const std::size_t two_i = d - d % 2;
    const double angle = sinusoidal_angle(p, d, C);
    c.line("sinusoidal, interleaved as the paper: dimension d{} = {} holds the {} of the angle of pair i = {}", d,
           d % 2 ? "2i+1" : "2i", d % 2 ? "cos" : "sin", two_i / 2);
    c.line("angle = p / 10000^(2i/C) = {} / 10000^({}/{}) = {} / {} = {:.9g} rad   (in double)", p, two_i, C, p,
           fmt::format("{:.9g}", std::pow(10000.0, double(two_i) / double(C))), angle);
    const float r = sinusoidal_value(p, d, C);
    c.line("{}({:.9g}) = {}   (rounded to float32)", d % 2 ? "cos" : "sin", angle, c.num(r));
    return r;
}

// hook_rot_q (query, head, d_head), hook_rot_k (key, head, d_head)
float explain_rope(Ctx& c) {
    const Positions& pos = c.lesson.config.positions;
    const Dims dims = c.lesson.dims_of(c.pass());
    const bool is_q = c.base() == "blocks.0.attn.hook_rot_q";
    const Step& X = c.input(is_q ? "blocks.0.attn.hook_q" : "blocks.0.attn.hook_k");
    const std::size_t r = c.at[0], h = c.at[1], d = c.at[2], hs = X.shape[2];
    const std::size_t p = is_q ? r + (dims.T - dims.Tq) : r;
    const bool interleaved = pos.layout == RopeLayout::interleaved;
    const RopePair pr = rope_pair(d, hs, interleaved);
    const CosSin cs = rope_cos_sin(p, pr.i, hs, pos.base);
    const char L = is_q ? 'q' : 'k';
    const std::string tok = Ctx::label(c.step, 0, r), hn = Ctx::label(c.step, 1, h);
    c.line("{} {} sits at position p = {}", is_q ? "query" : "key", tok, p);
    c.line("{} layout: pairs {}; d{} pairs with d{}, its partner dimension (pair i = {}, d{} is its {} member)",
           rope_layout_name(pos.layout), interleaved ? "(2i, 2i+1)" : "(i, i + hs/2)", d, pr.partner, pr.i, d,
           pr.first ? "first" : "second");
    const double theta = rope_theta(pr.i, hs, pos.base);
    c.line("θ_{} = base^(-2i/hs) = {:g}^(-{}/{}) = {:.9g};  angle = p·θ = {:.9g} rad   (in double)", pr.i, pos.base,
           2 * pr.i, hs, theta, double(p) * theta);
    c.line("cos = {},  sin = {}   (rounded to float32)", c.num(cs.cos), c.num(cs.sin));
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

// hook_alibi_slopes (head), hook_alibi (head, query, key)
float explain_alibi(Ctx& c) {
    const Dims d = c.lesson.dims_of(c.pass());
    const std::size_t h = c.at[0];
    if (c.base() == "blocks.0.attn.hook_alibi_slopes") {
        const auto& given = c.lesson.config.positions.slopes;
        if (!given.empty()) {
            c.line("the lesson's slope for head {}: config.positions.slopes[{}] = {}", h, h, given[h]);
            return static_cast<float>(given[h]);
        }
        std::size_t n = 1;
        while (n * 2 <= d.NH) n *= 2;
        const double m = alibi_default_slopes(d.NH)[h];
        if (h < n)
            c.line("the paper's default: 2^(-8(h+1)/n) with n = {}{} = 2^(-{}/{}) = {:.9g}", n,
                   n == d.NH ? " (NH, a power of two)" : " (the closest power of two below NH)", 8 * (h + 1), n, m);
        else
            c.line("NH = {} is not a power of two: heads {}.. take every other slope of 2n = {} heads: "
                   "2^(-8(k+1)/{}) with k = {} = 2^(-{}/{}) = {:.9g}", d.NH, n, 2 * n, 2 * n, 2 * (h - n),
                   8 * (2 * (h - n) + 1), 2 * n, m);
        const float r = static_cast<float>(m);
        c.line("  = {}   (rounded to float32)", c.num(r));
        return r;
    }
    const std::size_t i = c.at[1], j = c.at[2], p = i + (d.T - d.Tq);
    const float m = get(c.input("blocks.0.attn.hook_alibi_slopes"), {h});
    const std::size_t dist = p >= j ? p - j : j - p;
    c.line("query {} sits at position {}, key {} at position {}: distance |{} - {}| = {}", Ctx::label(c.step, 1, i), p,
           Ctx::label(c.step, 2, j), j, p, j, dist);
    c.line("bias = -m_h · distance = -{} · {}{}", c.num(m), dist,
           j > p ? "   (a later key: a causal mask blocks it anyway)" : "");
    const float r = alibi_bias(m, p, j);
    c.line("  = {}", c.num(r));
    return r;
}

}  // namespace attntrace::explain_detail

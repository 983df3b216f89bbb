// ALiBi (attention with linear biases): a per-head penalty proportional to the
// distance between query and key, added to the scores in the mask stage
// (config.positions {"kind": "alibi"}; otherwise nothing).
#include "kernels/positions.hpp"
#include "pipeline/stages.hpp"

namespace attntrace {

void alibi_forward(Run& run) {
    const Lesson& lesson = run.lesson();
    if (lesson.config.positions.kind != PositionKind::alibi) return;
    const Dims& d = run.dims();
    // m: (NH), the lesson's slopes or the paper's defaults
    if (float* m = run.open(run.name(Leaf::alibi_slopes), {})) {
        const std::vector<double>& given = lesson.config.positions.slopes;
        const std::vector<double> slopes = given.empty() ? alibi_default_slopes(d.NH) : given;
        for (std::size_t h = 0; h < d.NH; ++h) m[h] = static_cast<float>(slopes[h]);
    }
    run.close();
    const Tensor* m = run.value(run.name(Leaf::alibi_slopes));
    // bias[h,i,j] = -m_h·|p_i - j|   (NH, Tq, T), query i at position p_i = i + (T - Tq)
    if (float* b = run.open(run.name(Leaf::alibi), {{run.name(Leaf::alibi_slopes), m}})) {
        const std::size_t offset = d.T - d.Tq;
        for (std::size_t h = 0; h < d.NH; ++h)
            for (std::size_t i = 0; i < d.Tq; ++i)
                for (std::size_t j = 0; j < d.T; ++j)
                    b[(h * d.Tq + i) * d.T + j] = alibi_bias(m->data[h], i + offset, j);
    }
    run.close();
}

void add_alibi_mask(const float* s, const float* bias, const float* mask, float* y, std::size_t NH, std::size_t plane) {
    // (S̃ + bias) + M, in this order: the bias is part of the score, the mask then blocks cells
    for (std::size_t h = 0; h < NH; ++h)
        for (std::size_t i = 0; i < plane; ++i) y[h * plane + i] = (s[h * plane + i] + bias[h * plane + i]) + mask[i];
}

// hook_alibi_slopes (head), hook_alibi (head, query, key)
float alibi_explain(Cell& c) {
    const Dims d = c.dims();
    const std::size_t h = c.at[0];
    if (c.leaf() == Leaf::alibi_slopes) {
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
    const float m = get(c.input(Leaf::alibi_slopes), {h});
    const std::size_t dist = p >= j ? p - j : j - p;
    c.line("query {} sits at position {}, key {} at position {}: distance |{} - {}| = {}", Cell::label(c.step, 1, i), p,
           Cell::label(c.step, 2, j), j, p, j, dist);
    c.line("bias = -m_h · distance = -{} · {}{}", c.num(m), dist,
           j > p ? "   (a later key: a causal mask blocks it anyway)" : "");
    const float r = alibi_bias(m, p, j);
    c.line("  = {}", c.num(r));
    return r;
}

}  // namespace attntrace

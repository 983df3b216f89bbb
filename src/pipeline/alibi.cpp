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

}  // namespace attntrace

// Stage softmax: each row of masked scores becomes a probability distribution.
#include <fmt/format.h>

#include "kernels/kernels.hpp"
#include "kernels/softmax.hpp"
#include "pipeline/stages.hpp"

namespace attntrace {

namespace {

// The steps of the pass's attention (self or cross).
struct Names {
    std::string in, max, shifted, exp, sum, pattern;
    explicit Names(const Run& run)
        : in(run.name(Leaf::attn_scores)), max(run.name(Leaf::row_max)),
          shifted(run.name(Leaf::shifted)), exp(run.name(Leaf::exp)),
          sum(run.name(Leaf::row_sum)), pattern(run.name(Leaf::pattern)) {}
};

// One pass per step, each reading the (possibly given or rounded) step before.
void softmax_by_pass(Run& run, std::size_t rows, std::size_t cols) {
    const Names n(run);
    const std::string &kIn = n.in, &kMax = n.max, &kShifted = n.shifted, &kExp = n.exp, &kSum = n.sum,
                      &kPattern = n.pattern;
    const Tensor* x = run.value(kIn);
    // pass 1: m = max_j x[j]
    if (float* m = run.open(kMax, {{kIn, x}})) row_max_ref(x->ptr(), rows, cols, m);
    run.close();
    const Tensor* m = run.value(kMax);
    // pass 2: shifted = x - m;  e = exp(shifted);  s = Σ e
    if (float* sh = run.open(kShifted, {{kIn, x}, {kMax, m}})) shift_rows_ref(x->ptr(), m->ptr(), rows, cols, sh);
    run.close();
    const Tensor* sh = run.value(kShifted);
    if (float* e = run.open(kExp, {{kShifted, sh}})) exp_ref(sh->ptr(), e, rows * cols);
    run.close();
    const Tensor* e = run.value(kExp);
    if (float* s = run.open(kSum, {{kExp, e}})) row_sum_ref(e->ptr(), rows, cols, s);
    run.close();
    const Tensor* s = run.value(kSum);
    // pass 3: A = e / s
    if (float* a = run.open(kPattern, {{kExp, e}, {kSum, s}})) divide_rows_ref(e->ptr(), s->ptr(), rows, cols, a);
    run.close();
}

}  // namespace

void softmax_forward(Run& run) {
    const Dims& d = run.dims();
    const std::size_t rows = d.NH * d.Tq, cols = d.T;  // (NH, Tq, T) as NH·Tq rows of T
    const Names n(run);
    const std::string &kIn = n.in, &kMax = n.max, &kShifted = n.shifted, &kExp = n.exp, &kSum = n.sum,
                      &kPattern = n.pattern;
    if (run.intervenes({kMax, kShifted, kExp, kSum})) {
        softmax_by_pass(run, rows, cols);
    } else {
        // The fused kernel fills all five steps in three passes.
        const Tensor* x = run.value(kIn);
        float* row_max = run.open(kMax, {{kIn, x}});
        float* shifted = run.open(kShifted, {{kIn, x}});
        float* e = run.open(kExp, {{kIn, x}});
        float* row_sum = run.open(kSum, {{kIn, x}});
        float* a = run.open(kPattern, {{kIn, x}});
        if (x) softmax_rows(x->ptr(), rows, cols, row_max, shifted, e, row_sum, a);
        run.close();
    }
    // A row whose every key is masked has max -inf: its weights are all 0
    // (softmax kernels, kernels/softmax.hpp) and so is its Z; the warning names the rows.
    const Tensor* m = run.value(kMax);
    if (!m) return;
    constexpr std::size_t kNamed = 6;  // rows named in the warning; the count says how many in all
    std::size_t empty = 0;
    std::string named;
    for (std::size_t r = 0; r < m->data.size(); ++r) {
        if (m->data[r] != kNegInf) continue;
        if (empty++ < kNamed)
            named += fmt::format("{}head {} query {} \"{}\"", named.empty() ? "" : ", ", r / d.Tq, r % d.Tq,
                                 run.lesson().query_labels()[r % d.Tq]);
    }
    if (empty)
        run.warn(fmt::format("{} row(s) of {} have every key masked: their weights are all 0 (no distribution) and so "
                             "is their Z: {}{}",
                             empty, kIn, named, empty > kNamed ? ", ..." : ""));
}

}  // namespace attntrace

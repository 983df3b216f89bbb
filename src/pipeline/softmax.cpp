// Operation softmax: each row of masked scores becomes a probability distribution.
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

// at: (h, i) for row_max and row_sum; (h, i, j) otherwise
float softmax_explain(Cell& c) {
    const std::size_t h = c.at[0], i = c.at[1];
    const std::string hn = Cell::label(c.step, 0, h), q = Cell::label(c.step, 1, i);
    const Step& X = c.input(Leaf::attn_scores);
    const std::size_t T = X.shape[2];
    auto key = [&](std::size_t j) { return Cell::label(X, 2, j); };
    if (c.leaf() == Leaf::row_max) {
        float best = kNegInf;
        std::size_t arg = 0;
        for (std::size_t j = 0; j < T; ++j)
            if (get(X, {h, i, j}) > best) best = get(X, {h, i, j}), arg = j;
        c.line("the masked scores of query {} ({}), one per key:", q, hn);
        list_terms(c, T, [&](std::size_t j) { return fmt::format("{:<10} {:>9}", key(j), c.num(get(X, {h, i, j}))); });
        if (best == kNegInf) c.line("every key is blocked: the maximum is -inf (the weights will all be 0)");
        else c.line("max = {}, reached first at key {}", c.num(best), key(arg));
        return best;
    }
    const Step& M = c.input(Leaf::row_max);
    const float m = get(M, {h, i});
    if (c.leaf() == Leaf::shifted) {
        const std::size_t j = c.at[2];
        const float x = get(X, {h, i, j});
        c.line("score[{},{},{}] - max of the row = {} - {}", hn, q, key(j), c.num(x), c.num(m));
        const float r = m == kNegInf ? kNegInf : x - m;
        if (m == kNegInf) c.line("the whole row is blocked: stays -inf (not -inf - -inf = nan)");
        c.line("  = {}", c.num(r));
        return r;
    }
    const Step& S = c.input(Leaf::shifted);
    if (c.leaf() == Leaf::exp) {
        const float x = get(S, {h, i, c.at[2]});
        const float r = std::exp(x);
        c.line("exp({}) = {}{}", c.num(x), c.num(r), x == kNegInf ? "   (a blocked key: exactly 0)" : "");
        return r;
    }
    const Step& E = c.input(Leaf::exp);
    auto exp_terms = [&] {
        float sum = 0.0f;  // float, j ascending: row_sum_ref's order
        for (std::size_t j = 0; j < T; ++j) sum += get(E, {h, i, j});
        list_terms(c, T, [&](std::size_t j) {
            return fmt::format("{} exp({:>9}) = {:>9}   key {}", j ? "+" : " ", c.num(get(S, {h, i, j})),
                               c.num(get(E, {h, i, j})), key(j));
        });
        c.line("  Σ = {}", c.num(sum));
        return sum;
    };
    if (c.leaf() == Leaf::row_sum) {
        c.line("Σ_j exp(score[{},{},j] - max), max = {}:", hn, q, c.num(m));
        return exp_terms();
    }
    // hook_pattern: the whole chain for one weight
    const std::size_t j = c.at[2];
    const float sum = get(c.input(Leaf::row_sum), {h, i});
    std::size_t arg = 0;  // the first key reaching the max, as row_max_ref keeps the first
    while (arg + 1 < T && get(X, {h, i, arg}) != m) ++arg;
    c.line("1. row max of query {}'s masked scores: m = {}{}", q, c.num(m),
           m == kNegInf ? " (every key blocked)" : fmt::format(" (key {})", key(arg)));
    c.line("2. shifted score of key {}: {} - {} = {}", key(j), c.num(get(X, {h, i, j})), c.num(m),
           c.num(get(S, {h, i, j})));
    c.line("3. its exp: exp({}) = {}", c.num(get(S, {h, i, j})), c.num(get(E, {h, i, j})));
    c.line("4. the row sum of the exps:");
    exp_terms();
    const float e = get(E, {h, i, j});
    const float r = sum == 0.0f ? 0.0f : e / sum;
    c.line("5. A[{},{},{}] = {} / {} = {}", hn, q, key(j), c.num(e), c.num(sum), c.num(r));
    return r;
}

// Per pair: the max's comparison, the shift, the exp and the sum's add, then the division (docs/cost.md).
std::vector<CostTerm> softmax_cost(const CostQuery& q) {
    const Dims& d = q.d;
    const bool w = q.window > 0;
    return {{"softmax A (max, exp, sum, divide)", w ? "NH, n, w" : "NH, n, n", {d.NH, d.Tq, w ? q.window : d.T},
             d.NH * q.stored, 4 * d.NH * q.pairs, false, true}};
}

}  // namespace attntrace

// Operation softmax: each row of masked scores becomes weights. By default a
// softmax with its max shift (a probability distribution); config.max_shift
// false leaves the shift out (exp(s) as tutorials print it); config.normalizer
// "sum" divides each score by its row's sum (s / Σ s), "none" keeps the
// scores. Blocked keys get weight 0 under each (docs/lesson-format.md). With
// config.mask_at "weights" the normaliser sees every key and the mask zeroes
// its weights afterwards, the rows renormalised or not (config.renormalize).
// This file is the reference forward, one pass a step, its explanation and
// its cost; the plan's derived and fused paths are pipeline/softmax_fast.cpp.
#include <algorithm>
#include <cstdint>
#include <cmath>
#include <limits>
#include <functional>
#include <optional>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "core/error.hpp"
#include "kernels/kernels.hpp"
#include "kernels/softmax.hpp"
#include "kernels/tuning.hpp"
#include "pipeline/softmax_fast.hpp"
#include "pipeline/stages.hpp"

namespace attntrace {

namespace {

// One pass per step, each reading the (possibly given or rounded) step before.
void softmax_by_pass(Run& run, std::size_t rows, std::size_t cols) {
    const SoftmaxNames n(run);
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

// config.max_shift false: e = exp(S̃ + M) as printed (an exp past float32's
// range is refused by the run, naming the cell);  s = Σ_j e;  A = e / s.
void softmax_unshifted(Run& run, std::size_t rows, std::size_t cols) {
    const SoftmaxNames n(run);
    const Tensor* x = run.value(n.in);
    if (float* e = run.open(n.exp, {{n.in, x}})) exp_ref(x->ptr(), e, rows * cols);
    run.close();
    run.set_formula(n.exp, "e[i,j] = exp((S̃ + M)[i,j])   (no max shift: config.max_shift false)",
                "Exponentials of the scores as they are: all positive, masked cells exactly 0; a score above ~88.7 "
                "would overflow float32 (the reason implementations subtract the max).");
    const Tensor* e = run.value(n.exp);
    if (float* s = run.open(n.sum, {{n.exp, e}})) row_sum_ref(e->ptr(), rows, cols, s);
    run.close();
    const Tensor* s = run.value(n.sum);
    if (float* a = run.open(n.pattern, {{n.exp, e}, {n.sum, s}})) divide_rows_ref(e->ptr(), s->ptr(), rows, cols, a);
    run.close();
}

// config.normalizer "sum": s_i = Σ_j (S̃ + M)[i,j] over keys not blocked;  A = (S̃ + M) / s, blocked 0.
void normalize_by_sum(Run& run, std::size_t rows, std::size_t cols) {
    const SoftmaxNames n(run);
    const std::string sum = run.name(Leaf::score_sum);
    const Tensor* x = run.value(n.in);
    if (float* s = run.open(sum, {{n.in, x}})) row_sum_unblocked_ref(x->ptr(), rows, cols, s);
    run.close();
    const Tensor* s = run.value(sum);
    // A row whose keys are not all blocked but whose scores sum to 0 has no weights s / Σ s.
    for (std::size_t r = 0; s && x && r < rows; ++r)
        if (s->data[r] == 0.0f && std::any_of(x->ptr() + r * cols, x->ptr() + (r + 1) * cols, [](float v) { return v != kNegInf; }))
            fail_file(run.lesson().file,
                      fmt::format("{}[{},{}]: expected a row sum other than 0 (config.normalizer \"sum\" divides by it), "
                                  "found 0: the weights of head {} query \"{}\" are not defined",
                                  sum, r / run.dims().Tq, r % run.dims().Tq, r / run.dims().Tq,
                                  run.lesson().query_labels()[r % run.dims().Tq]));
    if (float* a = run.open(n.pattern, {{n.in, x}, {sum, s}})) divide_rows_unblocked_ref(x->ptr(), s->ptr(), rows, cols, a);
    run.close();
    run.set_formula(n.pattern, "A[i,j] = (S̃ + M)[i,j] / s_i, blocked keys 0   (config.normalizer \"sum\")",
                "Row i says how much query token i reads from each key token; every row sums to 1, but a negative "
                "score gives a negative weight.");
}

// config.normalizer "none": A = S̃ + M, blocked keys 0.
void no_normalizer(Run& run, std::size_t rows, std::size_t cols) {
    const SoftmaxNames n(run);
    const Tensor* x = run.value(n.in);
    if (float* a = run.open(n.pattern, {{n.in, x}})) unblock_ref(x->ptr(), a, rows * cols);
    run.close();
    run.set_formula(n.pattern, "A[i,j] = (S̃ + M)[i,j], blocked keys 0   (config.normalizer \"none\": the scores as weights)",
                "The scores themselves weight the values: rows need not sum to 1.");
}

// Rows whose every key is blocked have no distribution: their weights are all 0
// (softmax kernels, kernels/softmax.hpp) and so is their Z; the warning names them.
void warn_blocked_rows(Run& run, const std::function<bool(std::size_t)>& blocked_row, std::size_t rows) {
    const Dims& d = run.dims();
    constexpr std::size_t kNamed = 6;  // rows named in the warning; the count says how many in all
    std::size_t empty = 0;
    std::string named;
    for (std::size_t r = 0; r < rows; ++r) {
        if (!blocked_row(r)) continue;
        if (empty++ < kNamed)
            named += fmt::format("{}head {} query {} \"{}\"", named.empty() ? "" : ", ", r / d.Tq, r % d.Tq,
                                 run.lesson().query_labels()[r % d.Tq]);
    }
    if (empty)
        run.warn(fmt::format("{} row(s) of {} have every key masked: their weights are all 0 (no distribution) and so "
                             "is their Z: {}{}",
                             empty, run.name(Leaf::attn_scores), named, empty > kNamed ? ", ..." : ""));
}

// config.mask_at "weights": the normaliser's weights A⁰ zeroed where the mask
// (1 or 0) blocks a key; with config.renormalize each row then divided by what
// is left of it (a row with nothing left stays 0, as a fully blocked row does
// under the default masking).
void zero_weights(Run& run, std::size_t rows, std::size_t cols) {
    const Dims& d = run.dims();
    const std::string a0 = run.name(Leaf::pattern_unmasked), mask = run.name(Leaf::mask),
                      zeroed = run.name(Leaf::pattern_zeroed), sum = run.name(Leaf::zeroed_sum),
                      pattern = run.name(Leaf::pattern);
    const bool renormalize = run.config().renormalize;
    const Tensor* a = run.value(a0);
    const Tensor* m = run.value(mask);
    // A⁰ ⊙ M   (NH, Tq, T) ⊙ (Tq, T) broadcast over heads
    if (float* z = run.open(renormalize ? zeroed : pattern, {{a0, a}, {mask, m}}))
        zero_blocked_heads_ref(a->ptr(), m->ptr(), z, d.NH, d.Tq * d.T);
    run.close();
    if (!renormalize) {
        run.set_formula(pattern, "A[i,j] = A⁰[i,j] · M[i,j]   (config.mask_at \"weights\", not renormalised)",
                        "The weights the normaliser gave over every key, blocked keys zeroed: the rows no longer sum "
                        "to 1 (config.renormalize true divides them by what is left).");
    } else {
        const Tensor* z = run.value(zeroed);
        // z_i = Σ_j (A⁰ ⊙ M)[i,j]   (NH, Tq);  A = (A⁰ ⊙ M) / z
        if (float* s = run.open(sum, {{zeroed, z}})) row_sum_ref(z->ptr(), rows, cols, s);
        run.close();
        const Tensor* s = run.value(sum);
        if (float* y = run.open(pattern, {{zeroed, z}, {sum, s}})) divide_rows_ref(z->ptr(), s->ptr(), rows, cols, y);
        run.close();
        run.set_formula(pattern, "A[i,j] = (A⁰ · M)[i,j] / z_i   (config.mask_at \"weights\", renormalised)",
                        "The zeroed weights divided by what is left of their row: every row sums to 1 again, as when "
                        "-inf is added before the softmax.");
    }
    if (m)
        warn_blocked_rows(run, [&](std::size_t r) {
            const float* keep = m->ptr() + (r % d.Tq) * cols;
            return std::all_of(keep, keep + cols, [](float k) { return k == 0.0f; });
        }, rows);
}

// The normaliser (softmax by default) over each row of hook_attn_scores.
void normalize(Run& run) {
    const Dims& d = run.dims();
    const std::size_t rows = d.NH * d.Tq, cols = d.T;  // (NH, Tq, T) as NH·Tq rows of T
    const Config& cfg = run.config();
    const SoftmaxNames n(run);
    const std::string &kIn = n.in, &kMax = n.max, &kShifted = n.shifted, &kExp = n.exp, &kSum = n.sum,
                      &kPattern = n.pattern;
    if (cfg.normalizer != Normalizer::softmax || !cfg.max_shift) {
        if (cfg.normalizer == Normalizer::sum) normalize_by_sum(run, rows, cols);
        else if (cfg.normalizer == Normalizer::none) no_normalizer(run, rows, cols);
        else softmax_unshifted(run, rows, cols);
        if (const Tensor* x = run.value(kIn))
            warn_blocked_rows(run, [&](std::size_t r) {
                return std::all_of(x->ptr() + r * cols, x->ptr() + (r + 1) * cols, [](float v) { return v == kNegInf; });
            }, rows);
        return;
    }
    if (run.plan().derive_attention) {
        softmax_derived(run, rows, cols);
    } else if (run.intervenes({kMax, kShifted, kExp, kSum})) {
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
    // A row whose every key is masked has max -inf.
    if (const Tensor* m = run.value(kMax))
        warn_blocked_rows(run, [&](std::size_t r) { return m->data[r] == kNegInf; }, m->data.size());
}

}  // namespace

void softmax_forward(Run& run) {
    normalize(run);
    const Dims& d = run.dims();
    if (run.config().mask_at == MaskAt::weights) zero_weights(run, d.NH * d.Tq, d.T);
}

namespace {

// Σ_j v(j) over a row of T keys in float, j ascending (row_sum_ref's order;
// a key v skips is left out, as row_sum_unblocked_ref leaves out blocked keys),
// written one term a line (term(j)), then "  sym = sum". Returns the sum.
float write_row_sum(Cell& c, std::size_t T, const std::function<std::optional<float>(std::size_t)>& v,
                    const std::function<std::string(std::size_t)>& term, const char* sym) {
    float sum = 0.0f;
    for (std::size_t j = 0; j < T; ++j)
        if (const auto x = v(j)) sum += *x;
    list_terms(c, T, term);
    c.line("  {} = {}", sym, c.num(sum));
    return sum;
}

// The normaliser's weights: A, or A⁰ before the mask zeroes them (config.mask_at "weights").
const char* weight_symbol(const Cell& c) { return c.leaf() == Leaf::pattern_unmasked ? "A⁰" : "A"; }

// config.normalizer "sum" and "none": hook_score_sum at (h, i), hook_pattern at (h, i, j).
float explain_plain(Cell& c, Normalizer normalizer) {
    const std::size_t h = c.at[0], i = c.at[1];
    const std::string hn = Cell::label(c.step, 0, h), q = Cell::label(c.step, 1, i);
    const Step& X = c.input(Leaf::attn_scores);
    const std::size_t T = X.shape[2];
    auto key = [&](std::size_t j) { return Cell::label(X, 2, j); };
    auto x = [&](std::size_t j) { return get(X, {h, i, j}); };
    if (normalizer == Normalizer::none) {
        const std::size_t j = c.at[2];
        c.line("no normaliser (config.normalizer \"none\"): the weight is the masked score of query {} for key {} ({})",
               q, key(j), hn);
        if (x(j) == kNegInf) c.line("the key is blocked: weight 0");
        else c.line("  = {}", c.num(x(j)));
        return x(j) == kNegInf ? 0.0f : x(j);
    }
    auto sum_terms = [&] {
        return write_row_sum(
            c, T, [&](std::size_t j) { return x(j) == kNegInf ? std::nullopt : std::optional<float>(x(j)); },
            [&](std::size_t j) {
                return x(j) == kNegInf ? fmt::format("  {:>9}   key {} (blocked: left out)", "-inf", key(j))
                                       : fmt::format("{} {:>9}   key {}", j ? "+" : " ", c.num(x(j)), key(j));
            },
            "s");
    };
    if (c.leaf() == Leaf::score_sum) {
        c.line("s = Σ_j of query {}'s masked scores ({}), blocked keys left out:", q, hn);
        return sum_terms();
    }
    const std::size_t j = c.at[2];
    const float s = get(c.input(Leaf::score_sum), {h, i});
    c.line("1. the row sum of query {}'s scores:", q);
    sum_terms();
    if (x(j) == kNegInf) {
        c.line("2. key {} is blocked: weight 0", key(j));
        return 0.0f;
    }
    const float r = x(j) / s;
    c.line("2. {}[{},{},{}] = {} / {} = {}", weight_symbol(c), hn, q, key(j), c.num(x(j)), c.num(s), c.num(r));
    return r;
}

// config.mask_at "weights": hook_pattern_zeroed and hook_pattern at (h, i, j), hook_zeroed_sum at (h, i).
float explain_zeroing(Cell& c, bool renormalize) {
    const std::size_t h = c.at[0], i = c.at[1];
    const std::string hn = Cell::label(c.step, 0, h), q = Cell::label(c.step, 1, i);
    const Step& A0 = c.input(Leaf::pattern_unmasked);
    const Step& M = c.input(Leaf::mask);
    const std::size_t T = A0.shape[2];
    auto key = [&](std::size_t j) { return Cell::label(A0, 2, j); };
    auto zeroed = [&](std::size_t j) { return get(A0, {h, i, j}) * get(M, {i, j}); };  // zero_blocked_heads_ref
    auto sum_terms = [&] {
        const Step& Z = c.input(Leaf::pattern_zeroed);
        return write_row_sum(
            c, T, [&](std::size_t j) { return std::optional<float>(get(Z, {h, i, j})); },
            [&](std::size_t j) {
                return fmt::format("{} {:>9}   key {}{}", j ? "+" : " ", c.num(get(Z, {h, i, j})), key(j),
                                   get(M, {i, j}) == 0.0f ? " (blocked: zeroed)" : "");
            },
            "z_i");
    };
    if (c.leaf() == Leaf::zeroed_sum) {
        c.line("z_i = Σ_j of query {}'s zeroed weights ({}):", q, hn);
        return sum_terms();
    }
    const std::size_t j = c.at[2];
    const float a = get(A0, {h, i, j}), m = get(M, {i, j});
    const char* seen = m == 0.0f ? "   (key blocked: zeroed)" : "   (key visible: kept)";
    if (c.leaf() == Leaf::pattern_zeroed || !renormalize) {
        c.line("A⁰[{},{},{}] · M[{},{}] = {} · {}{}", hn, q, key(j), q, key(j), c.num(a), c.num(m), seen);
        c.line("  = {}", c.num(zeroed(j)));
        return zeroed(j);
    }
    const float z = get(c.input(Leaf::pattern_zeroed), {h, i, j});
    c.line("1. the zeroed weight: A⁰[{},{},{}] · M[{},{}] = {} · {} = {}{}", hn, q, key(j), q, key(j), c.num(a),
           c.num(m), c.num(z), seen);
    c.line("2. what is left of query {}'s row:", q);
    const float sum = sum_terms();
    const float r = sum == 0.0f ? 0.0f : z / sum;  // divide_rows_ref: a row with nothing left stays 0
    c.line("3. A[{},{},{}] = {} / {} = {}", hn, q, key(j), c.num(z), c.num(sum), c.num(r));
    return r;
}

}  // namespace

// at: (h, i) for row_max, row_sum, score_sum and zeroed_sum; (h, i, j) otherwise.
// With config.mask_at "weights" the normaliser's weights are hook_pattern_unmasked,
// explained as hook_pattern is otherwise.
float softmax_explain(Cell& c) {
    const Config cfg = c.attn_config();
    if (cfg.mask_at == MaskAt::weights &&
        (c.leaf() == Leaf::pattern_zeroed || c.leaf() == Leaf::zeroed_sum || c.leaf() == Leaf::pattern))
        return explain_zeroing(c, cfg.renormalize);
    if (cfg.normalizer != Normalizer::softmax) return explain_plain(c, cfg.normalizer);
    const bool shift = cfg.max_shift;  // else no row max: exp reads the masked scores themselves
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
    const float m = shift ? get(c.input(Leaf::row_max), {h, i}) : 0.0f;
    if (c.leaf() == Leaf::shifted) {
        const std::size_t j = c.at[2];
        const float x = get(X, {h, i, j});
        c.line("score[{},{},{}] - max of the row = {} - {}", hn, q, key(j), c.num(x), c.num(m));
        const float r = m == kNegInf ? kNegInf : x - m;
        if (m == kNegInf) c.line("the whole row is blocked: stays -inf (not -inf - -inf = nan)");
        c.line("  = {}", c.num(r));
        return r;
    }
    const Step& S = shift ? c.input(Leaf::shifted) : X;  // what exp reads
    if (c.leaf() == Leaf::exp) {
        const float x = get(S, {h, i, c.at[2]});
        const float r = std::exp(x);
        c.line("exp({}) = {}{}{}", c.num(x), c.num(r), x == kNegInf ? "   (a blocked key: exactly 0)" : "",
               shift ? "" : "   (no max shift)");
        return r;
    }
    const Step& E = c.input(Leaf::exp);
    auto exp_terms = [&] {
        return write_row_sum(
            c, T, [&](std::size_t j) { return std::optional<float>(get(E, {h, i, j})); },
            [&](std::size_t j) {
                return fmt::format("{} exp({:>9}) = {:>9}   key {}", j ? "+" : " ", c.num(get(S, {h, i, j})),
                                   c.num(get(E, {h, i, j})), key(j));
            },
            "s_i");
    };
    if (c.leaf() == Leaf::row_sum) {
        if (shift) c.line("Σ_j exp(score[{},{},j] - max), max = {}:", hn, q, c.num(m));
        else c.line("Σ_j exp(score[{},{},j]), no max subtracted (config.max_shift false):", hn, q);
        return exp_terms();
    }
    // hook_pattern: the whole chain for one weight
    const std::size_t j = c.at[2];
    const float sum = get(c.input(Leaf::row_sum), {h, i});
    int n = 1;
    if (shift) {
        std::size_t arg = 0;  // the first key reaching the max, as row_max_ref keeps the first
        while (arg + 1 < T && get(X, {h, i, arg}) != m) ++arg;
        c.line("{}. row max of query {}'s masked scores: m = {}{}", n++, q, c.num(m),
               m == kNegInf ? " (every key blocked)" : fmt::format(" (key {})", key(arg)));
        c.line("{}. shifted score of key {}: {} - {} = {}", n++, key(j), c.num(get(X, {h, i, j})), c.num(m),
               c.num(get(S, {h, i, j})));
    }
    c.line("{}. {}exp: exp({}) = {}", n++, shift ? "its " : fmt::format("key {}'s score, no max subtracted, its ", key(j)),
           c.num(get(S, {h, i, j})), c.num(get(E, {h, i, j})));
    c.line("{}. the row sum of the exps:", n++);
    exp_terms();
    const float e = get(E, {h, i, j});
    const float r = sum == 0.0f ? 0.0f : e / sum;
    c.line("{}. {}[{},{},{}] = {} / {} = {}", n, weight_symbol(c), hn, q, key(j), c.num(e), c.num(sum), c.num(r));
    return r;
}

// Per pair: the max's comparison, the shift, the exp and the sum's add, then
// the division (docs/cost.md). `attntrace cost` prices the standard block
// (CostQuery has no normaliser): the other normalisers do less per pair.
std::vector<CostTerm> softmax_cost(const CostQuery& q) {
    const Dims& d = q.d;
    const bool w = q.window > 0;
    return {{"softmax A (max, exp, sum, divide)", w ? "NH, n, w" : "NH, n, n", {d.NH, d.Tq, w ? q.window : d.T},
             d.NH * q.stored, 4 * d.NH * q.pairs, false, true}};
}

}  // namespace attntrace

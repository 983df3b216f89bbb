// explain: the attention steps, from the raw scores to Z and the output projection.
#include <cmath>
#include <limits>

#include "pipeline/mask_pattern.hpp"
#include "render/explain_detail.hpp"

namespace attntrace::explain_detail {

namespace {
constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// Which K/V head query head h read, and with whom it shares it.
std::string kv_group_line(const Dims& d, const std::string& hn, std::size_t h, const std::string& gn) {
    if (d.KVH == d.NH) return fmt::format("query head {} reads its own K/V head {} (multi-head: KVH = NH = {})", hn, gn, d.NH);
    const std::size_t group = d.NH / d.KVH, g = d.kv_of(h);
    return fmt::format("query head {} reads K/V head {} = ⌊{} / (NH/KVH = {}/{})⌋, shared with query heads h{}..h{} ({})",
                       hn, gn, h, d.NH, d.KVH, g * group, g * group + group - 1,
                       d.KVH == 1 ? "multi-query" : "grouped-query");
}

float divisor(const Ctx& c) {
    // as scale.cpp: √hs in float, or 1 when the lesson switches scaling off
    return c.lesson.config.scale ? std::sqrt(static_cast<float>(c.lesson.dims_of(c.pass()).hs)) : 1.0f;
}
}  // namespace

// at: scores (h, i, j); mask (i, j)
float explain_scores(Ctx& c) {
    const std::string n = c.base();
    const Dims d = c.lesson.dims_of(c.pass());
    if (n == "blocks.0.attn.hook_mask") {
        const std::size_t i = c.at[0], j = c.at[1];
        const std::string q = Ctx::label(c.step, 0, i), k = Ctx::label(c.step, 1, j);
        const MaskPattern pattern(c.attn_config(), d.Tq, d.T);
        for (const std::string& l : pattern.reason(i, j, q, k)) c.line("{}", l);
        return pattern.allows(i, j) ? 0.0f : kNegInf;
    }
    if (n == "blocks.0.attn.hook_alibi_slopes" || n == "blocks.0.attn.hook_alibi") return explain_alibi(c);
    const std::size_t h = c.at[0], i = c.at[1], j = c.at[2];
    const std::string hn = Ctx::label(c.step, 0, h), q = Ctx::label(c.step, 1, i), k = Ctx::label(c.step, 2, j);
    if (n == "blocks.0.attn.hook_scores_raw") {
        const bool rope = c.attn_config().positions.kind == PositionKind::rope;
        const Step& Q = c.input(rope ? "blocks.0.attn.hook_rot_q" : "blocks.0.attn.hook_q");
        const Step& K = c.input(rope ? "blocks.0.attn.hook_rot_k" : "blocks.0.attn.hook_k");
        if (rope) c.line("RoPE: the rotated queries and keys (hook_rot_q, hook_rot_k)");
        const std::size_t g = d.kv_of(h);
        const std::string gn = Ctx::label(K, 1, g);
        c.line("S[{},{},{}] = Σ_e Q[{},{},e] · K[{},{},e]   (hs = {} terms: query {} against key {})", hn, q, k, q, hn,
               k, gn, d.hs, q, k);
        c.line("{}", kv_group_line(d, hn, h, gn));
        return write_dot(
            c, d.hs, [&](std::size_t e) { return fmt::format("Q[{},{},d{}]", q, hn, e); },
            [&](std::size_t e) { return get(Q, {i, h, e}); },
            [&](std::size_t e) { return fmt::format("K[{},{},d{}]", k, gn, e); },
            [&](std::size_t e) { return get(K, {j, g, e}); });
    }
    if (n == "blocks.0.attn.hook_scores_scaled") {
        const float s = get(c.input("blocks.0.attn.hook_scores_raw"), {h, i, j});
        const float div = divisor(c);
        if (!c.lesson.config.scale)
            c.line("scaling is off (config.scale false): S̃ = S = {}", c.num(s));
        else
            c.line("S̃ = S / √hs = {} / √{} = {} / {}", c.num(s), d.hs, c.num(s), c.num(div));
        const float r = s / div;
        c.line("  = {}", c.num(r));
        return r;
    }
    // hook_attn_scores: S̃ + M, or (S̃ + bias) + M with ALiBi
    const float s = get(c.input("blocks.0.attn.hook_scores_scaled"), {h, i, j});
    const float m = get(c.input("blocks.0.attn.hook_mask"), {i, j});
    if (c.attn_config().positions.kind == PositionKind::alibi) {
        const float b = get(c.input("blocks.0.attn.hook_alibi"), {h, i, j});
        c.line("(S̃[{},{},{}] + bias[{},{},{}]) + M[{},{}] = ({} + {}) + {}{}", hn, q, k, hn, q, k, q, k, c.num(s),
               c.num(b), c.num(m), m == 0.0f ? "   (key visible to the query)" : "   (key blocked for this query)");
        const float r = (s + b) + m;
        c.line("  = {}", c.num(r));
        return r;
    }
    c.line("S̃[{},{},{}] + M[{},{}] = {} + {}{}", hn, q, k, q, k, c.num(s), c.num(m),
           m == 0.0f ? "   (key visible to the query)" : "   (key blocked for this query)");
    const float r = s + m;
    c.line("  = {}", c.num(r));
    return r;
}

// at: (h, i) for row_max and row_sum; (h, i, j) otherwise
float explain_softmax(Ctx& c) {
    const std::string n = c.base();
    const std::size_t h = c.at[0], i = c.at[1];
    const std::string hn = Ctx::label(c.step, 0, h), q = Ctx::label(c.step, 1, i);
    const Step& X = c.input("blocks.0.attn.hook_attn_scores");
    const std::size_t T = X.shape[2];
    auto key = [&](std::size_t j) { return Ctx::label(X, 2, j); };
    if (n == "blocks.0.attn.softmax.hook_row_max") {
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
    const Step& M = c.input("blocks.0.attn.softmax.hook_row_max");
    const float m = get(M, {h, i});
    if (n == "blocks.0.attn.softmax.hook_shifted") {
        const std::size_t j = c.at[2];
        const float x = get(X, {h, i, j});
        c.line("score[{},{},{}] - max of the row = {} - {}", hn, q, key(j), c.num(x), c.num(m));
        const float r = m == kNegInf ? kNegInf : x - m;
        if (m == kNegInf) c.line("the whole row is blocked: stays -inf (not -inf - -inf = nan)");
        c.line("  = {}", c.num(r));
        return r;
    }
    const Step& S = c.input("blocks.0.attn.softmax.hook_shifted");
    if (n == "blocks.0.attn.softmax.hook_exp") {
        const float x = get(S, {h, i, c.at[2]});
        const float r = std::exp(x);
        c.line("exp({}) = {}{}", c.num(x), c.num(r), x == kNegInf ? "   (a blocked key: exactly 0)" : "");
        return r;
    }
    const Step& E = c.input("blocks.0.attn.softmax.hook_exp");
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
    if (n == "blocks.0.attn.softmax.hook_row_sum") {
        c.line("Σ_j exp(score[{},{},j] - max), max = {}:", hn, q, c.num(m));
        return exp_terms();
    }
    // hook_pattern: the whole chain for one weight
    const std::size_t j = c.at[2];
    const float sum = get(c.input("blocks.0.attn.softmax.hook_row_sum"), {h, i});
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

// hook_z at (i, h, e); hook_attn_out at (i, c)
float explain_mix(Ctx& c) {
    const Dims d = c.lesson.dims_of(c.pass());
    if (c.base() == "blocks.0.attn.hook_z") {
        const std::size_t i = c.at[0], h = c.at[1], e = c.at[2];
        const Step& A = c.input("blocks.0.attn.hook_pattern");
        const Step& V = c.input("blocks.0.attn.hook_v");
        const std::size_t g = d.kv_of(h);
        const std::string q = Ctx::label(c.step, 0, i), hn = Ctx::label(c.step, 1, h), gn = Ctx::label(V, 1, g);
        c.line("Z[{},{},d{}] = Σ_j A[{},{},j] · V[j,{},d{}]   (query {} mixes the values of {} keys)", q, hn, e, hn, q,
               gn, e, q, d.T);
        c.line("{}", kv_group_line(d, hn, h, gn));
        return write_dot(
            c, d.T, [&](std::size_t j) { return fmt::format("A[{},{},{}]", hn, q, Ctx::label(A, 2, j)); },
            [&](std::size_t j) { return get(A, {h, i, j}); },
            [&](std::size_t j) { return fmt::format("V[{},{},d{}]", Ctx::label(V, 0, j), gn, e); },
            [&](std::size_t j) { return get(V, {j, g, e}); });
    }
    const std::size_t i = c.at[0], col = c.at[1];
    const Step& Z = c.input("blocks.0.attn.hook_z");
    const Tensor& W = c.weight("W_O");
    const Tensor* b = c.optional_weight("b_O");
    const std::string q = Ctx::label(c.step, 0, i);
    c.line("attn_out[{},d{}] = Σ_k concat(Z)[{},k] · W_O[k,{}] + b_O[{}]   (k = head·hs + d: every head's Z)", q, col,
           q, col, col);
    return write_dot(
        c, d.C, [&](std::size_t k) { return fmt::format("Z[{},h{},d{}]", q, k / d.hs, k % d.hs); },
        [&](std::size_t k) { return Z.value.data[i * d.C + k]; },
        [&](std::size_t k) { return fmt::format("W_O[{},{}]", k, col); }, [&](std::size_t k) { return W.data[k * d.C + col]; },
        "b_O", b ? &b->data[col] : nullptr);
}

}  // namespace attntrace::explain_detail

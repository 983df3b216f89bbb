// explain: the steps around attention: the input, Q/K/V, residual adds,
// LayerNorm and the FFN.
#include <cmath>

#include "render/explain_detail.hpp"

namespace attntrace::explain_detail {

// hook_embed, hook_resid_pre at (t, c)
float explain_embed(Ctx& c) {
    const std::size_t t = c.at[0], col = c.at[1];
    const std::string tok = Ctx::label(c.step, 0, t);
    if (c.step.name == "hook_pos_embed") return explain_pos_embed(c);
    if (c.step.name == "hook_embed" && !c.lesson.inputs.count("embedding")) {
        const Tensor& X = c.lesson.inputs.at("X");
        c.line("the lesson's inputs.X, row {} (token {}), column {}: the token embeddings, before positions", t, tok, col);
        return X.data[t * X.shape[1] + col];
    }
    if (c.step.name == "hook_embed") {
        const Tensor& table = c.lesson.inputs.at("embedding");
        const auto id = static_cast<std::size_t>(c.lesson.token_ids[t]);
        c.line("token {} has id {}: row {} of the lesson's embedding table, column {}", tok, id, id, col);
        return table.data[id * table.shape[1] + col];
    }
    if (c.lesson.config.positions.additive()) {
        const float e = get(c.input("hook_embed"), {t, col}), p = get(c.input("hook_pos_embed"), {t, col});
        c.line("X = E + PE: hook_embed[{},d{}] + hook_pos_embed[{},d{}] = {} + {}", tok, col, tok, col, c.num(e), c.num(p));
        const float r = e + p;
        c.line("  = {}", c.num(r));
        return r;
    }
    if (const Step* e = c.trace.find("hook_embed"); e && e->value.size()) {
        c.line("X = the embeddings (no positional encoding in this block): hook_embed[{},d{}]", tok, col);
        return get(*e, {t, col});
    }
    const Tensor& X = c.lesson.inputs.at("X");
    c.line("an input: the lesson's inputs.X, row {} (token {}), column {}", t, tok, col);
    return X.data[t * X.shape[1] + col];
}

// hook_kv_head at (h): which K/V head query head h reads
float explain_kv_head(Ctx& c) {
    const Dims d = c.lesson.dims_of(c.pass());
    const std::size_t h = c.at[0], group = d.NH / d.KVH, g = d.kv_of(h);
    const std::string kind = d.KVH == d.NH ? "multi-head attention: every query head has its own K/V head"
                             : d.KVH == 1  ? "multi-query attention: one K/V head for all query heads"
                                           : "grouped-query attention";
    c.line("{} query heads share {} K/V heads ({}): groups of NH / KVH = {} / {} = {} consecutive heads", d.NH, d.KVH,
           kind, d.NH, d.KVH, group);
    c.line("g({}) = ⌊{} / {}⌋ = {}: query head {} reads K and V head kv{} (query heads h{}..h{})", Ctx::label(c.step, 0, h),
           h, group, g, Ctx::label(c.step, 0, h), g, g * group, g * group + group - 1);
    return static_cast<float>(g);
}

// hook_q at (t, h, e): column h·hs + e of X·W_Q + b_Q (C columns);
// hook_k, hook_v at (t, g, e): column g·hs + e of X·W + b (KVH·hs columns)
float explain_qkv(Ctx& c) {
    if (c.base() == "blocks.0.attn.hook_kv_head") return explain_kv_head(c);
    const Dims d = c.lesson.dims_of(c.pass());
    const char letter = c.base().back() == 'q' ? 'Q' : c.base().back() == 'k' ? 'K' : 'V';
    const std::size_t N = letter == 'Q' ? d.C : d.KVH * d.hs;  // W's columns
    const std::size_t t = c.at[0], h = c.at[1], e = c.at[2], col = h * d.hs + e;
    const std::string w = std::string("W_") + letter, b = std::string("b_") + letter;
    // X: the pass's stream; in cross-attention K and V project the encoder's output M (inputs.memory).
    const bool memory = c.pass().cross && letter != 'Q';
    const Tensor& X = memory ? c.lesson.inputs.at("memory") : c.step_named(c.pass().x).value;
    const char* xs = memory ? "M" : "X";
    const Tensor& W = c.weight(w);
    const Tensor* B = c.optional_weight(b);
    const std::string tok = Ctx::label(c.step, 0, t), hn = Ctx::label(c.step, 1, h);
    c.line("{}[{},{},d{}] = Σ_c {}[{},c] · {}[c,{}] + {}[{}]   (column {} = {} head {} · hs {} + {})", letter, tok, hn, e,
           xs, tok, w, col, b, col, col, letter == 'Q' ? "query" : "K/V", h, d.hs, e);
    if (!memory && c.pass().x != "blocks.0.hook_resid_pre") c.line("X is {}", c.pass().x);
    if (letter != 'Q' && d.KVH != d.NH)
        c.line("K/V head {} is read by query heads h{}..h{} (NH / KVH = {} of them)", hn, h * (d.NH / d.KVH),
               (h + 1) * (d.NH / d.KVH) - 1, d.NH / d.KVH);
    return write_dot(
        c, d.C, [&](std::size_t k) { return fmt::format("{}[{},d{}]", xs, tok, k); },
        [&](std::size_t k) { return X.data[t * d.C + k]; }, [&](std::size_t k) { return fmt::format("{}[{},{}]", w, k, col); },
        [&](std::size_t k) { return W.data[k * N + col]; }, b.c_str(), B ? &B->data[col] : nullptr);
}

// hook_resid_mid, hook_resid_post at (t, c)
float explain_residual(Ctx& c) {
    // The pass names what it adds: X + attn_out, LN1 + FFN in the post-norm encoder (catalogue.hpp).
    const std::string& a = c.pass().residual;
    const std::string& b = c.pass().update;
    const float x = get(c.step_named(a), {c.at[0], c.at[1]}), y = get(c.step_named(b), {c.at[0], c.at[1]});
    const std::string where = fmt::format("[{},d{}]", Ctx::label(c.step, 0, c.at[0]), c.at[1]);
    c.line("{}{} + {}{} = {} + {}", a, where, b, where, c.num(x), c.num(y));
    c.line("  = {}", c.num(x + y));
    return x + y;
}

// ln{1,2}.hook_mean, hook_var, hook_scale at (t); hook_standardized, hook_normalized at (t, c)
float explain_layernorm(Ctx& c) {
    const std::string& prefix = c.pass().out;  // "blocks.0.ln1."
    const std::string& in = c.pass().x;
    const std::string ln = fmt::format("ln{}", c.pass().norm_index);
    const Step& X = c.step_named(in);
    const std::size_t t = c.at[0], C = X.shape[1];
    const std::string tok = Ctx::label(c.step, 0, t);
    const std::string leaf = c.step.name.substr(prefix.size());
    const std::string xname = in;
    if (c.lesson.config.norm == NormKind::rmsnorm) return explain_rmsnorm(c, X, prefix, ln, xname);
    if (leaf == "hook_mean") {
        double sum = 0.0;  // double, as row_mean_ref (see kernels/layernorm.hpp)
        for (std::size_t k = 0; k < C; ++k) sum += get(X, {t, k});
        c.line("the {} numbers of token {}'s row of {}:", C, tok, xname);
        list_terms(c, C, [&](std::size_t k) { return fmt::format("{} {:>9}   d{}", k ? "+" : " ", c.num(get(X, {t, k})), k); });
        c.line("μ = {} / {} (C)", c.num(static_cast<float>(sum)), C);
        const float r = static_cast<float>(sum / static_cast<double>(C));
        c.line("  = {}", c.num(r));
        return r;
    }
    const float mu = get(c.step_named(prefix + "hook_mean"), {t});
    if (leaf == "hook_var") {
        double sq = 0.0;
        for (std::size_t k = 0; k < C; ++k) {
            const double dv = static_cast<double>(get(X, {t, k})) - mu;
            sq += dv * dv;
        }
        c.line("(x - μ)² over token {}'s row, μ = {}:", tok, c.num(mu));
        list_terms(c, C, [&](std::size_t k) {
            const double dv = static_cast<double>(get(X, {t, k})) - mu;
            return fmt::format("{} ({:>9} - {})² = {:>9}   d{}", k ? "+" : " ", c.num(get(X, {t, k})), c.num(mu),
                               c.num(static_cast<float>(dv * dv)), k);
        });
        const float r = static_cast<float>(sq / static_cast<double>(C));
        c.line("σ² = {} / {} (C: the biased variance, as PyTorch's LayerNorm)", c.num(static_cast<float>(sq)), C);
        c.line("  = {}", c.num(r));
        return r;
    }
    const float var = get(c.step_named(prefix + "hook_var"), {t});
    const float eps = static_cast<float>(c.lesson.config.eps);
    if (leaf == "hook_scale") {
        const float r = std::sqrt(var + eps);
        c.line("σ = √(σ² + eps) = √({} + {:g}) = {}", c.num(var), eps, c.num(r));
        return r;
    }
    const float sd = get(c.step_named(prefix + "hook_scale"), {t});
    const std::size_t col = c.at[1];
    const float x = get(X, {t, col});
    if (leaf == "hook_standardized") {
        const float r = (x - mu) / sd;
        c.line("x̂ = ({}[{},d{}] - μ) / σ = ({} - {}) / {} = {}", xname, tok, col, c.num(x), c.num(mu), c.num(sd),
               c.num(r));
        return r;
    }
    // hook_normalized: the whole chain
    const float xhat = get(c.step_named(prefix + "hook_standardized"), {t, col});
    const float g = c.weight(ln + "_gamma").data[col], b = c.weight(ln + "_beta").data[col];
    c.line("1. mean of token {}'s row of {}: μ = {}", tok, xname, c.num(mu));
    c.line("2. biased variance (÷ {}): σ² = {}", C, c.num(var));
    c.line("3. std: σ = √(σ² + eps) = √({} + {:g}) = {}", c.num(var), eps, c.num(sd));
    c.line("4. normalized: x̂ = ({} - {}) / {} = {}", c.num(x), c.num(mu), c.num(sd), c.num(xhat));
    const float r = g * xhat + b;
    c.line("5. γ[d{}] · x̂ + β[d{}] = {} · {} + {} = {}", col, col, c.num(g), c.num(xhat), c.num(b), c.num(r));
    return r;
}

// ln1.* / ln2.* of an RMSNorm at (t) or (t, c): the mean square, σ, x / σ, γ ⊙ x̂.
float explain_rmsnorm(Ctx& c, const Step& X, const std::string& prefix, const std::string& ln, const std::string& xname) {
    const std::string leaf = c.step.name.substr(prefix.size());
    const std::size_t t = c.at[0], C = X.shape[1];
    const std::string tok = Ctx::label(c.step, 0, t);
    if (leaf == "hook_mean_square") {
        double sq = 0.0;  // double, as row_mean_square_ref
        for (std::size_t k = 0; k < C; ++k) sq += static_cast<double>(get(X, {t, k})) * get(X, {t, k});
        c.line("x² over token {}'s row of {} (RMSNorm takes no mean):", tok, xname);
        list_terms(c, C, [&](std::size_t k) {
            const float x = get(X, {t, k});
            return fmt::format("{} {:>9}² = {:>9}   d{}", k ? "+" : " ", c.num(x), c.num(x * x), k);
        });
        const float r = static_cast<float>(sq / static_cast<double>(C));
        c.line("ms = {} / {} (C) = {}", c.num(static_cast<float>(sq)), C, c.num(r));
        return r;
    }
    const float ms = get(c.step_named(prefix + "hook_mean_square"), {t});
    const float eps = static_cast<float>(c.lesson.config.eps);
    if (leaf == "hook_scale") {
        const float r = std::sqrt(ms + eps);
        c.line("σ = √(ms + eps) = √({} + {:g}) = {}   (the row's root mean square)", c.num(ms), eps, c.num(r));
        return r;
    }
    const float sd = get(c.step_named(prefix + "hook_scale"), {t});
    const std::size_t col = c.at[1];
    const float x = get(X, {t, col});
    if (leaf == "hook_standardized") {
        const float r = x / sd;
        c.line("x̂ = {}[{},d{}] / σ = {} / {} = {}   (no mean subtracted)", xname, tok, col, c.num(x), c.num(sd), c.num(r));
        return r;
    }
    const float xhat = get(c.step_named(prefix + "hook_standardized"), {t, col});
    const float g = c.weight(ln + "_gamma").data[col];
    c.line("1. mean square of token {}'s row of {}: ms = {}", tok, xname, c.num(ms));
    c.line("2. σ = √(ms + eps) = √({} + {:g}) = {}", c.num(ms), eps, c.num(sd));
    c.line("3. x̂ = {} / {} = {}", c.num(x), c.num(sd), c.num(xhat));
    const float r = g * xhat;
    c.line("4. γ[d{}] · x̂ = {} · {} = {}   (RMSNorm has no β)", col, c.num(g), c.num(xhat), c.num(r));
    return r;
}

// mlp.hook_pre, mlp.hook_pre_linear, mlp.hook_post at (t, f); hook_mlp_out at (t, c)
float explain_ffn(Ctx& c) {
    const Dims d = c.lesson.dims_of(c.pass());
    const std::size_t t = c.at[0], col = c.at[1];
    const std::string tok = Ctx::label(c.step, 0, t);
    if (c.base() == "blocks.0.mlp.hook_pre") {
        const Step& X = c.step_named(c.pass().x);
        const Tensor& W = c.weight("W_1");
        const Tensor* B = c.optional_weight("b_1");
        c.line("H[{},f{}] = Σ_c LN1[{},c] · W_1[c,{}] + b_1[{}]", tok, col, tok, col, col);
        return write_dot(
            c, d.C, [&](std::size_t k) { return fmt::format("LN1[{},d{}]", tok, k); },
            [&](std::size_t k) { return get(X, {t, k}); }, [&](std::size_t k) { return fmt::format("W_1[{},{}]", k, col); },
            [&](std::size_t k) { return W.data[k * d.F + col]; }, "b_1", B ? &B->data[col] : nullptr);
    }
    if (c.base() == "blocks.0.mlp.hook_pre_linear") {
        const Step& X = c.step_named(c.pass().x);
        const Tensor& W = c.weight("W_3");
        const Tensor* B = c.optional_weight("b_3");
        c.line("U[{},f{}] = Σ_c LN1[{},c] · W_3[c,{}] + b_3[{}]   (SwiGLU's linear branch)", tok, col, tok, col, col);
        return write_dot(
            c, d.C, [&](std::size_t k) { return fmt::format("LN1[{},d{}]", tok, k); },
            [&](std::size_t k) { return get(X, {t, k}); }, [&](std::size_t k) { return fmt::format("W_3[{},{}]", k, col); },
            [&](std::size_t k) { return W.data[k * d.F + col]; }, "b_3", B ? &B->data[col] : nullptr);
    }
    if (c.base() == "blocks.0.mlp.hook_post") {
        const float h = get(c.input("blocks.0.mlp.hook_pre"), {t, col});
        if (c.lesson.config.activation == Activation::swiglu) {
            const float u = get(c.input("blocks.0.mlp.hook_pre_linear"), {t, col});
            const float silu = h / (1.0f + std::exp(-h));  // as swiglu_ref
            const float r = silu * u;
            c.line("SwiGLU = SiLU(h) · u, h = H[{},f{}] = {}, u = U[{},f{}] = {}", tok, col, c.num(h), tok, col, c.num(u));
            c.line("  SiLU(h) = h / (1 + e^-h) = {} / (1 + {}) = {}", c.num(h), c.num(std::exp(-h)), c.num(silu));
            c.line("  = {} · {} = {}", c.num(silu), c.num(u), c.num(r));
            return r;
        }
        if (c.lesson.config.activation == Activation::gelu_tanh) {
            const float k = 0.7978845608028654f;  // √(2/π), as gelu_tanh_ref
            const float inner = k * (h + 0.044715f * h * h * h);
            const float r = 0.5f * h * (1.0f + std::tanh(inner));
            c.line("GELU(h) ≈ 0.5 · h · (1 + tanh(√(2/π) · (h + 0.044715·h³))), h = {}   (the tanh approximation)", c.num(h));
            c.line("  = 0.5 · {} · (1 + tanh({})) = 0.5 · {} · (1 + {}) = {}", c.num(h), c.num(inner), c.num(h),
                   c.num(std::tanh(inner)), c.num(r));
            return r;
        }
        if (c.lesson.config.activation == Activation::gelu) {
            const float inv_sqrt2 = 0.70710678118654752f;  // as gelu_ref
            const float r = 0.5f * h * (1.0f + std::erf(h * inv_sqrt2));
            c.line("GELU(h) = 0.5 · h · (1 + erf(h / √2)), h = {}", c.num(h));
            c.line("  = 0.5 · {} · (1 + {}) = {}", c.num(h), c.num(std::erf(h * inv_sqrt2)), c.num(r));
            return r;
        }
        const float r = h > 0.0f ? h : 0.0f;
        c.line("ReLU(h) = max(0, h) = max(0, {}) = {}{}", c.num(h), c.num(r), h > 0.0f ? "" : "   (negative: cut to 0)");
        return r;
    }
    const Step& P = c.input("blocks.0.mlp.hook_post");
    const Tensor& W = c.weight("W_2");
    const Tensor* B = c.optional_weight("b_2");
    c.line("FFN[{},d{}] = Σ_f act(H)[{},f] · W_2[f,{}] + b_2[{}]", tok, col, tok, col, col);
    return write_dot(
        c, d.F, [&](std::size_t k) { return fmt::format("act(H)[{},f{}]", tok, k); },
        [&](std::size_t k) { return get(P, {t, k}); }, [&](std::size_t k) { return fmt::format("W_2[{},{}]", k, col); },
        [&](std::size_t k) { return W.data[k * d.C + col]; }, "b_2", B ? &B->data[col] : nullptr);
}

}  // namespace attntrace::explain_detail

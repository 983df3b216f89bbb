// Operation norm (stages norm1 and norm2): LayerNorm (or RMSNorm, or DyT) of each token's row
// (also the embeddings' norm under config.embed_norm: steps embed.ln.*, weights embed_ln_*)
// (every norm pass: its input and prefix come from the pass, catalogue.hpp).
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "core/error.hpp"
#include "kernels/kernels.hpp"
#include "kernels/layernorm.hpp"
#include "kernels/softmax.hpp"
#include "lesson/config_fields.hpp"
#include "pipeline/stages.hpp"

namespace attntrace {

namespace {

// The norm pass's steps, and its weights' paths (ln: "ln2", the weights' name before the pass's prefix).
struct LnSteps {
    std::string mean, centred, sq_dev, var, mean_square, scale, standardized, normalized, gamma, beta, alpha;
    LnSteps(const Run& run, const std::string& ln)
        : mean(run.name(Leaf::ln_mean)), centred(run.name(Leaf::ln_centred)), sq_dev(run.name(Leaf::ln_sq_dev)),
          var(run.name(Leaf::ln_var)), mean_square(run.name(Leaf::ln_mean_square)),
          scale(run.name(Leaf::ln_scale)), standardized(run.name(Leaf::ln_standardized)),
          normalized(run.name(Leaf::ln_normalized)), gamma(run.wpath(ln + "_gamma")), beta(run.wpath(ln + "_beta")),
          alpha(run.wpath(ln + "_alpha")) {}
};

// The step template's norm steps are LayerNorm's, their formulas with RMSNorm's in brackets ("σ_i = √(σ²_i +
// eps)   (RMSNorm: √(ms_i + eps))"). An RMSNorm's or a DyT's steps are titled by the norm's display name
// (lesson/config_fields.cpp: "RMSNorm", "DyT"): RMSNorm's σ is the row's root mean square, and its formulas
// are the bracketed ones; DyT's x̂ is tanh(α·x) (its formula set by dyt()), its output LayerNorm's γ ⊙ x̂ + β.
void name_norm_steps(Run& run, const LnSteps& st) {
    const NormKind kind = run.lesson().config.norm;
    const std::string display(norm_display_name(kind));
    auto replace = [](std::string& text, std::string_view from, std::string_view to) {
        if (const auto at = text.find(from); at != std::string::npos) text.replace(at, from.size(), to);
    };
    for (const std::string* name : {&st.scale, &st.standardized, &st.normalized}) {
        Step* s = run.recorded(*name);
        if (!s || !s->def) continue;
        std::string title = s->def->title;
        replace(title, "LayerNorm", display);
        if (kind == NormKind::rmsnorm && s->def->leaf == Leaf::ln_scale) replace(title, "std σ", "root mean square");
        if (kind == NormKind::dyt && s->def->leaf == Leaf::ln_standardized) replace(title, "normalized rows", "tanh(α·x)");
        s->title_text = std::move(title);
        // "LHS = LayerNorm's   (RMSNorm: RMSNorm's)" -> "LHS = RMSNorm's" (DyT: "LHS = LayerNorm's", its
        // output's γ ⊙ x̂ + β), the norm named by its kind: "LN(X)" -> "RMSNorm(X)"
        const std::string& f = s->def->formula;
        const std::string_view mark = "   (RMSNorm: ";
        const auto at = f.find(mark), eq = f.find(" = ");
        if (!s->formula_text.empty() || at == std::string::npos || eq == std::string::npos || f.back() != ')') continue;
        std::string formula = kind == NormKind::rmsnorm
                                  ? f.substr(0, eq) + " = " + f.substr(at + mark.size(), f.size() - 1 - at - mark.size())
                                  : f.substr(0, at);
        replace(formula, "LN(", display + "(");
        s->formula_text = std::move(formula);
        if (kind != NormKind::rmsnorm) continue;
        const Leaf leaf = s->def->leaf;
        s->meaning_text = leaf == Leaf::ln_scale ? "The row's root mean square σ (no mean is taken first); eps keeps it away from 0."
                          : leaf == Leaf::ln_standardized ? "Each row now has root mean square 1; its mean is not removed."
                                                          : "The learned gain γ rescales each dimension (RMSNorm has no bias β).";
    }
}

// config.eps may be 0 (a textbook's LayerNorm): a row whose deviations are
// all 0 then has σ = 0 and x̂ = 0 / 0. Refused here, naming the row, before
// the NaN would be.   sd: (P)
void refuse_zero_scale(const Run& run, const std::string& scale, const float* sd, std::size_t P, bool rms) {
    for (std::size_t t = 0; sd && t < P; ++t)
        if (sd[t] == 0.0f)
            fail_file(run.lesson().file,
                      fmt::format("{}[{}]: expected σ above 0, found 0: row {} of the norm's input is {} and config.eps "
                                  "is 0, so x̂ = 0 / 0 (give config.eps above 0, as PyTorch's 1e-5)",
                                  scale, t, t, rms ? "all zeros" : "constant (every x equals μ)"));
}

// RMSNorm, pass by pass (each reads the step before, given or rounded or not):
// x: (P, C)   mean_square, scale: (P)   standardized, normalized: (P, C)
void rmsnorm(Run& run, const std::string& in, const std::string& ln) {
    const Dims& d = run.dims();
    const LnSteps st(run, ln);
    const std::string& ms_name = st.mean_square;
    const Tensor* x = run.value(in);
    const Tensor* gamma = run.weight(ln + "_gamma");
    const float eps = static_cast<float>(run.lesson().config.eps);
    // ms = Σ x² / C
    if (float* ms = run.open(ms_name, {{in, x}})) row_mean_square(x->ptr(), d.P, d.C, ms);
    run.close();
    const Tensor* ms = run.value(ms_name);
    // σ = √(ms + eps)
    if (float* sd = run.open(st.scale, {{ms_name, ms}})) std_eps_ref(ms->ptr(), d.P, eps, sd);
    run.close();
    if (const Tensor* s = run.value(st.scale)) refuse_zero_scale(run, st.scale, s->ptr(), d.P, true);
    const Tensor* sd = run.value(st.scale);
    // x̂ = x / σ
    if (float* xhat = run.open(st.standardized, {{in, x}, {st.scale, sd}}))
        divide_rows(x->ptr(), sd->ptr(), d.P, d.C, xhat);
    run.close();
    const Tensor* xhat = run.value(st.standardized);
    // γ ⊙ x̂
    if (float* out = run.open(st.normalized, {{st.standardized, xhat}, {st.gamma, gamma}}))
        gain(xhat->ptr(), gamma->ptr(), d.P, d.C, out);
    run.close();
    name_norm_steps(run, st);
}

// DyT (Dynamic Tanh, Zhu, Chen, He, LeCun and Liu 2025): no statistics of the
// row; each number squashed on its own by tanh, its slope α one learned number.
// x: (P, C)   α: (1)   x̂ = tanh(α·x), γ ⊙ x̂ + β: (P, C)
constexpr const char* kDytFormula = "x̂[i,c] = tanh(α·x[i,c])   (DyT: α one learned number, no mean, no σ)";
constexpr const char* kDytMeaning =
    "Each number squashed into (-1, 1) on its own: DyT computes no statistic of the row, so rows keep their "
    "own scale and a large value saturates near ±1.";
void dyt(Run& run, const std::string& in, const std::string& ln) {
    const Dims& d = run.dims();
    const LnSteps st(run, ln);
    const Tensor* x = run.value(in);
    const Tensor* alpha = run.weight(ln + "_alpha");
    if (float* t = run.open(st.standardized, {{in, x}, {st.alpha, alpha}}))
        dyt_tanh(x->ptr(), alpha->data[0], t, d.P * d.C);
    run.close();
    run.set_formula(st.standardized, kDytFormula, kDytMeaning);
    const Tensor* t = run.value(st.standardized);
    const Tensor* gamma = run.weight(ln + "_gamma");
    const Tensor* beta = run.weight(ln + "_beta");
    // γ ⊙ x̂ + β
    if (float* out = run.open(st.normalized, {{st.standardized, t}, {st.gamma, gamma}, {st.beta, beta}}))
        affine_ref(t->ptr(), gamma->ptr(), beta->ptr(), d.P, d.C, out);
    run.close();
    name_norm_steps(run, st);
}

// σ² of the deviations: the template's formula and meaning are the biased ones.
void describe_unbiased(Run& run, const std::string& var) {
    run.set_formula(var, "σ²_i = (1/(C-1)) Σ_c (x[i,c] - μ_i)²   (config.variance \"unbiased\")",
                    "Unbiased variance (divide by C-1, Bessel's correction), as torch.var and .std(); "
                    "nn.LayerNorm divides by C.");
}

// config.norm_steps "all": LayerNorm as a textbook writes it, every piece a
// step, each pass reading the (given or rounded) step before:
// x: (P, C)   μ: (P)   x - μ, (x - μ)²: (P, C)   σ², σ: (P)   x̂ = (x - μ) / σ, γ ⊙ x̂ + β: (P, C)
void layernorm_as_taught(Run& run, const std::string& in, const std::string& ln) {
    const Dims& d = run.dims();
    const LnSteps st(run, ln);
    const Tensor* x = run.value(in);
    const bool unbiased = run.lesson().config.variance == Variance::unbiased;
    if (float* mean = run.open(st.mean, {{in, x}})) row_mean_ref(x->ptr(), d.P, d.C, mean);
    run.close();
    const Tensor* mean = run.value(st.mean);
    if (float* xc = run.open(st.centred, {{in, x}, {st.mean, mean}})) shift_rows_ref(x->ptr(), mean->ptr(), d.P, d.C, xc);
    run.close();
    const Tensor* xc = run.value(st.centred);
    if (float* sq = run.open(st.sq_dev, {{st.centred, xc}})) square_ref(xc->ptr(), sq, d.P * d.C);
    run.close();
    const Tensor* sq = run.value(st.sq_dev);
    if (float* var = run.open(st.var, {{st.sq_dev, sq}})) row_var_from_squares_ref(sq->ptr(), d.P, d.C, var, unbiased ? 1 : 0);
    run.close();
    if (unbiased) describe_unbiased(run, st.var);
    const Tensor* var = run.value(st.var);
    if (float* sd = run.open(st.scale, {{st.var, var}}))
        std_eps_ref(var->ptr(), d.P, static_cast<float>(run.lesson().config.eps), sd);
    run.close();
    const Tensor* sd = run.value(st.scale);
    if (sd) refuse_zero_scale(run, st.scale, sd->ptr(), d.P, false);
    if (float* xhat = run.open(st.standardized, {{st.centred, xc}, {st.scale, sd}}))
        divide_rows_ref(xc->ptr(), sd->ptr(), d.P, d.C, xhat);
    run.close();
    run.set_formula(st.standardized, "x̂[i,c] = (x - μ)[i,c] / σ_i");
    const Tensor* xhat = run.value(st.standardized);
    const Tensor* gamma = run.weight(ln + "_gamma");
    const Tensor* beta = run.weight(ln + "_beta");
    if (float* out = run.open(st.normalized, {{st.standardized, xhat}, {st.gamma, gamma}, {st.beta, beta}}))
        affine_ref(xhat->ptr(), gamma->ptr(), beta->ptr(), d.P, d.C, out);
    run.close();
}

// x: (P, C)   mean, var, scale: (P)   standardized, normalized: (P, C)
void layernorm(Run& run, const std::string& in, const std::string& ln) {
    const Dims& d = run.dims();
    const LnSteps st(run, ln);
    const Tensor* x = run.value(in);
    const Tensor* gamma = run.weight(ln + "_gamma");
    const Tensor* beta = run.weight(ln + "_beta");
    const float eps = static_cast<float>(run.lesson().config.eps);
    if (run.lesson().config.norm == NormKind::rmsnorm) return rmsnorm(run, in, ln);
    if (run.lesson().config.norm == NormKind::dyt) return dyt(run, in, ln);
    const bool unbiased = run.lesson().config.variance == Variance::unbiased;
    if (run.lesson().config.norm_steps_all) return layernorm_as_taught(run, in, ln);
    if (!unbiased && !run.intervenes({st.mean, st.var, st.scale, st.standardized})) {
        // The fused kernel fills all five steps.
        float* mean = run.open(st.mean, {{in, x}});
        float* var = run.open(st.var, {{in, x}});
        float* sd = run.open(st.scale, {{in, x}});
        float* xhat = run.open(st.standardized, {{in, x}});
        float* out = run.open(st.normalized, {{in, x}, {st.gamma, gamma}, {st.beta, beta}});
        if (x) layernorm_rows(x->ptr(), d.P, d.C, eps, out ? gamma->ptr() : nullptr, out ? beta->ptr() : nullptr, mean,
                              var, sd, xhat, out);
        refuse_zero_scale(run, st.scale, sd, d.P, false);
        run.close();
        return;
    }
    // One pass per step, each reading the (possibly given or rounded) step before.
    // pass 1: μ
    if (float* mean = run.open(st.mean, {{in, x}})) row_mean_ref(x->ptr(), d.P, d.C, mean);
    run.close();
    const Tensor* mean = run.value(st.mean);
    // pass 2: σ², biased (÷ C, as PyTorch's LayerNorm) or unbiased (÷ (C - 1), Bessel's, as torch.var)
    if (float* var = run.open(st.var, {{in, x}, {st.mean, mean}}))
        row_var_ref(x->ptr(), mean->ptr(), d.P, d.C, var, unbiased ? 1 : 0);
    run.close();
    if (unbiased) describe_unbiased(run, st.var);
    const Tensor* var = run.value(st.var);
    // pass 3: σ = √(σ² + eps);  x̂ = (x - μ) / σ
    if (float* sd = run.open(st.scale, {{st.var, var}})) std_eps_ref(var->ptr(), d.P, eps, sd);
    run.close();
    const Tensor* sd = run.value(st.scale);
    if (sd) refuse_zero_scale(run, st.scale, sd->ptr(), d.P, false);
    if (float* xhat = run.open(st.standardized, {{in, x}, {st.mean, mean}, {st.scale, sd}}))
        standardize_ref(x->ptr(), mean->ptr(), sd->ptr(), d.P, d.C, xhat);
    run.close();
    const Tensor* xhat = run.value(st.standardized);
    // pass 4: γ ⊙ x̂ + β
    if (float* out = run.open(st.normalized, {{st.standardized, xhat}, {st.gamma, gamma}, {st.beta, beta}}))
        affine_ref(xhat->ptr(), gamma->ptr(), beta->ptr(), d.P, d.C, out);
    run.close();
}

// ln1.* / ln2.* of an RMSNorm at (t) or (t, c): the mean square, σ, x / σ, γ ⊙ x̂.
float rmsnorm_explain(Cell& c, const Step& X, const std::string& ln) {
    const Leaf leaf = c.leaf();
    const std::string& xname = X.name;
    const std::size_t t = c.at[0], C = X.shape[1];
    const std::string tok = Cell::label(c.step, 0, t);
    if (leaf == Leaf::ln_mean_square) {
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
    const float ms = get(c.input(Leaf::ln_mean_square), {t});
    const float eps = static_cast<float>(c.lesson.config.eps);
    if (leaf == Leaf::ln_scale) {
        const float r = std::sqrt(ms + eps);
        c.line("σ = √(ms + eps) = √({} + {:g}) = {}   (the row's root mean square)", c.num(ms), eps, c.num(r));
        return r;
    }
    const float sd = get(c.input(Leaf::ln_scale), {t});
    const std::size_t col = c.at[1];
    const float x = get(X, {t, col});
    if (leaf == Leaf::ln_standardized) {
        const float r = x / sd;
        c.line("x̂ = {}[{},d{}] / σ = {} / {} = {}   (no mean subtracted)", xname, tok, col, c.num(x), c.num(sd), c.num(r));
        return r;
    }
    const float xhat = get(c.input(Leaf::ln_standardized), {t, col});
    const float g = c.weight(ln + "_gamma").data[col];
    c.line("1. mean square of token {}'s row of {}: ms = {}", tok, xname, c.num(ms));
    c.line("2. σ = √(ms + eps) = √({} + {:g}) = {}", c.num(ms), eps, c.num(sd));
    c.line("3. x̂ = {} / {} = {}", c.num(x), c.num(sd), c.num(xhat));
    const float r = g * xhat;
    c.line("4. γ[d{}] · x̂ = {} · {} = {}   (RMSNorm has no β)", col, c.num(g), c.num(xhat), c.num(r));
    return r;
}

// ln*.hook_standardized and hook_normalized of a DyT at (t, c): tanh(α·x), γ ⊙ x̂ + β.
float dyt_explain(Cell& c, const Step& X, const std::string& ln) {
    const std::size_t t = c.at[0], col = c.at[1];
    const std::string tok = Cell::label(c.step, 0, t);
    const float x = get(X, {t, col}), a = c.weight(ln + "_alpha").data[0];
    if (c.leaf() == Leaf::ln_standardized) {
        const float r = std::tanh(a * x);  // dyt_tanh_ref
        c.line("x̂ = tanh(α · {}[{},d{}]) = tanh({} · {}) = tanh({}) = {}   (DyT: no mean, no σ)", X.name, tok, col,
               c.num(a), c.num(x), c.num(a * x), c.num(r));
        return r;
    }
    const float xhat = get(c.input(Leaf::ln_standardized), {t, col});
    const float g = c.weight(ln + "_gamma").data[col], b = c.weight(ln + "_beta").data[col];
    c.line("1. x̂ = tanh(α · x) = tanh({} · {}) = {}   (DyT: each number on its own, no statistic of the row)",
           c.num(a), c.num(x), c.num(xhat));
    const float r = g * xhat + b;  // affine_ref
    c.line("2. γ[d{}] · x̂ + β[d{}] = {} · {} + {} = {}", col, col, c.num(g), c.num(xhat), c.num(b), c.num(r));
    return r;
}

}  // namespace

void norm_forward(Run& run) {
    const Pass& p = run.pass();
    layernorm(run, run.name(p.x), norm_weight_stem(p));
}

// ln{1,2}.hook_mean, hook_var, hook_scale at (t); hook_standardized, hook_normalized at (t, c)
float norm_explain(Cell& c) {
    const std::string ln = norm_weight_stem(c.pass());
    const Step& X = c.input(c.pass().x);
    const std::size_t t = c.at[0], C = X.shape[1];
    const std::string tok = Cell::label(c.step, 0, t);
    const Leaf leaf = c.leaf();
    const std::string& xname = X.name;
    if (c.lesson.config.norm == NormKind::rmsnorm) return rmsnorm_explain(c, X, ln);
    if (c.lesson.config.norm == NormKind::dyt) return dyt_explain(c, X, ln);
    if (leaf == Leaf::ln_mean) {
        double sum = 0.0;  // double, as row_mean_ref (see kernels/layernorm.hpp)
        for (std::size_t k = 0; k < C; ++k) sum += get(X, {t, k});
        c.line("the {} numbers of token {}'s row of {}:", C, tok, xname);
        list_terms(c, C, [&](std::size_t k) { return fmt::format("{} {:>9}   d{}", k ? "+" : " ", c.num(get(X, {t, k})), k); });
        c.line("μ = {} / {} (C)", c.num(static_cast<float>(sum)), C);
        const float r = static_cast<float>(sum / static_cast<double>(C));
        c.line("  = {}", c.num(r));
        return r;
    }
    const float mu = get(c.input(Leaf::ln_mean), {t});
    const bool taught = c.lesson.config.norm_steps_all;  // config.norm_steps "all": x - μ and (x - μ)² are steps
    if (leaf == Leaf::ln_centred) {
        const float x = get(X, {t, c.at[1]}), r = x - mu;  // shift_rows_ref
        c.line("x - μ = {}[{},d{}] - μ = {} - {} = {}", xname, tok, c.at[1], c.num(x), c.num(mu), c.num(r));
        return r;
    }
    if (leaf == Leaf::ln_sq_dev) {
        const float xc = get(c.input(Leaf::ln_centred), {t, c.at[1]}), r = xc * xc;  // square_ref
        c.line("(x - μ)² = {}² = {}   (x - μ: hook_centred[{},d{}])", c.num(xc), c.num(r), tok, c.at[1]);
        return r;
    }
    const bool unbiased = c.lesson.config.variance == Variance::unbiased;
    const std::size_t n = unbiased ? C - 1 : C;  // as the variance kernels' ddof
    const char* divisor = unbiased ? "C - 1: the unbiased variance, Bessel's correction, as torch.var; config.variance"
                                   : "C: the biased variance, as PyTorch's LayerNorm";
    if (leaf == Leaf::ln_var && taught) {
        const Step& SQ = c.input(Leaf::ln_sq_dev);
        double sq = 0.0;  // double, c ascending, as row_var_from_squares_ref
        for (std::size_t k = 0; k < C; ++k) sq += get(SQ, {t, k});
        c.line("the squared deviations of token {}'s row (hook_sq_dev):", tok);
        list_terms(c, C, [&](std::size_t k) { return fmt::format("{} {:>9}   d{}", k ? "+" : " ", c.num(get(SQ, {t, k})), k); });
        const float r = static_cast<float>(sq / static_cast<double>(n));
        c.line("σ² = {} / {} ({})", c.num(static_cast<float>(sq)), n, divisor);
        c.line("  = {}", c.num(r));
        return r;
    }
    if (leaf == Leaf::ln_var) {
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
        const float r = static_cast<float>(sq / static_cast<double>(n));
        c.line("σ² = {} / {} ({})", c.num(static_cast<float>(sq)), n, divisor);
        c.line("  = {}", c.num(r));
        return r;
    }
    const float var = get(c.input(Leaf::ln_var), {t});
    const float eps = static_cast<float>(c.lesson.config.eps);
    if (leaf == Leaf::ln_scale) {
        const float r = std::sqrt(var + eps);
        c.line("σ = √(σ² + eps) = √({} + {:g}) = {}", c.num(var), eps, c.num(r));
        return r;
    }
    const float sd = get(c.input(Leaf::ln_scale), {t});
    const std::size_t col = c.at[1];
    const float x = get(X, {t, col});
    if (leaf == Leaf::ln_standardized && taught) {
        const float xc = get(c.input(Leaf::ln_centred), {t, col}), r = xc / sd;  // divide_rows_ref
        c.line("x̂ = (x - μ) / σ = {} / {} = {}   (x - μ: hook_centred[{},d{}])", c.num(xc), c.num(sd), c.num(r), tok, col);
        return r;
    }
    if (leaf == Leaf::ln_standardized) {
        const float r = (x - mu) / sd;
        c.line("x̂ = ({}[{},d{}] - μ) / σ = ({} - {}) / {} = {}", xname, tok, col, c.num(x), c.num(mu), c.num(sd),
               c.num(r));
        return r;
    }
    // hook_normalized: the whole chain
    const float xhat = get(c.input(Leaf::ln_standardized), {t, col});
    const float g = c.weight(ln + "_gamma").data[col], b = c.weight(ln + "_beta").data[col];
    c.line("1. mean of token {}'s row of {}: μ = {}", tok, xname, c.num(mu));
    c.line("2. {} variance (÷ {}): σ² = {}", unbiased ? "unbiased" : "biased", n, c.num(var));
    c.line("3. std: σ = √(σ² + eps) = √({} + {:g}) = {}", c.num(var), eps, c.num(sd));
    c.line("4. normalized: x̂ = ({} - {}) / {} = {}", c.num(x), c.num(mu), c.num(sd), c.num(xhat));
    const float r = g * xhat + b;
    c.line("5. γ[d{}] · x̂ + β[d{}] = {} · {} + {} = {}", col, col, c.num(g), c.num(xhat), c.num(b), c.num(r));
    return r;
}

}  // namespace attntrace

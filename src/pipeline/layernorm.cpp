// Stages norm1 and norm2: LayerNorm (or RMSNorm) of each token's row
// (every norm pass: its input and prefix come from the pass, catalogue.hpp).
#include <string>

#include <fmt/format.h>

#include "kernels/kernels.hpp"
#include "kernels/layernorm.hpp"
#include "kernels/softmax.hpp"
#include "pipeline/stages.hpp"

namespace attntrace {

namespace {

// The norm pass's steps, and its weights' paths (ln: "ln2", the weights' name before the pass's prefix).
struct LnSteps {
    std::string mean, var, mean_square, scale, standardized, normalized, gamma, beta;
    LnSteps(const Run& run, const std::string& ln)
        : mean(run.name(Leaf::ln_mean)), var(run.name(Leaf::ln_var)), mean_square(run.name(Leaf::ln_mean_square)),
          scale(run.name(Leaf::ln_scale)), standardized(run.name(Leaf::ln_standardized)),
          normalized(run.name(Leaf::ln_normalized)), gamma(run.wpath(ln + "_gamma")), beta(run.wpath(ln + "_beta")) {}
};

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
    if (float* ms = run.open(ms_name, {{in, x}})) row_mean_square_ref(x->ptr(), d.P, d.C, ms);
    run.close();
    const Tensor* ms = run.value(ms_name);
    // σ = √(ms + eps)
    if (float* sd = run.open(st.scale, {{ms_name, ms}})) std_eps_ref(ms->ptr(), d.P, eps, sd);
    run.close();
    const Tensor* sd = run.value(st.scale);
    // x̂ = x / σ
    if (float* xhat = run.open(st.standardized, {{in, x}, {st.scale, sd}}))
        divide_rows_ref(x->ptr(), sd->ptr(), d.P, d.C, xhat);
    run.close();
    const Tensor* xhat = run.value(st.standardized);
    // γ ⊙ x̂
    if (float* out = run.open(st.normalized, {{st.standardized, xhat}, {st.gamma, gamma}}))
        gain_ref(xhat->ptr(), gamma->ptr(), d.P, d.C, out);
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
    if (!run.intervenes({st.mean, st.var, st.scale, st.standardized})) {
        // The fused kernel fills all five steps.
        float* mean = run.open(st.mean, {{in, x}});
        float* var = run.open(st.var, {{in, x}});
        float* sd = run.open(st.scale, {{in, x}});
        float* xhat = run.open(st.standardized, {{in, x}});
        float* out = run.open(st.normalized, {{in, x}, {st.gamma, gamma}, {st.beta, beta}});
        if (x) layernorm_rows(x->ptr(), d.P, d.C, eps, out ? gamma->ptr() : nullptr, out ? beta->ptr() : nullptr, mean,
                              var, sd, xhat, out);
        run.close();
        return;
    }
    // One pass per step, each reading the (possibly given or rounded) step before.
    // pass 1: μ
    if (float* mean = run.open(st.mean, {{in, x}})) row_mean_ref(x->ptr(), d.P, d.C, mean);
    run.close();
    const Tensor* mean = run.value(st.mean);
    // pass 2: σ² (biased)
    if (float* var = run.open(st.var, {{in, x}, {st.mean, mean}})) row_var_ref(x->ptr(), mean->ptr(), d.P, d.C, var);
    run.close();
    const Tensor* var = run.value(st.var);
    // pass 3: σ = √(σ² + eps);  x̂ = (x - μ) / σ
    if (float* sd = run.open(st.scale, {{st.var, var}})) std_eps_ref(var->ptr(), d.P, eps, sd);
    run.close();
    const Tensor* sd = run.value(st.scale);
    if (float* xhat = run.open(st.standardized, {{in, x}, {st.mean, mean}, {st.scale, sd}}))
        standardize_ref(x->ptr(), mean->ptr(), sd->ptr(), d.P, d.C, xhat);
    run.close();
    const Tensor* xhat = run.value(st.standardized);
    // pass 4: γ ⊙ x̂ + β
    if (float* out = run.open(st.normalized, {{st.standardized, xhat}, {st.gamma, gamma}, {st.beta, beta}}))
        affine_ref(xhat->ptr(), gamma->ptr(), beta->ptr(), d.P, d.C, out);
    run.close();
}

}  // namespace

void norm_forward(Run& run) {
    const Pass& p = run.pass();
    layernorm(run, p.x, fmt::format("ln{}", p.norm_index));
}

}  // namespace attntrace

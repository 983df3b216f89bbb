// Stages norm1 and norm2: LayerNorm of each token's row (post-norm, as
// nn.TransformerEncoderLayer with norm_first=False).
#include <string>

#include "kernels/kernels.hpp"
#include "pipeline/stages.hpp"

namespace attntrace {

namespace {

// x: (T, C)   mean, var, scale: (T)   standardized, normalized: (T, C)
void layernorm(Run& run, const std::string& prefix, const char* in_name, const std::string& ln) {
    const Dims& d = run.dims();
    const Tensor* x = run.value(in_name);
    const Tensor* gamma = run.weight(ln + "_gamma");
    const Tensor* beta = run.weight(ln + "_beta");
    float* mean = run.open((prefix + "hook_mean").c_str(), {{in_name, x}});
    float* var = run.open((prefix + "hook_var").c_str(), {{in_name, x}});
    float* sd = run.open((prefix + "hook_scale").c_str(), {{in_name, x}});
    float* xhat = run.open((prefix + "hook_standardized").c_str(), {{in_name, x}});
    float* out = run.open((prefix + "hook_normalized").c_str(),
                          {{in_name, x}, {"weights." + ln + "_gamma", gamma}, {"weights." + ln + "_beta", beta}});
    if (x)
        layernorm_rows(x->ptr(), d.T, d.C, static_cast<float>(run.lesson().config.eps),
                           out ? gamma->ptr() : nullptr, out ? beta->ptr() : nullptr, mean, var, sd, xhat, out);
    run.close();
}

}  // namespace

void norm1_forward(Run& run) { layernorm(run, "blocks.0.ln1.", "blocks.0.hook_resid_mid", "ln1"); }
void norm2_forward(Run& run) { layernorm(run, "blocks.0.ln2.", "blocks.0.hook_resid_post", "ln2"); }

}  // namespace attntrace

// Stage qkv: the three projections of X.
#include "kernels/kernels.hpp"
#include "pipeline/stages.hpp"

namespace attntrace {

namespace {

// out = X·W + b   X: (T, C)   W: (C, C)   b: (C)   out: (T, C), read as (T, NH, hs)
void project(Run& run, const char* step, const std::string& w, const std::string& b) {
    const Dims& d = run.dims();
    const Tensor* X = run.value("blocks.0.hook_resid_pre");
    const Tensor* W = run.weight(w);
    const Tensor* B = run.weight(b);
    if (float* out = run.open(step, {{"blocks.0.hook_resid_pre", X}, {"weights." + w, W}},
                              {{"weights." + b, B}})) {
        linear(X->ptr(), W->ptr(), B ? B->ptr() : nullptr, out, d.T, d.C, d.C);
    }
    run.close();
}

}  // namespace

void qkv_forward(Run& run) {
    project(run, "blocks.0.attn.hook_q", "W_Q", "b_Q");
    project(run, "blocks.0.attn.hook_k", "W_K", "b_K");
    project(run, "blocks.0.attn.hook_v", "W_V", "b_V");
}

}  // namespace attntrace

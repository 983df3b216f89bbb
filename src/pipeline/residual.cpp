// Stages add1 and add2: the residual connections.
#include "kernels/kernels.hpp"
#include "pipeline/stages.hpp"

namespace attntrace {

namespace {

// out = a + b   a, b, out: (T, C)
void residual(Run& run, const char* step, const char* a_name, const char* b_name) {
    const Tensor* a = run.value(a_name);
    const Tensor* b = run.value(b_name);
    if (float* out = run.open(step, {{a_name, a}, {b_name, b}})) add(a->ptr(), b->ptr(), out, a->size());
    run.close();
}

}  // namespace

void add1_forward(Run& run) {
    residual(run, "blocks.0.hook_resid_mid", "blocks.0.hook_resid_pre", "blocks.0.hook_attn_out");
}

void add2_forward(Run& run) {
    residual(run, "blocks.0.hook_resid_post", "blocks.0.ln1.hook_normalized", "blocks.0.hook_mlp_out");
}

}  // namespace attntrace

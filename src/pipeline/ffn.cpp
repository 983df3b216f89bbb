// Stage ffn: the position-wise feed-forward network.
#include "kernels/kernels.hpp"
#include "pipeline/stages.hpp"

namespace attntrace {

void ffn_forward(Run& run) {
    const Dims& d = run.dims();
    const char* in_name = "blocks.0.ln1.hook_normalized";
    const Tensor* x = run.value(in_name);
    const Tensor* W1 = run.weight("W_1");
    const Tensor* b1 = run.weight("b_1");
    // H = x·W_1 + b_1   x: (T, C)   W_1: (C, F)   H: (T, F)
    if (float* h = run.open("blocks.0.mlp.hook_pre", {{in_name, x}, {"weights.W_1", W1}}, {{"weights.b_1", b1}})) {
        linear(x->ptr(), W1->ptr(), b1 ? b1->ptr() : nullptr, h, d.T, d.C, d.F);
    }
    run.close();

    const Tensor* pre = run.value("blocks.0.mlp.hook_pre");
    // act(H)   (T, F)
    if (float* post = run.open("blocks.0.mlp.hook_post", {{"blocks.0.mlp.hook_pre", pre}})) {
        if (run.lesson().config.activation == Activation::gelu) gelu(pre->ptr(), post, pre->size());
        else relu(pre->ptr(), post, pre->size());
    }
    run.close();

    const Tensor* post = run.value("blocks.0.mlp.hook_post");
    const Tensor* W2 = run.weight("W_2");
    const Tensor* b2 = run.weight("b_2");
    // FFN = act(H)·W_2 + b_2   W_2: (F, C)   out: (T, C)
    if (float* out = run.open("blocks.0.hook_mlp_out", {{"blocks.0.mlp.hook_post", post}, {"weights.W_2", W2}},
                              {{"weights.b_2", b2}})) {
        linear(post->ptr(), W2->ptr(), b2 ? b2->ptr() : nullptr, out, d.T, d.F, d.C);
    }
    run.close();
}

}  // namespace attntrace

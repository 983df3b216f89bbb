// Stage ffn: the position-wise feed-forward network.
#include <algorithm>

#include "kernels/kernels.hpp"
#include "pipeline/stages.hpp"

namespace attntrace {

namespace {

// Neither hidden step is kept: rows go through both layers kFfnChunkRows at a
// time, so the (T, F) hidden units never exist whole (a chunk of them stays
// in cache between the two products). Each row's arithmetic is the same as
// in the whole-matrix path.
void ffn_chunked(Run& run) {
    const Dims& d = run.dims();
    const char* in_name = "blocks.0.ln1.hook_normalized";
    const Tensor* x = run.value(in_name);
    const Tensor* W1 = run.weight("W_1");
    const Tensor* b1 = run.weight("b_1");
    const Tensor* W2 = run.weight("W_2");
    const Tensor* b2 = run.weight("b_2");
    if (float* out = run.open("blocks.0.hook_mlp_out", {{in_name, x}, {"weights.W_1", W1}, {"weights.W_2", W2}},
                              {{"weights.b_1", b1}, {"weights.b_2", b2}})) {
        Tensor hidden = Tensor::uninitialized({std::min(kFfnChunkRows, d.T), d.F});  // (rows, F)
        for (std::size_t r = 0; r < d.T; r += kFfnChunkRows) {
            const std::size_t rows = std::min(kFfnChunkRows, d.T - r);
            float* h = hidden.ptr();
            // H = x·W_1 + b_1;  act(H) in place;  out = act(H)·W_2 + b_2   for rows r .. r+rows-1
            linear(x->ptr() + r * d.C, W1->ptr(), b1 ? b1->ptr() : nullptr, h, rows, d.C, d.F);
            if (run.lesson().config.activation == Activation::gelu) gelu(h, h, rows * d.F);
            else relu(h, h, rows * d.F);
            linear(h, W2->ptr(), b2 ? b2->ptr() : nullptr, out + r * d.C, rows, d.F, d.C);
        }
    }
    run.close();
}

}  // namespace

void ffn_forward(Run& run) {
    if (run.plan().stream_ffn) return ffn_chunked(run);
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

// Stage qkv: the three projections of X, and which K/V head each query head reads.
#include "kernels/kernels.hpp"
#include "pipeline/stages.hpp"

namespace attntrace {

namespace {

// out = X·W + b   X: (T, C)   W: (C, N)   b: (N)   out: (T, N), read as (T, heads, hs)
// N = C for Q (NH heads); N = KVH·hs for K and V (KVH K/V heads; = C in MHA)
void project(Run& run, const char* step, const std::string& w, const std::string& b, std::size_t N) {
    const Dims& d = run.dims();
    const Tensor* X = run.value("blocks.0.hook_resid_pre");
    const Tensor* W = run.weight(w);
    const Tensor* B = run.weight(b);
    if (float* out = run.open(step, {{"blocks.0.hook_resid_pre", X}, {"weights." + w, W}},
                              {{"weights." + b, B}})) {
        linear(X->ptr(), W->ptr(), B ? B->ptr() : nullptr, out, d.T, d.C, N);
    }
    run.close();
}

}  // namespace

void qkv_forward(Run& run) {
    const Dims& d = run.dims();
    project(run, "blocks.0.attn.hook_q", "W_Q", "b_Q", d.C);
    project(run, "blocks.0.attn.hook_k", "W_K", "b_K", d.KVH * d.hs);
    project(run, "blocks.0.attn.hook_v", "W_V", "b_V", d.KVH * d.hs);
    // g(h) = h / (NH / KVH)   (NH): the sharing the scores and mix stages use, recorded
    if (float* g = run.open("blocks.0.attn.hook_kv_head", {})) {
        for (std::size_t h = 0; h < d.NH; ++h) g[h] = static_cast<float>(d.kv_of(h));
    }
    run.close();
}

}  // namespace attntrace

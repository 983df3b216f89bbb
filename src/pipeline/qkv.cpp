// Stage qkv: the three projections of X, and which K/V head each query head reads.
#include "kernels/kernels.hpp"
#include "pipeline/stages.hpp"

namespace attntrace {

namespace {

// out = X·W + b   X: (rows, C)   W: (C, N)   b: (N)   out: (n, N), read as (n, heads, hs)
// N = C for Q (NH heads); N = KVH·hs for K and V (KVH K/V heads; = C in MHA).
// X is the pass's stream (a step), or for cross-attention's K and V the
// encoder's output (inputs.memory, S rows). Rows [0, from) of out are a
// decode's cache (run.hpp, RowWindow): out's last n - from rows are computed,
// from X's last n - from rows (a lesson's run: from = 0, every row).
void project(Run& run, const std::string& step, const std::string& x_name, const Tensor* X, const std::string& w,
             const std::string& b, std::size_t N, std::size_t n, std::size_t from) {
    const Dims& d = run.dims();
    const Tensor* W = run.weight(w);
    const Tensor* B = run.weight(b);
    if (float* out = run.open(step, {{x_name, X}, {run.wpath(w), W}}, {{run.wpath(b), B}})) {
        const std::size_t rows = n - from;
        if (rows) linear(X->ptr() + (X->shape[0] - rows) * d.C, W->ptr(), B ? B->ptr() : nullptr, out + from * N, rows, d.C, N);
    }
    run.close();
}

}  // namespace

void qkv_forward(Run& run) {
    const Dims& d = run.dims();
    const std::string& x_name = run.pass().x;
    const Tensor* X = run.value(x_name);
    project(run, run.name(Leaf::q), x_name, X, "W_Q", "b_Q", d.C, d.Tq, 0);
    const std::string kv_name = run.pass().cross ? "inputs.memory" : x_name;
    const Tensor* KV = run.pass().cross ? run.input("memory") : X;
    project(run, run.name(Leaf::k), kv_name, KV, "W_K", "b_K", d.KVH * d.hs, d.T, run.cached_rows(run.name(Leaf::k)));
    project(run, run.name(Leaf::v), kv_name, KV, "W_V", "b_V", d.KVH * d.hs, d.T, run.cached_rows(run.name(Leaf::v)));
    // g(h) = h / (NH / KVH)   (NH): the sharing the scores and mix stages use, recorded
    if (float* g = run.open(run.name(Leaf::kv_head), {})) {
        for (std::size_t h = 0; h < d.NH; ++h) g[h] = static_cast<float>(d.kv_of(h));
    }
    run.close();
}

}  // namespace attntrace

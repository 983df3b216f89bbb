// Operation ffn: the position-wise feed-forward network.
#include <algorithm>
#include <cmath>

#include "kernels/activations.hpp"
#include "kernels/kernels.hpp"
#include "pipeline/stages.hpp"
#include "trace/stream_symbol.hpp"

namespace attntrace {

// act(H) in place, or SwiGLU's SiLU(H) ⊙ U into `out`   H, U, out: (n)
void ffn_activate(const Config& c, const float* h, const float* u, float* out, std::size_t n) {
    switch (c.activation) {
        case Activation::relu: relu(h, out, n); break;
        case Activation::gelu: gelu(h, out, n); break;
        case Activation::gelu_tanh: gelu_tanh(h, out, n); break;
        case Activation::swiglu: swiglu(h, u, out, n); break;
    }
}

namespace {

// Neither hidden step is kept: rows go through both layers ffn_chunk_rows at a
// time (plan.hpp), so the (T, F) hidden units never exist whole (a chunk of them stays
// in cache between the two products). Each row's arithmetic is the same as
// in the whole-matrix path.
void ffn_chunked(Run& run) {
    const Dims& d = run.dims();
    const std::string& in_name = run.name(run.pass().x);
    const Tensor* x = run.value(in_name);
    const StoredMatrix* W1 = run.matrix("W_1");
    const Tensor* b1 = run.weight("b_1");
    const StoredMatrix* W2 = run.matrix("W_2");
    const Tensor* b2 = run.weight("b_2");
    const Config& cfg = run.config();
    const bool gated = cfg.activation == Activation::swiglu;
    const StoredMatrix* W3 = run.matrix("W_3");
    const Tensor* b3 = run.weight("b_3");
    const StoredMatrix* gate_ok = gated ? W3 : W1;  // SwiGLU also needs W_3
    if (float* out = run.open(run.name(Leaf::mlp_out),
                              {{in_name, x}, {run.wpath("W_1"), W1}, {run.wpath("W_2"), W2}, {gated ? run.wpath("W_3") : run.wpath("W_1"), gate_ok}},
                              {{run.wpath("b_1"), b1}, {run.wpath("b_2"), b2}, {run.wpath("b_3"), gated ? b3 : nullptr}})) {
        const std::size_t chunk = std::min(run.plan().ffn_chunk_rows, d.P);
        Tensor hidden = run.scratch({chunk, d.F});                       // (rows, F)
        Tensor lin = gated ? run.scratch({chunk, d.F}) : Tensor{};  // SwiGLU's U rows
        // The scalar activations write to their own buffer, as in the whole-matrix path: in
        // place, the compiler vectorises exp and tanh differently and the last bits differ.
        const bool scalar_act = gated || cfg.activation == Activation::gelu_tanh;
        Tensor act = scalar_act ? run.scratch({chunk, d.F}) : Tensor{};
        for (std::size_t r = 0; r < d.P; r += chunk) {
            const std::size_t rows = std::min(chunk, d.P - r);
            float* h = hidden.ptr();
            // H = x·W_1 + b_1;  act(H) in place;  out = act(H)·W_2 + b_2   for rows r .. r+rows-1
            run.require_finite("W_1", linear_stored(x->ptr() + r * d.C, *W1, b1 ? b1->ptr() : nullptr, h, rows, d.C, d.F));
            if (gated) run.require_finite("W_3", linear_stored(x->ptr() + r * d.C, *W3, b3 ? b3->ptr() : nullptr, lin.ptr(), rows, d.C, d.F));
            float* a = scalar_act ? act.ptr() : h;
            ffn_activate(cfg, h, gated ? lin.ptr() : nullptr, a, rows * d.F);
            run.require_finite("W_2", linear_stored(a, *W2, b2 ? b2->ptr() : nullptr, out + r * d.C, rows, d.F, d.C));
        }
        for (Tensor* t : {&hidden, &lin, &act})  // for the next block's FFN
            if (t->size()) run.recycle(std::move(*t));
    }
    run.close();
}

}  // namespace

void ffn_forward(Run& run) {
    if (run.plan().stream_ffn) return ffn_chunked(run);
    const Dims& d = run.dims();
    const std::string& in_name = run.name(run.pass().x);
    const Tensor* x = run.value(in_name);
    const StoredMatrix* W1 = run.matrix("W_1");
    const Tensor* b1 = run.weight("b_1");
    // H = x·W_1 + b_1   x: (P, C)   W_1: (C, F)   H: (P, F)
    if (float* h = run.open(run.name(Leaf::mlp_pre), {{in_name, x}, {run.wpath("W_1"), W1}}, {{run.wpath("b_1"), b1}})) {
        run.require_finite("W_1", linear_stored(x->ptr(), *W1, b1 ? b1->ptr() : nullptr, h, d.P, d.C, d.F));
    }
    run.close();

    const Tensor* pre = run.value(run.name(Leaf::mlp_pre));
    const Config& cfg = run.config();
    if (cfg.activation == Activation::swiglu) {
        // U = x·W_3 + b_3   W_3: (C, F)   U: (T, F);  then SiLU(H) ⊙ U   (T, F)
        const StoredMatrix* W3 = run.matrix("W_3");
        const Tensor* b3 = run.weight("b_3");
        if (float* u = run.open(run.name(Leaf::mlp_pre_linear), {{in_name, x}, {run.wpath("W_3"), W3}}, {{run.wpath("b_3"), b3}}))
            run.require_finite("W_3", linear_stored(x->ptr(), *W3, b3 ? b3->ptr() : nullptr, u, d.P, d.C, d.F));
        run.close();
        const Tensor* u = run.value(run.name(Leaf::mlp_pre_linear));
        if (float* post = run.open(run.name(Leaf::mlp_post),
                                   {{run.name(Leaf::mlp_pre), pre}, {run.name(Leaf::mlp_pre_linear), u}}))
            swiglu(pre->ptr(), u->ptr(), post, pre->size());
        run.close();
    } else {
        // act(H)   (T, F)
        if (float* post = run.open(run.name(Leaf::mlp_post), {{run.name(Leaf::mlp_pre), pre}}))
            ffn_activate(cfg, pre->ptr(), nullptr, post, pre->size());
        run.close();
    }

    const Tensor* post = run.value(run.name(Leaf::mlp_post));
    const StoredMatrix* W2 = run.matrix("W_2");
    const Tensor* b2 = run.weight("b_2");
    // FFN = act(H)·W_2 + b_2   W_2: (F, C)   out: (T, C)
    if (float* out = run.open(run.name(Leaf::mlp_out), {{run.name(Leaf::mlp_post), post}, {run.wpath("W_2"), W2}},
                              {{run.wpath("b_2"), b2}})) {
        run.require_finite("W_2", linear_stored(post->ptr(), *W2, b2 ? b2->ptr() : nullptr, out, d.P, d.F, d.C));
    }
    run.close();
}

// mlp.hook_pre, mlp.hook_pre_linear, mlp.hook_post at (t, f); hook_mlp_out at (t, c)
float ffn_explain(Cell& c) {
    const Dims d = c.dims();
    const std::size_t t = c.at[0], col = c.at[1];
    const std::string tok = Cell::label(c.step, 0, t);
    if (c.leaf() == Leaf::mlp_pre || c.leaf() == Leaf::mlp_pre_linear) {
        // H = X·W_1 + b_1, or SwiGLU's linear branch U = X·W_3 + b_3: column col of (P, F)
        const bool linear_branch = c.leaf() == Leaf::mlp_pre_linear;
        const std::string w = linear_branch ? "W_3" : "W_1", b = linear_branch ? "b_3" : "b_1";
        const Step& X = c.input(c.pass().x);
        const Tensor& W = c.weight(w);
        const Tensor* B = c.optional_weight(b);
        // what the FFN reads: LN1 after the attention (post-norm), LN2 (pre-norm, parallel), LN1 (a shared norm)
        const std::string xs = stream_symbol(c.lesson.catalogue().at(c.pass().x).name, c.pass().block);
        c.line("{}[{},f{}] = Σ_c {}[{},c] · {} + {}[{}]{}", linear_branch ? "U" : "H", tok, col, xs, tok,
               c.weight_entry(w, "c", std::to_string(col)), b, col, linear_branch ? "   (SwiGLU's linear branch)" : "");
        return write_dot(
            c, d.C, [&](std::size_t k) { return fmt::format("{}[{},d{}]", xs, tok, k); },
            [&](std::size_t k) { return get(X, {t, k}); }, [&](std::size_t k) { return c.weight_entry(w, k, col); },
            [&](std::size_t k) { return W.data[k * d.F + col]; }, b.c_str(), B ? &B->data[col] : nullptr);
    }
    if (c.leaf() == Leaf::mlp_post) {
        const float h = get(c.input(Leaf::mlp_pre), {t, col});
        if (c.lesson.config.activation == Activation::swiglu) {
            const float u = get(c.input(Leaf::mlp_pre_linear), {t, col});
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
    const Step& P = c.input(Leaf::mlp_post);
    const Tensor& W = c.weight("W_2");
    const Tensor* B = c.optional_weight("b_2");
    c.line("FFN[{},d{}] = Σ_f act(H)[{},f] · {} + b_2[{}]", tok, col, tok, c.weight_entry("W_2", "f", std::to_string(col)),
           col);
    return write_dot(
        c, d.F, [&](std::size_t k) { return fmt::format("act(H)[{},f{}]", tok, k); },
        [&](std::size_t k) { return get(P, {t, k}); }, [&](std::size_t k) { return c.weight_entry("W_2", k, col); },
        [&](std::size_t k) { return W.data[k * d.C + col]; }, "b_2", B ? &B->data[col] : nullptr);
}

// Two products of (P, C) by (C, F) and (F, C); SwiGLU's linear branch a third.
std::vector<CostTerm> ffn_cost(const CostQuery& q) {
    const Dims& d = q.d;
    const double products = q.activation == Activation::swiglu ? 3 : 2;
    return {{products == 3 ? "FFN (SiLU(X·W_1) ⊙ X·W_3)·W_2" : "FFN act(X·W_1)·W_2", "n, F", {d.P, d.F}, double(d.P) * d.F,
             products * 2 * d.P * d.C * d.F, true, false}};
}

}  // namespace attntrace

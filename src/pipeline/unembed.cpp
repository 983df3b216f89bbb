// Operation unembed (config.unembed): the logits, one score per vocabulary
// entry for each position, from the final norm's rows (or the last block's
// output when the model has no final norm).
//
//   logits = x·W_U          x: (P, C)   W_U: (C, V)   logits: (P, V)   config.unembed "W_U"
//   logits = x·W_Eᵀ         W_E: (V, C), inputs.embedding              config.unembed "tied" (GPT-2)
//   + b_U                   b_U: (V), weights.b_U, when the lesson has it (Phi's lm_head.bias), added
//                           to each row after the product, as nn.Linear's bias
#include "core/error.hpp"
#include "kernels/kernels.hpp"
#include "pipeline/stages.hpp"

namespace attntrace {

namespace {

// logits[t, v] += b_U[v] for the P rows: the bias after the whole sum, as write_dot explains it
void add_unembed_bias(float* logits, const float* b, std::size_t rows, std::size_t V) {
    for (std::size_t t = 0; t < rows; ++t)
        for (std::size_t v = 0; v < V; ++v) logits[t * V + v] += b[v];
}

}  // namespace

void unembed_forward(Run& run) {
    const Dims& d = run.dims();
    const std::string& x_name = run.name(run.pass().x);
    const std::string& out_name = run.name(run.pass().out);
    const Tensor* x = run.value(x_name);
    const Tensor* b = run.weight("b_U");  // null: no bias, as GPT-2's and Llama's heads
    // The step table's "logits = LN_f·W_U", with the table it reads and the bias when there is one.
    std::string formula = run.lesson().catalogue().at(run.pass().out).formula;
    if (run.lesson().config.unembed_tied) {
        const Tensor* E = run.input("embedding");
        // W_E transposed, (C, V), when a decode holds it (HeldWeights): a row by it reads W_E in order,
        // with the same sums as by W_E's rows (gemv and the GEMM sum each column alike either way)
        const Tensor* Et = run.lesson().weight(kTiedUnembeddingTransposed);
        // (P, C)·(V, C)ᵀ -> (P, V), then + b_U
        if (float* out = run.open(out_name, {{x_name, x}, {"inputs.embedding", E}}, {{run.wpath("b_U"), b}})) {
            if (Et) matmul(x->ptr(), d.C, Et->ptr(), d.V, out, d.V, d.P, d.C, d.V);
            else matmul_nt(x->ptr(), d.C, E->ptr(), d.C, out, d.V, d.P, d.C, d.V);
            if (b) add_unembed_bias(out, b->ptr(), d.P, d.V);
        }
        run.close();
        formula = formula.substr(0, formula.find("·W_U")) + (b ? "·W_Eᵀ + b_U" : "·W_Eᵀ") +
                  "   (tied: the embedding table read backwards)";
        run.set_formula(out_name, formula);
        return;
    }
    const StoredMatrix* W = run.matrix("W_U");
    // (P, C)·(C, V) -> (P, V), then + b_U
    if (float* out = run.open(out_name, {{x_name, x}, {run.wpath("W_U"), W}}, {{run.wpath("b_U"), b}})) {
        run.require_finite("W_U", linear_stored(x->ptr(), *W, nullptr, out, d.P, d.C, d.V));
        if (b) add_unembed_bias(out, b->ptr(), d.P, d.V);
    }
    run.close();
    if (b) run.set_formula(out_name, formula + " + b_U");
}

// unembed at (t, v): row t of the input against vocabulary entry v's column of W_U (tied: row v of W_E)
float unembed_explain(Cell& c) {
    const Dims d = c.dims();
    const std::size_t t = c.at[0], v = c.at[1];
    const Step& X = c.input(c.pass().x);
    const std::string tok = Cell::label(c.step, 0, t), piece = Cell::label(c.step, 1, v);
    const bool tied = c.lesson.config.unembed_tied;
    const float* row = X.held().ptr() + t * d.C;
    // the bias's line only for a head that has one (GPT-2's and Llama's explanations unchanged)
    const Tensor* B = c.optional_weight("b_U");
    const char* bias_name = B ? "b_U" : nullptr;
    const float* bias = B ? &B->data[v] : nullptr;
    if (tied) {
        const Tensor& E = c.lesson.inputs.at("embedding");
        c.line("logits[{},{}] = Σ_k {}[{},k] · W_E[{},k]{}   (tied: entry {}'s row of the embedding table)", tok, piece,
               X.name, tok, v, B ? fmt::format(" + b_U[{}]", v) : std::string(), v);
        return write_dot(
            c, d.C, [&](std::size_t k) { return fmt::format("x[d{}]", k); }, [&](std::size_t k) { return row[k]; },
            [&](std::size_t k) { return fmt::format("W_E[{},{}]", v, k); },
            [&](std::size_t k) { return E.data[v * d.C + k]; }, bias_name, bias);
    }
    const Tensor& W = c.weight("W_U");
    c.line("logits[{},{}] = Σ_k {}[{},k] · {}{}   (column {} of W_U: entry {})", tok, piece, X.name, tok,
           c.weight_entry("W_U", "k", std::to_string(v)), B ? fmt::format(" + b_U[{}]", v) : std::string(), v, piece);
    return write_dot(
        c, d.C, [&](std::size_t k) { return fmt::format("x[d{}]", k); }, [&](std::size_t k) { return row[k]; },
        [&](std::size_t k) { return c.weight_entry("W_U", k, v); }, [&](std::size_t k) { return W.data[k * d.V + v]; },
        bias_name, bias);
}

// x (P, C) by W_U (C, V). b_U's P·V additions are not counted, as no operation counts its bias's
// (docs/cost.md: the products and the attention's per-pair work; a bias is one add per output).
std::vector<CostTerm> unembed_cost(const CostQuery& q) {
    const Dims& d = q.d;
    return {{"logits = x·W_U", "n, V", {d.P, d.V}, double(d.P) * d.V, 2.0 * d.P * double(d.C) * d.V, true, false}};
}

}  // namespace attntrace

// Operation out: W^O mixes the heads' findings.
#include "kernels/kernels.hpp"
#include "pipeline/stages.hpp"

namespace attntrace {

void out_proj_forward(Run& run) {
    const Dims& d = run.dims();
    const Tensor* z = run.value(run.name(Leaf::z));
    const StoredMatrix* W = run.matrix("W_O");
    const Tensor* B = run.weight("b_O");
    // attn_out = concat(Z)·W_O + b_O   concat(Z): (Tq, NH·hv)   W_O: (NH·hv, O)   (NH·hv = C unless config.d_v, O = C unless config.d_out)
    if (float* out = run.open(run.name(Leaf::attn_out), {{run.name(Leaf::z), z}, {run.wpath("W_O"), W}},
                              {{run.wpath("b_O"), B}})) {
        run.require_finite("W_O", linear_stored(z->ptr(), *W, B ? B->ptr() : nullptr, out, d.Tq, d.NH * d.hv, d.extent(Axis::d_out)));
    }
    run.close();
}

// hook_attn_out at (i, c): row i of concat(Z)·W_O + b_O
float out_proj_explain(Cell& c) {
    const Dims d = c.dims();
    const std::size_t i = c.at[0], col = c.at[1];
    const Step& Z = c.input(Leaf::z);
    const Tensor& W = c.weight("W_O");
    const Tensor* b = c.optional_weight("b_O");
    const std::string q = Cell::label(c.step, 0, i);
    const std::size_t K = d.NH * d.hv;  // concat(Z)'s columns
    c.line("attn_out[{},d{}] = Σ_k concat(Z)[{},k] · {} + b_O[{}]   (k = head·{} + d: every head's Z)", q, col, q,
           c.weight_entry("W_O", "k", std::to_string(col)), col, d.hv == d.hs ? "hs" : "hv");
    return write_dot(
        c, K, [&](std::size_t k) { return fmt::format("Z[{},h{},d{}]", q, k / d.hv, k % d.hv); },
        [&](std::size_t k) { return Z.held().data[i * K + k]; },
        [&](std::size_t k) { return c.weight_entry("W_O", k, col); }, [&](std::size_t k) { return W.data[k * d.extent(Axis::d_out) + col]; },
        "b_O", b ? &b->data[col] : nullptr);
}

// concat(Z) (Tq, NH·hv) by W_O (NH·hv, O).
std::vector<CostTerm> out_proj_cost(const CostQuery& q) {
    const Dims& d = q.d;
    const std::size_t O = d.extent(Axis::d_out);
    return {{"out = Z·W^O", "n, C", {d.Tq, O}, double(d.Tq) * O, 2.0 * d.Tq * double(d.NH * d.hv) * O, true, false}};
}

}  // namespace attntrace

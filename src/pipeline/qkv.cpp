// Operation qkv: the three projections of X, and which K/V head each query head reads.
#include <tuple>
#include <vector>

#include "kernels/kernels.hpp"
#include "pipeline/stages.hpp"

namespace attntrace {

namespace {

// out = X·W + b   X: (rows, C)   W: (C, N)   b: (N)   out: (n, N), read as (n, heads, width)
// N = NH·hs for Q, KVH·hs for K, KVH·hv for V (each = C in MHA without config.d_k, d_v).
// X is the pass's stream (a step), or for cross-attention's K and V the
// encoder's output (inputs.memory, S rows). Rows [0, from) of out are a
// decode's cache (run.hpp, RowWindow): out's last n - from rows are computed,
// from X's last n - from rows (a lesson's run: from = 0, every row).
void project(Run& run, const std::string& step, const std::string& x_name, const Tensor* X, const std::string& w,
             const std::string& b, std::size_t N, std::size_t n, std::size_t from, const float* fused = nullptr) {
    const Dims& d = run.dims();
    const StoredMatrix* W = run.matrix(w);
    const Tensor* B = run.weight(b);
    if (float* out = run.open(step, {{x_name, X}, {run.wpath(w), W}}, {{run.wpath(b), B}})) {
        const std::size_t rows = n - from;
        if (fused) {  // its columns of the one row by the fused matrix, then the bias as the product adds it
            float* y = out + from * N;
            for (std::size_t j = 0; j < N; ++j) y[j] = B ? fused[j] + B->data[j] : fused[j];
        } else if (rows) {
            run.require_finite(w, linear_stored(X->ptr() + (X->shape[0] - rows) * d.C, *W, B ? B->ptr() : nullptr,
                                                out + from * N, rows, d.C, N));
        }
    }
    run.close();
}

// A decode step's one row by W_Q, W_K and W_V as one product, when the three
// are runs of columns of one float32 matrix read in place (GPT-2's c_attn,
// (C, 3C)): W streams once in one GEMV, in units shared by the threads, rather
// than in three of a third of its bytes, each paying for waking the threads
// (docs/performance.md, 2026-12-07). Each column's sum is the one its own
// product gives (the K blocks are K's alone), the bias added after it as the
// product adds it: the same bits. Empty when the projections are not so.
std::vector<float> fused_qkv_row(Run& run, const Tensor* X, std::size_t nq, std::size_t nk, std::size_t nv,
                                 std::size_t k_rows, std::size_t v_rows) {
    const Dims& d = run.dims();
    if (run.pass().cross || !X || d.Tq != 1 || k_rows != 1 || v_rows != 1) return {};
    const StoredMatrix* q = run.matrix("W_Q");
    const StoredMatrix* k = run.matrix("W_K");
    const StoredMatrix* v = run.matrix("W_V");
    if (!q || !k || !v) return {};
    for (const StoredMatrix* m : {q, k, v})
        if (m->type != StoredType::f32 || m->transposed || m->ld != q->ld) return {};
    const float* base = static_cast<const float*>(q->data);
    if (k->data != base + nq || v->data != base + nq + nk || q->ld < nq + nk + nv) return {};
    std::vector<float> y(nq + nk + nv);
    const bool finite = linear_stored(X->ptr() + (X->shape[0] - 1) * d.C, *q, nullptr, y.data(), 1, d.C, y.size());
    if (!finite)  // which of the three: each checked as its own product would be
        for (const auto& [w, j0, n] : {std::tuple{"W_Q", std::size_t{0}, nq}, std::tuple{"W_K", nq, nk},
                                       std::tuple{"W_V", nq + nk, nv}})
            run.require_finite(w, float_bits_max(y.data() + j0, n).magnitude < 0x7f800000);
    return y;
}

}  // namespace

// Which K/V head query head h read, and with whom it shares it.
std::string kv_group_line(const Dims& d, const std::string& hn, std::size_t h, const std::string& gn) {
    if (d.KVH == d.NH) return fmt::format("query head {} reads its own K/V head {} (multi-head: KVH = NH = {})", hn, gn, d.NH);
    const std::size_t group = d.NH / d.KVH, g = d.kv_of(h);
    return fmt::format("query head {} reads K/V head {} = ⌊{} / (NH/KVH = {}/{})⌋, shared with query heads h{}..h{} ({})",
                       hn, gn, h, d.NH, d.KVH, g * group, g * group + group - 1,
                       d.KVH == 1 ? "multi-query" : "grouped-query");
}

void qkv_forward(Run& run) {
    const Dims& d = run.dims();
    const std::string& x_name = run.name(run.pass().x);
    const Tensor* X = run.value(x_name);
    const std::size_t nq = d.NH * d.hs, nk = d.KVH * d.hs, nv = d.KVH * d.hv;
    const std::size_t k_from = run.cached_rows(run.name(Leaf::k)), v_from = run.cached_rows(run.name(Leaf::v));
    const std::vector<float> fused = fused_qkv_row(run, X, nq, nk, nv, d.T - k_from, d.T - v_from);
    const float* part = fused.empty() ? nullptr : fused.data();
    project(run, run.name(Leaf::q), x_name, X, "W_Q", "b_Q", nq, d.Tq, 0, part);
    const std::string kv_name = run.pass().cross ? "inputs.memory" : x_name;
    const Tensor* KV = run.pass().cross ? run.input("memory") : X;
    project(run, run.name(Leaf::k), kv_name, KV, "W_K", "b_K", nk, d.T, k_from, part ? part + nq : nullptr);
    project(run, run.name(Leaf::v), kv_name, KV, "W_V", "b_V", nv, d.T, v_from, part ? part + nq + nk : nullptr);
    // g(h) = h / (NH / KVH)   (NH): the sharing the scores and mix stages use, recorded
    if (float* g = run.open(run.name(Leaf::kv_head), {})) {
        for (std::size_t h = 0; h < d.NH; ++h) g[h] = static_cast<float>(d.kv_of(h));
    }
    run.close();
}

// hook_kv_head at (h): which K/V head query head h reads
float kv_head_explain(Cell& c) {
    const Dims d = c.dims();
    const std::size_t h = c.at[0], group = d.NH / d.KVH, g = d.kv_of(h);
    const std::string kind = d.KVH == d.NH ? "multi-head attention: every query head has its own K/V head"
                             : d.KVH == 1  ? "multi-query attention: one K/V head for all query heads"
                                           : "grouped-query attention";
    c.line("{} query heads share {} K/V heads ({}): groups of NH / KVH = {} / {} = {} consecutive heads", d.NH, d.KVH,
           kind, d.NH, d.KVH, group);
    c.line("g({}) = ⌊{} / {}⌋ = {}: query head {} reads K and V head kv{} (query heads h{}..h{})", Cell::label(c.step, 0, h),
           h, group, g, Cell::label(c.step, 0, h), g, g * group, g * group + group - 1);
    return static_cast<float>(g);
}

// hook_q at (t, h, e): column h·hs + e of X·W_Q + b_Q (NH·hs columns);
// hook_k at (t, g, e): column g·hs + e of X·W_K + b_K (KVH·hs columns); hook_v: g·hv + e (KVH·hv)
float qkv_explain(Cell& c) {
    if (c.leaf() == Leaf::kv_head) return kv_head_explain(c);
    const Dims d = c.dims();
    const char letter = c.leaf() == Leaf::q ? 'Q' : c.leaf() == Leaf::k ? 'K' : 'V';
    const std::size_t width = letter == 'V' ? d.hv : d.hs;           // the head's columns
    const std::size_t N = (letter == 'Q' ? d.NH : d.KVH) * width;    // W's columns
    const std::size_t t = c.at[0], h = c.at[1], e = c.at[2], col = h * width + e;
    const std::string w = std::string("W_") + letter, b = std::string("b_") + letter;
    // X: the pass's stream; in cross-attention K and V project the encoder's output M (inputs.memory).
    const bool memory = c.pass().cross && letter != 'Q';
    const Tensor& X = memory ? c.lesson.inputs.at("memory") : c.input(c.pass().x).held();
    const char* xs = memory ? "M" : "X";
    const Tensor& W = c.weight(w);
    const Tensor* B = c.optional_weight(b);
    const std::string tok = Cell::label(c.step, 0, t), hn = Cell::label(c.step, 1, h);
    c.line("{}[{},{},d{}] = Σ_c {}[{},c] · {} + {}[{}]   (column {} = {} head {} · {} {} + {})", letter, tok, hn, e,
           xs, tok, c.weight_entry(w, "c", std::to_string(col)), b, col, col, letter == 'Q' ? "query" : "K/V", h,
           letter == 'V' ? "hv" : "hs", width, e);
    const StepDef& x_def = c.lesson.catalogue().at(c.pass().x);
    if (!memory && x_def.leaf != Leaf::resid_pre) c.line("X is {}", x_def.name);
    if (letter != 'Q' && d.KVH != d.NH)
        c.line("K/V head {} is read by query heads h{}..h{} (NH / KVH = {} of them)", hn, h * (d.NH / d.KVH),
               (h + 1) * (d.NH / d.KVH) - 1, d.NH / d.KVH);
    return write_dot(
        c, d.C, [&](std::size_t k) { return fmt::format("{}[{},d{}]", xs, tok, k); },
        [&](std::size_t k) { return X.data[t * d.C + k]; }, [&](std::size_t k) { return c.weight_entry(w, k, col); },
        [&](std::size_t k) { return W.data[k * N + col]; }, b.c_str(), B ? &B->data[col] : nullptr);
}

// Q: (Tq, NH·hs) from C inputs; K: (T, KVH·hs), V: (T, KVH·hv) (= (n, C) and (n, KVH·hs) twice
// when heads split d_model).
std::vector<CostTerm> qkv_cost(const CostQuery& q) {
    const Dims& d = q.d;
    const double qw = double(d.NH) * d.hs, kw = double(d.KVH) * d.hs, vw = double(d.KVH) * d.hv;
    std::vector<CostTerm> terms;
    terms.push_back({"Q = X·W^Q", qw == d.C ? "n, C" : "n, NH·hs", {d.Tq, d.NH * d.hs}, d.Tq * qw,
                     2.0 * d.Tq * d.C * qw, true, false});
    if (d.hs == d.hv)
        terms.push_back({"K, V = X·W^K, X·W^V", "2, n, KVH·hs", {2, d.T, d.KVH * d.hs}, 2.0 * d.T * kw,
                         2.0 * 2 * d.T * d.C * kw, true, false});
    else {
        terms.push_back({"K = X·W^K", "n, KVH·hs", {d.T, d.KVH * d.hs}, d.T * kw, 2.0 * d.T * d.C * kw, true, false});
        terms.push_back({"V = X·W^V", "n, KVH·hv", {d.T, d.KVH * d.hv}, d.T * vw, 2.0 * d.T * d.C * vw, true, false});
    }
    return terms;
}

}  // namespace attntrace

// Operation scale: the scores divided by √d_k (d_k = hs, the query/key head size), or
// not (to show why it exists), or by the lesson's own number, or multiplied
// by it (config.scale; docs/lesson-format.md#scaling). When config.scale is
// an object the number is a step of its own, one per head, that a claim can
// check and a lesson may give (an article that rounds √3 to 1.73 divides by
// 1.73: giving hook_scale_factor reproduces that).
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "kernels/kernels.hpp"
#include "pipeline/stages.hpp"

namespace attntrace {

ScaleOp scale_op(const Config& c, const Dims& d) {
    switch (c.scale.kind) {
        case ScaleKind::sqrt_dk: return {std::sqrt(static_cast<float>(d.hs)), false};
        case ScaleKind::none: return {1.0f, false};
        case ScaleKind::divide_by: return {static_cast<float>(c.scale.value), false};
        case ScaleKind::multiply_by: return {static_cast<float>(c.scale.value), true};
    }
    return {};
}

namespace {

// What the lesson wrote, for notes and explanations.
std::string scale_source(const Scaling& sc) {
    switch (sc.kind) {
        case ScaleKind::sqrt_dk: return "√d_k";
        case ScaleKind::none: return "none";
        case ScaleKind::divide_by: return fmt::format("config.scale.divide_by = {:g}", sc.value);
        case ScaleKind::multiply_by: return fmt::format("config.scale.multiply_by = {:g}", sc.value);
    }
    return "";
}

}  // namespace

void apply_scale(const ScaleOp& op, const float* factor, const float* x, float* y, std::size_t NH, std::size_t plane) {
    if (!factor) {
        if (op.multiply) scale_mul(x, op.s, y, NH * plane);
        else scale_div(x, op.s, y, NH * plane);
        return;
    }
    for (std::size_t h = 0; h < NH; ++h) {
        if (op.multiply) scale_mul(x + h * plane, factor[h], y + h * plane, plane);
        else scale_div(x + h * plane, factor[h], y + h * plane, plane);
    }
}

DerivedOp scale_rows(const ScaleOp& op, const std::string& factor, std::size_t Tq) {
    DerivedOp d;
    if (!factor.empty()) d.reads = {factor};
    // rows of (NH, Tq, T): row r is head r / Tq's
    d.apply = [op, Tq](std::span<const Tensor* const> in, const float* x, float* y, std::size_t r0, std::size_t n,
                       std::size_t cols) {
        if (in.empty()) return apply_scale(op, nullptr, x, y, 1, n * cols);
        // one kernel call per run of rows of one head (element-wise: the numbers are the same as row by row;
        // a call per row cost ~0.15 us each, 1.8 ms of the BERT-base softmax pass at n = 512)
        for (std::size_t i = 0; i < n;) {
            const std::size_t h = (r0 + i) / Tq, k = std::min(n - i, (h + 1) * Tq - (r0 + i));
            apply_scale(op, in[0]->ptr() + h, x + i * cols, y + i * cols, 1, k * cols);
            i += k;
        }
    };
    return d;
}

void scale_forward(Run& run) {
    const Dims& d = run.dims();
    const Scaling& sc = run.config().scale;
    const ScaleOp op = scale_op(run.config(), d);
    const std::string raw = run.name(Leaf::scores_raw), scaled = run.name(Leaf::scores_scaled);
    // config.mask_at "raw": the mask stage scales the masked scores (mask.cpp); only the factor is recorded here.
    const bool scales_here = run.config().mask_at != MaskAt::raw;
    if (!sc.recorded) {
        if (!scales_here) return;
        if (run.plan().derive_attention) {  // S̃ = S / √hs, computed when read
            run.derive(scaled, raw, scale_rows(op, "", d.Tq));
            run.close();
            if (Step* step = run.recorded(scaled); step && sc.kind == ScaleKind::none)
                step->note = "scaling is switched off (config.scale = false): S̃ = S";
            return;
        }
        // S̃ = S / √hs   (NH, Tq, T); with config.scale false, S̃ = S
        const Tensor* s = run.value(raw);
        if (float* out = run.open(scaled, {{raw, s}})) apply_scale(op, nullptr, s->ptr(), out, 1, s->size());
        run.close();
        Step* step = run.recorded(scaled);
        if (sc.kind == ScaleKind::none && step->source == StepSource::computed)
            step->note = "scaling is switched off (config.scale = false): S̃ = S";
        return;
    }
    // s_h = √hs or the lesson's number   (NH); a given s_h replaces it
    const std::string factor = run.name(Leaf::scale_factor);
    if (float* f = run.open(factor, {})) std::fill(f, f + d.NH, op.s);
    run.close();
    const Tensor* f = run.value(factor);
    if (Step* fs = run.recorded(factor); fs && fs->source == StepSource::computed)
        fs->note = fmt::format("s = {}", scale_source(sc));
    if (!scales_here) return;
    // S̃_h = S_h / s_h, or S_h · s_h with multiply_by   (NH, Tq, T)
    if (run.plan().derive_attention) {
        run.derive(scaled, raw, scale_rows(op, factor, d.Tq));
        run.close();
    } else {
        const Tensor* s = run.value(raw);
        if (float* out = run.open(scaled, {{raw, s}, {factor, f}}))
            apply_scale(op, f->ptr(), s->ptr(), out, d.NH, s->size() / d.NH);
        run.close();
    }
    if (Step* step = run.recorded(scaled); step && step->source == StepSource::computed)
        step->note = fmt::format("S̃ = S {} s, s = hook_scale_factor{}", op.multiply ? "·" : "/",
                                 sc.kind == ScaleKind::sqrt_dk ? "" : " (" + scale_source(sc) + ")");
}

float explain_scale(Cell& c, float x, std::size_t h, const std::string& what) {
    const Config cfg = c.attn_config();
    const ScaleOp op = scale_op(cfg, c.dims());
    if (cfg.scale.kind == ScaleKind::none) {
        c.line("scaling is off (config.scale false): {} = {}", what, c.num(x));
        return x;
    }
    ScaleOp used = op;
    if (cfg.scale.recorded) {
        used.s = get(c.input(Leaf::scale_factor), {h});
        const char* sign = op.multiply ? "·" : "/";
        c.line("{} {} s_h = {} {} {}   (s_h: hook_scale_factor[{}])", what, sign, c.num(x), sign, c.num(used.s),
               Cell::label(c.step, 0, h));
    } else {
        c.line("{} / √hs = {} / √{} = {} / {}", what, c.num(x), c.dims().hs, c.num(x), c.num(op.s));
    }
    const float r = used.apply(x);
    c.line("  = {}", c.num(r));
    return r;
}

// hook_scale_factor at (h); hook_scores_scaled at (h, i, j)
float scale_explain(Cell& c) {
    const Config cfg = c.attn_config();
    const ScaleOp op = scale_op(cfg, c.dims());
    const std::size_t h = c.at[0];
    if (c.leaf() == Leaf::scale_factor) {
        if (cfg.scale.kind == ScaleKind::sqrt_dk)
            c.line("s = √d_k = √{} (d_k = hs = {}, in float32) = {}", c.dims().hs,
                   cfg.d_k ? "config.d_k" : "d_model / heads", c.num(op.s));
        else
            c.line("s = {} (the lesson's number, in float32) = {}", scale_source(cfg.scale), c.num(op.s));
        c.line("the same for every head; the {}scores are {} it", cfg.mask_at == MaskAt::raw ? "masked " : "",
               op.multiply ? "multiplied by" : "divided by");
        return op.s;
    }
    return explain_scale(c, get(c.input(Leaf::scores_raw), {h, c.at[1], c.at[2]}), h, "S̃ = S");
}

// One division (or product) per pair and head (docs/cost.md).
std::vector<CostTerm> scale_cost(const CostQuery& q) {
    const Dims& d = q.d;
    const bool w = q.window > 0;
    return {{"scaled S / √hs", w ? "NH, n, w" : "NH, n, n", {d.NH, d.Tq, w ? q.window : d.T}, d.NH * q.stored,
             d.NH * q.pairs, false, true}};
}

}  // namespace attntrace

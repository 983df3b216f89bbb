#include "render/text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "batch/batch.hpp"
#include "core/printable.hpp"
#include "pipeline/mask_pattern.hpp"
#include "render/matrix.hpp"

namespace attntrace {

namespace {

// "on" (÷ √d_k), "off", "÷ 2", "× 0.125"
std::string scale_text(const Scaling& sc) {
    switch (sc.kind) {
        case ScaleKind::sqrt_dk: return "on";
        case ScaleKind::none: return "off";
        case ScaleKind::divide_by: return fmt::format("÷ {:g}", sc.value);
        case ScaleKind::multiply_by: return fmt::format("× {:g}", sc.value);
    }
    return "";
}

// Values on one line, rows (of the first axis longer than 1) separated by
// " | ", so a (query, head, d_head) claim reads as the article's rows of
// d_model, and a one-head (1, query, key) claim as its rows of weights.
// `precision_of(i)`: the i-th value's. `as_sum`: a terms claim's values, the
// terms then their sum, written as the article adds them: "0.99 + 0.63 = 1.62".
template <typename PrecisionOf>
std::string numbers(const Tensor& t, PrecisionOf precision_of, bool as_sum = false) {
    std::size_t lead = 0;
    while (lead + 1 < t.rank() && t.shape[lead] == 1) ++lead;
    const std::size_t row = t.rank() - lead >= 2 ? t.size() / t.shape[lead] : t.size() + 1;
    const Notation notation = notation_for(t.data.data(), t.size());
    std::string s;
    for (std::size_t i = 0; i < t.size(); ++i) {
        if (i && as_sum) s += i + 1 == t.size() ? " = " : " + ";
        else if (i) s += i % row == 0 ? " | " : " ";
        s += format_printed(t.data[i], precision_of(i), notation);
    }
    return s;
}

// At one precision for all.
std::string numbers(const Tensor& t, Precision p, bool as_sum = false) {
    return numbers(t, [&](std::size_t) { return p; }, as_sum);
}

// At the claim's own precision, value by value: what it printed, the right values.
std::string as_printed(const Tensor& t, const Claim& c) {
    return numbers(t, [&](std::size_t i) { return c.precision_at(i); }, c.kind == Claim::Kind::terms);
}

// "2 dp", "2-3 dp", "5 sig": the claim's precision in a header.
std::string precision_text(const Claim& c) {
    int lo = c.precision.digits;
    for (int d : c.cell_digits) lo = std::min(lo, d);
    const std::string digits = lo == c.precision.digits ? std::to_string(lo) : fmt::format("{}-{}", lo, c.precision.digits);
    return digits + (c.precision.unit == Precision::Unit::decimals ? " dp" : " sig");
}

// The computed values, two digits beyond the claim's (and at least the view's decimals).
constexpr int kExtraDigits = 2;
constexpr int kMostSignificantShown = 9;  // 9 significant figures tell any two float32 apart
Precision computed_precision(const Claim& c, int view_precision) {
    if (c.precision.unit == Precision::Unit::decimals)
        return {Precision::Unit::decimals, std::max(view_precision, c.precision.digits + kExtraDigits)};
    return {Precision::Unit::significant, std::min(kMostSignificantShown, c.precision.digits + kExtraDigits)};
}

// Text from the lesson (ids, quotes, tokens in a claim's place) goes through
// printable() here, where it reaches the output: core/printable.hpp.
std::string claim_where(const Claim& c, const Step& step) {
    std::string at = describe_at(c, step);
    return at.empty() ? "" : " (" + printable(at) + ")";
}

// Tokens joined by spaces, each printable.
std::string token_line(const std::vector<std::string>& tokens) {
    std::string out;
    for (const auto& t : tokens) (out += out.empty() ? "" : " ") += printable(t);
    return out;
}

// The rounded run gives this claim other numbers than the exact one (the
// lesson rounds a step upstream of it, as the article did).
bool rounding_moves(const ClaimResult& r) { return r.document.size() && r.document.data != r.computed.data; }

void render_claim(std::ostream& out, const ClaimResult& r, const Step& step, int precision) {
    const Claim& c = r.claim;
    out << fmt::format("    {} claim {}{}: {}{}\n", verdict_mark(r.verdict), printable(c.id), claim_where(c, step),
                       verdict_name(r.verdict),
                       r.as_expected() ? "" : fmt::format("  [lesson expects {}]", verdict_name(c.expect)));
    if (!c.quote.empty()) out << fmt::format("      article: \"{}\"\n", printable(c.quote));
    if (c.kind == Claim::Kind::shape) {
        out << "      " << printable(r.reason) << " (the extents the config implies)\n";
        return;
    }
    if (r.basis == Basis::given)
        out << "      (checked against the lesson's given values, not a formula: the article's consistency with itself)\n";
    if (r.verdict == Verdict::agrees_from_given)
        out << fmt::format("      (agrees only from the article's given values: computed from {}, which the lesson gives "
                           "and its formula does not)\n", printable(r.rests_on));
    out << fmt::format("      printed ({}): {}\n", precision_text(c), as_printed(c.values, c));
    if (r.computed.size()) {
        const Precision shown = computed_precision(c, precision);
        out << fmt::format("      computed:       {}\n", numbers(r.computed, shown, c.kind == Claim::Kind::terms));
        if (r.verdict == Verdict::agrees_when_rounded || (r.verdict == Verdict::disagrees && rounding_moves(r)))
            out << fmt::format("      with the article's rounding: {}\n", numbers(r.document, shown, c.kind == Claim::Kind::terms));
        if (r.verdict == Verdict::disagrees || r.verdict == Verdict::agrees_when_rounded)
            out << fmt::format("      largest deviation {:.4g}; right values: {}\n", r.max_deviation,
                               as_printed(r.computed, c));  // at the claim's own precision
    } else {
        out << "      " << printable(r.reason) << "\n";
    }
    if (!c.note.empty()) out << "      note: " << printable(c.note) << "\n";
}

// A step kept as a summary (trace policy summary): its statistics and the
// top-left corner of its last two axes.
void render_summary(std::ostream& out, const Step& s, const TableOptions& table) {
    const StepSummary& m = *s.summary;
    out << fmt::format("    summary: min {}  max {}  mean {}{}\n", format_number(float(m.min), table.precision),
                       format_number(float(m.max), table.precision), format_number(float(m.mean), table.precision),
                       m.neg_inf ? fmt::format("  ({} cells -inf)", m.neg_inf) : "");
    const std::size_t n = m.row_sums.size(), shown = std::min<std::size_t>(n, 6);
    const Notation notation = notation_for(m.row_sums.data.data(), shown);
    std::string sums;
    for (std::size_t i = 0; i < shown; ++i) {
        if (i) sums += ' ';
        sums += format_number(m.row_sums.data[i], table.precision, notation);
    }
    out << fmt::format("    row sums ({} of {}): {}{}\n", shown, n, sums, shown < n ? " ..." : "");
    // The corner keeps the last two axes (or the one) with their first labels.
    const std::size_t r = s.axes.size();
    std::vector<std::string> axes(s.axes.end() - std::min<std::size_t>(r, m.corner.rank()), s.axes.end());
    std::vector<std::vector<std::string>> labels(s.labels.end() - std::min<std::size_t>(r, m.corner.rank()), s.labels.end());
    for (std::size_t k = 0; k < labels.size(); ++k) labels[k].resize(m.corner.shape[k]);
    out << "    corner:\n" << format_tensor(m.corner, axes, labels, table);
}

// "h0..h3 read kv0 · h4..h7 read kv1": the query heads sharing each K/V head.
std::string kv_groups(const Dims& d) {
    const std::size_t group = d.NH / d.KVH;
    std::string out;
    for (std::size_t g = 0; g < d.KVH; ++g)
        out += fmt::format("{}{} read{} kv{}", g ? " · " : "",
                           group == 1 ? fmt::format("h{}", g) : fmt::format("h{}..h{}", g * group, g * group + group - 1),
                           group == 1 ? "s" : "", g);
    return out;
}

}  // namespace

bool heatmapped(const Step& s) {
    return computes(s, Leaf::pattern) || computes(s, Leaf::mask) || computes(s, Leaf::alibi) ||
           computes(s, Leaf::attn_scores);
}

std::string given_note(const CheckReport& report) {
    std::size_t n = 0;
    for (const auto& r : report.results) n += r.basis == Basis::given && r.verdict == Verdict::agrees;
    return n ? fmt::format(" ({} of the agreements only check the article against its own given values)", n) : "";
}

std::string agree_counts(const CheckReport& report) {
    return fmt::format("{} agree, {} agree only from the article's given values", report.count(Verdict::agrees),
                       report.count(Verdict::agrees_from_given));
}

std::string_view verdict_mark(Verdict v) {
    switch (v) {
        case Verdict::agrees: return "✓";
        case Verdict::agrees_when_rounded: return "≈";
        case Verdict::disagrees: return "✗";
        case Verdict::not_checkable: return "?";
        case Verdict::agrees_from_given: return "↳";  // follows from the article's own numbers
    }
    return " ";
}

void render_run(std::ostream& out, const Lesson& lesson, const Trace& trace, const CheckReport& report,
                const RunView& view) {
    const Config& c = lesson.config;
    out << fmt::format("attntrace · {} — {}\n", printable(lesson.id), printable(lesson.title));
    if (!lesson.source.document.empty())  // a private lesson may have none
        out << fmt::format("source: {}{}{}\n", printable(lesson.source.document),
                           lesson.source.title.empty() ? "" : " · " + printable(lesson.source.title),
                           lesson.source.section.empty() ? "" : " · §" + printable(lesson.source.section));
    if (trace.sequence_tokens.empty())
        out << fmt::format("tokens: {}{}\n", token_line(lesson.tokens),
                           lesson.query_tokens.empty() ? "" : fmt::format("   queries: {}", token_line(lesson.query_tokens)));
    else  // a batch: each sequence padded to T; the steps print one table per sequence
        for (std::size_t b = 0; b < trace.sequence_tokens.size(); ++b)
            out << fmt::format("{} b{}: {}\n", b ? "      " : "batch:", b, token_line(trace.sequence_tokens[b]));
    out << fmt::format("d_model {} · heads {} · {} · d_ff {} · mask {} · scaling {} · {} · eps {:g}\n", c.d_model,
                       c.heads,
                       c.dk() == c.dv() ? fmt::format("d_head {}", c.dk()) : fmt::format("d_k {} · d_v {}", c.dk(), c.dv()),
                       c.d_ff ? std::to_string(c.d_ff) : "-", mask_text(c),
                       scale_text(c.scale),
                       c.norm == NormKind::layernorm ? std::string(activation_name(c.activation))
                                                     : fmt::format("{} · {}", activation_name(c.activation), norm_name(c.norm)),
                       c.eps);
    if (c.variance == Variance::unbiased)
        out << "LayerNorm: unbiased variance, Σ(x - μ)² / (C - 1) as torch.var, not nn.LayerNorm's / C (config.variance)\n";
    if (c.norm_steps_all)
        out << "LayerNorm: every piece a step, x - μ and (x - μ)² too (config.norm_steps \"all\")\n";
    if (c.normalizer != Normalizer::softmax || !c.max_shift)
        out << "weights A: "
            << (c.normalizer == Normalizer::sum    ? "each masked score over its row's sum, no exp (config.normalizer \"sum\")"
                : c.normalizer == Normalizer::none ? "the masked scores themselves (config.normalizer \"none\")"
                                                   : "softmax without its max shift, exp of the scores as they are (config.max_shift false)")
            << "\n";
    if (c.mask_at == MaskAt::raw)
        out << "mask: added to the raw scores, which are then scaled: (S + M) / s (config.mask_at \"raw\")\n";
    if (c.mask_at == MaskAt::weights)
        out << "mask: zeroes the weights after the normaliser, which saw every key; rows "
            << (c.renormalize ? "renormalised (config.mask_at \"weights\", config.renormalize)\n"
                              : "not renormalised (config.mask_at \"weights\")\n");
    if (c.weight_layout == WeightLayout::out_in)
        out << "weights: as nn.Linear's weight, d_out x d_in, applied as x·Wᵀ (config.weight_layout \"out_in\")\n";
    if (const Positions& p = c.positions; p.kind != PositionKind::none)
        out << fmt::format("positions: {}{}\n", position_name(p.kind),
                           p.kind == PositionKind::rope
                               ? fmt::format(" (layout {}, base {:g})", rope_layout_name(p.layout), p.base)
                           : p.kind == PositionKind::alibi ? (p.slopes.empty() ? " (the paper's slopes)" : " (the lesson's slopes)")
                                                           : "");
    const Dims dims = lesson.dims();
    if (dims.KVH != dims.NH)
        out << fmt::format("K/V heads {} ({}): {}\n", dims.KVH, dims.KVH == 1 ? "multi-query" : "grouped-query",
                           kv_groups(dims));
    out << fmt::format("stages {} → {}\n", stage_name(lesson.from), stage_name(lesson.to));
    if (trace.policy.kind != TracePolicy::Kind::full)
        out << fmt::format("trace policy {}: {} of the steps kept{}\n", trace.policy.describe(), trace.steps.size(),
                           trace.streamed_attention ? "; attention streamed over key blocks (no T x T matrix held)" : "");
    if (!lesson.description.empty()) out << "\n" << printable(lesson.description) << "\n";

    TableOptions table;
    table.precision = view.precision;
    table.full = view.full;
    table.width = view.style.width;
    HeatmapOptions heat;
    heat.style = view.style;
    heat.full = view.full;
    auto draw_heatmap = [&](const Step& s) {
        if (!view.heatmap || !heatmapped(s)) return;
        heat.auto_range = computes(s, Leaf::attn_scores) || computes(s, Leaf::alibi);
        heat.mask = computes(s, Leaf::mask);
        heat.keep_mask = heat.mask && lesson.config.mask_at == MaskAt::weights;
        out << "    heatmap:\n" << format_heatmap(s.value, s.axes, s.labels, heat);
    };
    // A batched trace prints each step once per sequence, with that sequence's tokens.
    std::vector<Trace> sequences;
    for (std::size_t b = 0; b < trace.sequence_tokens.size(); ++b) sequences.push_back(unstack_trace(trace, b));
    auto draw_values = [&](const Step& s, std::size_t k, bool formula) {
        if (sequences.empty()) {
            out << format_tensor(formula ? *s.formula : s.value, s.axes, s.labels, table);
            if (!formula) draw_heatmap(s);
            return;
        }
        for (std::size_t b = 0; b < sequences.size(); ++b) {
            const Step& sb = sequences[b].steps[k];
            out << fmt::format("    sequence b{}:\n", b);
            out << format_tensor(formula ? *sb.formula : sb.value, sb.axes, sb.labels, table);
            if (!formula) draw_heatmap(sb);
        }
    };
    std::size_t n = 0;
    for (const Step& s : trace.steps) {
        ++n;
        if (!view.steps.empty() && !step_matches(s.name, view.steps)) continue;
        std::string axes;
        for (std::size_t k = 0; k < s.axes.size(); ++k) axes += (k ? " x " : "") + s.axes[k];
        out << fmt::format("\n── {}/{} {} — {}  [{}{}]\n", n, trace.steps.size(), printable(s.name), s.def ? s.def->title : "",
                           shape_str(s.shape), axes.empty() ? "" : ": " + axes);
        if (s.def) out << "    " << formula_of(s) << "\n";
        if (dims.KVH != dims.NH && (computes(s, Leaf::scores_raw) || computes(s, Leaf::z)))
            out << "    K/V heads read: " << kv_groups(dims) << "\n";
        switch (s.source) {
            case StepSource::not_computable:
                out << "    not computable: " << printable(s.note) << "\n";
                break;
            case StepSource::given:
                out << "    given (the article's values):\n";
                if (s.summary) {
                    render_summary(out, s, table);
                    break;
                }
                draw_values(s, n - 1, false);
                if (s.formula) {
                    out << "    the formula gives:\n";
                    draw_values(s, n - 1, true);
                }
                break;
            case StepSource::computed:
                if (s.summary) {
                    render_summary(out, s, table);
                    break;
                }
                draw_values(s, n - 1, false);
                break;
        }
        if (s.source == StepSource::computed && !s.note.empty()) out << "    note: " << printable(s.note) << "\n";
        if (s.rounded_to >= 0) out << fmt::format("    (rounded to {} decimals, as the article did)\n", s.rounded_to);
        if (s.def) out << "    " << meaning_of(s) << "\n";
        for (const auto& r : report.results)
            if (r.claim.step == s.name) render_claim(out, r, s, view.precision);
    }
    for (const auto& w : trace.warnings) out << "\nwarning: " << printable(w) << "\n";
    out << fmt::format("\nclaims: {}, {} agree when rounded as printed, {} disagree, {} not checkable{}\n",
                       agree_counts(report), report.count(Verdict::agrees_when_rounded),
                       report.count(Verdict::disagrees), report.count(Verdict::not_checkable),
                       given_note(report));
}

void render_check(std::ostream& out, const Lesson& lesson, const Trace& trace, const CheckReport& report) {
    out << fmt::format("{}  ({} claims)\n", printable(lesson.id), report.results.size());
    for (const auto& r : report.results) {
        const Claim& c = r.claim;
        const Step* step = trace.find(c.step);
        std::string where = step ? claim_where(c, *step) : "";
        const bool agreed = r.verdict == Verdict::agrees || r.verdict == Verdict::agrees_from_given;
        std::string dev = r.computed.size() && !agreed ? fmt::format("  max |Δ| {:.3g}", r.max_deviation) : "";
        std::string basis = r.basis == Basis::given ? "  (against the given values)" : "";
        out << fmt::format("  {} {:<18} {:<20} {}{}{}{}\n", verdict_mark(r.verdict), printable(c.id), verdict_name(r.verdict),
                           printable(c.step) + where, dev, basis,
                           r.as_expected() ? "" : fmt::format("  UNEXPECTED (lesson expects {})", verdict_name(c.expect)));
        if (r.verdict == Verdict::disagrees && r.computed.size()) {
            out << fmt::format("      printed {}\n      right   {}\n", as_printed(c.values, c), as_printed(r.computed, c));
            if (rounding_moves(r))  // the lesson rounds as the article did, and the claim still disagrees
                out << fmt::format("      rounded {}   (with the article's rounding)\n", as_printed(r.document, c));
        } else if (r.verdict == Verdict::agrees_from_given) {
            out << fmt::format("      from    {}   (given by the lesson; its formula gives other values)\n",
                               printable(r.rests_on));
        } else if (r.verdict == Verdict::disagrees)
            out << "      " << printable(r.reason) << "\n";
    }
}

}  // namespace attntrace

#include "render/text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "batch/batch.hpp"
#include "core/printable.hpp"
#include "pipeline/mask_pattern.hpp"
#include "render/matrix.hpp"
#include "render/wrap.hpp"

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
    // weighted value vectors (a terms claim of rank 2) print as rows, one per key, like any matrix
    return numbers(t, [&](std::size_t i) { return c.precision_at(i); }, c.kind == Claim::Kind::terms && t.rank() == 1);
}

// Values as numbers() writes them, after a label ("      computed:       "),
// wrapped to the width at numbers: all rows on one line when they fit, else
// as many whole rows to a line as fit with the " |" that ends them, the same
// number on every line (a matrix's rows one under the other); a row longer
// than a line broken between its numbers. Continuation lines under the first
// number; a number is never broken. `after`: words that follow the values
// ("   (with the article's rounding)").
std::string number_lines(std::string_view label, const std::string& values, std::size_t width,
                         std::string_view after = "") {
    std::vector<std::string> rows;
    for (std::size_t start = 0;;) {
        const std::size_t bar = values.find(" | ", start);
        rows.push_back(values.substr(start, bar == std::string::npos ? std::string::npos : bar - start));
        if (bar == std::string::npos) break;
        start = bar + 3;
    }
    const std::size_t room = width > display_width(label) ? width - display_width(label) : 0;
    // Whether k rows to a line fit: each line's rows, " | " between them, and " |" after all but the last line's.
    auto fits = [&](std::size_t k) {
        for (std::size_t i = 0; i < rows.size(); i += k) {
            std::size_t w = 0;
            for (std::size_t j = i; j < std::min(rows.size(), i + k); ++j) w += display_width(rows[j]) + (j > i ? 3 : 0);
            if (w + (i + k < rows.size() ? 2 : 0) > room) return false;
        }
        return true;
    };
    std::size_t per_line = width == 0 ? rows.size() : 0;
    for (std::size_t k = rows.size(); k >= 1 && per_line == 0; --k)
        if (fits(k)) per_line = k;
    if (per_line == 0) return wrap_hanging(values + std::string(after), width, label);  // broken between numbers
    const std::string pad(display_width(label), ' ');
    std::string out;
    for (std::size_t i = 0; i < rows.size(); i += per_line) {
        std::string group;
        for (std::size_t j = i; j < std::min(rows.size(), i + per_line); ++j) group += (j > i ? " | " : "") + rows[j];
        if (i + per_line < rows.size()) out += std::string(i ? std::string_view(pad) : label) + group + " |\n";
        else out += wrap_text(unbroken(group) + std::string(after), width, i ? std::string_view(pad) : label, pad);
    }
    return out;
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
    return at.empty() ? "" : unbroken_items(fmt::format(" ({})", printable(at)));  // broken only between its items
}

// Tokens joined by spaces, each printable; a long list as its first
// kTokensHead and last kTokensTail around "…" with the count, as the tables
// elide (a 32768-token lesson's header is one short line, not 218,273 characters).
constexpr std::size_t kTokensHead = 8, kTokensTail = 4;
std::string token_line(const std::vector<std::string>& tokens) {
    std::string out;
    const bool elide = tokens.size() > kTokensHead + kTokensTail + 1;
    for (std::size_t i = 0; i < tokens.size(); ++i) {
        if (elide && i == kTokensHead) {
            out += " …";
            i = tokens.size() - kTokensTail - 1;
            continue;
        }
        (out += out.empty() ? "" : " ") += printable(tokens[i]);
    }
    return elide ? out + fmt::format("  ({} tokens)", tokens.size()) : out;
}

// Headings and verdicts stand out on a terminal: SGR attributes when colour is on.
std::string styled(std::string_view text, std::string_view sgr, const TermStyle& style) {
    return style.color ? fmt::format("\x1b[{}m{}\x1b[0m", sgr, text) : std::string(text);
}
constexpr std::string_view kHeading = "1";  // bold
std::string_view verdict_colour(Verdict v) {
    switch (v) {
        case Verdict::agrees: return "32";              // green
        case Verdict::agrees_from_given: return "36";   // cyan: agrees, resting on the article's own numbers
        case Verdict::agrees_when_rounded: return "33"; // yellow
        case Verdict::disagrees: return "1;31";         // bold red
        case Verdict::not_checkable: return "2";        // dim
    }
    return "0";
}

// The rounded run gives this claim other numbers than the exact one (the
// lesson rounds a step upstream of it, as the article did).
bool rounding_moves(const ClaimResult& r) { return r.document.size() && r.document.data != r.computed.data; }

// A next-token claim's token is not the top one: "not the top token: 'S' comes next".
std::string wrong_token(const ClaimResult& r, const Step& step) {
    return fmt::format("not the top token: '{}' comes next", printable(vocab_label(step, *r.top_token)));
}

// The claim's printed numbers are off (not only its token): a next-token
// claim naming the wrong token may print that token's probability right.
bool values_off(const ClaimResult& r) { return !r.top_token || r.cells_off > 0; }

void render_claim(std::ostream& out, const ClaimResult& r, const Step& step, int precision, const TermStyle& style) {
    const Claim& c = r.claim;
    const std::size_t w = style.width;
    const std::string colour(verdict_colour(r.verdict));
    out << wrap_text(fmt::format("{} claim {}{}: {}{}{}", styled(verdict_mark(r.verdict), colour, style), printable(c.id),
                                 claim_where(c, step), styled(verdict_name(r.verdict), colour, style),
                                 r.top_token ? ", " + wrong_token(r, step) : "",
                                 r.as_expected() ? "" : "  " + unbroken(fmt::format("[lesson expects {}]",
                                                                                    verdict_name(c.expect)))),
                     w, "    ", "      ");
    if (!c.quote.empty()) out << wrap_hanging(fmt::format("\"{}\"", printable(c.quote)), w, "      article: ");
    if (r.top_token) out << wrap_text(printable(r.reason), w, "      ", "      ");  // what differs, before the numbers
    if (c.kind == Claim::Kind::shape) {
        out << wrap_text(printable(r.reason) + " (the extents the config implies)", w, "      ", "      ");
        return;
    }
    if (r.basis == Basis::given)
        out << wrap_hanging("(checked against the lesson's given values, not a formula: the article's consistency with "
                            "itself)", w, "      ");
    if (r.verdict == Verdict::agrees_from_given)
        out << wrap_hanging(fmt::format("(agrees only from the article's given values: computed from {}, which the "
                                        "lesson gives and its formula does not)", printable(r.rests_on)),
                            w, "      ");
    out << number_lines(fmt::format("      printed ({}): ", precision_text(c)), as_printed(c.values, c), w);
    if (r.computed.size()) {
        const Precision shown = computed_precision(c, precision);
        out << number_lines("      computed:       ", numbers(r.computed, shown, c.kind == Claim::Kind::terms && r.computed.rank() == 1), w);
        if (r.verdict == Verdict::agrees_when_rounded || (r.verdict == Verdict::disagrees && rounding_moves(r)))
            out << number_lines("      with the article's rounding: ",
                                numbers(r.document, shown, c.kind == Claim::Kind::terms && r.document.rank() == 1), w);
        if ((r.verdict == Verdict::disagrees && values_off(r)) || r.verdict == Verdict::agrees_when_rounded)
            out << number_lines(fmt::format("      largest deviation {:.4g}; right values: ", r.max_deviation),
                                as_printed(r.computed, c), w);  // at the claim's own precision
        else if (r.verdict == Verdict::disagrees)
            out << "      (its probability agrees; the token is what differs)\n";
        if (r.formula_only.size())  // agrees-from-given: what the formula gives without the article's given values
            out << number_lines("      without the given values: ", as_printed(r.formula_only, c), w);
        if (!r.reason.empty() && !r.top_token) out << wrap_text(printable(r.reason), w, "      ", "      ");
    } else {
        out << wrap_text(printable(r.reason), w, "      ", "      ");
    }
    if (!c.note.empty()) out << wrap_hanging(printable(c.note), w, "      note: ");
}

// A step kept as a summary (trace policy summary): its statistics and the
// top-left corner of its last two axes.
void render_summary(std::ostream& out, const Step& s, const TableOptions& table) {
    const StepSummary& m = *s.summary;
    const std::size_t n = m.row_sums.size(), shown = std::min<std::size_t>(n, 6);
    // One format for its statistics and row sums, said after them.
    const float stats[3] = {float(m.min), float(m.max), float(m.mean)};
    const Notation notation = notation_for(stats, 3) == Notation::scientific ? Notation::scientific
                                                                             : notation_for(m.row_sums.data.data(), shown);
    out << wrap_text(fmt::format("{}  {}  {}{}  ({})", unbroken("min " + format_number(stats[0], table.precision, notation)),
                                 unbroken("max " + format_number(stats[1], table.precision, notation)),
                                 unbroken("mean " + format_number(stats[2], table.precision, notation)),
                                 m.neg_inf ? unbroken(fmt::format("  ({} cells -inf)", m.neg_inf)) : "",
                                 notation_caption(notation, table.precision)),
                     table.width, "    summary: ", "      ");
    std::string sums;
    for (std::size_t i = 0; i < shown; ++i) {
        if (i) sums += ' ';
        sums += format_number(m.row_sums.data[i], table.precision, notation);
    }
    out << number_lines(fmt::format("    row sums ({} of {}): ", shown, n), sums + (shown < n ? " ..." : ""), table.width);
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
        out += (g ? " · " : "") +  // each group one word for the wrapping
               unbroken(fmt::format("{} read{} kv{}",
                                    group == 1 ? fmt::format("h{}", g)
                                               : fmt::format("h{}..h{}", g * group, g * group + group - 1),
                                    group == 1 ? "s" : "", g));
    return out;
}

}  // namespace

bool heatmapped(const Step& s) {
    if (s.def) return drawn_as_map(s.def->leaf);
    for (const StepTemplate& t : step_templates())  // a trace read from a file: its steps by the template's names
        if (t.name == s.name) return drawn_as_map(t.leaf);
    return false;
}

std::string given_note(const CheckReport& report) {
    std::size_t n = 0;
    for (const auto& r : report.results) n += r.basis == Basis::given && r.verdict == Verdict::agrees;
    return n ? fmt::format(" ({} of the agreements only check the article against its own given values)", n) : "";
}

std::string check_row(std::string_view prefix, std::string_view rest, std::size_t width) {
    // Under the column `rest` begins in ("  ✓ ", an 18-column id, a 20-column verdict: 44; a longer id's row
    // continues there too), unless that leaves it too little room.
    constexpr std::size_t kRestColumn = 4 + 18 + 1 + 20 + 1, kLeastRoom = 24, kNarrowIndent = 6;
    const std::size_t col = std::min(display_width(prefix), kRestColumn);
    const std::size_t indent = width && col + kLeastRoom > width ? kNarrowIndent : col;
    return wrap_text(rest, width, prefix, std::string(indent, ' '));
}

std::string unexpected_text(Verdict expected) {
    return "  UNEXPECTED " + unbroken(fmt::format("(lesson expects {})", verdict_name(expected)));
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
    out << wrap_text(fmt::format("attntrace · {} — {}", printable(lesson.id), printable(lesson.title)), view.style.width, "",
                     "    ");
    if (!lesson.source.document.empty())  // a private lesson may have none
        out << wrap_hanging(fmt::format("{}{}{}", printable(lesson.source.document),
                                        lesson.source.title.empty() ? "" : " · " + printable(lesson.source.title),
                                        lesson.source.section.empty() ? "" : " · §" + printable(lesson.source.section)),
                            view.style.width, "source: ");
    if (trace.sequence_tokens.empty())
        out << wrap_hanging(fmt::format("{}{}", token_line(lesson.tokens),
                                        lesson.query_tokens.empty() ? "" : fmt::format("   queries: {}", token_line(lesson.query_tokens))),
                            view.style.width, "tokens: ");
    else  // a batch: each sequence padded to T; the steps print one table per sequence
        for (std::size_t b = 0; b < trace.sequence_tokens.size(); ++b)
            out << wrap_hanging(token_line(trace.sequence_tokens[b]), view.style.width,
                                fmt::format("{} b{}: ", b ? "      " : "batch:", b));
    std::vector<std::string> config_items = {fmt::format("d_model {}", c.d_model), fmt::format("heads {}", c.heads),
                                             c.dk() == c.dv() ? fmt::format("d_head {}", c.dk())
                                                              : fmt::format("d_k {} · d_v {}", c.dk(), c.dv()),
                                             fmt::format("d_ff {}", c.d_ff ? std::to_string(c.d_ff) : "-"),
                                             fmt::format("mask {}", mask_text(c)),
                                             fmt::format("scaling {}", scale_text(c.scale)),
                                             std::string(activation_name(c.activation))};
    if (c.norm != NormKind::layernorm) config_items.emplace_back(norm_name(c.norm));
    config_items.push_back(fmt::format("eps {:g}", c.eps));
    out << wrap_items(config_items, " · ", view.style.width, "", "    ");
    const std::size_t width = view.style.width;
    if (c.variance == Variance::unbiased)
        out << wrap_hanging("unbiased variance, Σ(x - μ)² / (C - 1) as torch.var, not nn.LayerNorm's / C (config.variance)",
                            width, "LayerNorm: ");
    if (c.norm_steps_all)
        out << wrap_hanging("every piece a step, x - μ and (x - μ)² too (config.norm_steps \"all\")", width, "LayerNorm: ");
    if (c.normalizer != Normalizer::softmax || !c.max_shift)
        out << wrap_hanging(
            c.normalizer == Normalizer::sum    ? "each masked score over its row's sum, no exp (config.normalizer \"sum\")"
            : c.normalizer == Normalizer::none ? "the masked scores themselves (config.normalizer \"none\")"
                                               : "softmax without its max shift, exp of the scores as they are "
                                                 "(config.max_shift false)",
            width, "weights A: ");
    if (c.mask_at == MaskAt::raw)
        out << wrap_hanging("added to the raw scores, which are then scaled: (S + M) / s (config.mask_at \"raw\")", width,
                            "mask: ");
    if (c.mask_at == MaskAt::weights)
        out << wrap_hanging(std::string("zeroes the weights after the normaliser, which saw every key; rows ") +
                                (c.renormalize ? "renormalised (config.mask_at \"weights\", config.renormalize)"
                                               : "not renormalised (config.mask_at \"weights\")"),
                            width, "mask: ");
    if (c.weight_layout == WeightLayout::out_in)
        out << wrap_hanging("as nn.Linear's weight, d_out x d_in, applied as x·Wᵀ (config.weight_layout \"out_in\")", width,
                            "weights: ");
    if (const Positions& p = c.positions; p.kind != PositionKind::none)
        out << wrap_hanging(fmt::format("{}{}", position_name(p.kind),
                                        p.kind == PositionKind::rope
                                            ? fmt::format(" (layout {}, base {:g}{})", rope_layout_name(p.layout), p.base,
                                                          p.rotary_dims
                                                              ? fmt::format(", first {} dimensions of each head", p.rotary_dims)
                                                              : std::string())
                                        : p.kind == PositionKind::sinusoidal && p.layout == RopeLayout::half
                                            ? std::string(" (in halves: sin in the first C/2 dimensions, cos in the rest)")
                                        : p.kind == PositionKind::alibi
                                            ? (p.slopes.empty() ? " (the paper's slopes)" : " (the lesson's slopes)")
                                            : ""),
                            width, "positions: ");
    const Dims dims = lesson.dims();
    if (dims.KVH != dims.NH)
        out << wrap_hanging(kv_groups(dims), width,
                            fmt::format("K/V heads {} ({}): ", dims.KVH, dims.KVH == 1 ? "multi-query" : "grouped-query"));
    out << fmt::format("stages {} → {}\n", stage_name(lesson.from), stage_name(lesson.to));
    if (trace.policy.kind != TracePolicy::Kind::full || !trace.policy.blocks.empty())
        out << wrap_text(fmt::format("trace policy {}{}: {} of the steps kept{}", trace.policy.describe(),
                                     trace.policy.blocks.empty() ? "" : " (" + trace.policy.describe_blocks() + ")",
                                     trace.steps.size(),
                                     trace.streamed_attention
                                         ? "; attention streamed over key blocks (no " + unbroken("T x T") + " matrix held)"
                                         : ""),
                         width, "", "    ");
    if (!lesson.description.empty()) out << "\n" << wrap_text(printable(lesson.description), view.style.width, "", "");

    TableOptions table;
    table.precision = view.precision;
    table.full = view.full;
    table.width = view.style.width;
    HeatmapOptions heat;
    heat.style = view.style;
    heat.full = view.full;
    heat.mode = view.heatmap_mode;
    heat.pool = view.pool;
    // The weights' blocked cells, from the mask their attention recorded: "×", not the 0.00 softmax gave them.
    auto blocked_of = [&](const Trace& tr, const Step& s) {
        Blocked b;
        // A given step shows the article's numbers as printed, blocked or not.
        if (!s.def || !computes(s, Leaf::pattern) || s.source != StepSource::computed) return b;
        for (const Step& m : tr.steps)
            if (m.def && computes(m, Leaf::mask) && m.def->block == s.def->block && m.def->cross == s.def->cross &&
                m.recorded == Record::full && m.source != StepSource::not_computable)
                b.m = &m.held();  // the mask is recorded, never derived
        b.multiplies = lesson.config.mask_at == MaskAt::weights;
        return b;
    };
    auto draw_heatmap = [&](const Trace& tr, const Step& s) {
        if (!view.heatmap || !heatmapped(s)) return;
        heat.auto_range = computes(s, Leaf::attn_scores) || computes(s, Leaf::alibi);
        heat.mask = computes(s, Leaf::mask);
        heat.keep_mask = heat.mask && lesson.config.mask_at == MaskAt::weights;
        heat.blocked = blocked_of(tr, s);
        // Under GQA each head's map names the K/V head it reads: the grouping the lesson teaches, in the picture.
        heat.head_captions.clear();
        if (dims.KVH != dims.NH && s.shape.size() == 3 && s.shape[0] == dims.NH)
            for (std::size_t h = 0; h < dims.NH; ++h)
                heat.head_captions.push_back(fmt::format("head h{} · kv{}", h, h / (dims.NH / dims.KVH)));
        StepRows rows(tr, s);  // a derived step's rows computed as the map reads them, not the step whole
        out << "    heatmap:\n" << format_heatmap(rows, s.axes, s.labels, heat);
    };
    // A batched trace prints each step once per sequence, with that sequence's tokens.
    std::vector<Trace> sequences;
    for (std::size_t b = 0; b < trace.sequence_tokens.size(); ++b) sequences.push_back(unstack_trace(trace, b));
    auto draw_values = [&](const Step& s, std::size_t k, bool formula) {
        auto draw = [&](const Trace& tr, const Step& st) {
            table.blocked = formula ? Blocked{} : blocked_of(tr, st);
            StepRows rows = formula ? StepRows(*st.formula) : StepRows(tr, st);  // only the rows shown are read
            write_tensor(out, rows, st.axes, st.labels, table);
            if (!formula) draw_heatmap(tr, st);
        };
        if (sequences.empty()) return draw(trace, s);
        for (std::size_t b = 0; b < sequences.size(); ++b) {
            out << fmt::format("    sequence b{}:\n", b);
            draw(sequences[b], sequences[b].steps[k]);
        }
    };
    std::size_t n = 0;
    for (const Step& s : trace.steps) {
        ++n;
        if (!view.steps.empty() && !step_matches(s.name, view.steps)) continue;
        std::string axes;
        for (std::size_t k = 0; k < s.axes.size(); ++k) axes += (k ? " x " : "") + s.axes[k];
        // The heading bold on a terminal, wrapped when the width is short: its shape on the next line, and
        // its title broken at spaces only when it is wider than a line itself.
        const std::string title = fmt::format("── {}/{} {} — {}", n, trace.steps.size(), printable(s.name),
                                              title_of(s));
        const std::string shape = unbroken(fmt::format("[{}{}]", shape_str(s.shape), axes.empty() ? "" : ": " + axes));
        std::string heading = wrap_text(
            fmt::format("{}  {}", display_width(title) <= view.style.width ? unbroken(title) : title, shape),
            view.style.width, "", "   ");
        heading.pop_back();
        out << "\n" << styled(heading, kHeading, view.style) << "\n";
        if (s.def) out << wrap_text(formula_of(s), view.style.width, "    ", "      ");
        if (dims.KVH != dims.NH && (computes(s, Leaf::scores_raw) || computes(s, Leaf::z)))
            out << wrap_hanging(kv_groups(dims), view.style.width, "    K/V heads read: ");
        switch (s.source) {
            case StepSource::not_computable:
                out << wrap_hanging(printable(s.note), view.style.width, "    not computable: ");
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
        if (s.source == StepSource::computed && !s.note.empty()) out << wrap_hanging(printable(s.note), view.style.width, "    note: ");
        if (s.rounded_to >= 0) out << fmt::format("    (rounded to {} decimals, as the article did)\n", s.rounded_to);
        if (s.def) out << wrap_text(meaning_of(s), view.style.width, "    ", "    ");
        for (const auto& r : report.results)
            if (r.claim.step == s.name) render_claim(out, r, s, view.precision, view.style);
    }
    for (const auto& w : trace.warnings) out << "\n" << wrap_hanging(printable(w), view.style.width, "warning: ");
    if (report.results.empty()) return;  // nothing claimed (a checkpoint, a random lesson): no tally of nothing
    out << "\n"
        << wrap_hanging(fmt::format("{}, {} agree when rounded as printed, {} disagree, {} not checkable{}",
                                    agree_counts(report), report.count(Verdict::agrees_when_rounded),
                                    report.count(Verdict::disagrees), report.count(Verdict::not_checkable),
                                    given_note(report)),
                        view.style.width, styled("claims:", kHeading, view.style) + " ");
}

void render_check(std::ostream& out, const Lesson& lesson, const Trace& trace, const CheckReport& report,
                  const TermStyle& style) {
    out << fmt::format("{}  ({} claims)\n", printable(lesson.id), report.results.size());
    for (const auto& r : report.results) {
        const Claim& c = r.claim;
        const Step* step = trace.find(c.step);
        std::string where = step ? claim_where(c, *step) : "";
        const bool agreed = r.verdict == Verdict::agrees || r.verdict == Verdict::agrees_from_given;
        // What differs, the token first: a value's deviation only when a value is off.
        std::string differs = r.top_token ? "  " + unbroken(wrong_token(r, *step)) : "";
        if (r.computed.size() && !agreed && values_off(r))
            differs += (r.top_token ? "; " : "  ") + unbroken(fmt::format("max |Δ| {:.3g}", r.max_deviation));
        std::string basis = r.basis == Basis::given ? "  " + unbroken("(against the given values)") : "";
        const std::string colour(verdict_colour(r.verdict));
        out << check_row(fmt::format("  {} {:<18} {} ", styled(verdict_mark(r.verdict), colour, style), printable(c.id),
                                     styled(fmt::format("{:<20}", verdict_name(r.verdict)), colour, style)),
                         printable(c.step) + where + differs + basis + (r.as_expected() ? "" : unexpected_text(c.expect)),
                         style.width);
        if (r.verdict == Verdict::disagrees && r.computed.size()) {
            if (r.top_token) out << wrap_text(printable(r.reason), style.width, "      ", "      ");
            if (values_off(r)) {
                out << number_lines("      printed ", as_printed(c.values, c), style.width)
                    << number_lines("      right   ", as_printed(r.computed, c), style.width);
                if (rounding_moves(r))  // the lesson rounds as the article did, and the claim still disagrees
                    out << number_lines("      rounded ", as_printed(r.document, c), style.width,
                                        "   (with the article's rounding)");
            } else {
                out << wrap_text(fmt::format("its probability agrees: printed {}, computed {}", as_printed(c.values, c),
                                             numbers(r.computed, computed_precision(c, 0))),
                                 style.width, "      ", "      ");
            }
            if (!r.top_token && !r.reason.empty()) out << wrap_text(printable(r.reason), style.width, "      ", "      ");
        } else if (r.verdict == Verdict::agrees_from_given) {
            out << wrap_hanging(printable(r.rests_on) + "   (given by the lesson; its formula gives other values)",
                                style.width, "      from    ");
            if (r.formula_only.size())  // what attention gives without the article's numbers, as "right" under disagrees
                out << number_lines("      formula ", as_printed(r.formula_only, c), style.width, "   (without the given values)");
        } else if (r.verdict == Verdict::disagrees)
            out << wrap_text(printable(r.reason), style.width, "      ", "      ");
    }
}

}  // namespace attntrace

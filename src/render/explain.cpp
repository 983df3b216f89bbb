#include "render/explain.hpp"

#include "batch/batch.hpp"

#include <cmath>
#include <cstdlib>

#include "core/decimal.hpp"
#include "core/error.hpp"
#include "render/explain_detail.hpp"
#include "render/matrix.hpp"
#include "trace/policy.hpp"

namespace attntrace {

namespace ed = explain_detail;

namespace explain_detail {

std::string Ctx::num(float x) const { return format_number(x, opt.precision); }

const Step& Ctx::input(std::string_view template_name) const {
    return step_named(step.def ? lesson.catalogue().sibling(*step.def, template_name) : std::string(template_name));
}

const Step& Ctx::step_named(std::string_view name) const {
    const Step* s = trace.find(name);
    if (!s || s->value.size() == 0)
        throw InputError(fmt::format("explain {}: expected its input {} in the trace, found it not kept", step.name, name));
    return *s;
}

const Tensor* Ctx::optional_weight(const std::string& name) const { return lesson.weight(pass().weights + name); }

const Tensor& Ctx::weight(const std::string& name) const {
    const Tensor* w = lesson.weight(pass().weights + name);
    if (!w) throw InputError(fmt::format("explain {}: expected weight {} in the lesson, found none", step.name, name));
    return *w;
}

std::string Ctx::label(const Step& s, std::size_t k, std::size_t i) {
    return k < s.labels.size() && i < s.labels[k].size() ? s.labels[k][i] : std::to_string(i);
}

std::size_t offset(const Shape& shape, std::initializer_list<std::size_t> at) {
    std::size_t off = 0, k = 0;
    for (std::size_t i : at) off = off * shape[k++] + i;
    return off;
}

void list_terms(Ctx& c, std::size_t n, const std::function<std::string(std::size_t)>& term) {
    const bool elide = !c.opt.full && n > c.opt.max_terms;
    for (std::size_t k = 0; k < n; ++k) {
        if (elide && k == 3) {
            c.line("    ... ({} more terms; --full shows them)", n - 6);
            k = n - 4;
            continue;
        }
        c.line("    {}", term(k));
    }
}

float write_dot(Ctx& c, std::size_t n, const std::function<std::string(std::size_t)>& a_name,
                const std::function<float(std::size_t)>& a, const std::function<std::string(std::size_t)>& b_name,
                const std::function<float(std::size_t)>& b, const char* bias_name, const float* bias) {
    std::size_t wa = 0, wb = 0;
    for (std::size_t k = 0; k < n; ++k) wa = std::max(wa, a_name(k).size()), wb = std::max(wb, b_name(k).size());
    float acc = 0.0f;  // float, k ascending: the order of matmul_ref / matmul_nt_ref
    for (std::size_t k = 0; k < n; ++k) acc += a(k) * b(k);
    list_terms(c, n, [&](std::size_t k) {
        return fmt::format("{} {:<{}} · {:<{}} = {:>9} · {:>9} = {:>9}", k ? "+" : " ", a_name(k), wa, b_name(k), wb,
                           c.num(a(k)), c.num(b(k)), c.num(a(k) * b(k)));
    });
    c.line("  = {}   (sum of {} terms)", c.num(acc), n);
    if (bias_name && bias) {
        c.line("  + {} = {}", bias_name, c.num(*bias));
        acc += *bias;
        c.line("  = {}", c.num(acc));
    } else if (bias_name) {
        c.line("  (no {} in this lesson)", bias_name);
    }
    return acc;
}

}  // namespace explain_detail

namespace {

std::string trim(std::string_view s) {
    while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
    while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
    return std::string(s);
}

std::string axes_list(const Step& s) {
    std::string out;
    for (const auto& a : s.axes) out += (out.empty() ? "" : ", ") + a;
    return out;
}

std::size_t parse_index(const Step& s, std::size_t k, const std::string& text, std::string_view whole) {
    const std::size_t n = s.shape[k];
    const std::string range = fmt::format("0..{} on axis {} of {}", n - 1, s.axes[k], s.name);
    if (text.empty()) throw InputError(fmt::format("explain: expected an index in \"{}\", found an empty one", whole));
    if (text.find_first_not_of("0123456789") == std::string::npos) {
        const unsigned long long i = std::strtoull(text.c_str(), nullptr, 10);
        if (text.size() > 18 || i >= n)
            throw InputError(fmt::format("explain: index {} is out of range: expected {}", text, range));
        return static_cast<std::size_t>(i);
    }
    std::size_t found = n, count = 0;
    for (std::size_t i = 0; i < n; ++i)
        if (explain_detail::Ctx::label(s, k, i) == text) found = i, ++count;
    if (count == 0)
        throw InputError(fmt::format("explain: expected a label of axis {} ({}) or an index {}, found \"{}\"", s.axes[k],
                                     k < s.labels.size() ? fmt::format("{}", fmt::join(s.labels[k], " ")) : "",
                                     range, text));
    if (count > 1)
        throw InputError(fmt::format("explain: \"{}\" names {} positions of axis {}: expected a number ({})", text,
                                     count, s.axes[k], range));
    return found;
}

}  // namespace

CellRef parse_cell(const Trace& trace, std::string_view text) {
    const auto open = text.find('[');
    if (open == std::string_view::npos || text.empty() || text.back() != ']' || text.find(']') != text.size() - 1)
        throw InputError(fmt::format("explain: expected STEP[i,j] (e.g. hook_pattern[0,1,2]), found \"{}\"", text));
    const std::string name = trim(text.substr(0, open));
    std::vector<const Step*> matches;
    for (const Step& s : trace.steps)
        if (!name.empty() && step_matches(s.name, {name})) matches.push_back(&s);
    if (matches.empty()) {
        bool known = false;
        for (const auto& def : step_catalogue()) known = known || step_matches(def.name, {name});
        throw InputError(known ? fmt::format("explain: expected a step this lesson computes, found \"{}\" (its stage "
                                             "does not run in this lesson)", name)
                               : fmt::format("explain: expected a step name (see docs/steps.md), found \"{}\"", name));
    }
    if (matches.size() > 1) {
        std::string names;
        for (auto* m : matches) names += (names.empty() ? "" : ", ") + m->name;
        throw InputError(fmt::format("explain: \"{}\" names {} steps ({}): expected one", name, matches.size(), names));
    }
    CellRef cell{matches[0], {}};
    const Step& s = *cell.step;
    std::vector<std::string> parts;
    std::string_view inner = text.substr(open + 1, text.size() - open - 2);
    for (std::size_t start = 0;;) {
        const auto comma = inner.find(',', start);
        parts.push_back(trim(inner.substr(start, comma == std::string_view::npos ? inner.npos : comma - start)));
        if (comma == std::string_view::npos) break;
        start = comma + 1;
    }
    if (parts.size() != s.shape.size())
        throw InputError(fmt::format("explain: {} has {} axes [{}]: expected {} indices, found {}", s.name,
                                     s.shape.size(), axes_list(s), s.shape.size(), parts.size()));
    for (std::size_t k = 0; k < parts.size(); ++k) cell.at.push_back(parse_index(s, k, parts[k], text));
    return cell;
}

Explanation explain_cell(const Lesson& lesson, const Trace& trace, const CellRef& cell, const ExplainOptions& opt) {
    const Step& s = *cell.step;
    // A batch: sequences never see each other, so the cell is explained within
    // its sequence, from that sequence's own trace, tokens and padding mask.
    if (lesson.batch && !trace.sequence_tokens.empty() && !s.axes.empty() && s.axes.front() == "batch") {
        const std::size_t b = cell.at.at(0);
        const Trace one = unstack_trace(trace, b);
        const Lesson seq = sequence_lesson(lesson, b);
        const CellRef inner{one.find(s.name), std::vector<std::size_t>(cell.at.begin() + 1, cell.at.end())};
        Explanation e = explain_cell(seq, one, inner, opt);
        e.text = fmt::format("sequence b{} of the batch: {}\n", b, fmt::join(seq.tokens, " ")) + e.text;
        return e;
    }
    ed::Ctx c{lesson, trace, opt, s, cell.at, {}};
    std::string where;
    for (std::size_t k = 0; k < cell.at.size(); ++k)
        where += fmt::format("{}{} {}", k ? ", " : "", s.axes[k], ed::Ctx::label(s, k, cell.at[k]));
    std::string idx;
    for (std::size_t k = 0; k < cell.at.size(); ++k) idx += fmt::format("{}{}", k ? "," : "", ed::Ctx::label(s, k, cell.at[k]));
    c.out = fmt::format("{}[{}] — {}   ({})\n", s.name, idx, s.def ? s.def->title : "", where);
    if (s.def) c.line("{}", s.def->formula);
    Explanation e;
    if (s.source == StepSource::not_computable) {
        c.line("not computable: {}", s.note);
        e.text = c.out;
        return e;
    }
    if (s.value.size() == 0) throw InputError(fmt::format("explain: {} is not kept in this trace", s.name));
    std::size_t off = 0;
    for (std::size_t k = 0; k < cell.at.size(); ++k) off = off * s.shape[k] + cell.at[k];
    e.traced = s.value.data[off];
    if (s.source == StepSource::given) {
        c.line("given by the lesson, not computed here: {}", c.num(e.traced));
        if (!s.note.empty()) c.line("({})", s.note);
        if (s.formula) c.line("(the formula, from the steps before, gives {}; later steps read the given value)",
                              c.num(s.formula->data[off]));
        e.text = c.out;
        return e;
    }
    using Fn = float (*)(ed::Ctx&);
    Fn fn = nullptr;
    if (!s.def) throw InputError("explain: " + s.name + " is not a step of the catalogue");
    switch (s.def->stage) {
        case Stage::embed: fn = ed::explain_embed; break;
        case Stage::qkv: fn = ed::explain_qkv; break;
        case Stage::rope: fn = ed::explain_rope; break;
        case Stage::scores:
        case Stage::scale:
        case Stage::mask: fn = ed::explain_scores; break;
        case Stage::softmax: fn = ed::explain_softmax; break;
        case Stage::mix:
        case Stage::out: fn = ed::explain_mix; break;
        case Stage::add1:
        case Stage::add2: fn = ed::explain_residual; break;
        case Stage::norm1:
        case Stage::norm2: fn = ed::explain_layernorm; break;
        case Stage::ffn: fn = ed::explain_ffn; break;
    }
    float r = fn(c);
    if (s.rounded_to >= 0) {  // --arithmetic document: Run::close rounds the step as the article printed it
        r = round_decimals(r, s.rounded_to);
        c.line("rounded to {} decimals, as the article did: {}", s.rounded_to, c.num(r));
    }
    e.recomputed = r;
    const bool same = c.num(r) == c.num(e.traced);
    c.out += fmt::format("  trace: {}{}\n", c.num(e.traced),
                         same ? "  ✓ (the same)"
                              : fmt::format("  (differs from the recomputation by {:.3g})", double(r) - e.traced));
    e.text = c.out;
    return e;
}

}  // namespace attntrace

#include "render/explain.hpp"

#include "batch/batch.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <string_view>
#include <stdexcept>

#include "core/decimal.hpp"
#include "core/error.hpp"
#include "core/printable.hpp"
#include "pipeline/operation.hpp"
#include "render/matrix.hpp"
#include "render/wrap.hpp"
#include "trace/derived.hpp"
#include "trace/policy.hpp"
#include "trace/step_lookup.hpp"

namespace attntrace {

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

// A token's leading-space mark as a label shows it (␣) or as a tokenizer spells it (GPT-2's Ġ, SentencePiece's
// ▁): the label without it, or nullopt when it has none. BERT's ## is no such mark: "##ing" is its own piece.
std::optional<std::string_view> without_space_mark(std::string_view s) {
    for (std::string_view mark : {"␣", "Ġ", "▁"})
        if (s.size() > mark.size() && s.substr(0, mark.size()) == mark) return s.substr(mark.size());
    return std::nullopt;
}

// Whether a label is the token typed: as it is, or without its leading-space mark ("fell" is "␣fell");
// a typed mark (in any of its spellings) asks for a label with one ("Ġfell", "▁fell" and "␣fell" are "␣fell").
bool names_label(std::string_view label, std::string_view typed) {
    if (label == typed) return true;
    const auto bare = without_space_mark(label);
    if (!bare) return false;
    const auto typed_bare = without_space_mark(typed);
    return *bare == (typed_bare ? *typed_bare : typed);
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
    std::vector<std::size_t> found;
    for (std::size_t i = 0; i < n; ++i)
        if (names_label(Cell::label_text(s, k, i), text)) found.push_back(i);
    if (found.empty())
        throw InputError(fmt::format("explain: expected a label of axis {} ({}) or an index {}, found \"{}\"", s.axes[k],
                                     k < s.labels.size() ? fmt::format("{}", fmt::join(s.labels[k], " ")) : "",
                                     range, printable(text)));
    if (found.size() > 1) {
        constexpr std::size_t kListed = 8;  // a token of a long text may recur hundreds of times: the line stays short
        std::string candidates;
        for (std::size_t c = 0; c < std::min(found.size(), kListed); ++c)
            candidates += fmt::format("{}{} at {}", c ? ", " : "", Cell::label(s, k, found[c]), found[c]);
        if (found.size() > kListed) candidates += fmt::format(" and {} more", found.size() - kListed);
        throw InputError(fmt::format("explain: \"{}\" names {} positions of axis {} ({}): expected one; give its "
                                     "number ({})", printable(text), found.size(), s.axes[k], candidates, range));
    }
    return found.front();
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
        std::vector<std::string> names;
        for (const Step& s : trace.steps) names.push_back(s.name);
        throw InputError(known ? fmt::format("explain: expected a step this lesson computes, found \"{}\" (its stage "
                                             "does not run in this lesson)", name)
                               : fmt::format("explain: expected a step name (see docs/steps.md), found \"{}\"{}", name,
                                             closest_note(closest_steps(name, names))));
    }
    if (matches.size() > 1) {
        std::string names;
        for (auto* m : matches) names += (names.empty() ? "" : ", ") + m->name;
        throw InputError(fmt::format("explain: \"{}\" names {} steps ({}): expected one", name, matches.size(), names));
    }
    CellRef cell{matches[0]->name, {}};
    const Step& s = *matches[0];
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

namespace {
Explanation explained(const Lesson& lesson, const Trace& trace, const CellRef& cell, const ExplainOptions& opt);
}  // namespace

Explanation explain_cell(const Lesson& lesson, const Trace& trace, const CellRef& cell, const ExplainOptions& opt,
                         std::size_t width) {
    // A line too wide continues 4 columns past its own indentation: under the sum it extends, not beside it.
    constexpr std::size_t kContinuationIndent = 4;
    Explanation e = explained(lesson, trace, cell, opt);
    e.text = wrap_lines(e.text, width, kContinuationIndent);
    return e;
}

namespace {

Explanation explained(const Lesson& lesson, const Trace& trace, const CellRef& cell, const ExplainOptions& opt) {
    const Step* found = trace.find(cell.step);
    if (!found) throw std::logic_error("attntrace: explain_cell: the trace has no step " + cell.step);
    const Step& s = *found;
    // A batch: sequences never see each other, so the cell is explained within
    // its sequence, from that sequence's own trace, tokens and padding mask.
    if (const auto seq = sequence_cell(lesson, trace, s, cell.at)) {
        Explanation e = explained(seq->lesson, seq->trace, CellRef{s.name, seq->at}, opt);
        std::string tokens;
        for (const auto& t : seq->lesson.tokens) (tokens += tokens.empty() ? "" : " ") += printable(t);
        e.text = fmt::format("sequence b{} of the batch: {}\n", seq->b, tokens) + e.text;
        return e;
    }
    Cell c{lesson, trace, opt, s, cell.at, {}, {}};
    std::string where;
    for (std::size_t k = 0; k < cell.at.size(); ++k)
        where += fmt::format("{}{} {}", k ? ", " : "", s.axes[k], Cell::label(s, k, cell.at[k]));
    std::string idx;
    for (std::size_t k = 0; k < cell.at.size(); ++k) idx += fmt::format("{}{}", k ? "," : "", Cell::label(s, k, cell.at[k]));
    // What the cell is one word for the wrapping (wrap_lines): on the next line whole when the line is full.
    c.out = fmt::format("{}[{}] — {}   {}\n", s.name, idx, title_of(s), unbroken(fmt::format("({})", where)));
    if (s.def) c.line("{}", formula_of(s));
    Explanation e;
    if (s.source == StepSource::not_computable) {
        c.line("not computable: {}", s.note);
        e.text = c.out;
        return e;
    }
    const StepValues values = values_of(trace, s);  // a derived step's computed now
    if (values->size() == 0) throw InputError(fmt::format("explain: {} is not kept in this trace", s.name));
    std::size_t off = 0;
    for (std::size_t k = 0; k < cell.at.size(); ++k) off = off * s.shape[k] + cell.at[k];
    e.traced = values->data[off];
    if (s.source == StepSource::given) {
        c.line("given by the lesson, not computed here: {}", c.num(e.traced));
        if (!s.note.empty()) c.line("({})", s.note);
        if (s.formula) c.line("(the formula, from the steps before, gives {}; later steps read the given value)",
                              c.num(s.formula->data[off]));
        e.text = c.out;
        return e;
    }
    if (!s.def) throw InputError("explain: " + s.name + " is not a step of the catalogue");
    const float r = recompute(c);
    e.recomputed = r;
    const bool same = c.num(r) == c.num(e.traced);
    c.out += fmt::format("  trace: {}{}\n", c.num(e.traced),
                         same ? "  ✓ (the same)"
                              : fmt::format("  (differs from the recomputation by {:.3g})", double(r) - e.traced));
    e.text = c.out;
    return e;
}

}  // namespace

std::string original_value_line(const Trace& original, const CellRef& cell, float changed, int precision) {
    const Step* s = original.find(cell.step);
    if (!s || s->source == StepSource::not_computable || s->recorded != Record::full)
        return "  without the interventions: not recorded\n";
    const StepValues v = values_of(original, *s);
    std::size_t at = 0;
    for (std::size_t k = 0; k < cell.at.size(); ++k) at = at * s->shape[k] + cell.at[k];
    const float before = v->data[at];
    if (before == changed || (std::isnan(before) && std::isnan(changed))) return "  the same without the interventions\n";
    return fmt::format("  without the interventions: {:.{}f} (changed by {:+.{}f})\n", before, precision,
                       double(changed) - double(before), precision);
}

}  // namespace attntrace

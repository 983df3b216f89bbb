// `attntrace diff`'s report for people (a table and the first divergence) and
// as JSON (format "attntrace-diff", docs/diffing.md).
#include "render/diff_view.hpp"

#include "render/difference_text.hpp"

#include "core/printable.hpp"
#include "render/text_table.hpp"
#include "render/wrap.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

namespace attntrace {

namespace {

// The --json report's shape (docs/diffing.md); bumped as trace-format.md says for traces.
constexpr int kDiffReportVersion = 1;

std::string index_text(const std::vector<std::size_t>& idx) { return fmt::format("[{}]", fmt::join(idx, ",")); }

OrderedJson cell_json(const std::optional<DiffCell>& c) {
    if (!c) return nullptr;
    OrderedJson j;
    j["at"] = c->index;
    j["a"] = difference_json(c->a);
    j["b"] = difference_json(c->b);
    j["abs"] = difference_json(c->abs);
    j["rel"] = difference_json(c->rel);
    return j;
}

std::string shape_text(const StepDiff& s) {
    if (s.shape_a == s.shape_b) return shape_str(s.shape_a);
    return shape_str(s.shape_a) + " vs " + shape_str(s.shape_b);
}

std::string verdict_text(const StepDiff& s) {
    switch (s.verdict) {
        case StepVerdict::match: return "match";
        case StepVerdict::diverges: return fmt::format("DIVERGES ({} of {} cells)", s.beyond, s.cells);
        case StepVerdict::shape_mismatch: return "SHAPE MISMATCH";
        case StepVerdict::not_comparable: return "not compared: " + s.note;
    }
    return "?";
}

// The last line: where B first goes wrong, or that it never does. `shown`: to
// be printed, wrapped: the step's name printable (core/printable.hpp) and each
// value kept on the line of its name ("B 0.33599478").
std::string conclusion(const DiffReport& r, bool shown = false) {
    auto g = [shown](std::string s) { return shown ? unbroken(s) : s; };
    auto name = [shown](const std::string& n) { return shown ? printable(n) : n; };
    if (!r.first_divergence) {
        const std::size_t n = r.compared(), skipped = r.steps.size() - n;
        return fmt::format("{} (|a - b| <= {} + {}·|a| in every cell){}",
                           n == 1 ? "the one compared step matches" : fmt::format("all {} compared steps match", n),
                           r.atol, r.rtol, skipped ? fmt::format("; {} not compared", skipped) : "");
    }
    const StepDiff& s = r.steps[*r.first_divergence];
    if (s.verdict == StepVerdict::shape_mismatch) {
        // (T, C) for (T, NH, hs) is the usual one: the same cells, another layout
        const std::string hint = numel(s.shape_a) == numel(s.shape_b)
                                     ? fmt::format("the same {} cells in another layout: B's must be {}, "
                                                   "see docs/steps.md", numel(s.shape_a), shape_str(s.shape_a))
                                     : "each step's shape is in docs/steps.md";
        return fmt::format("first divergence: {}: A's shape is {}, B's {} ({}); the steps after it inherit the error",
                           name(s.name), shape_str(s.shape_a), shape_str(s.shape_b), hint);
    }
    const DiffCell& c = *s.first_beyond;
    return fmt::format("first divergence: {} at {}: {}, {}, {} ({} of {} cells beyond tolerance); "
                       "the steps after it inherit the error",
                       name(s.name), index_text(c.index), g("A " + value_text(c.a)), g("B " + value_text(c.b)),
                       g(fmt::format("|a - b| {} > {}", error_text(c.abs, 3),
                                     error_text(r.atol + r.rtol * std::fabs(static_cast<double>(c.a)), 3))),
                       s.beyond, s.cells);
}

}  // namespace

void render_diff(std::ostream& out, const DiffReport& r, std::size_t width) {
    // Where and what the largest errors are fold under their step when the table is too wide.
    std::vector<TextColumn> columns{{"step"},    {"shape"},
                                    {"max |a-b|"}, {"at", false, true, "max |a-b| at"},
                                    {"a", false, true, "a"}, {"b", false, true, "b"},
                                    {"max rel"}, {"at", false, true, "max rel at"},
                                    {"verdict"}};
    std::vector<std::vector<std::string>> rows;
    // One format for the table's differences, one for its values.
    ErrorFormat errors;
    ValueFormat values;
    for (const auto& s : r.steps)
        if (s.max_abs) {
            errors.add(s.max_abs->abs);
            errors.add(s.max_rel->rel);
            if (s.max_abs->abs > 0) values.add(s.max_abs->a), values.add(s.max_abs->b);
        }
    for (const auto& s : r.steps) {
        std::vector<std::string> row{s.name, shape_text(s), "", "", "", "", "", "", verdict_text(s)};
        if (s.max_abs) {
            const DiffCell &m = *s.max_abs, &q = *s.max_rel;
            row[2] = errors(m.abs);
            row[6] = errors(q.rel);
            if (m.abs > 0) {  // where all cells are equal, "where" would say nothing
                row[3] = index_text(m.index);
                row[4] = values(m.a);
                row[5] = values(m.b);
            }
            if (q.rel > 0) row[7] = index_text(q.index);
        }
        // Step names and notes come from the traces: printable (core/printable.hpp).
        for (auto& cell : row) cell = printable(cell);
        rows.push_back(std::move(row));
    }
    if (!table_fits(columns, rows, width)) {
        // Folded: "DIVERGES" in the table, how many cells first under it, then where the largest errors are.
        columns.insert(columns.begin() + 3, TextColumn("cells", false, true));
        for (std::size_t k = 0; k < rows.size(); ++k) {
            const StepDiff& s = r.steps[k];
            const bool diverges = s.verdict == StepVerdict::diverges;
            rows[k].insert(rows[k].begin() + 3, diverges ? fmt::format("{} of {} cells beyond tolerance", s.beyond, s.cells) : "");
            if (diverges) rows[k].back() = "DIVERGES";
        }
    }
    out << wrap_hanging(printable(r.file_a), width, "A (reference): ") << wrap_hanging(printable(r.file_b), width, "B:             ");
    out << wrap_text(fmt::format("a cell of B diverges when {}, {}, {}", unbroken("|a - b| > atol + rtol·|a|"),
                                 unbroken(fmt::format("atol = {}", r.atol)), unbroken(fmt::format("rtol = {}", r.rtol))),
                     width, "", "    ");
    out << wrap_text(fmt::format("max |a-b| and max rel {}; a and b {}", errors.caption(), values.caption()), width, "",
                     "    ")
        << "\n";
    out << format_text_table(columns, rows, width);
    if (!r.only_a.empty() || !r.only_b.empty()) out << "\n";
    if (!r.only_a.empty())
        out << wrap_text(printable(fmt::format("only in A ({}): {}", r.only_a.size(), fmt::join(r.only_a, ", "))), width, "",
                         "    ");
    if (!r.only_b.empty())
        out << wrap_text(printable(fmt::format("only in B ({}): {}", r.only_b.size(), fmt::join(r.only_b, ", "))), width, "",
                         "    ");
    out << "\n" << wrap_text(conclusion(r, true), width, "", "    ");
}

OrderedJson diff_json(const DiffReport& r) {
    OrderedJson j;
    j["format"] = "attntrace-diff";
    j["version"] = kDiffReportVersion;
    j["a"] = r.file_a;
    j["b"] = r.file_b;
    j["tolerance"] = {{"atol", r.atol}, {"rtol", r.rtol}, {"rule", "a cell diverges when |a - b| > atol + rtol*|a|"}};
    j["steps"] = OrderedJson::array();
    for (const auto& s : r.steps) {
        OrderedJson step;
        step["name"] = s.name;
        step["verdict"] = verdict_name(s.verdict);
        step["shape_a"] = s.shape_a;
        step["shape_b"] = s.shape_b;
        if (s.verdict == StepVerdict::not_comparable) step["note"] = s.note;
        step["cells"] = s.cells;
        step["cells_beyond"] = s.beyond;
        step["max_abs"] = cell_json(s.max_abs);
        step["max_rel"] = cell_json(s.max_rel);
        step["first_beyond"] = cell_json(s.first_beyond);
        j["steps"].push_back(std::move(step));
    }
    j["only_in_a"] = r.only_a;
    j["only_in_b"] = r.only_b;
    j["first_divergence"] = nullptr;
    if (r.first_divergence) {
        const StepDiff& s = r.steps[*r.first_divergence];
        j["first_divergence"] = {{"step", s.name}, {"verdict", verdict_name(s.verdict)},
                                 {"at", s.first_beyond ? OrderedJson(s.first_beyond->index) : OrderedJson(nullptr)}};
    }
    j["conclusion"] = conclusion(r);
    return j;
}

}  // namespace attntrace

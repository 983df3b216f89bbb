#include "render/cost_check.hpp"

#include <fmt/format.h>

#include <cmath>

#include "core/printable.hpp"
#include "render/text.hpp"
#include "render/wrap.hpp"

namespace attntrace {

namespace {

// "17.18 billion", "64 GiB", "390.87x": the claim's unit, two more decimals
// than it printed so a disagreement shows its size.
std::string amount(double v, const CostClaim& c, int extra) {
    const std::string unit = c.unit.name == "x" ? "x" : c.unit.name.empty() ? "" : " " + c.unit.name;
    return fmt::format("{:.{}f}{}", v, c.decimals + extra, unit);
}

}  // namespace

void render_cost_check(std::ostream& out, const CostLesson& lesson, const CostCheckReport& report, std::size_t width) {
    std::size_t answers = 0;
    for (const auto& r : report.results) answers += r.claim.answer;
    out << fmt::format("{}  ({} claims{}, cost)\n", printable(lesson.id), report.results.size() - answers,
                       answers ? fmt::format(", {} answers", answers) : "");
    for (const auto& r : report.results) {
        const CostClaim& c = r.claim;
        std::string what = fmt::format("{} ({})", cost_quantity_name(c.quantity), unbroken_items(describe_spec(c.spec)));
        if (c.over) what = fmt::format("{} / the same with {}", what, unbroken_items(describe_spec(*c.over)));
        if (c.answer) {
            out << check_row(fmt::format("  = {:<18} {:<20} ", printable(c.id), "answer"),
                             fmt::format("{} = {}", what, unbroken(amount(r.exact, c, 2))), width);
            continue;
        }
        out << check_row(
            fmt::format("  {} {:<18} {:<20} ", verdict_mark(r.verdict), printable(c.id), verdict_name(r.verdict)),
            what + (r.as_expected() ? "" : unexpected_text(c.expect)), width);
        if (r.verdict == Verdict::agrees) continue;
        // Each amount with its unit one word for the wrapping.
        out << wrap_hanging(unbroken(amount(c.value, c, 0)), width, "      printed ");
        if (r.verdict == Verdict::agrees_when_rounded)
            out << wrap_hanging(fmt::format("{}; with the article's rounded intermediate {}", unbroken(amount(r.exact, c, 2)),
                                            unbroken(amount(*r.document, c, 2))),
                                width, "      exact   ");
        else
            out << wrap_hanging(fmt::format("{}  ({}{})", unbroken(amount(r.exact, c, 2)),
                                            unbroken(fmt::format("|Δ| {:.3g}", std::fabs(r.exact - c.value))),
                                            r.document ? fmt::format("; with the rounded intermediate {}",
                                                                     unbroken(amount(*r.document, c, 2)))
                                                       : ""),
                                width, "      right   ");
    }
}

OrderedJson cost_check_json(const CostLesson& lesson, const CostCheckReport& report) {
    OrderedJson claims = OrderedJson::array();
    for (const auto& r : report.results) {
        const CostClaim& c = r.claim;
        OrderedJson j;
        j["id"] = c.id;
        j["quantity"] = cost_quantity_name(c.quantity);
        j["spec"] = describe_spec(c.spec);
        if (c.over) j["over"] = describe_spec(*c.over);
        j["unit"] = c.unit.name;
        j["decimals"] = c.decimals;
        j["computed"] = r.exact;
        if (r.document) j["computed_rounded_first"] = *r.document;
        if (c.answer) {
            j["answer"] = true;
        } else {
            j["printed"] = c.value;
            j["verdict"] = verdict_name(r.verdict);
            j["expect"] = verdict_name(c.expect);
        }
        if (!c.quote.empty()) j["quote"] = c.quote;
        if (!c.note.empty()) j["note"] = c.note;
        claims.push_back(std::move(j));
    }
    OrderedJson entry;
    entry["lesson"] = lesson.id;
    entry["file"] = lesson.file;
    entry["kind"] = "cost";
    entry["as_expected"] = report.all_as_expected();
    entry["claims"] = std::move(claims);
    return entry;
}

}  // namespace attntrace

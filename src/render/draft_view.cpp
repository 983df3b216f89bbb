#include "render/draft_view.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "core/printable.hpp"

namespace attntrace {

void render_draft(std::ostream& out, const Draft& d, const std::string& article, const std::string& written, bool explain,
                  bool check_line) {
    const auto& claims = d.lesson.contains("claims") ? d.lesson["claims"] : OrderedJson::array();
    std::map<std::string, int> verdicts;
    for (const auto& c : claims) ++verdicts[c["expect"].get<std::string>()];
    std::string counts;
    for (const auto& [v, n] : verdicts) counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", n, v);
    out << fmt::format("Drafted {} from {}: {} claim{}{}, {} printed array{} not placed.\n",
                       written == "-" ? "a lesson" : printable(written), printable(article), claims.size(),
                       claims.size() == 1 ? "" : "s", counts.empty() ? "" : " (" + counts + ")", d.unplaced.size(),
                       d.unplaced.size() == 1 ? "" : "s");
    if (explain) {
        out << "\nWhat was read, and why:\n";
        for (const auto& r : d.reasons) out << "  " << printable(r) << "\n";
        out << "\nConventions tried (printed numbers that agree with the run):\n";
        for (const auto& t : d.trials) out << fmt::format("  {:>5} of {:<5} {}\n", t.agree, t.total, t.conventions);
    }
    if (!claims.empty()) out << "\nClaims:\n";
    // columns as wide as their widest entry
    auto where = [](const OrderedJson& c) { return c["step"].get<std::string>() + (c.contains("at") ? " " + c["at"].dump() : ""); };
    std::size_t id_w = 2, step_w = 4;
    for (const auto& c : claims) {
        id_w = std::max(id_w, printable(c["id"].get<std::string>()).size());
        step_w = std::max(step_w, printable(where(c)).size());
    }
    for (const auto& c : claims)
        out << fmt::format("  {:<{}}  {:<{}}  {:<19} {}\n", printable(c["id"].get<std::string>()), id_w, printable(where(c)),
                           step_w, c["expect"].get<std::string>(), printable(c["note"].get<std::string>()));
    if (!d.unplaced.empty()) out << "\nNot placed (the nearest selection, and how far):\n";
    for (const auto& u : d.unplaced) {
        out << fmt::format("  {}: {}\n", u.where, printable(u.quote.substr(0, 100)));
        if (u.nearest.empty()) out << "      no step has its shape\n";
        else out << fmt::format("      nearest {}: {} of {} agree, max |error| {:.4g}\n", printable(u.nearest), u.agree, u.total, u.max_error);
    }
    if (written != "-" && check_line) out << fmt::format("\nCheck it: attntrace check {}\n", printable(written));
}

void render_drafts(std::ostream& out, const std::vector<Draft>& drafts, const std::string& article,
                   const std::vector<std::string>& written, bool explain) {
    if (drafts.size() == 1) return render_draft(out, drafts[0], article, written[0], explain);
    out << fmt::format("{} worked examples in {}, a lesson each.\n", drafts.size(), printable(article));
    std::string all;
    for (std::size_t x = 0; x < drafts.size(); ++x) {
        out << fmt::format("\n== Example {} of {}: from {} ==\n", x + 1, drafts.size(), drafts[x].start);
        render_draft(out, drafts[x], article, written[x], explain, false);
        all += ' ';
        all += printable(written[x]);
    }
    if (written[0] != "-") out << fmt::format("\nCheck them: attntrace check{}\n", all);
}

}  // namespace attntrace

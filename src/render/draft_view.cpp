#include "render/draft_view.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "core/printable.hpp"
#include "render/text_table.hpp"
#include "render/wrap.hpp"

namespace attntrace {

void render_draft(std::ostream& out, const Draft& d, const std::string& article, const std::string& written, bool explain,
                  std::size_t width, bool check_line) {
    const auto& claims = d.lesson.contains("claims") ? d.lesson["claims"] : OrderedJson::array();
    std::map<std::string, int> verdicts;
    for (const auto& c : claims) ++verdicts[c["expect"].get<std::string>()];
    std::string counts;
    for (const auto& [v, n] : verdicts) counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", n, v);
    out << wrap_text(fmt::format("Drafted {} from {}: {} claim{}{}, {} printed array{} not placed.",
                                 written == "-" ? "a lesson" : printable(written), printable(article), claims.size(),
                                 claims.size() == 1 ? "" : "s", counts.empty() ? "" : " (" + counts + ")",
                                 d.unplaced.size(), d.unplaced.size() == 1 ? "" : "s"),
                     width, "", "    ");
    if (explain) {
        out << "\nWhat was read, and why:\n";
        for (const auto& r : d.reasons) out << wrap_text(printable(r), width, "  ", "    ");
        out << "\nConventions tried (printed numbers that agree with the run):\n";
        for (const auto& t : d.trials)
            out << wrap_text(t.conventions, width, fmt::format("  {:>5} of {:<5} ", t.agree, t.total), std::string(17, ' '));
    }
    if (!claims.empty()) out << "\nClaims:\n";
    // id, step and verdict; the selection and the note beside them, or under each claim when the line is too narrow
    const std::vector<TextColumn> columns{{"", false, false}, {"", false, false}, {"", false, true, "at"},
                                          {"", false, false}, {"", false, true}};
    std::vector<std::vector<std::string>> rows;
    for (const auto& c : claims)
        rows.push_back({printable(c["id"].get<std::string>()), printable(c["step"].get<std::string>()),
                        c.contains("at") ? printable(c["at"].dump()) : "", c["expect"].get<std::string>(),
                        printable(c["note"].get<std::string>())});
    out << format_text_table(columns, rows, width, "  ");
    if (!d.unplaced.empty()) out << "\nNot placed (the nearest selection, and how far):\n";
    for (const auto& u : d.unplaced) {
        out << wrap_text(printable(u.quote.substr(0, 100)), width, fmt::format("  {}: ", u.where), "      ");
        if (u.nearest.empty()) out << "      no step has its shape\n";
        else
            out << wrap_text(fmt::format("nearest {}: {} of {} agree, max |error| {:.4g}", printable(u.nearest), u.agree,
                                         u.total, u.max_error),
                             width, "      ", "        ");
    }
    if (written != "-" && check_line) out << "\n" << wrap_command("attntrace check " + printable(written), width, "Check it: ", "    ");
}

void render_drafts(std::ostream& out, const std::vector<Draft>& drafts, const std::string& article,
                   const std::vector<std::string>& written, bool explain, std::size_t width) {
    if (drafts.size() == 1) return render_draft(out, drafts[0], article, written[0], explain, width);
    out << wrap_text(fmt::format("{} worked examples in {}, a lesson each.", drafts.size(), printable(article)), width, "",
                     "    ");
    std::string all;
    for (std::size_t x = 0; x < drafts.size(); ++x) {
        out << "\n"
            << wrap_text(fmt::format("== Example {} of {}: from {} ==", x + 1, drafts.size(), drafts[x].start), width, "",
                         "   ");
        render_draft(out, drafts[x], article, written[x], explain, width, false);
        all += ' ';
        all += printable(written[x]);
    }
    if (written[0] != "-") out << "\n" << wrap_command("attntrace check" + all, width, "Check them: ", "    ");
}

}  // namespace attntrace

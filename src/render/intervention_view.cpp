#include "render/intervention_view.hpp"

#include <fmt/format.h>

#include "core/printable.hpp"
#include "render/model_view.hpp"
#include "render/wrap.hpp"

namespace attntrace {

namespace {

// The next tokens before and after, side by side: rank, token, p.
void render_before_after(std::ostream& out, const Lesson& lesson, const ModelEnd& before, const ModelEnd& after) {
    if (before.top.empty() || after.top.empty()) {
        out << "    not computed: " << (before.top.empty() ? before.missing : after.missing) << "\n";
        return;
    }
    auto cell = [&](const std::vector<NextToken>& top, std::size_t i) {
        if (i >= top.size()) return std::string(30, ' ');
        const std::string label = printable(lesson.vocab_label(top[i].id));
        std::size_t w = 0;
        for (unsigned char c : label) w += (c & 0xC0) != 0x80;
        return fmt::format("{}{} {:>8.4f}", label, std::string(w < 20 ? 20 - w : 0, ' '), top[i].probability);
    };
    out << fmt::format("    {:>4}  {:<20} {:>8}    {:<20} {:>8}\n", "rank", "before", "p", "after", "p");
    for (std::size_t i = 0; i < std::max(before.top.size(), after.top.size()); ++i)
        out << fmt::format("    {:>4}  {}    {}\n", i + 1, cell(before.top, i), cell(after.top, i));
}

}  // namespace

void render_interventions(std::ostream& out, const IntervenedEvaluation& e, std::size_t top_k, std::size_t width) {
    out << "\n" << wrap_text("── interventions: the run above is the changed one; the original beside it", width, "", "   ");
    for (const Intervention& i : e.interventions)
        out << wrap_text(fmt::format("{}: {} cells of {} ({}) set to {}", i.typed, i.count, i.step, i.cells, i.value),
                         width, "    ", "      ");
    const std::vector<ChangedStep> changed = changed_steps(e);
    const std::size_t unseen = e.comparison.count(Change::not_computable);
    out << wrap_text(fmt::format("{} steps changed, {} unchanged{}:", changed.size(), e.comparison.count(Change::unchanged),
                                 unseen ? fmt::format(", {} not compared (kept without their values: --trace)", unseen)
                                        : std::string()),
                     width, "    ", "    ");
    std::size_t name_w = 4;
    for (const ChangedStep& c : changed) name_w = std::max(name_w, c.name.size());
    if (!changed.empty()) out << fmt::format("      {:<{}}  {:>15}  {:>12}\n", "step", name_w, "cells changed", "max |Δ|");
    for (const ChangedStep& c : changed)
        out << fmt::format("      {:<{}}  {:>15}  {:>12.6g}\n", c.name, name_w, fmt::format("{}/{}", c.changed, c.cells),
                           c.max_abs);
    const Lesson& lesson = e.changed->lesson;
    if (!lesson.config.arch.unembed) return;
    const std::string last = printable(lesson.tokens.back());
    out << "\n" << wrap_text(fmt::format("── the next token after '{}', before and after the interventions", last), width, "", "   ");
    render_before_after(out, lesson, model_end(e.original->lesson, e.original->exact, top_k),
                        model_end(lesson, e.changed->exact, top_k));
}

}  // namespace attntrace

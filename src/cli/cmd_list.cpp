// attntrace list: the lessons, with title, source document and section.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <ostream>

#include "cli/commands.hpp"
#include "model/model_lesson.hpp"
#include "cli/terminal.hpp"
#include "render/wrap.hpp"
#include "core/printable.hpp"
#include "cost/cost_lesson.hpp"
#include "lesson/lesson.hpp"

namespace attntrace {

void add_list_command(CLI::App& app, CliContext& cli) {
    auto* cmd = app.add_subcommand("list", "List the lessons: id, title, source document and section, then the folder "
                                           "they are in. Lessons are looked for in $ATTNTRACE_LESSONS when set, else "
                                           "in share/attntrace/lessons beside an installed attntrace (../share from "
                                           "its bin/), else in the source tree's lessons/. A lesson id names a file "
                                           "there, for run, check, export and golden.");
    cmd->footer("Examples:\n  attntrace list\n  ATTNTRACE_LESSONS=$HOME/my-lessons attntrace list");
    cmd->callback([&cli] {
        // Titles and sources wrapped to the width under their own column, the id's beside them.
        const std::size_t width = terminal_style(cli.color, cli.host).width;
        const std::string kIndent(29, ' ');
        const auto files = list_lesson_files();
        for (const auto& file : files) {
            Lesson l = read_any_lesson(file);
            cli.out << wrap_text(printable(l.title), width, fmt::format("{:<28} ", printable(l.id)), kIndent)
                    << wrap_text(fmt::format("{}{}  ({} claims)",
                                             l.source.document.empty() ? "(no source: a private lesson)"
                                                                       : printable(l.source.document),
                                             l.source.section.empty() ? "" : " §" + printable(l.source.section),
                                             l.claims.size()),
                                 width, kIndent, kIndent);
        }
        const auto cost_files = list_cost_lesson_files();
        for (const auto& file : cost_files) {
            CostLesson l = read_cost_lesson(file);
            cli.out << wrap_text(printable(l.title), width, fmt::format("{:<28} ", printable(l.id)), kIndent)
                    << wrap_text(fmt::format("{}{}  ({} claims, cost: attntrace check)", printable(l.source.document),
                                             l.source.section.empty() ? "" : " §" + printable(l.source.section),
                                             l.claims.size()),
                                 width, kIndent, kIndent);
        }
        cli.out << fmt::format("\n{} lesson{} in {}\n", files.size(), files.size() == 1 ? "" : "s", printable(lessons_dir()));
        if (!cost_files.empty())
            cli.out << fmt::format("{} cost lesson{} in {}/cost\n", cost_files.size(), cost_files.size() == 1 ? "" : "s",
                                   printable(lessons_dir()));
        cli.status = 0;
    });
}

}  // namespace attntrace

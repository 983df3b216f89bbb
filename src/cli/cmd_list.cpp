// attntrace list: the lessons, with title, source document and section.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <ostream>

#include "cli/commands.hpp"
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
        const auto files = list_lesson_files();
        for (const auto& file : files) {
            Lesson l = read_lesson(file);
            cli.out << fmt::format("{:<28} {}\n{:<28} {}{}  ({} claims)\n", printable(l.id), printable(l.title), "",
                                   l.source.document.empty() ? "(no source: a private lesson)" : printable(l.source.document),
                                   l.source.section.empty() ? "" : " §" + printable(l.source.section), l.claims.size());
        }
        const auto cost_files = list_cost_lesson_files();
        for (const auto& file : cost_files) {
            CostLesson l = read_cost_lesson(file);
            cli.out << fmt::format("{:<28} {}\n{:<28} {}{}  ({} claims, cost: attntrace check)\n", printable(l.id),
                                   printable(l.title), "", printable(l.source.document),
                                   l.source.section.empty() ? "" : " §" + printable(l.source.section),
                                   l.claims.size());
        }
        cli.out << fmt::format("\n{} lesson{} in {}\n", files.size(), files.size() == 1 ? "" : "s", printable(lessons_dir()));
        if (!cost_files.empty())
            cli.out << fmt::format("{} cost lesson{} in {}/cost\n", cost_files.size(), cost_files.size() == 1 ? "" : "s",
                                   printable(lessons_dir()));
        cli.status = 0;
    });
}

}  // namespace attntrace

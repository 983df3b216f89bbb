// attntrace list: the lessons, with title, source document and section.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <iostream>

#include "cli/commands.hpp"
#include "lesson/lesson.hpp"

namespace attntrace {

void add_list_command(CLI::App& app, int& status) {
    auto* cmd = app.add_subcommand("list", "List the lessons (from $ATTNTRACE_LESSONS or the lessons/ folder): id, "
                                           "title, source document and section.");
    cmd->footer("Example:\n  attntrace list");
    cmd->callback([&status] {
        for (const auto& file : list_lesson_files()) {
            Lesson l = read_lesson(file);
            std::cout << fmt::format("{:<28} {}\n{:<28} {}{}  ({} claims)\n", l.id, l.title, "", l.source.document,
                                     l.source.section.empty() ? "" : " §" + l.source.section, l.claims.size());
        }
        status = 0;
    });
}

}  // namespace attntrace

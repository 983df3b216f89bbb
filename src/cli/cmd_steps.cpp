// attntrace steps LESSON: what `run --steps` and `explain` can name in a lesson.
#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/terminal.hpp"
#include "model/model_lesson.hpp"
#include "render/step_list.hpp"

namespace attntrace {

void add_steps_command(CLI::App& app, CliContext& cli) {
    auto lesson = std::make_shared<std::string>();
    auto* cmd = app.add_subcommand("steps", "List the steps a lesson records, numbered as `run` shows them, with "
                                            "their stage, shape and axes (nothing is computed).");
    cmd->add_option("lesson", *lesson, "Lesson id (see `attntrace list`) or path to a lesson JSON file")->required();
    cmd->footer("Example:\n  attntrace steps 003-3.1-ring-fell\n  attntrace run 003-3.1-ring-fell --steps 14");
    cmd->callback([lesson, &cli] {
        render_step_list(cli.out, read_any_lesson(*lesson), terminal_style(cli.color, cli.host).width);
        cli.status = 0;
    });
}

}  // namespace attntrace

// attntrace steps LESSON (or --model DIR): what `run --steps` and `explain` can name in a lesson.
#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/terminal.hpp"
#include "model/hf_model.hpp"
#include "model/model_lesson.hpp"
#include "render/step_list.hpp"

namespace attntrace {

void add_steps_command(CLI::App& app, CliContext& cli) {
    struct Opts {
        std::string lesson;
        ModelOptions model;
    };
    auto opts = std::make_shared<Opts>();
    auto* cmd = app.add_subcommand("steps", "List the steps a lesson (or a checkpoint) records, numbered as `run` "
                                            "shows them, with their stage, shape and axes (nothing is computed).");
    cmd->add_option("lesson", opts->lesson, "Lesson id (see `attntrace list`) or path to a lesson JSON file (or --model DIR)");
    add_model_options(*cmd, opts->model, false);
    cmd->footer("Example:\n  attntrace steps 003-3.1-ring-fell\n  attntrace run 003-3.1-ring-fell --steps 14\n"
                "  attntrace steps --model tests/models/tiny-gpt2   (T: the text's tokens; --text gives its shapes)");
    cmd->callback([opts, &cli] {
        const std::size_t width = terminal_style(cli.color, cli.host).width;
        const ModelOptions& m = opts->model;
        // A checkpoint without a text: its steps for any text, the token axes shown as T. Its config.json and
        // its tensors' headers are read, one token standing for the text; the blocks' weights are not
        // converted (they are when a run reaches them) and nothing runs.
        if (runs_model(opts->lesson, m, "steps") && !m.text && m.ids.empty()) {
            ModelInput one;
            one.ids = {0};
            render_step_list(cli.out, load_hf_model(m.dir, one).lesson, width, true);
        } else {
            render_step_list(cli.out, lesson_or_model(opts->lesson, m, "steps"), width);
        }
        cli.status = 0;
    });
}

}  // namespace attntrace

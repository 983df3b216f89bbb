// attntrace run LESSON: every step, token-labelled, with the article's claims beside.
#include <CLI/CLI.hpp>
#include <iostream>

#include "check/evaluate.hpp"
#include "cli/commands.hpp"
#include "render/text.hpp"
#include "trace/trace_json.hpp"

namespace attntrace {

int run_lesson_command(const std::string& lesson, const std::vector<std::string>& steps, int precision, bool json,
                       bool full) {
    auto e = evaluate(read_lesson(resolve_lesson(lesson)));
    if (json) {
        OrderedJson j = trace_to_json(e->lesson, e->exact, &e->report);
        if (!steps.empty()) {
            OrderedJson kept = OrderedJson::array();
            for (auto& s : j["steps"])
                if (step_selected(s["name"].get<std::string>(), steps)) kept.push_back(s);
            j["steps"] = kept;
        }
        std::cout << dump_readable(j);
        return 0;
    }
    RunView view;
    view.precision = precision;
    view.steps = steps;
    view.full = full;
    render_run(std::cout, e->lesson, e->exact, e->report, view);
    return 0;
}

void add_run_command(CLI::App& app, int& status) {
    struct Opts {
        std::string lesson;
        std::vector<std::string> steps;
        int precision = 4;
        bool json = false;
        bool full = false;
    };
    auto opts = std::make_shared<Opts>();
    auto* cmd = app.add_subcommand("run", "Run a lesson and print every step: title, formula, shape, the token-labelled "
                                          "matrix, what it means, and the article's printed values beside ours.");
    cmd->add_option("lesson", opts->lesson, "Lesson id (see `attntrace list`) or path to a lesson JSON file")->required();
    cmd->add_option("--steps", opts->steps,
                    "Only these steps: names or globs, e.g. 'blocks.0.attn.*' or hook_pattern (repeatable)");
    cmd->add_option("--precision", opts->precision, "Decimals shown in the tables")->check(CLI::Range(0, 9));
    cmd->add_flag("--json", opts->json, "Print the trace as JSON instead of text");
    cmd->add_flag("--full", opts->full, "Show big matrices whole instead of eliding the middle");
    cmd->footer("Example:\n  attntrace run 003-3.1-ring-fell --steps hook_pattern --precision 3");
    cmd->callback([opts, &status] {
        status = run_lesson_command(opts->lesson, opts->steps, opts->precision, opts->json, opts->full);
    });
}

}  // namespace attntrace

// attntrace report LESSON -o report.html: the lesson as one self-contained web page.
#include <CLI/CLI.hpp>
#include <ostream>

#include "check/output_size.hpp"
#include "evaluate/evaluate.hpp"
#include "cli/commands.hpp"
#include "cli/progress.hpp"
#include "core/error.hpp"
#include "core/memory.hpp"
#include "io/files.hpp"
#include "render/report.hpp"

namespace attntrace {

void add_report_command(CLI::App& app, CliContext& cli) {
    struct Opts {
        std::string lesson;
        ModelOptions model;
        std::string out;
        std::string arithmetic = "exact";
        std::string max_output = kDefaultMaxOutput;
    };
    auto opts = std::make_shared<Opts>();
    auto* cmd = app.add_subcommand(
        "report", "Write the lesson as one self-contained HTML page: every step with its formula and matrix, "
                  "per-head attention heatmaps (exact value on hover), the attention drawn as lines between "
                  "tokens, and the claims with their verdicts. It needs no network; open it in any browser.");
    cmd->add_option("lesson", opts->lesson, "Lesson id or file (or --model DIR)");
    add_model_options(*cmd, opts->model, false);
    cmd->add_option("-o,--output", opts->out, "Output HTML file ('-' for standard output)")->required();
    cmd->add_option("--arithmetic", opts->arithmetic, "exact (default) or document (see `attntrace run --help`)")
        ->check(CLI::IsMember({"exact", "document"}));
    cmd->add_option("--max-output", opts->max_output,
                    "Refuse, before the run, a page whose estimated size is above this; and stop writing past it")
        ->capture_default_str();
    cmd->footer("The page holds every value of the trace (as `attntrace export` writes it): meant for the "
                "lessons and models of up to a few hundred tokens.\n\n"
                "Examples:\n  attntrace report 003-3.3-multi-head -o report.html\n"
                "  attntrace report lessons/004-causal-mask-example.json -o causal.html\n"
                "  attntrace report 003-3.1-ring-fell --arithmetic document -o - > rounded.html");
    cmd->callback([opts, &cli] {
        if (opts->out.empty()) fail_file("-o", "a file path or '-'", "an empty string");
        // The lesson is read and run before the output is opened: bad input leaves no file.
        const std::size_t max_output = parse_size(opts->max_output, "--max-output");
        Lesson lesson = lesson_or_model(opts->lesson, opts->model, "report");
        // The page embeds the whole trace: its size, estimated from the plan, refused before the run.
        require_run_fits(lesson);
        const std::string shown = opts->out == "-" ? "standard output" : opts->out;
        require_output_size(lesson, TracePolicy{}, opts->arithmetic == "document" ? Arithmetic::document : Arithmetic::exact,
                            OutputKind::json, max_output, shown, false);
        ProgressLine progress(cli, long_run(lesson));
        auto e = evaluate(std::move(lesson), TracePolicy{}, progress.callback());
        progress.clear();
        const Trace& trace = chosen_trace(*e, opts->arithmetic);
        if (opts->out == "-") {
            StreamSink out(cli.out);
            BoundedSink bounded(out, max_output, shown);
            write_report_html(bounded, e->lesson, trace, e->report);
        } else {
            AtomicFile out(opts->out);  // the previous report stays until the new one is whole
            BoundedSink bounded(out, max_output, shown);
            write_report_html(bounded, e->lesson, trace, e->report);
            out.commit();
        }
        cli.status = 0;
    });
}

}  // namespace attntrace

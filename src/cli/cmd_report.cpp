// attntrace report LESSON -o report.html: the lesson as one self-contained web page.
#include <CLI/CLI.hpp>
#include <ostream>

#include "evaluate/evaluate.hpp"
#include "cli/commands.hpp"
#include "cli/progress.hpp"
#include "core/error.hpp"
#include "io/files.hpp"
#include "render/report.hpp"

namespace attntrace {

void add_report_command(CLI::App& app, CliContext& cli) {
    struct Opts {
        std::string lesson;
        std::string out;
        std::string arithmetic = "exact";
    };
    auto opts = std::make_shared<Opts>();
    auto* cmd = app.add_subcommand(
        "report", "Write the lesson as one self-contained HTML page: every step with its formula and matrix, "
                  "per-head attention heatmaps (exact value on hover), the attention drawn as lines between "
                  "tokens, and the claims with their verdicts. It needs no network; open it in any browser.");
    cmd->add_option("lesson", opts->lesson, "Lesson id or file")->required();
    cmd->add_option("-o,--output", opts->out, "Output HTML file ('-' for standard output)")->required();
    cmd->add_option("--arithmetic", opts->arithmetic, "exact (default) or document (see `attntrace run --help`)")
        ->check(CLI::IsMember({"exact", "document"}));
    cmd->footer("The page holds every value of the trace (as `attntrace export` writes it): meant for the "
                "lessons and models of up to a few hundred tokens.\n\n"
                "Examples:\n  attntrace report 003-3.3-multi-head -o report.html\n"
                "  attntrace report lessons/004-causal-mask-example.json -o causal.html\n"
                "  attntrace report 003-3.1-ring-fell --arithmetic document -o - > rounded.html");
    cmd->callback([opts, &cli] {
        if (opts->out.empty()) fail_file("-o", "a file path or '-'", "an empty string");
        // The lesson is read and run before the output is opened: bad input leaves no file.
        Lesson lesson = read_lesson(resolve_lesson(opts->lesson));
        ProgressLine progress(cli, long_run(lesson));
        auto e = evaluate(std::move(lesson), TracePolicy{}, progress.callback());
        progress.clear();
        const Trace& trace = chosen_trace(*e, opts->arithmetic);
        if (opts->out == "-") {
            StreamSink out(cli.out);
            write_report_html(out, e->lesson, trace, e->report);
        } else {
            AtomicFile out(opts->out);  // the previous report stays until the new one is whole
            write_report_html(out, e->lesson, trace, e->report);
            out.commit();
        }
        cli.status = 0;
    });
}

}  // namespace attntrace

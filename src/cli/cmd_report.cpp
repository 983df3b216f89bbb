// attntrace report LESSON|TRACE -o report.html: a lesson (or a trace) as one self-contained web page.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>

#include "check/output_size.hpp"
#include "evaluate/evaluate.hpp"
#include "evaluate/intervened.hpp"
#include "cli/commands.hpp"
#include "cli/progress.hpp"
#include "core/error.hpp"
#include "core/json_field.hpp"
#include "core/memory.hpp"
#include "export/npy_export.hpp"
#include "io/files.hpp"
#include "render/report.hpp"
#include "render/report_page.hpp"
#include "trace/diff.hpp"
#include "trace/trace_json.hpp"

namespace attntrace {

namespace {

// A trace to draw, when the argument is one: an .npy folder, or a JSON file of
// format "attntrace-trace" (its document kept: an export has what the page shows).
struct TraceInput {
    TraceData data;
    std::optional<nlohmann::json> doc;
};
std::optional<TraceInput> read_if_trace(const std::string& arg) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (fs::is_directory(arg, ec)) return TraceInput{read_npy_export(arg), std::nullopt};
    if (!fs::is_regular_file(arg, ec)) return std::nullopt;  // a lesson id, or a missing file the lesson reader names
    nlohmann::json doc = load_json_file(arg, {{"steps", kMaxTraceSteps}, {"claims", kMaxTraceClaims}});
    const auto format = doc.is_object() ? doc.find("format") : doc.end();
    if (!doc.is_object() || format == doc.end() || *format != "attntrace-trace") return std::nullopt;
    TraceData data = parse_trace(doc, arg, TraceRequire::minimal);
    return TraceInput{std::move(data), std::move(doc)};
}

// The page to -o: standard output, or a file replaced only once it is whole.
template <class Write>
void write_page_to(const std::string& path, std::size_t max_output, const std::string& shown, CliContext& cli,
                   Write&& write) {
    if (path == "-") {
        StreamSink out(cli.out);
        BoundedSink bounded(out, max_output, shown);
        write(bounded);
    } else {
        AtomicFile out(path);  // the previous report stays until the new one is whole
        BoundedSink bounded(out, max_output, shown);
        write(bounded);
        out.commit();
    }
}

}  // namespace

void add_report_command(CLI::App& app, CliContext& cli) {
    struct Opts {
        std::vector<std::string> inputs;  // a lesson or a trace; or two traces, compared
        ModelOptions model;
        std::string out;
        std::string arithmetic = "exact";
        std::string max_output = kDefaultMaxOutput;
        InterventionOptions interventions;
    };
    auto opts = std::make_shared<Opts>();
    auto* cmd = app.add_subcommand(
        "report", "Write the lesson as one self-contained HTML page: every step with its formula and matrix, "
                  "per-head attention heatmaps (exact value on hover), the attention drawn as lines between "
                  "tokens, and the claims with their verdicts. It needs no network; open it in any browser.");
    cmd->add_option("lesson", opts->inputs,
                    "Lesson id or file (or --model DIR); or a trace: an export, a minimal trace of another "
                    "implementation, or an .npy folder (export --npy); or two traces A B, drawn as |A - B| step by step")
        ->expected(0, 2);
    add_model_options(*cmd, opts->model, false);
    add_blocks_option(*cmd, opts->model);
    add_intervention_options(*cmd, opts->interventions);
    cmd->add_option("-o,--output", opts->out, "Output HTML file ('-' for standard output)")->required();
    cmd->add_option("--arithmetic", opts->arithmetic, "exact (default) or document (see `attntrace run --help`)")
        ->check(CLI::IsMember({"exact", "document"}));
    cmd->add_option("--max-output", opts->max_output,
                    "Refuse, before the run, a page whose estimated size is above this; and stop writing past it")
        ->capture_default_str();
    cmd->footer("The page holds every value of the trace (as `attntrace export` writes it) up to 1M values; past "
                "that it keeps the attention maps max-pooled to 256 cells per token axis and the other large steps "
                "as summaries, and says so at its top.\n\n"
                "Examples:\n  attntrace report 003-3.3-multi-head -o report.html\n"
                "  attntrace report lessons/004-causal-mask-example.json -o causal.html\n"
                "  attntrace report 003-3.1-ring-fell --arithmetic document -o - > rounded.html\n"
                "  attntrace export 003-3.3-multi-head -o trace.json && attntrace report trace.json -o trace.html\n"
                "  attntrace report my-kernel-trace/ -o mine.html   (an .npy folder: index.json and .npy files)\n"
                "  attntrace report ours.json mine.json -o diff.html   (|A - B| per step, where B first diverges)");
    cmd->callback([opts, &cli] {
        if (opts->out.empty()) fail_file("-o", "a file path or '-'", "an empty string");
        // The lesson is read and run before the output is opened: bad input leaves no file.
        const std::size_t max_output = parse_size(opts->max_output, "--max-output");
        const std::string shown = opts->out == "-" ? "standard output" : opts->out;
        if (!opts->inputs.empty() && opts->model.given())
            fail_file("report", "a lesson, a trace or --model DIR", "both " + opts->inputs.front() + " and --model");
        // Two traces: where B diverges from A, step by step (diff's reader and tolerances).
        if (opts->inputs.size() == 2) {
            const TraceData a = read_trace_or_npy(opts->inputs[0]), b = read_trace_or_npy(opts->inputs[1]);
            DiffReport r = diff_traces(a, b, DiffOptions{});
            r.file_a = opts->inputs[0];
            r.file_b = opts->inputs[1];
            write_page_to(opts->out, max_output, shown, cli,
                          [&](TextSink& out) { write_diff_report_html(out, a, b, r); });
            cli.status = 0;
            return;
        }
        const std::string input = opts->inputs.empty() ? std::string() : opts->inputs.front();
        // A trace (an export, another implementation's minimal trace, an .npy folder): drawn as it is.
        if (auto trace = input.empty() ? std::nullopt : read_if_trace(input)) {
            write_page_to(opts->out, max_output, shown, cli, [&](TextSink& out) {
                write_trace_report_html(out, trace->data, trace->doc ? &*trace->doc : nullptr);
            });
            cli.status = 0;
            return;
        }
        Lesson lesson = lesson_or_model(input, opts->model, "report");
        TracePolicy policy;  // every step, in full; with --blocks, those blocks' only
        fit_policy(policy, opts->model, lesson);
        // The page's size (the whole trace, or what a page of a large one keeps), estimated from the plan,
        // refused before the run.
        require_run_fits(lesson, policy);
        const Arithmetic mode = opts->arithmetic == "document" ? Arithmetic::document : Arithmetic::exact;
        if (const std::size_t bytes = estimate_page_bytes(lesson, mode); bytes > max_output)
            fail_file(shown, fmt::format("an output of at most {} (--max-output)", human_bytes(max_output)),
                      fmt::format("about {} for {} tokens; write fewer tokens, or raise --max-output",
                                  human_bytes(bytes), lesson.tokens.size()));
        ProgressLine progress(cli, long_run(lesson));
        const CommandEvaluation run = evaluate_command(std::move(lesson), policy, intervention_args(opts->interventions),
                                                       progress.callback());
        progress.clear();
        // With interventions: the changed run's page, with a section saying what changed.
        const Evaluation* e = &run.shown();
        const IntervenedEvaluation* intervened = run.intervened.get();
        OrderedJson extra = OrderedJson::object();
        if (intervened) extra["interventions"] = interventions_json(*intervened, kNextTokensShown);
        const Trace& trace = chosen_trace(*e, opts->arithmetic);
        write_page_to(opts->out, max_output, shown, cli,
                      [&](TextSink& out) { write_report_html(out, e->lesson, trace, e->report, extra); });
        cli.status = 0;
    });
}

}  // namespace attntrace

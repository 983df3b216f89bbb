// attntrace export LESSON -o trace.json: the whole trace, for notebooks and diffs.
// --npy DIR (instead of -o, or as well): each step as DIR/<step name>.npy and
// DIR/index.json, for numpy and PyTorch (export/npy_export.hpp).
#include <CLI/CLI.hpp>
#include <ostream>

#include "check/output_size.hpp"
#include "evaluate/evaluate.hpp"
#include "evaluate/intervened.hpp"
#include "cli/commands.hpp"
#include "cli/progress.hpp"
#include "core/error.hpp"
#include "core/memory.hpp"
#include "io/files.hpp"
#include "io/outputs.hpp"
#include "export/npy_export.hpp"
#include "export/trace_export.hpp"

namespace attntrace {

void add_max_output_option(CLI::App& cmd, std::string& max_output, const std::string& what) {
    cmd.add_option("--max-output", max_output,
                   "Refuse, before the run, " + what +
                       " whose estimated size is above this, naming a lighter --trace that fits; and stop writing "
                       "past it")
        ->capture_default_str();
}

std::size_t require_output_fits(const std::string& max_output, const Lesson& lesson, const TracePolicy& policy,
                                const std::string& arithmetic, const std::string& target) {
    const std::size_t bytes = parse_size(max_output, "--max-output");
    // The outputs' sizes, estimated from the plan: refused before the run (after its memory, as evaluate would).
    require_run_fits(lesson, policy);
    const Arithmetic mode = arithmetic == "document" ? Arithmetic::document : Arithmetic::exact;
    require_output_size(lesson, policy, mode, OutputKind::json, bytes, target, true);
    return bytes;
}

void add_export_command(CLI::App& app, CliContext& cli) {
    struct Opts {
        std::string lesson;
        ModelOptions model;
        std::string out;
        std::string npy;
        std::string arithmetic = "exact";
        std::string trace = "full";
        std::string max_output = kDefaultMaxOutput;
        InterventionOptions interventions;
    };
    auto opts = std::make_shared<Opts>();
    auto* cmd = app.add_subcommand("export", "Write the lesson's trace (every step, every value, the claims and "
                                             "their verdicts) as JSON; see docs/trace-format.md.");
    cmd->add_option("lesson", opts->lesson, "Lesson id or file (or --model DIR)");
    add_model_options(*cmd, opts->model, false);
    add_blocks_option(*cmd, opts->model);
    add_intervention_options(*cmd, opts->interventions);
    cmd->add_option("-o,--output", opts->out, "Output file ('-' for standard output)");
    cmd->add_option("--npy", opts->npy,
                    "Also (or instead) write each step with values as DIR/<step name>.npy (float32) and DIR/index.json "
                    "describing them; DIR is replaced only when it is new, empty or a previous --npy export");
    cmd->add_option("--arithmetic", opts->arithmetic, "exact (default) or document (see `attntrace run --help`)")
        ->check(CLI::IsMember({"exact", "document"}));
    cmd->add_option("--trace", opts->trace, kTraceHelp);
    add_max_output_option(*cmd, opts->max_output, "an output (each of -o and --npy)");
    cmd->footer("Examples:\n  attntrace export 003-3.1-ring-fell -o trace.json\n"
                "  attntrace export 003-3.1-ring-fell --trace 'hook_pattern,hook_z' -o attention.json\n"
                "  attntrace export 003-3.1-ring-fell --arithmetic document -o - | head\n"
                "  attntrace export 003-3.1-ring-fell --npy ring-fell-npy\n"
                "  attntrace export 003-3.1-ring-fell --set 'hook_pattern[h0, ring, :]=0.25' -o changed.json");
    cmd->callback([opts, cmd, &cli] {
        if (opts->lesson.empty() && !opts->model.given()) fail_file("export", "a lesson or --model DIR", "neither");
        if (cmd->count("--output") == 0 && cmd->count("--npy") == 0)
            fail_file("export", "--output FILE or --npy DIR (or both)", "neither");
        if (cmd->count("--output") && opts->out.empty())
            fail_file("-o", "a file path or '-'", "an empty string");
        if (cmd->count("--npy") && opts->npy.empty())
            fail_file("--npy", "a folder path", "an empty string");
        TracePolicy policy = parse_trace_policy(opts->trace, "--trace");
        const std::size_t max_output = parse_size(opts->max_output, "--max-output");
        Lesson lesson = lesson_or_model(opts->lesson, opts->model, "export");
        fit_policy(policy, opts->model, lesson);
        if (!opts->npy.empty()) check_npy_export_target(opts->npy);  // refused before anything is written
        const std::string shown = opts->out == "-" ? "standard output" : opts->out;
        if (!opts->out.empty()) require_output_fits(opts->max_output, lesson, policy, opts->arithmetic, shown);
        require_run_fits(lesson, policy);
        const Arithmetic mode = opts->arithmetic == "document" ? Arithmetic::document : Arithmetic::exact;
        if (!opts->npy.empty()) require_output_size(lesson, policy, mode, OutputKind::npy, max_output, opts->npy, true);
        ProgressLine progress(cli, long_run(lesson));
        const CommandEvaluation run = evaluate_command(std::move(lesson), policy, intervention_args(opts->interventions),
                                                       progress.callback());
        progress.clear();
        // With interventions: the changed run, and an "interventions" field saying what changed.
        const Evaluation* e = &run.shown();
        const IntervenedEvaluation* intervened = run.intervened.get();
        const Trace& trace = chosen_trace(*e, opts->arithmetic);
        auto write_json = [&](TextSink& sink) {
            DeferredTensors deferred;
            OrderedJson j = trace_to_json(e->lesson, trace, &e->report, &deferred);
            if (intervened) j["interventions"] = interventions_json(*intervened, kNextTokensShown);
            write_readable(j, sink, deferred);
        };
        // Both outputs prepared before either replaces anything (io/outputs.hpp): a
        // failure in one (a full disk under DIR) leaves the other as it was. The
        // folder first: an output written in place (-o -, a device) goes last.
        Outputs outputs;
        if (!opts->npy.empty()) prepare_npy_export(outputs, opts->npy, e->lesson, trace);
        if (opts->out == "-") {
            StreamSink out(cli.out);
            BoundedSink bounded(out, max_output, shown);
            write_json(bounded);
        } else if (!opts->out.empty()) {
            BoundedSink bounded(outputs.file(opts->out), max_output, shown);
            write_json(bounded);
        }
        outputs.commit();
        cli.status = 0;
    });
}

}  // namespace attntrace

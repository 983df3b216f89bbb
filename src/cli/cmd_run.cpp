// attntrace run LESSON: every step, token-labelled, with the article's claims beside.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <charconv>
#include <ostream>

#include "evaluate/evaluate.hpp"
#include "evaluate/intervened.hpp"
#include "model/model_lesson.hpp"
#include "cli/commands.hpp"
#include "cli/count_flags.hpp"
#include "cli/progress.hpp"
#include "cli/terminal.hpp"
#include "check/output_size.hpp"
#include "core/error.hpp"
#include "core/memory.hpp"
#include "io/text_sink.hpp"
#include "export/trace_export.hpp"
#include "model/hf_model.hpp"
#include "render/intervention_view.hpp"
#include "render/model_view.hpp"
#include "render/text.hpp"
#include "trace/step_lookup.hpp"

namespace attntrace {

const Trace& chosen_trace(const Evaluation& e, const std::string& arithmetic) {
    if (arithmetic == "exact") return e.exact;
    if (!e.document)
        fail_file(e.lesson.file, "--arithmetic document: expected a lesson that names steps in document_rounding, "
                                 "found none");
    return *e.document;
}

void add_model_options(CLI::App& cmd, ModelOptions& m, bool head) {
    cmd.add_option("--model", m.dir,
                   "A Hugging Face checkpoint folder (config.json, model.safetensors or its sharded index, the "
                   "tokenizer's files) to run instead of a lesson: GPT-2, BERT or Llama family (docs/models.md)");
    cmd.add_option("--text", m.text, "With --model: the text to run, tokenized by the folder's tokenizer");
    cmd.add_option("--ids", m.ids, "With --model: token ids to run, separated by commas (1,2,3), instead of --text");
    if (head)
        cmd.add_option("--top-k", m.top_k, "With --model: how many next tokens to show")
            ->capture_default_str()
            ->check(non_negative())
            ->check(CLI::Range(1, 1000));
}

void add_blocks_option(CLI::App& cmd, ModelOptions& m) {
    cmd.add_option("--blocks", m.blocks,
                   "Trace only these blocks of a stack (0,5-7): their steps kept as --trace says, the other blocks run "
                   "untraced (the run's output is kept all the same)");
}

void fit_policy(TracePolicy& policy, const ModelOptions& m, const Lesson& lesson) {
    if (m.blocks) policy.blocks = parse_block_list(*m.blocks, lesson.config.arch.blocks, "--blocks");
    require_policy_steps(policy, lesson.recorded_step_names(), "--trace");
}

void add_intervention_options(CLI::App& cmd, InterventionOptions& o) {
    cmd.add_option("--set", o.set,
                   "Overwrite cells of a step and recompute everything after it (repeatable): "
                   "'STEP[SELECTION]=VALUE', SELECTION one index per axis (a number, a label such as a token or h1, "
                   "':' for all, A:B for a range), VALUE a number, -inf, or from:TRACE.json (the same cells of an "
                   "exported trace); the original run is compared beside it (docs/interventions.md)")
        ->expected(1)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    cmd.add_option("--ablate", o.ablate,
                   "Ablate a head's mixed values (blocks.B.attn.hH) or a block's MLP output (blocks.B.mlp), "
                   "replaced by 0 (:zero, the default) or by their mean over the positions (:mean); repeatable")
        ->expected(1)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

std::vector<InterventionArg> intervention_args(const InterventionOptions& o) {
    std::vector<InterventionArg> args;
    for (const std::string& s : o.set) args.push_back({InterventionArg::Kind::set, s});
    for (const std::string& a : o.ablate) args.push_back({InterventionArg::Kind::ablate, a});
    return args;
}

bool runs_model(const std::string& lesson, const ModelOptions& m, const std::string& command) {
    const bool model = m.given() || m.text || !m.ids.empty();
    if (model == !lesson.empty()) {
        if (lesson.empty()) fail_file(command, "a lesson or --model DIR", "neither");
        // `--model DIR "the ring fell"`: the text where a lesson goes, --text forgotten.
        if (m.given() && !m.text && m.ids.empty())
            fail_file(command, "a lesson or --model DIR",
                      fmt::format("both, \"{}\" and --model DIR (to run a text on the model, pass it with --text)", lesson));
        fail_file(command, "a lesson or --model DIR", "both");
    }
    return model;
}

Lesson lesson_or_model(const std::string& lesson, const ModelOptions& m, const std::string& command) {
    return runs_model(lesson, m, command) ? std::move(load_model_option(m).lesson) : read_any_lesson(lesson);
}

HfModel load_model_option(const ModelOptions& m) {
    if (!m.given()) {
        if (m.text) fail_file("--text", "--model DIR beside it (the checkpoint whose tokenizer reads it)", "no --model");
        if (!m.ids.empty()) fail_file("--ids", "--model DIR beside it", "no --model");
    }
    if (m.text && !m.ids.empty()) fail_file("--ids", "either --text or --ids", "both");
    if (!m.text && m.ids.empty()) fail_file("--model", "--text \"...\" or --ids 1,2,3 beside it", "neither");
    ModelInput in;
    in.text = m.text;
    std::size_t at = 0;
    while (!m.ids.empty() && at <= m.ids.size()) {
        std::size_t end = m.ids.find(',', at);
        if (end == std::string::npos) end = m.ids.size();
        const std::string item = m.ids.substr(at, end - at);
        std::int64_t v = 0;
        const char* first = item.data();
        const auto r = std::from_chars(first, first + item.size(), v);
        if (item.empty() || r.ec != std::errc() || r.ptr != first + item.size())
            fail_field("--ids", fmt::format("[{}]", in.ids.size()), "a token id (an integer)", "\"" + item + "\"");
        in.ids.push_back(v);
        at = end + 1;
    }
    return load_hf_model(m.dir, in);
}

int run_lesson_command(CliContext& cli, const RunOptions& o) {
    TracePolicy policy = parse_trace_policy(o.trace, "--trace");
    std::optional<HfModel> model;
    if (runs_model(o.lesson, o.model, "run")) model = load_model_option(o.model);
    Lesson lesson = model ? std::move(model->lesson) : read_any_lesson(o.lesson);
    fit_policy(policy, o.model, lesson);
    // --json and --full write every value: held to --max-output as export is, refused before the run. With
    // --steps only the steps picked are written: their size is known after the run (below).
    const bool every_value = o.json || o.full;
    const std::string shown = "standard output";
    const std::size_t max_output = parse_size(o.max_output, "--max-output");
    if (every_value && o.steps.empty()) require_output_fits(o.max_output, lesson, policy, o.arithmetic, shown);
    ProgressLine progress(cli, long_run(lesson));
    const CommandEvaluation run = evaluate_command(std::move(lesson), policy, intervention_args(o.interventions),
                                                   progress.callback());
    progress.clear();
    // With interventions, the changed run is shown, and after it what changed.
    const Evaluation* e = &run.shown();
    const IntervenedEvaluation* intervened = run.intervened.get();
    const Trace& trace = chosen_trace(*e, o.arithmetic);
    // A pattern that picks no step is a mistake, not an empty selection.
    const StepSelection picked = select_steps(trace, o.steps);
    if (!picked.unknown.empty())
        fail_field(e->lesson.file, "--steps",
                   "a step's number, a name, a glob, a stage, a last part of a name or a word of a step's title, "
                   "matching a step of this lesson (`attntrace steps LESSON` lists them)" +
                       (policy.kind == TracePolicy::Kind::full ? std::string() : " that --trace " + policy.describe() + " keeps"),
                   selection_found(picked));
    if (every_value && !o.steps.empty()) {
        std::size_t floats = 0, steps = 0;
        for (const Step& s : trace.steps)
            if (step_matches(s.name, picked.names) && s.recorded == Record::full) floats += s.shape.empty() ? 1 : numel(s.shape), ++steps;
        if (const std::size_t bytes = json_output_bytes(floats, steps, e->lesson.tokens); bytes > max_output)
            refuse_output(shown, max_output, bytes,
                          fmt::format("for the steps --steps picks ({} of them, {} tokens); pick fewer, or raise --max-output",
                                      steps, e->lesson.tokens.size()));
    }
    StreamSink stream(cli.out);
    BoundedSink bounded(stream, every_value ? max_output : SIZE_MAX, shown);
    if (o.json) {
        DeferredTensors deferred;
        OrderedJson j = trace_to_json(e->lesson, trace, &e->report, &deferred);
        if (!o.steps.empty()) {
            OrderedJson kept = OrderedJson::array();
            for (auto& s : j["steps"])
                if (step_matches(s["name"].get<std::string>(), picked.names)) kept.push_back(s);
            j["steps"] = kept;
        }
        // A checkpoint's end (its next tokens, or BERT's output), or any lesson's logits' next tokens.
        if (model || e->lesson.config.arch.unembed)
            j["model"] = model_end_json(e->lesson, model_end(e->lesson, trace, o.model.top_k));
        if (intervened) j["interventions"] = interventions_json(*intervened, o.model.top_k);
        write_readable(j, bounded, deferred);
        return 0;
    }
    RunView view;
    view.precision = o.precision;
    view.steps = picked.names;
    view.full = o.full;
    if (!parse_heatmap_choice(o.heatmap, view.heatmap, view.heatmap_mode))
        fail_file("--heatmap", "auto, dense, cells or none", "\"" + o.heatmap + "\"");
    view.pool = o.pool == "mean" ? Pooling::mean : Pooling::max;
    view.style = terminal_style(cli.color, cli.host);
    SinkStream out(bounded);
    render_run(out, e->lesson, trace, e->report, view);
    if (model || e->lesson.config.arch.unembed)
        render_model_end(out, e->lesson, model_end(e->lesson, trace, o.model.top_k), view.style.width);
    if (intervened) render_interventions(out, *intervened, o.model.top_k, view.style.width);
    out.flush();
    return 0;
}

void add_run_command(CLI::App& app, CliContext& cli) {
    auto opts = std::make_shared<RunOptions>();
    auto* cmd = app.add_subcommand("run", "Run a lesson and print every step: title, formula, shape, the token-labelled "
                                          "matrix, what it means, and the article's printed values beside ours.");
    cmd->add_option("lesson", opts->lesson, "Lesson id (see `attntrace list`) or path to a lesson JSON file (or --model DIR)");
    add_model_options(*cmd, opts->model);
    add_blocks_option(*cmd, opts->model);
    add_intervention_options(*cmd, opts->interventions);
    cmd->add_option("--steps,--step", opts->steps,
                    "Only these steps (repeatable), the first way that picks any: the step's number in the output "
                    "(14); a name or glob (blocks.0.attn.hook_pattern, 'blocks.0.attn.*'; 'softmax.*' also takes the "
                    "stage's output, hook_pattern); a name's last part, hook_ optional (k: hook_k); a stage (softmax: "
                    "the row max through hook_pattern), parts of names (ln1) or a piece of a last part (scores: the "
                    "raw, scaled and masked scores); a word of the steps' titles (weights). `attntrace steps LESSON` "
                    "lists them. --step is the same option, as compare and diff spell it");
    cmd->add_option("--precision", opts->precision, "Decimals shown in the tables")->capture_default_str()->check(CLI::Range(0, 9));
    cmd->add_option("--arithmetic", opts->arithmetic,
                    "exact (default), or document: the steps the lesson names in document_rounding rounded as the "
                    "article printed them, and everything after computed from the rounded values")
        ->check(CLI::IsMember({"exact", "document"}));
    cmd->add_option("--trace", opts->trace, kTraceHelp);
    cmd->add_flag("--json", opts->json, "Print the trace as JSON instead of text");
    cmd->add_flag("--full", opts->full,
                  "Show big matrices whole. Without it, a step of more than 1000 numbers shows the first and last 3 "
                  "rows and columns around '...' (as numpy prints), and columns are dropped from the middle until "
                  "each line fits the width ($COLUMNS, else the terminal's, else 80)");
    add_max_output_option(*cmd, opts->max_output, "--json's or --full's output");
    cmd->add_option("--heatmap", opts->heatmap,
                    std::string("Heatmaps under the weights, the mask and the masked scores: ") + kHeatmapHelp)
        ->check(CLI::IsMember({"auto", "dense", "cells", "none", "on", "off"}));
    cmd->add_option("--pool", opts->pool,
                    "max (default) or mean: what one character of a dense heatmap wider than the width shows of the "
                    "cells it stands for")
        ->check(CLI::IsMember({"max", "mean"}));
    cmd->footer("Example:\n  attntrace run 003-3.1-ring-fell --steps hook_pattern --precision 3\n"
                "  attntrace run 003-3.1-ring-fell --arithmetic document --steps hook_z\n"
                "  attntrace run 003-3.1-ring-fell --trace summary\n"
                "  attntrace --color=always run 004-causal-pattern --steps hook_pattern\n"
                "  attntrace run big.json --steps pattern --heatmap dense --pool mean\n"
                "  attntrace random --tokens 4096 --out big.json && attntrace run big.json --trace none\n"
                "  attntrace run --model tests/models/tiny-gpt2 --text \"the ring fell\" --steps hook_pattern\n"
                "  attntrace run --model tests/models/tiny-gpt2 --text \"the ring fell\" --ablate blocks.0.attn.h1 --steps hook_attn_out");
    cmd->callback([opts, &cli] { cli.status = run_lesson_command(cli, *opts); });
}

}  // namespace attntrace

// attntrace explain LESSON 'STEP[i,j]': how one number of the trace came to be.
#include <CLI/CLI.hpp>
#include <ostream>

#include "evaluate/evaluate.hpp"
#include "evaluate/intervened.hpp"
#include "cli/commands.hpp"
#include "cli/progress.hpp"
#include "cli/terminal.hpp"
#include "core/printable.hpp"
#include "render/explain.hpp"

namespace attntrace {

void add_explain_command(CLI::App& app, CliContext& cli) {
    struct Opts {
        std::string lesson;
        ModelOptions model;
        std::vector<std::string> cells;
        int precision = 4;
        bool full = false;
        std::string arithmetic = "exact";
        std::string misplaced_step;  // --step given to explain
        InterventionOptions interventions;
    };
    auto opts = std::make_shared<Opts>();
    auto* cmd = app.add_subcommand(
        "explain", "Explain how one number of a lesson's trace came to be: the formula with the numbers that went "
                   "in, term by term, with token names (a score's dot product, a weight's max, exp, sum and "
                   "division, a LayerNorm output's mean, variance, std, gamma and beta, ...), recomputed and set "
                   "against the trace.");
    cmd->add_option("lesson", opts->lesson, "Lesson id (see `attntrace list`) or path to a lesson JSON file (or --model DIR, "
                                            "then only cells)");
    cmd->add_option("cell", opts->cells,
                    "STEP[i,j] or STEP[h,i,j]: a step name as `run --steps` takes it (hook_pattern, ln1.hook_mean, "
                    "the full name), one index per axis of the step, each a number or a token/label (ring, h0, d3; a "
                    "checkpoint's piece with or without its leading ␣: fell for ␣fell); several cells may follow");
    add_model_options(*cmd, opts->model, false);
    add_intervention_options(*cmd, opts->interventions);
    cmd->add_option("--precision", opts->precision, "Decimals shown")->capture_default_str()->check(CLI::Range(0, 9));
    cmd->add_flag("--full", opts->full, "Every term of long sums (more than 16 terms show the first and last three)");
    cmd->add_option("--arithmetic", opts->arithmetic, "exact (default) or document, as for run")
        ->check(CLI::IsMember({"exact", "document"}));
    // Not an option of explain: the step is in the cell. Taken (and hidden from --help) only to say so in the
    // one line every refusal has, rather than the parser's own.
    cmd->add_option("--step,--steps", opts->misplaced_step)->group("");
    cmd->footer("Examples:\n  attntrace explain 003-3.1-ring-fell 'hook_pattern[0,ring,fell]'\n"
                "  attntrace explain 003-3.1-ring-fell 'hook_scores_raw[h0,1,2]' 'hook_z[ring,h0,d1]' --precision 6\n"
                "  attntrace random --tokens 6 -o r.json && attntrace explain r.json 'ln1.hook_normalized[t2,d0]' "
                "'mlp.hook_post[t0,f3]'\n"
                "  attntrace explain --model tests/models/tiny-gpt2 --text \"the ring fell\" "
                "'blocks.1.attn.hook_pattern[h2,fell,the]'\n"
                "Axes per step: docs/steps.md. Exit 2 with one line on stderr for an unknown step, a wrong number "
                "of indices, an index out of range, an unknown token or one naming several positions.");
    cmd->callback([opts, &cli] {
        // With --model the positionals are all cells (CLI11 gives the first to `lesson`).
        if (opts->model.given() && !opts->lesson.empty()) {
            opts->cells.insert(opts->cells.begin(), opts->lesson);
            opts->lesson.clear();
        }
        if (!opts->misplaced_step.empty())
            fail_file("--step", "the step inside the cell: attntrace explain LESSON 'STEP[i,j]' (explain takes no --step)",
                      "\"--step " + opts->misplaced_step + "\"");
        if (opts->cells.empty()) fail_file("explain", "a cell to explain (STEP[i,j])", "none");
        Lesson lesson = lesson_or_model(opts->lesson, opts->model, "explain");
        ProgressLine progress(cli, long_run(lesson));
        const CommandEvaluation run =
            evaluate_command(std::move(lesson), {}, intervention_args(opts->interventions), progress.callback());
        progress.clear();
        // With interventions the cell is explained in the changed run, its original value beside.
        const Evaluation* e = &run.shown();
        const IntervenedEvaluation* intervened = run.intervened.get();
        const Trace& trace = chosen_trace(*e, opts->arithmetic);
        ExplainOptions o;
        o.precision = opts->precision;
        o.full = opts->full;
        // Parse every cell first: a bad one stops before anything is printed.
        std::vector<CellRef> cells;
        for (const auto& c : opts->cells) cells.push_back(parse_cell(trace, c));
        // The explanation's labels and tokens are printable already (Cell::label);
        // the whole is escaped again, its own line breaks kept, for anything else.
        for (std::size_t i = 0; i < cells.size(); ++i) {
            const Explanation x = explain_cell(e->lesson, trace, cells[i], o, terminal_style(cli.color, cli.host).width);
            cli.out << (i ? "\n" : "") << printable(x.text, true);
            if (intervened)
                cli.out << printable(original_value_line(chosen_trace(*intervened->original, opts->arithmetic), cells[i],
                                                         x.traced, o.precision),
                                     true);
        }
        cli.status = 0;
    });
}

}  // namespace attntrace

// attntrace compare LESSON --set KEY=VALUE: the lesson run twice, as written
// (A) and with the settings changed (B), and what changed, step by step.
// The settings: compare/lesson_override.hpp; the comparison:
// compare/compare.hpp; the output: render/compare_view.hpp; for people:
// docs/compare.md.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <ostream>

#include "cli/commands.hpp"
#include "cli/terminal.hpp"
#include "compare/compare.hpp"
#include "compare/lesson_override.hpp"
#include "core/error.hpp"
#include "pipeline/run.hpp"
#include "render/compare_view.hpp"
#include "trace/step_lookup.hpp"

namespace attntrace {

void add_compare_command(CLI::App& app, CliContext& cli) {
    struct Opts {
        std::string lesson;
        std::vector<std::string> sets;
        std::string step;
        bool json = false;
        int precision = 4;
        bool full = false;
        std::string heatmap = "auto";
    };
    auto opts = std::make_shared<Opts>();
    auto* cmd = app.add_subcommand(
        "compare", "Run a lesson twice, as written (A) and with some settings changed (B: --set KEY=VALUE), and "
                   "print what changed, step by step in pipeline order: unchanged (equal in every cell), changed "
                   "(how many cells, the largest |B - A| and relative change, and where, by token and head), changed "
                   "shape, in one run only, or not computable in one. Then one step in full: A, B and B - A. Claims "
                   "are not checked. Exit 0, or 2 for bad input (a KEY the lesson format does not have, a VALUE "
                   "the lesson reader refuses).");
    cmd->add_option("lesson", opts->lesson, "Lesson id (see `attntrace list`) or path to a lesson JSON file")->required();
    cmd->add_option("--set", opts->sets,
                    "KEY=VALUE: a field of B. KEY is a dotted path into the lesson (config.scale, config.mask, "
                    "run.to, weights_seed, tokens[1]); a bare config field means config.KEY (scale=false). VALUE is "
                    "JSON when it parses as JSON (false, 2, {\"kind\": \"window\", \"window\": 3}), else a string "
                    "(causal); null removes the field, so its default applies. Repeatable")
        ->required()
        ->allow_extra_args(false);
    cmd->add_option("--step", opts->step, "Show this step in full instead of the first that changed: a step as "
                                          "`run --steps` names it (a name, a glob, a last part such as hook_pattern "
                                          "or k, a stage, a word of a title); of several, the first");
    cmd->add_flag("--json", opts->json, "Print the comparison as JSON (format \"attntrace-compare\", see docs/compare.md)");
    cmd->add_option("--precision", opts->precision, "Decimals shown in the tables")->capture_default_str()->check(CLI::Range(0, 9));
    cmd->add_flag("--full", opts->full, "Show big matrices whole (as run --full)");
    cmd->add_option("--heatmap", opts->heatmap,
                    std::string("Heatmaps of A and B for the weights, the mask and the masked scores: ") + kHeatmapHelp)
        ->check(CLI::IsMember({"auto", "dense", "cells", "none", "on", "off"}));
    cmd->footer("Examples:\n  attntrace compare 003-3.1-ring-fell --set scale=false\n"
                "  attntrace compare 003-3.1-ring-fell --set config.mask=causal --step hook_pattern\n"
                "  attntrace compare 001-shapes --set heads=4 --set weights_seed=7\n"
                "  attntrace compare 003-3.4-add-norm --set activation=gelu --json\n"
                "Keys and values: docs/compare.md.");
    cmd->callback([opts, &cli] {
        std::vector<Setting> settings;
        for (const auto& s : opts->sets) settings.push_back(parse_setting(s));
        const LessonPair pair = read_lesson_pair(resolve_lesson(opts->lesson), settings);
        if (pair.a.batch || pair.b.batch)
            fail_field(pair.a.file, "batch", "a one-sequence lesson (compare does not run batches)", "a batch");
        const Comparison c = compare_traces(run_lesson(pair.a), run_lesson(pair.b));
        std::optional<std::size_t> shown = c.first_change();
        if (!opts->step.empty()) {
            // A pattern that picks several shows the first of them, in pipeline order.
            const StepSelection picked = c.select(opts->step);
            if (!picked.unknown.empty())
                fail_file(
                    "--step",
                    "a step of A or B: a name, a glob, a last part (hook_pattern), a stage or a word of a step's title; "
                    "see docs/steps.md",
                    selection_found(picked));
            shown = static_cast<std::size_t>(c.find(picked.names.front()) - c.steps.data());
        }
        if (opts->json) {
            cli.out << dump_readable(compare_to_json(pair, c, shown));
        } else {
            CompareView view;
            view.precision = opts->precision;
            view.full = opts->full;
            parse_heatmap_choice(opts->heatmap, view.heatmap, view.heatmap_mode);  // IsMember checked it
            view.style = terminal_style(cli.color, cli.host);
            render_compare(cli.out, pair, c, shown, !opts->step.empty(), view);
        }
        cli.status = 0;
    });
}

}  // namespace attntrace

// attntrace patch --model DIR --clean TEXT --corrupt TEXT --answer TOKEN --wrong TOKEN:
// activation patching (evaluate/patch.hpp) as a heatmap, JSON, or a report page.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <chrono>
#include <optional>
#include <ostream>

#include "cli/commands.hpp"
#include "cli/progress.hpp"
#include "cli/terminal.hpp"
#include "core/error.hpp"
#include "evaluate/evaluate.hpp"
#include "evaluate/patch.hpp"
#include "io/files.hpp"
#include "model/hf_model.hpp"
#include "render/patch_view.hpp"
#include "render/report.hpp"

namespace attntrace {

void add_patch_command(CLI::App& app, CliContext& cli) {
    struct Opts {
        std::string model, clean, corrupt, answer, wrong;
        std::string step = "hook_z";
        std::string over;  // default: heads for hook_z, positions for the others
        bool json = false;
        std::string report;
    };
    auto opts = std::make_shared<Opts>();
    auto* cmd = app.add_subcommand(
        "patch", "Activation patching, as TransformerLens does it: run a clean and a corrupt text of the same length, "
                 "and for each block x head (or block x position) run the corrupt text again with that cell of one "
                 "step taken from the clean run. Each cell shows how much of the clean answer it restores: "
                 "(LD - LD corrupt) / (LD clean - LD corrupt), LD = logit[answer] - logit[wrong] after the last token.");
    cmd->add_option("--model", opts->model, "A Hugging Face checkpoint folder with next-token logits (GPT-2, the Llama family)")
        ->required();
    cmd->add_option("--clean", opts->clean, "The text whose activations are patched in")->required();
    cmd->add_option("--corrupt", opts->corrupt, "The text they are patched into: as many tokens as --clean")->required();
    cmd->add_option("--answer", opts->answer,
                    "The token the clean text should be followed by: one token of the vocabulary (' ring' or ␣ring for "
                    "a leading space, or #id)")
        ->required();
    cmd->add_option("--wrong", opts->wrong, "The token the corrupt text leads to, as --answer")->required();
    cmd->add_option("--step", opts->step, "The step patched in each block")
        ->capture_default_str()
        ->check(CLI::IsMember(patch_steps()));
    cmd->add_option("--over", opts->over, "heads (hook_z only; its default) or positions (the others' default)")
        ->check(CLI::IsMember({"heads", "positions"}));
    cmd->add_flag("--json", opts->json, "Print the result as JSON (format attntrace-patch, docs/interventions.md)");
    cmd->add_option("--report", opts->report,
                    "Also write the corrupt run's report page (attntrace report) with the patching heatmap at its top");
    cmd->footer("Example:\n  attntrace patch --model tests/models/tiny-gpt2 --clean \"the ring fell from the king\" "
                "--corrupt \"the king fell from the ring\" --answer ' ring' --wrong ' king'\n"
                "  ... --step hook_resid_pre --over positions --json");
    cmd->callback([opts, &cli] {
        PatchSpec spec;
        spec.step = opts->step;
        spec.over = opts->over.empty() ? (opts->step == "hook_z" ? "heads" : "positions") : opts->over;
        if (spec.over == "heads" && spec.step != "hook_z")
            fail_file("--over", fmt::format("positions for {} (only hook_z has a head axis)", spec.step), "heads");
        // The page's file opened first: a path that cannot be written is refused before the runs, and
        // nothing replaces it unless everything succeeds (an uncommitted AtomicFile leaves no file).
        std::optional<AtomicFile> page;
        if (!opts->report.empty()) page.emplace(opts->report);
        ModelInput in;
        in.text = opts->clean;
        in.text_source = "--clean";
        HfModel clean = load_hf_model(opts->model, in);
        in.text = opts->corrupt;
        in.text_source = "--corrupt";
        HfModel corrupt = load_hf_model(opts->model, in);
        spec.answer = vocab_token(corrupt.lesson, opts->answer, "--answer");
        spec.wrong = vocab_token(corrupt.lesson, opts->wrong, "--wrong");
        const auto start = std::chrono::steady_clock::now();
        ProgressLine progress(cli, true);
        const PatchResult r = activation_patching(clean.lesson, corrupt.lesson, spec, [&](std::size_t done, std::size_t total) {
            progress.update(Progress{"patching", done == total ? "" : "patched run", int(done), int(total)});
        });
        progress.clear();
        PatchInputs pin{opts->model, &clean.lesson, &corrupt.lesson, opts->clean, opts->corrupt,
                        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()};
        const OrderedJson j = patch_json(pin, r);
        if (page) {
            auto e = evaluate(std::move(corrupt.lesson));
            write_report_html(*page, e->lesson, e->exact, e->report, OrderedJson{{"patching", j}});
            page->commit();
        }
        if (opts->json) cli.out << dump_readable(j);
        else render_patch(cli.out, pin, r, terminal_style(cli.color, cli.host));
        cli.status = 0;
    });
}

}  // namespace attntrace

// attntrace diff A.json B.json: where does B (your implementation's
// intermediates) first part from A (ours)? The rules are in trace/diff.hpp;
// for people, with the minimal trace B needs, in docs/diffing.md.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include <cmath>
#include <ostream>
#include <memory>

#include "cli/commands.hpp"
#include "cli/terminal.hpp"
#include "trace/step_lookup.hpp"
#include "core/error.hpp"
#include "export/npy_export.hpp"
#include "render/diff_view.hpp"
#include "trace/diff.hpp"
#include "trace/policy.hpp"

namespace attntrace {

namespace {

// "hook_embed, blocks.0.hook_resid_pre, blocks.0.attn.hook_q, ... (31 in all)"
std::string some_names(const TraceData& t) {
    constexpr std::size_t kShown = 3;
    if (t.steps.empty()) return "no steps";
    std::vector<std::string> names;
    for (std::size_t i = 0; i < std::min(kShown, t.steps.size()); ++i) names.push_back(t.steps[i].name);
    return fmt::format("{}{}", fmt::join(names, ", "),
                       t.steps.size() > kShown ? fmt::format(", ... ({} in all)", t.steps.size()) : "");
}

CLI::Validator finite_nonnegative() {
    return CLI::Validator(
        [](std::string& s) -> std::string {
            double x = 0;
            if (!CLI::detail::lexical_cast(s, x) || !std::isfinite(x) || x < 0)
                return "expected a finite number >= 0, found \"" + s + "\"";
            return "";
        },
        "NUMBER >= 0");
}

}  // namespace

void add_diff_command(CLI::App& app, CliContext& cli) {
    struct Opts {
        std::string a, b;
        DiffOptions diff;
        bool json = false;
    };
    auto opts = std::make_shared<Opts>();
    auto* cmd = app.add_subcommand(
        "diff", "Compare two traces step by step, matched by name, and name the first step (in A's order) where B "
                "parts from A, the reference. A cell of B diverges when |a - b| > atol + rtol*|a| (numpy's "
                "allclose with A as the reference); -inf matches only -inf. Steps in one trace only are listed, "
                "steps kept as summaries are not compared. Exit 0 all within tolerance, 1 a divergence (or a "
                "shape mismatch), 2 bad input. B may be a minimal trace written by your own code (format, version, "
                "steps with name, shape, values): see docs/diffing.md. A or B may also be a folder written by "
                "`attntrace export --npy` (or by your code: index.json and one .npy per step).");
    cmd->add_option("A", opts->a, "The reference trace (e.g. from attntrace export): a JSON file or an --npy folder")->required();
    cmd->add_option("B", opts->b, "The trace to check against it (e.g. your implementation's intermediates)")
        ->required();
    cmd->add_option("--atol", opts->diff.atol, fmt::format("Absolute tolerance (default {})", kDiffAbsTol))
        ->check(finite_nonnegative());
    cmd->add_option("--rtol", opts->diff.rtol, fmt::format("Relative tolerance, times |a| (default {})", kDiffRelTol))
        ->check(finite_nonnegative());
    cmd->add_option("--step", opts->diff.steps, "Compare only this step, as `run --steps` names it (a name, a glob, "
                                                "a last part such as hook_pattern or k, a piece of one such as "
                                                "scores); repeat for more")
        ->allow_extra_args(false);
    cmd->add_flag("--json", opts->json, "Print the report as JSON (format \"attntrace-diff\", see docs/diffing.md)");
    cmd->footer("Examples:\n  attntrace export 003-3.1-ring-fell -o ours.json\n  attntrace diff ours.json mine.json\n"
                "  attntrace diff ours.json mine.json --atol 1e-4 --step 'blocks.0.attn.*'\n"
                "  attntrace export 003-3.1-ring-fell --npy ours-npy && attntrace diff ours-npy mine-npy");
    cmd->callback([opts, &cli] {
        // A JSON trace, or a folder written by `export --npy` (its index.json and .npy files).
        const TraceData a = read_trace_or_npy(opts->a);
        const TraceData b = read_trace_or_npy(opts->b);
        if (!opts->diff.steps.empty()) {
            // The patterns picked as `run --steps` picks them, over A's and B's names (once each), and
            // handed on as the names they picked.
            std::vector<NamedStep> named;
            for (const TraceData* t : {&a, &b})
                for (const auto& s : t->steps)
                    if (std::none_of(named.begin(), named.end(), [&](const NamedStep& n) { return n.name == s.name; }))
                        named.push_back({s.name, nullptr});
            const StepSelection picked = select_steps(named, opts->diff.steps);
            if (!picked.unknown.empty())
                fail_file("--step", fmt::format("a step name, glob or last part that names a step of {} or {}", a.file, b.file),
                          selection_found(picked));
            opts->diff.steps = picked.names;
        }
        const DiffReport r = diff_traces(a, b, opts->diff);
        if (r.steps.empty())
            fail_file(a.file,
                      fmt::format("a step{} named as in {}", opts->diff.steps.empty() ? "" : " (of those --step selects)", b.file),
                      fmt::format("none in common (A: {}; B: {}; names as in docs/steps.md)", some_names(a), some_names(b)));
        if (r.compared() == 0)
            fail_file(a.file, fmt::format("a step with values in both this and {}", b.file),
                      fmt::format("{} in common but each kept as a summary or not computable on one side", r.steps.size()));
        if (opts->json) cli.out << dump_readable(diff_json(r));
        else render_diff(cli.out, r, terminal_style(cli.color, cli.host).width);
        cli.status = r.first_divergence ? 1 : 0;
    });
}

}  // namespace attntrace

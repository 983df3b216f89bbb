// One function per subcommand; cli.cpp only wires them into CLI11.
// Each sets the exit status in the context: 0 all well, 1 a check failed.
// Bad input throws InputError (exit 2, handled in run_cli).
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "check/output_size.hpp"
#include "cli/cli.hpp"
#include "evaluate/model_end.hpp"

namespace CLI {
class App;
}

namespace attntrace {

struct Evaluation;
struct Trace;

inline constexpr const char* kFlagshipLesson = "003-3.1-ring-fell";

// One run of the CLI: where its output goes, what the host is, the global
// options once parsed, and the exit status the command sets. Commands write
// only to `out` and `err`, never to std::cout, so that each call's output is
// its own.
struct CliContext {
    std::ostream& out;
    std::ostream& err;
    CliHost host;
    std::string color = "auto";  // --color
    bool quiet = false;          // --quiet
    int status = 0;
};

void add_run_command(CLI::App& app, CliContext& cli);
void add_list_command(CLI::App& app, CliContext& cli);
void add_steps_command(CLI::App& app, CliContext& cli);
void add_check_command(CLI::App& app, CliContext& cli);
void add_export_command(CLI::App& app, CliContext& cli);
void add_golden_command(CLI::App& app, CliContext& cli);
void add_random_command(CLI::App& app, CliContext& cli);
void add_bench_command(CLI::App& app, CliContext& cli);
void add_cost_command(CLI::App& app, CliContext& cli);
void add_diff_command(CLI::App& app, CliContext& cli);
void add_report_command(CLI::App& app, CliContext& cli);
void add_explain_command(CLI::App& app, CliContext& cli);
void add_compare_command(CLI::App& app, CliContext& cli);
void add_decode_command(CLI::App& app, CliContext& cli);
void add_draft_command(CLI::App& app, CliContext& cli);
void add_patch_command(CLI::App& app, CliContext& cli);

struct RandomSpec;
// --tokens, --d-model, --heads, --d-ff, --seed, --mask, --activation, --norm (random and bench).
void add_random_options(CLI::App& cmd, RandomSpec& spec);

// --model DIR with --text or --ids (run): a checkpoint folder instead of a lesson.
struct ModelOptions {
    std::string dir;
    std::optional<std::string> text;
    std::string ids;  // "1,2,3"
    std::size_t top_k = kNextTokensShown;
    std::optional<std::string> blocks;  // --blocks "0,5-7" (run, export, report); absent: every block
    bool given() const { return !dir.empty(); }
};
// `head`: also --top-k (run prints the next tokens; export and report do not yet).
void add_model_options(CLI::App& cmd, ModelOptions& m, bool head = true);
struct HfModel;
// The checkpoint --model names, with its input; a usage error (exit 2) for
// --text and --ids together, neither, or either without --model.
HfModel load_model_option(const ModelOptions& m);
// --blocks 0,5-7 (run, export, report): those blocks traced under the policy, the others untraced.
void add_blocks_option(CLI::App& cmd, ModelOptions& m);
struct Lesson;
struct TracePolicy;
// The policy fitted to the lesson: restricted to --blocks (checked against its blocks, exit 2 naming
// --blocks), and each --trace step name or glob held to its steps (exit 2 naming --trace, with the closest).
void fit_policy(TracePolicy& policy, const ModelOptions& m, const Lesson& lesson);
// The lesson a command runs: `lesson` (an id or a path) or, with --model, the
// checkpoint's blocks as a lesson; exactly one of them (else exit 2, and a
// text given where the lesson goes beside --model is told to go after --text).
// runs_model: whether it is the checkpoint, the same refusals.
struct Lesson;
Lesson lesson_or_model(const std::string& lesson, const ModelOptions& m, const std::string& command);
bool runs_model(const std::string& lesson, const ModelOptions& m, const std::string& command);

// --max-output SIZE (export, run): `what` says which outputs it bounds.
void add_max_output_option(CLI::App& cmd, std::string& max_output, const std::string& what);
// The size --max-output holds an output to before the run: the run's memory
// refused first (as evaluate would), then the output's estimate for
// `policy`, refused naming `target` and a lighter --trace that fits.
struct Lesson;
struct TracePolicy;
std::size_t require_output_fits(const std::string& max_output, const Lesson& lesson, const TracePolicy& policy,
                                const std::string& arithmetic, const std::string& target);

// --set 'STEP[SELECTION]=VALUE' and --ablate blocks.B.attn.hH[:zero|:mean] (run, export, report, explain,
// decode): compare/intervention.hpp. The --set arguments apply in order, then the --ablate ones.
struct InterventionOptions {
    std::vector<std::string> set, ablate;
    bool any() const { return !set.empty() || !ablate.empty(); }
};
void add_intervention_options(CLI::App& cmd, InterventionOptions& o);
struct InterventionArg;
std::vector<InterventionArg> intervention_args(const InterventionOptions& o);

struct RunOptions {
    std::string lesson;
    ModelOptions model;
    std::vector<std::string> steps;  // names or globs; empty: all
    int precision = 4;
    std::string arithmetic = "exact";
    bool json = false;
    bool full = false;
    std::string heatmap = "auto";  // --heatmap auto|dense|cells|none (on, off: auto, none)
    std::string pool = "max";      // --pool max|mean: a dense heatmap pooled to the width
    std::string trace = "full";  // full, summary, none, or step names/globs
    InterventionOptions interventions;
    std::string max_output = kDefaultMaxOutput;  // --max-output: run --json and run --full (check/output_size.hpp)
};
// --trace POLICY (run, export, bench): see trace/policy.hpp.
inline constexpr const char* kTraceHelp =
    "What the trace keeps: full (every value; the default), summary (per step: shape, min, max, mean, row sums, a "
    "corner), none (only the run's output), or step names/globs separated by commas (those in full). Without the "
    "scores and weights, attention streams over key blocks and needs no T x T memory.";
int run_lesson_command(CliContext& cli, const RunOptions& options);

// The exact trace, or with --arithmetic document the document-arithmetic one
// (an InputError when the lesson rounds nothing).
const Trace& chosen_trace(const Evaluation& e, const std::string& arithmetic);

}  // namespace attntrace

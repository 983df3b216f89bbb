// The size of what export, report and `run --json` / `run --full` write,
// estimated from the plan before the run, and held to a limit (--max-output):
// a 110 KB lesson of 10,000 tokens would otherwise write gigabytes before
// anyone could stop it.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "lesson/lesson.hpp"
#include "pipeline/plan.hpp"
#include "trace/json_text.hpp"
#include "trace/policy.hpp"

namespace attntrace {

// --max-output's default: a BERT-base layer at n = 512 (25M floats kept) is
// an estimated 0.3 GB of JSON; ten thousand tokens are several GB.
inline constexpr const char* kDefaultMaxOutput = "1G";

// Text per float in the JSON trace: measured 11.9 bytes (shortest round-trip
// digits, ", ", the rows' brackets and indentation) on a random lesson of
// T 256, C 64, 4 heads (22.8 MB for 1.92M floats). An estimate, not a bound:
// BoundedSink holds the text to the limit as it is written.
inline constexpr double kJsonTextBytesPerFloat = 12.0;
// Per step besides its values: name, formula, explanation, axes (measured
// under 1 KiB), and its labels, counted from the lesson's tokens.
inline constexpr std::size_t kJsonBytesPerStep = 1024;
// Per .npy file of an --npy export: its header (128 bytes) and index entry.
inline constexpr std::size_t kNpyBytesPerStep = 1024;

enum class OutputKind {
    json,    // export -o, and the data a report embeds (its script and style add ~0.1 MB)
    npy,     // export --npy: 4 bytes per float
};

// The estimated size of `kind` for a run of `lesson` under `policy`. `run
// --full`'s tables take about what the JSON takes (a number, its padding and
// the separators per value), so `run --json` and `run --full` are held to the
// JSON estimate.
std::size_t estimate_output_bytes(const Lesson& lesson, const TracePolicy& policy, Arithmetic mode, OutputKind kind);

// Refuses, before the run (InputError naming `target`), an output whose
// estimate exceeds `max_bytes`, saying the estimate and the lightest trace
// policy that fits (`policies`: whether the command takes --trace).
void require_output_size(const Lesson& lesson, const TracePolicy& policy, Arithmetic mode, OutputKind kind,
                         std::size_t max_bytes, const std::string& target, bool policies);

// The same estimate for steps already computed: `floats` values in `steps`
// steps of a lesson of these tokens (run --json --steps: the steps picked).
std::size_t json_output_bytes(std::size_t floats, std::size_t steps, const std::vector<std::string>& tokens);

// The one-line refusal of an output of about `bytes` (above `max_bytes`):
// "TARGET: expected an output of at most ... (--max-output), found about ...".
[[noreturn]] void refuse_output(const std::string& target, std::size_t max_bytes, std::size_t bytes,
                                const std::string& what);

// Passes text on to `out` and refuses (InputError naming `target`) the byte
// that would take it past `max_bytes`: the estimate is not a bound, this is.
class BoundedSink final : public TextSink {
public:
    BoundedSink(TextSink& out, std::size_t max_bytes, std::string target)
        : out_(out), max_(max_bytes), target_(std::move(target)) {}
    void write(std::string_view text) override;

private:
    TextSink& out_;
    std::size_t max_, written_ = 0;
    std::string target_;
};

}  // namespace attntrace

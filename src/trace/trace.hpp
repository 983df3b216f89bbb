// Trace: every step the pipeline recorded, in order. The pipeline writes each
// step's values straight into the Tensor the trace keeps.
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/tensor.hpp"
#include "trace/derived.hpp"
#include "trace/policy.hpp"
#include "trace/steps.hpp"

namespace attntrace {

// 2: trace policies (steps kept as summaries; a trace may hold only some steps).
inline constexpr int kTraceFormatVersion = 2;

enum class StepSource {
    computed,        // the formula, from the steps before it
    given,           // the lesson's (article's) values replace the formula's from here on
    not_computable,  // an input is missing (a weight the article never gives, ...)
};
std::string_view source_name(StepSource s);

// What a step kept under the summary policy: enough to see its scale and
// shape without its values.
struct StepSummary {
    double min = 0, max = 0, mean = 0;  // over the finite cells (0 when there are none)
    std::size_t neg_inf = 0;            // blocked cells (-inf), left out of min, max and mean
    Tensor row_sums;                    // sum over the last axis: shape = the step's without it ((1) for a vector)
    Tensor corner;                      // the first <= 4 x 4 cells of the last two axes, at index 0 of the others
};
StepSummary summarize(const Tensor& t);

struct Step {
    std::string name;
    const StepDef* def = nullptr;  // catalogue entry (null for a step read from a foreign trace)
    Shape shape;
    std::vector<std::string> axes;                 // axis names, one per dimension
    std::vector<std::vector<std::string>> labels;  // per axis: tokens, heads "h0", dims "d0"
    StepSource source = StepSource::computed;
    std::optional<Tensor> formula;  // the formula's value where a given replaced it
    Tensor given_cells;             // a given step: empty, every cell; else 1 where the given value replaced the formula's
    std::vector<std::string> inputs;  // steps and weights it was computed from
    std::string note;               // why not computable; where a given comes from
    // The operation's formula and meaning where the lesson's config makes them
    // differ from the template's (softmax without its max shift); empty: def's.
    std::string formula_text, meaning_text;
    // The same for its title (an RMSNorm's or DyT's norm steps, named by the norm's kind); empty: def's.
    std::string title_text;
    int rounded_to = -1;            // document arithmetic: decimals this step was rounded to
    Record recorded = Record::full;  // summary: `value` and `formula` were freed, `summary` holds the rest
    std::optional<StepSummary> summary;
    // A derived step (trace/derived.hpp): its values are this function of
    // recorded steps, computed when read (values_of); it holds no buffer
    // unless the run gave it one.
    std::shared_ptr<const Derivation> derivation;
    // Opened and not filled yet: a later pass writes the buffer (the raw
    // scores of the fused attention, Run::defer). Nothing may read it until then.
    bool pending = false;

    // Reading a step's values: values_of(trace, step) (trace/derived.hpp), the
    // one accessor every reader uses; it computes a derived step's values from
    // its sources. held() is the buffer itself, for code that knows the step
    // holds one (the run's stages, the trace's writers): it refuses
    // (std::logic_error) a step whose buffer is not its values, a derived step
    // without a buffer or a pending one, so no reader can show an empty or
    // unfilled buffer as the step's numbers.
    const Tensor& held() const;
    // The buffer to write into (the run, the readers of trace files, materialise).
    Tensor& buffer() { return value_; }
    // Whether the buffer holds values (false: derived, pending, freed, summary, not computable).
    bool holds_values() const { return value_.size() > 0 && !pending; }

    // The value a claim about this step is checked against: the formula's
    // where one exists, else the given values.
    const Tensor* checked_value() const;

private:
    Tensor value_;  // what flows downstream (empty when not computable, freed, or derived without a buffer)
};

// What a step computes, whatever its block: its template's name
// ("blocks.0.attn.hook_pattern" for blocks.1.cross_attn.hook_pattern), or its
// own name when it is not from the catalogue (a foreign trace).
inline const std::string& base_name(const Step& s) { return s.def ? s.def->base : s.name; }
// The formula a view shows for a step: the operation's own for this lesson
// (formula_text), else the template's; empty for a foreign step.
const std::string& formula_of(const Step& s);
// The same for its one-line meaning (the template's `explain`).
const std::string& meaning_of(const Step& s);
// The same for its title ("RMSNorm 1: root mean square" where the template says "LayerNorm 1: std σ").
const std::string& title_of(const Step& s);
// Whether a step computes `leaf`, whatever its block and sub-block; a step
// read from a foreign trace when its name is the template's (as base_name).
// Of the leaves several template steps share (a norm's, resid_mid), a foreign
// step matches only the first template step's name.
bool computes(const Step& s, Leaf leaf);

struct Trace {
    TracePolicy policy;      // what the run kept
    bool streamed_attention = false;  // scores..softmax ran over key blocks (nothing T x T was held)
    std::vector<Step> steps;
    std::vector<std::string> warnings;
    std::array<double, kStageCount> stage_seconds{};  // wall time of each stage (0: not run)
    // A batched trace (src/batch/): each sequence's tokens, padded to T. Empty
    // for one sequence. Its steps' first axis is `batch`; their token axes are
    // labelled by position (p0..), since the sequences' tokens differ.
    std::vector<std::vector<std::string>> sequence_tokens;
    const Step* find(std::string_view name) const;
    Step* find(std::string_view name);
};

}  // namespace attntrace

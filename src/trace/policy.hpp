// Trace policies: which steps a run keeps, and how. The pipeline computes
// every step it needs either way; the policy decides what the trace holds at
// the end and, through that, how much memory the run needs (pipeline/plan.hpp)
// and whether attention may stream over key blocks (never holding T x T).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace attntrace {

// How one step is kept.
enum class Record {
    full,     // every value (the buffer the stage wrote into: no copy)
    summary,  // shape, min, max, mean, -inf count, row sums, a corner; the values are freed
    none,     // not kept: freed as soon as no later stage reads it
};
std::string_view record_name(Record r);

struct TracePolicy {
    enum class Kind { full, subset, summary, none };
    Kind kind = Kind::full;
    std::vector<std::string> steps;  // subset: step names or globs (as `run --steps`)
    // --blocks: blocks[i] true for a block whose steps the policy keeps; the
    // steps of the others are not kept (Record::none); empty: every block.
    std::vector<bool> blocks;
    // Steps kept in full whatever the rest says (exact names): the steps an
    // intervention reads its original values from.
    std::vector<std::string> keep;

    // How a step is kept. Under `none` and `subset` the run's output (the last
    // step it computes) is kept in full all the same: it is the result.
    Record record_of(std::string_view step) const;
    std::string describe() const;  // "full", "summary", "none", "subset(a, b)"
    std::string describe_blocks() const;  // "blocks 0,5,6,7 traced, the other 4 run untraced"; "" without --blocks
};

// "full", "summary", "none", or a comma-separated list of step names or globs
// (a subset). Throws InputError naming `origin` (e.g. "--trace") for an empty
// pattern; whether each names a step is the lesson's to say
// (require_policy_steps), once it is read: a stack's block 1, a decoder's
// cross-attention and a model's head are steps of that lesson alone.
TracePolicy parse_trace_policy(const std::string& text, const std::string& origin);

// Refuses (InputError naming `origin`) a subset pattern that matches none of
// `steps` (the lesson's step names) nor a step of the template (which a
// lesson may not record: one list serves many lessons), with the closest of
// `steps`.
void require_policy_steps(const TracePolicy& policy, const std::vector<std::string>& steps, const std::string& origin);

// --blocks "0,5-7": block numbers and inclusive ranges, each below `count`
// (the model's blocks), as a mask of `count`. Throws InputError naming `origin`.
std::vector<bool> parse_block_list(const std::string& text, std::size_t count, const std::string& origin);

// A step name against names or globs: "blocks.0.attn.*", or a last part
// without a prefix ("hook_pattern" matches "blocks.0.attn.hook_pattern").
bool step_matches(std::string_view name, const std::vector<std::string>& patterns);

}  // namespace attntrace

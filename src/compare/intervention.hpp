// Interventions on a run (--set, --ablate; docs/interventions.md): some cells
// of a step replaced, everything after them recomputed. An intervention is
// resolved against the original run's trace (the step's shape and labels, and
// its values: a mean ablation's mean, the cells a selection leaves) and
// becomes a `Given` of the lesson (lesson/lesson.hpp), the run's one way for
// values to replace a formula's, so a lesson's run, a checkpoint's, decode
// and explain all follow it without knowing it is there.
#pragma once

#include <string>
#include <vector>

#include "core/tensor.hpp"
#include "lesson/lesson.hpp"
#include "trace/trace.hpp"

namespace attntrace {

// One --set or --ablate argument, as typed after its flag.
struct InterventionArg {
    enum class Kind { set, ablate };
    Kind kind = Kind::set;
    std::string text;  // "blocks.0.attn.hook_z[:, h1, :]=0", "blocks.0.attn.h1:mean"
    std::string flag() const { return kind == Kind::set ? "--set" : "--ablate"; }
    std::string typed() const { return flag() + " " + text; }
};

// What one intervention changed, for the views and the export.
struct Intervention {
    std::string typed;  // "--set blocks.0.attn.hook_z[:, h1, :]=0"
    std::string step;   // the step's full name
    std::string cells;  // the cells, per axis: "query: every one; head: h1; d_head_v: every one"
    std::size_t count = 0;  // how many cells
    std::string value;  // "0", "their mean over the query positions", "from t.json"
};

// The full names of the steps the arguments change (their original values are
// read from the original run, which must keep them: TracePolicy::keep).
// Throws InputError (exit 2) for bad syntax, an unknown step, block or head,
// or a value that is not a number or from:FILE.
std::vector<std::string> intervention_steps(const Lesson& lesson, const std::vector<InterventionArg>& args);

// Resolves each argument against `original` (the run without them, keeping
// intervention_steps in full) and adds it to lesson.given, in order: a later
// one on the same step changes the cells it names in the earlier one's
// values. Throws InputError for a selection outside the step's shape, an
// unknown or ambiguous label, a from:FILE trace without the step or with
// another shape, or a non-finite value a step cannot hold.
std::vector<Intervention> apply_interventions(Lesson& lesson, const Trace& original,
                                              const std::vector<InterventionArg>& args);

// One axis of a selection: the indices picked, in order.
struct AxisPick {
    std::vector<std::size_t> at;
    bool every = false;  // ':' (all of them)
};

// "h0, ring, :" against step `s`'s shape and labels: per axis an index, a
// label (unique on its axis), ':' for all, or a range A:B (Python's half-open
// slice, either end optional). `origin` names the argument in errors.
std::vector<AxisPick> parse_selection(const Step& s, const std::string& inner, const std::string& origin);

}  // namespace attntrace

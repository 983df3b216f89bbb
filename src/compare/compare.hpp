// compare: two runs of a lesson, A as written and B with some settings
// changed (--set, compare/lesson_override.hpp), step by step: what changed
// and by how much. The per-step comparison is trace/diff's, with no
// tolerance (a step is unchanged only when every cell is equal). Pure: two
// traces in, a Comparison out; the CLI prints it (src/cli/cmd_compare.cpp;
// for people: docs/compare.md).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/tensor.hpp"
#include "trace/diff.hpp"
#include "trace/step_lookup.hpp"
#include "trace/trace.hpp"

namespace attntrace {

enum class Change {
    unchanged,       // same shape, every cell equal (-inf equal to -inf)
    changed,         // same shape, some cells differ
    shape_changed,   // the shapes differ: no cell compared
    only_a,          // B does not record the step (run.to changed, ...)
    only_b,
    not_computable,  // one side (or both) has no values: see note
};
const char* change_name(Change c);  // "unchanged", "changed", "shape-changed", "only-in-a", "only-in-b", "not-computable"

struct StepChange {
    std::string name;
    Change change = Change::unchanged;
    const Step* a = nullptr;  // null: only in B
    const Step* b = nullptr;  // null: only in A
    StepDiff diff;            // trace/diff's record, with atol = rtol = 0 (in both only)
    std::string note;         // not_computable: which side, and why
};

struct Comparison {
    // The two traces, owned: the steps' a and b point into them, so a
    // Comparison can be moved or kept without its caller's traces.
    std::shared_ptr<const Trace> a, b;
    std::vector<StepChange> steps;  // the union of both traces' steps, in pipeline order
    std::size_t count(Change c) const;
    // The first step whose values changed (same shape on both sides), or
    // else the first that is not unchanged (changed shape, on one side only,
    // not computable on a side); none when every step is unchanged.
    std::optional<std::size_t> first_change() const;
    const StepChange* find(const std::string& name) const;
    // A side's values of a step, through values_of (trace/derived.hpp: a
    // derived step's computed now); s.a (side A) or s.b must be set.
    StepValues values_a(const StepChange& s) const { return values_of(*a, *s.a); }
    StepValues values_b(const StepChange& s) const { return values_of(*b, *s.b); }
    // The steps a pattern picks as `run --steps` picks them (select_steps,
    // trace/step_lookup.hpp), over both sides' steps in pipeline order.
    StepSelection select(const std::string& pattern) const;
};

// Takes the traces: the Comparison owns them.
Comparison compare_traces(Trace a, Trace b);

// B - A cell by cell, for a step of the same shape on both sides: 0 where
// the cells are equal (masked on both sides included), else b - a (±inf
// where one side is masked).
Tensor delta(const Tensor& a, const Tensor& b);

// "h0, ring, fell": a cell's index as the step's labels (the number where an
// axis has none).
std::string cell_labels(const Step& s, const std::vector<std::size_t>& index);

}  // namespace attntrace

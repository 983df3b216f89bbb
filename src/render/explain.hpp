// attntrace explain: how one number of a trace came to be, written out.
//
// Reads a Trace and its Lesson, finds the cell asked for, and asks the
// operation that computed its step (pipeline/operation.hpp) to recompute it
// from the values the trace recorded for that step's inputs, in the order its
// _ref kernel uses (so the sum shown is the sum the pipeline computed, up to
// the SIMD kernels' rounding). This file writes what is around: the cell's
// header, a given or rounded value, the trace's value beside the recomputed one.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lesson/lesson.hpp"
#include "pipeline/cell.hpp"
#include "trace/trace.hpp"

namespace attntrace {

// One cell of one step: the step's full name and one index per axis. A value
// of its own: the trace it was parsed from is passed again to explain_cell.
struct CellRef {
    std::string step;
    std::vector<std::size_t> at;
};

// "STEP[i,j]" or "STEP[h,i,j]": STEP a full name or a short one as `run
// --steps` takes ("hook_pattern", "ln1.hook_mean"); each index a number or a
// label of its axis (a token, "h0", "d3", "f1") when that label is unique.
// Throws InputError (unknown step, bad syntax, wrong number of indices, index
// out of range, unknown or ambiguous token).
CellRef parse_cell(const Trace& trace, std::string_view text);

struct Explanation {
    std::string text;
    float traced = 0;                 // the trace's value at the cell
    std::optional<float> recomputed;  // none when the lesson gave the value or it is not computable
};

// Explains `cell` of `trace` (the trace it was parsed from, or one with the
// same steps); logic_error when the trace has no such step. Lines wider than
// `width` display columns are wrapped at spaces (0: none is).
Explanation explain_cell(const Lesson& lesson, const Trace& trace, const CellRef& cell, const ExplainOptions& opt,
                         std::size_t width = 0);

// Under interventions: "  without the interventions: 0.4321 (changed by -0.1234)", the cell's value in
// the original run, or "  the same without the interventions" when it did not change.
std::string original_value_line(const Trace& original, const CellRef& cell, float changed, int precision);

}  // namespace attntrace

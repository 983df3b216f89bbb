// diff: two traces compared step by step, matched by name, to find where an
// implementation first goes wrong. A is the reference (ours, usually), B the
// one under test. Pure: two TraceData in, a DiffReport out; the CLI prints it
// (src/cli/cmd_diff.cpp; the rules for people are in docs/diffing.md).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "trace/trace_json.hpp"

namespace attntrace {

// A cell of B diverges from A when |a - b| > atol + rtol·|a| (numpy's
// allclose with A as the reference). Why these defaults: two correct float32
// implementations sum in different orders (SIMD width, blocking, FMA), so they
// differ in the last bits, by more on large values (hence rtol) and, where a
// sum cancels, by the rounding of its large terms on a small result (hence
// atol). A wrong scale, mask, eps or head layout moves values by 1e-2 or more.
// Measured with this tool, our SIMD kernels against our _ref ones on
// `attntrace random --tokens 128 --d-model 768 --heads 12 --d-ff 3072 --seed 7`
// (diff ref.json simd.json --atol 0 --rtol 0): at most 5.3e-6 on the O(1)
// values (Q, K, V, the FFN), 3.4e-5 on raw scores of ~16, 7.6e-5 on softmax
// row sums of ~44: within these defaults everywhere but 32 of 196608 raw
// scores near 0 (|a - b| up to 1.2e-5 on |a| ~ 0.01: a 64-term dot product
// that cancels). So atol is 1e-4: two correct kernels must pass at BERT's
// widths, and 1e-4 is still 100x below what a real bug moves. The
// golden comparison is stricter (golden.hpp): both traces come from our kernels.
inline constexpr double kDiffAbsTol = 1e-4;
inline constexpr double kDiffRelTol = 1e-4;

struct DiffOptions {
    double atol = kDiffAbsTol;  // finite, >= 0 (the CLI checks)
    double rtol = kDiffRelTol;
    std::vector<std::string> steps;  // names or globs as step_matches(); empty: every step
};

// One cell: its index (row-major, one entry per axis), both values and its errors.
// Errors: abs = |a - b|; rel = |a - b| / max(|a|, |b|), 0 when both are 0.
// -inf (masked cells): both -inf is equal (abs = rel = 0); -inf against a
// finite value is an infinite error (abs = rel = +inf) and always diverges,
// whatever the tolerance. (The reader refuses NaN; a NaN in a constructed
// TraceData counts as an infinite error too.)
struct DiffCell {
    std::vector<std::size_t> index;
    float a = 0, b = 0;
    double abs = 0, rel = 0;
};

enum class StepVerdict {
    match,           // every cell within tolerance
    diverges,        // at least one cell beyond it
    shape_mismatch,  // the shapes differ: a divergence, no cell compared
    not_comparable,  // a side has no values (recorded as a summary, or not computable)
};
const char* verdict_name(StepVerdict v);  // "match", "diverges", "shape-mismatch", "not-comparable"

struct StepDiff {
    std::string name;
    Shape shape_a, shape_b;
    StepVerdict verdict = StepVerdict::match;
    std::string note;             // not_comparable: why ("B holds a summary, no values")
    std::size_t cells = 0;        // cells compared
    std::size_t beyond = 0;       // cells beyond tolerance
    std::optional<DiffCell> max_abs;  // the first cell with the largest |a - b|
    std::optional<DiffCell> max_rel;  // the first cell with the largest relative error
    std::optional<DiffCell> first_beyond;  // the first cell (row-major) beyond tolerance
    bool diverges() const { return verdict == StepVerdict::diverges || verdict == StepVerdict::shape_mismatch; }
};

struct DiffReport {
    std::string file_a, file_b;
    double atol = 0, rtol = 0;
    std::vector<StepDiff> steps;     // the steps in both traces, in A's order
    std::vector<std::string> only_a;  // in A's order
    std::vector<std::string> only_b;  // in B's order
    std::optional<std::size_t> first_divergence;  // index into steps: where it first goes wrong
    std::size_t compared() const;     // steps with values on both sides
};

// Steps outside options.steps are left out of everything, the only_* lists too.
DiffReport diff_traces(const TraceData& a, const TraceData& b, const DiffOptions& options);

// |A - B| of one step, cell by cell, with the rules of DiffCell's abs (both
// -inf: 0; -inf against a number: +inf). Empty unless both hold values of one shape.
Tensor abs_difference(const TraceStepData& a, const TraceStepData& b);

// The cell-level rule on its own: whether b diverges from the reference a.
bool cell_diverges(float a, float b, double atol, double rtol);

}  // namespace attntrace

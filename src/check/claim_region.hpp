// The cells a claim reads from a step, and the reductions a claim may state
// of them (docs/lesson-format.md, Claims: at, of).
#pragma once

#include <optional>
#include <string>

#include "lesson/lesson.hpp"
#include "trace/trace.hpp"

namespace attntrace {

// The step's values at the claim's fixed indices, each selected axis narrowed
// to its selection: shape = the step's free axes, in the step's order, each as
// long as its selection (or whole).
Tensor claimed_region(const Claim& claim, const Step& step, const Tensor& values);

// region (..., R, C) reduced over its last axis (rows: shape (..., R)) or the
// one before it (columns: (..., C)), in double, cells in ascending order:
// sum, min, max, mean, and std with the population divisor n. A row holding
// -inf (a blocked score) has sum, min and mean -inf and std +inf. A result of
// finite values beyond float32 (3e38 + 3e38) sets `overflow` to its index.
Tensor reduce(const Tensor& region, Reduction r, std::optional<std::size_t>* overflow);

// "row sums", "column maxima": a reduction in words.
std::string reduction_words(Reduction r);

}  // namespace attntrace

// The terms a claim `of: "terms"` states (docs/lesson-format.md#terms): its
// cell recomputed by the operation that computed its step, as `explain` does
// (pipeline/cell.hpp: recompute, Terms), the terms taken as numbers.
#pragma once

#include <string>

#include "lesson/lesson.hpp"
#include "trace/trace.hpp"

namespace attntrace {

// The cell's terms then their sum, shape (n + 1), in the explanation's order;
// or no values and the reason there are none (the trace did not keep an
// input, the step is not computable). `trace` is the exact run's or the
// document run's: the terms are recomputed from that trace's inputs.
struct CellTerms {
    Tensor values;
    std::string reason;
    bool with_sum = true;  // false: weighted value vectors printed without their sum row
};
CellTerms claimed_terms(const Lesson& lesson, const Trace& trace, const Claim& claim);

}  // namespace attntrace

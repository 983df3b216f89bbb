// The quantities inside a step's formula a claim `of: "angle"` or
// `"frequency"` states (docs/lesson-format.md#quantities-inside-a-formula):
// each selected cell recomputed by the operation that computed its step, as
// `explain` does (pipeline/cell.hpp: recompute, Cell::quantities).
#pragma once

#include <string>

#include "lesson/lesson.hpp"
#include "trace/trace.hpp"

namespace attntrace {

// The claim's quantity for each cell it selects, in the region's shape (as a
// values claim's); or no values and the reason there are none (the cell's
// formula has no such quantity: a dimension RoPE passes through unrotated).
struct ClaimedQuantity {
    Tensor values;
    std::string reason;
};
ClaimedQuantity claimed_quantity(const Lesson& lesson, const Trace& trace, const Claim& claim);

}  // namespace attntrace

// `attntrace cost`'s report (cost/cost.hpp: estimate_cost) as text and as JSON.
#pragma once

#include <cstddef>
#include <ostream>

#include "cost/cost.hpp"
#include "trace/json_text.hpp"

namespace attntrace {

// The shapes, one layer's steps (shape, elements, FLOPs), the attention
// matrices of one head and of the model, the memory of a full trace against a
// plain and a streamed implementation, and the FLOPs. `width`: display
// columns (0: no limit); a step table wider writes each step's shape under it.
void render_cost(std::ostream& out, const CostReport& r, std::size_t width);
// The same numbers as JSON: format "attntrace-cost", version 1.
OrderedJson cost_json(const CostReport& r);

}  // namespace attntrace

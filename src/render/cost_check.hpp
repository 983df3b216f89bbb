// A cost lesson's check, for people (the table `attntrace check` prints) and
// for machines (its entry in `attntrace check --format json`).
#pragma once

#include <cstddef>
#include <ostream>

#include "cost/cost_lesson.hpp"
#include "trace/json_text.hpp"

namespace attntrace {

// Wrapped to `width` display columns (0: not wrapped).
void render_cost_check(std::ostream& out, const CostLesson& lesson, const CostCheckReport& report,
                       std::size_t width = 0);
OrderedJson cost_check_json(const CostLesson& lesson, const CostCheckReport& report);

}  // namespace attntrace

// attntrace steps LESSON: the steps a lesson records, numbered as `run` numbers
// them, with their stage, shape and axes, from the lesson alone (nothing runs).
#pragma once

#include <ostream>

#include "lesson/lesson.hpp"

namespace attntrace {

void render_step_list(std::ostream& out, const Lesson& lesson);

}  // namespace attntrace

// attntrace steps LESSON: the steps a lesson records, numbered as `run` numbers
// them, with their stage, shape and axes, from the lesson alone (nothing runs).
#pragma once

#include <cstddef>
#include <ostream>

#include "lesson/lesson.hpp"

namespace attntrace {

// `width`: display columns (0: no limit); the axes wrap under their column, as each line fits.
// `symbolic_tokens`: the lesson's tokens stand for any (a checkpoint listed without a text): the token
// axes (pos, query, key) are shown as T, and the heading says so.
void render_step_list(std::ostream& out, const Lesson& lesson, std::size_t width, bool symbolic_tokens = false);

}  // namespace attntrace

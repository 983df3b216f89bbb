// Claims off only by the rounding of the inputs an article printed
// (docs/lesson-format.md, Inputs printed rounded): PyTorch prints weights to
// 4 decimals and computes with all of theirs, so numbers computed from the
// printed weights may differ in their last printed digit from the article's.
#pragma once

#include <functional>

#include "check/check.hpp"
#include "lesson/lesson.hpp"

namespace attntrace {

// The most input values searched: each costs one run of the lesson.
inline constexpr std::size_t kMaxPrintedInputValues = 1024;

// For each claim that disagrees, looks for inputs that print as the article printed them (each value of
// lesson.input_decimals' inputs within its rounding) under which it agrees: every value moved by a
// little under half its last printed digit, towards what the claim's printed numbers need, as each value's own
// run says. A claim that agrees under that run (a real run: its inputs round to the printed ones) is
// agrees-when-rounded, that run's values shown as the article's rounding. `rerun` runs a lesson and
// checks its claims.
void within_printed_inputs(const Lesson& lesson, CheckReport& report,
                           const std::function<CheckReport(const Lesson&)>& rerun);

}  // namespace attntrace

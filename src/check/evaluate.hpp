// A lesson evaluated: its exact trace, the document-arithmetic trace when the
// lesson rounds any step, and the claims checked against both.
#pragma once

#include <memory>
#include <optional>

#include "check/check.hpp"
#include "lesson/lesson.hpp"
#include "trace/trace.hpp"

namespace attntrace {

struct Evaluation {
    Lesson lesson;
    Trace exact;
    std::optional<Trace> document;
    CheckReport report;  // points into lesson: an Evaluation does not move (held by unique_ptr)
};

std::unique_ptr<Evaluation> evaluate(Lesson lesson);

}  // namespace attntrace

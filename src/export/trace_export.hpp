// A lesson's trace and its claims' verdicts as one JSON document: what
// `export` writes and golden/ holds (docs/trace-format.md). Sits below both
// the trace and the checker, so that neither depends on the other.
#pragma once

#include "check/check.hpp"
#include "lesson/lesson.hpp"
#include "trace/trace.hpp"
#include "trace/trace_json.hpp"

namespace attntrace {

OrderedJson trace_to_json(const Lesson& lesson, const Trace& trace, const CheckReport* report);

}  // namespace attntrace

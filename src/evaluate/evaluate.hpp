// A lesson evaluated: its exact trace, the document-arithmetic trace when the
// lesson rounds any step, and the claims checked against both.
#pragma once

#include <memory>
#include <optional>

#include "check/check.hpp"
#include "core/progress.hpp"
#include "lesson/lesson.hpp"
#include "trace/trace.hpp"

namespace attntrace {

struct Evaluation {
    Lesson lesson;
    Trace exact;
    std::optional<Trace> document;
    CheckReport report;  // owns its claims: an Evaluation may be copied or moved
};

// Claims are checked against what the trace keeps: under a policy other than
// full, a claim about a step kept only as a summary, or not kept, is not
// checkable.
// `progress` hears of each stage of each run (see run_planned).
std::unique_ptr<Evaluation> evaluate(Lesson lesson, const TracePolicy& policy = {}, const ProgressFn& progress = {});

// The refusal evaluate() gives when a run's estimated peak exceeds
// --max-memory, on its own: for a command that checks more before the run
// (the size of its output, check/output_size.hpp) and must refuse in the
// same order.
void require_run_fits(const Lesson& lesson, const TracePolicy& policy = {});

}  // namespace attntrace

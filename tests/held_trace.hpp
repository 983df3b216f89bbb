// run_lesson with the trace's derived steps (trace/derived.hpp) computed into
// buffers, for tests that read Step::value directly. tests/test_derived_steps.cpp
// holds the derived values to the ones a run without derivation records.
#pragma once

#include <omp.h>

#include <cstddef>
#include <stdexcept>
#include <utility>

#include "pipeline/plan.hpp"
#include "pipeline/run.hpp"
#include "trace/derived.hpp"

namespace attntrace {

template <class... A>
Trace run_held(A&&... a) {
    Trace t = run_lesson(std::forward<A>(a)...);
    materialise(t);
    return t;
}

// run_held with the FFN streamed `rows` rows at a time (the plan's chunk is
// sized for real widths: a test lesson's few rows would fit in one chunk).
inline Trace run_ffn_chunks(const Lesson& lesson, const TracePolicy& policy, std::size_t rows) {
    Plan plan = make_plan(lesson, policy, Arithmetic::exact, omp_get_max_threads());
    if (!plan.stream_ffn) throw std::logic_error("run_ffn_chunks: the policy keeps the FFN's hidden units");
    plan.ffn_chunk_rows = rows;
    Trace t = run_planned(lesson, Arithmetic::exact, plan);
    materialise(t);
    return t;
}

}  // namespace attntrace

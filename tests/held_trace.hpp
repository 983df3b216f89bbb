// run_lesson with the trace's derived steps (trace/derived.hpp) computed into
// buffers, for tests that read Step::value directly. tests/test_derived_steps.cpp
// holds the derived values to the ones a run without derivation records.
#pragma once

#include <utility>

#include "pipeline/run.hpp"
#include "trace/derived.hpp"

namespace attntrace {

template <class... A>
Trace run_held(A&&... a) {
    Trace t = run_lesson(std::forward<A>(a)...);
    materialise(t);
    return t;
}

}  // namespace attntrace

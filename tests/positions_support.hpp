// Helpers for the positional-encoding tests (test_positions.cpp, test_rope.cpp):
// lessons from JSON text, their traces, and comparisons with named tolerances.
// Header-only (tests/CMakeLists.txt globs test_*.cpp).
#pragma once

#include "held_trace.hpp"
#include <catch2/catch.hpp>

#include <cstring>
#include <string>
#include <vector>

#include "lesson/lesson.hpp"
#include "pipeline/run.hpp"
#include "trace/policy.hpp"

namespace attntrace::positions_test {

// Hand values to 9 significant digits against float32 results (~7 digits):
// a relative 1e-6 accepts rounding only; every mistake here moves a leading digit.
constexpr double kHandRel = 1e-6;
constexpr double kHandAbs = 1e-6;
// Invariants compare two float32 computations of the same real quantity by
// different routes (a norm before and after 4-8 rotated products; a score at
// two position pairs whose cos/sin were rounded separately): a few ulps of
// values of size ~1..10, summed over hs <= 8 terms.
constexpr double kInvariantAbs = 2e-5;

inline std::string lesson_text(const std::string& body) {
    return R"({"format": "attntrace-lesson", "version": 1, "id": "test", "title": "test",
               "source": {"document": "positions_support.hpp"}, )" +
           body + "}";
}

inline Lesson lesson(const std::string& body) { return parse_lesson(lesson_text(body), "test.json"); }

inline Trace run(const std::string& body, const TracePolicy& policy = {}) {
    return run_held(lesson(body), Arithmetic::exact, policy);
}

inline const Tensor& value(const Trace& t, const std::string& name) {
    const Step* s = t.find(name);
    INFO("step " << name);
    REQUIRE(s != nullptr);
    INFO(s->note);
    REQUIRE(s->source != StepSource::not_computable);
    return s->held();
}

inline void check_values(const Trace& t, const std::string& name, const std::vector<double>& want) {
    const Tensor& got = value(t, name);
    INFO("step " << name);
    REQUIRE(got.size() == want.size());
    for (std::size_t i = 0; i < want.size(); ++i) {
        INFO("cell " << i << ": got " << got.data[i] << ", want " << want[i]);
        CHECK(got.data[i] == Approx(want[i]).epsilon(kHandRel).margin(kHandAbs));
    }
}

// A seeded block of T tokens: X and every weight drawn from the seed.
inline std::string seeded(std::size_t T, std::size_t C, std::size_t NH, const std::string& positions,
                   const std::string& extra = "") {
    std::string tokens;
    for (std::size_t t = 0; t < T; ++t) tokens += (t ? ", " : "") + std::string("\"t") + std::to_string(t) + "\"";
    return "\"tokens\": [" + tokens + "], \"config\": {\"d_model\": " + std::to_string(C) +
           ", \"heads\": " + std::to_string(NH) + ", \"d_ff\": 8, \"positions\": " + positions + extra +
           "}, \"inputs\": {\"X\": {\"generate\": \"normal\", \"seed\": 5}}, \"weights_seed\": 11";
}


}  // namespace attntrace::positions_test

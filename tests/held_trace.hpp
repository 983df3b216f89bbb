// run_lesson with the trace's derived steps (trace/derived.hpp) computed into
// buffers, for tests that read Step::value directly. tests/test_derived_steps.cpp
// holds the derived values to the ones a run without derivation records.
#pragma once

#include <catch2/catch.hpp>
#include <omp.h>

#include <cstddef>
#include <cstring>
#include <stdexcept>
#include <utility>

#include "pipeline/operation.hpp"
#include "pipeline/plan.hpp"
#include "pipeline/run.hpp"
#include "pipeline/stages.hpp"
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

// Runs a lesson's passes with `plan` up to and including its first scores
// pass, as run_planned does, then hands the Run to check(run).
template <class Check>
void run_to_scores(const Lesson& l, const Plan& plan, Check check) {
    Run run(l, Arithmetic::exact, plan);
    const auto& passes = l.catalogue().passes();
    for (int p = l.first_pass; p <= l.last_pass; ++p) {
        run.begin_pass(p);
        operation(passes[static_cast<std::size_t>(p)].stage).forward(run);
        run.end_pass(p);
        if (passes[static_cast<std::size_t>(p)].stage == Stage::scores) return check(run);
    }
    FAIL("the lesson runs no scores pass");
}

// The same shape and the same bits (memcmp is not given an empty tensor's null pointer, even
// for 0 bytes: UBSan).
inline bool same_bits(const Tensor& a, const Tensor& b) {
    if (a.shape != b.shape || a.size() != b.size()) return false;
    return a.size() == 0 || std::memcmp(a.ptr(), b.ptr(), a.size() * sizeof(float)) == 0;  // no memcmp of null
}

// Every step of `got` reads (values_of: derived or not) as `want` holds it in its
// buffer, with the same source, inputs, record and summary; returns how many of
// got's steps were derived (no buffer). Used where two plans must record one trace:
// derivation on and off (test_derived_steps), fused attention and separate passes
// (test_fused_attention).
inline std::size_t require_same_steps(const Trace& got, const Trace& want) {
    REQUIRE(got.steps.size() == want.steps.size());
    std::size_t n = 0;
    for (std::size_t k = 0; k < got.steps.size(); ++k) {
        const Step& g = got.steps[k];
        const Step& w = want.steps[k];
        INFO(g.name);
        REQUIRE(g.name == w.name);
        CHECK(g.source == w.source);
        CHECK(g.inputs == w.inputs);
        CHECK(g.recorded == w.recorded);
        CHECK(is_derived(w) == false);
        n += is_derived(g);
        CHECK(same_bits(*values_of(got, g), w.held()));
        CHECK(g.summary.has_value() == w.summary.has_value());
        if (g.summary && w.summary) {
            CHECK(g.summary->min == w.summary->min);
            CHECK(g.summary->max == w.summary->max);
            CHECK(g.summary->mean == w.summary->mean);
            CHECK(g.summary->neg_inf == w.summary->neg_inf);
            CHECK(same_bits(g.summary->row_sums, w.summary->row_sums));
            CHECK(same_bits(g.summary->corner, w.summary->corner));
        }
    }
    return n;
}

}  // namespace attntrace

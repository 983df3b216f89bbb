// trace/xview.hpp: a recorded step as an xtensor expression. The view has the
// step's shape, reads and writes the step's own buffer (no copy), works for
// every rank a trace holds (0..4; 4: a batched attention pattern), and refuses
// a rank that is not the tensor's and a step whose values the trace did not keep.
#include "held_trace.hpp"
#include <catch2/catch.hpp>

#include <xtensor/xmath.hpp>
#include <xtensor/xtensor.hpp>
#include <xtensor/xview.hpp>

#include <cmath>
#include <stdexcept>

#include "batch/batch.hpp"
#include "lesson/lesson.hpp"
#include "pipeline/run.hpp"
#include "support.hpp"
#include "trace/xview.hpp"

using namespace attntrace;

namespace test_xview {

namespace {

// A softmax row of at most a few dozen float32 weights, summed in float by
// xtensor: 1 within a few float32 ulps (1.2e-7 each).
constexpr double kRowSumTol = 1e-6;

Lesson lesson_named(const std::string& id) { return read_lesson(test::lessons_dir() + "/" + id + ".json"); }

// Row-major flat index of (i0, i1, ...) in `shape`.
std::size_t flat(const Shape& shape, const std::vector<std::size_t>& idx) {
    std::size_t f = 0;
    for (std::size_t a = 0; a < shape.size(); ++a) f = f * shape[a] + idx[a];
    return f;
}

}  // namespace

TEST_CASE("a step's xtensor view has the step's shape and is its buffer, not a copy", "[xview]") {
    const Lesson lesson = lesson_named("003-3.1-ring-fell");
    Trace trace = run_held(lesson);
    Step* A = trace.find(lesson.catalogue().step(Leaf::pattern).name);
    REQUIRE(A);
    REQUIRE(A->held().rank() == 3);

    auto a = as_xtensor<3>(*A);
    REQUIRE(a.dimension() == 3);
    for (std::size_t k = 0; k < 3; ++k) CHECK(a.shape()[k] == A->shape[k]);
    CHECK(a.size() == A->held().size());
    CHECK(a.data() == A->held().ptr());  // zero copy: the view's storage is the step's buffer

    // Every cell is the buffer's cell at the row-major index.
    for (std::size_t h = 0; h < A->shape[0]; ++h)
        for (std::size_t i = 0; i < A->shape[1]; ++i)
            for (std::size_t j = 0; j < A->shape[2]; ++j)
                REQUIRE(a(h, i, j) == A->held().data[flat(A->shape, {h, i, j})]);

    // An xtensor expression over the view: every row of the pattern sums to 1.
    const xt::xtensor<float, 2> sums = xt::sum(a, {2});
    for (float s : sums) CHECK(std::fabs(s - 1.0) <= kRowSumTol);

    // Writes go both ways: through the view into the trace, and the other way.
    a(0, 1, 2) = 42.0f;
    CHECK(A->held().data[flat(A->shape, {0, 1, 2})] == 42.0f);
    A->buffer().data[flat(A->shape, {0, 2, 0})] = -3.0f;
    CHECK(a(0, 2, 0) == -3.0f);
}

TEST_CASE("a const step gives a read-only view of the same buffer", "[xview]") {
    const Lesson lesson = lesson_named("003-3.1-ring-fell");
    const Trace trace = run_held(lesson);
    const Step* Z = trace.find(lesson.catalogue().step(Leaf::z).name);
    REQUIRE(Z);
    auto z = as_xtensor<3>(*Z);
    CHECK(z.data() == Z->held().ptr());
    STATIC_REQUIRE(std::is_const_v<std::remove_reference_t<decltype(*z.data())>>);
}

TEST_CASE("a batched trace's pattern is a rank-4 view (batch, head, query, key)", "[xview]") {
    const Lesson lesson = lesson_named("001-batch-padding");
    REQUIRE(lesson.batch.has_value());
    Trace trace = run_batch(lesson, Arithmetic::exact);
    Step* A = trace.find(lesson.catalogue().step(Leaf::pattern).name);
    REQUIRE(A);
    REQUIRE(A->held().rank() == 4);
    auto a = as_xtensor<4>(*A);
    CHECK(a.data() == A->held().ptr());
    for (std::size_t k = 0; k < 4; ++k) CHECK(a.shape()[k] == A->shape[k]);
    const Shape& s = A->shape;
    for (std::size_t b = 0; b < s[0]; ++b)
        for (std::size_t h = 0; h < s[1]; ++h)
            for (std::size_t i = 0; i < s[2]; ++i)
                for (std::size_t j = 0; j < s[3]; ++j) REQUIRE(a(b, h, i, j) == A->held().data[flat(s, {b, h, i, j})]);
    const xt::xtensor<float, 3> sums = xt::sum(a, {3});
    for (float v : sums) CHECK(std::fabs(v - 1.0) <= kRowSumTol);
    a(s[0] - 1, s[1] - 1, s[2] - 1, s[3] - 1) = 7.0f;
    CHECK(A->held().data.back() == 7.0f);
}

TEST_CASE("a rank-0 tensor is a rank-0 view of its one value", "[xview]") {
    Tensor t(Shape{}, 3.5f);
    REQUIRE(t.size() == 1);
    auto v = as_xtensor<0>(t);
    CHECK(v.dimension() == 0);
    CHECK(v.data() == t.ptr());
    CHECK(v() == 3.5f);
    v() = -1.25f;
    CHECK(t.data[0] == -1.25f);
    auto d = as_xarray(t);
    CHECK(d.dimension() == 0);
    CHECK(d() == -1.25f);
}

TEST_CASE("as_xarray views every kept step of a trace at its own rank, in place", "[xview]") {
    const Lesson lesson = lesson_named("003-stacked-blocks");
    Trace trace = run_held(lesson);
    std::size_t viewed = 0;
    for (Step& s : trace.steps) {
        if (s.source == StepSource::not_computable) continue;
        auto v = as_xarray(s);
        REQUIRE(v.dimension() == s.held().rank());
        CHECK(std::equal(v.shape().begin(), v.shape().end(), s.held().shape.begin(), s.held().shape.end()));
        CHECK(v.data() == s.held().ptr());
        ++viewed;
    }
    CHECK(viewed > 0);
}

TEST_CASE("a view is refused for the wrong rank, an empty tensor and a step the trace did not keep", "[xview]") {
    Tensor m(Shape{2, 3}, 1.0f);
    CHECK_THROWS_AS(as_xtensor<3>(m), std::invalid_argument);
    CHECK_NOTHROW(as_xtensor<2>(m));

    Tensor empty;  // shape () but no value: not a scalar
    CHECK_THROWS_AS(as_xtensor<0>(empty), std::invalid_argument);
    CHECK_THROWS_AS(as_xarray(empty), std::invalid_argument);

    const Lesson lesson = lesson_named("003-3.1-ring-fell");
    TracePolicy summary;
    summary.kind = TracePolicy::Kind::summary;
    const Trace trace = run_held(lesson, Arithmetic::exact, summary);
    const Step* A = trace.find(lesson.catalogue().step(Leaf::pattern).name);
    REQUIRE(A);
    REQUIRE(A->recorded == Record::summary);
    CHECK_THROWS_AS(as_xtensor<3>(*A), std::invalid_argument);
}

}  // namespace test_xview

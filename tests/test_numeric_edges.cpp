// Numeric edge cases through the whole attention path, materialized (trace
// full) and streamed (trace none): one token, a head size of 1, scores so
// large that exp would overflow without the max subtracted, denormal inputs,
// and scores that overflow float32 (refused, naming the step, never NaN).
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <string>

#include "core/error.hpp"
#include "pipeline/run.hpp"

using namespace attntrace;
using json = nlohmann::json;

namespace {

// Online softmax rescales and reorders the sums (see kStreamedRelTol in
// test_policy.cpp); these cases are tiny, a few ulp apart at most.
constexpr double kStreamedTol = 1e-5;

// X (T, C) and identity projections up to the mix stage: Q = K = V = X.
Lesson attention_lesson(const json& X, std::size_t heads, bool causal) {
    const std::size_t C = X[0].size();
    json eye = json::array();
    for (std::size_t i = 0; i < C; ++i) {
        json row = json::array();
        for (std::size_t j = 0; j < C; ++j) row.push_back(i == j ? 1.0 : 0.0);
        eye.push_back(row);
    }
    json tokens = json::array();
    for (std::size_t t = 0; t < X.size(); ++t) tokens.push_back("t" + std::to_string(t));
    json doc = {{"format", "attntrace-lesson"},
                {"version", 1},
                {"id", "edge"},
                {"title", "numeric edge case"},
                {"source", {{"document", "tests"}}},
                {"tokens", tokens},
                {"config", {{"d_model", C}, {"heads", heads}, {"mask", causal ? "causal" : "none"}}},
                {"run", {{"from", "embed"}, {"to", "mix"}}},
                {"inputs", {{"X", X}}},
                {"weights", {{"W_Q", eye}, {"W_K", eye}, {"W_V", eye}}}};
    return parse_lesson(doc.dump(), "edge.json");
}

const Tensor& z_of(const Trace& t) {
    const Step* s = t.find("blocks.0.attn.hook_z");
    REQUIRE(s);
    return s->value;
}

// Z from the materialized path and from the streamed one, each finite, and equal within kStreamedTol.
Tensor both_ways(const Lesson& lesson) {
    Trace full = run_lesson(lesson);
    Trace streamed = run_lesson(lesson, Arithmetic::exact, parse_trace_policy("none", "--trace"));
    REQUIRE(streamed.streamed_attention);
    const Tensor& a = z_of(full);
    const Tensor& b = z_of(streamed);
    REQUIRE(a.size() == b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
        REQUIRE(std::isfinite(a.data[i]));
        REQUIRE(std::fabs(double(a.data[i]) - b.data[i]) <= kStreamedTol * (1.0 + std::fabs(a.data[i])));
    }
    return a;
}

}  // namespace

TEST_CASE("one token attends only to itself: weight 1, Z = V, materialized and streamed", "[edges]") {
    Lesson lesson = attention_lesson(json::array({json::array({0.5, -2.0, 3.0, 1.0})}), 2, true);
    Trace full = run_lesson(lesson);
    const Tensor& a = full.find("blocks.0.attn.hook_pattern")->value;
    REQUIRE(a.size() == 2);
    CHECK(a.data[0] == 1.0f);
    CHECK(a.data[1] == 1.0f);
    Tensor z = both_ways(lesson);
    CHECK(z.data == FloatBuffer{0.5f, -2.0f, 3.0f, 1.0f});
}

TEST_CASE("a head size of 1 (d_model = heads) runs both ways and agrees", "[edges]") {
    Lesson lesson = attention_lesson(json::array({json::array({1.0, -1.0, 0.5}), json::array({0.25, 2.0, -3.0}),
                                                  json::array({-0.5, 0.0, 1.5})}),
                                     3, false);
    CHECK(lesson.dims().hs == 1);
    both_ways(lesson);
}

TEST_CASE("scores of ~1e4 (exp would overflow without the row max) give finite, exact one-hot weights", "[edges]") {
    // Q = K = X, so token 0's scores are [1e4, 0, 5e3] / sqrt(2): the weights are (1, 0, 0) in float32.
    Lesson lesson = attention_lesson(
        json::array({json::array({100.0, 0.0}), json::array({0.0, 100.0}), json::array({50.0, 50.0})}), 1, false);
    Trace full = run_lesson(lesson);
    const Tensor& a = full.find("blocks.0.attn.hook_pattern")->value;
    CHECK(a.data[0] == 1.0f);
    CHECK(a.data[1] == 0.0f);
    CHECK(a.data[2] == 0.0f);
    both_ways(lesson);
}

TEST_CASE("denormal inputs give finite weights and values, both ways", "[edges]") {
    // 1e-40 is below float32's smallest normal (1.2e-38): scores underflow to 0 and the weights are uniform.
    Lesson lesson = attention_lesson(
        json::array({json::array({1e-40, 2e-40}), json::array({-1e-40, 3e-40}), json::array({0.0, 1e-39})}), 1, true);
    Trace full = run_lesson(lesson);
    const Tensor& a = full.find("blocks.0.attn.hook_pattern")->value;
    CHECK(a.data[3] == Approx(0.5));  // query 1 sees keys 0 and 1, with equal (zero) scores
    both_ways(lesson);
}

TEST_CASE("scores past float32's range are refused naming the step, never a silent NaN, both ways", "[edges]") {
    // X entries of 1e20: Q·Kᵀ = 1e40 overflows to +inf.
    Lesson lesson = attention_lesson(json::array({json::array({1e20, 0.0}), json::array({0.0, 1e20})}), 1, false);
    try {
        run_lesson(lesson);
        FAIL("the overflow was not refused");
    } catch (const InputError& e) {
        CHECK(std::string(e.what()).find("edge.json: blocks.0.attn.hook_scores_raw: expected finite values, found "
                                         "+inf") == 0);
    }
    try {
        run_lesson(lesson, Arithmetic::exact, parse_trace_policy("none", "--trace"));
        FAIL("the streamed overflow was not refused");
    } catch (const InputError& e) {
        // Streamed, the scores never exist: the overflow shows in Z.
        CHECK(std::string(e.what()).find("edge.json: blocks.0.attn.hook_z: expected finite values, found") == 0);
    }
}

// Numeric edge cases through the whole attention path, materialized (trace
// full) and streamed (trace none): one token, a head size of 1, scores so
// large that exp would overflow without the max subtracted, denormal inputs,
// and scores that overflow float32 (refused, naming the step, never NaN).
// Then given scores of +-1e30 and -inf (a fully blocked row), +inf refused,
// and LayerNorm over rows of zero variance. docs/numerics.md says what each
// case does and why.
#include "held_trace.hpp"
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <limits>
#include <string>

#include "core/error.hpp"
#include "pipeline/run.hpp"

using namespace attntrace;

namespace test_numeric_edges {
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
    return s->held();
}

// Z from the materialized path and from the streamed one, each finite, and equal within kStreamedTol.
Tensor both_ways(const Lesson& lesson) {
    Trace full = run_held(lesson);
    Trace streamed = run_held(lesson, Arithmetic::exact, parse_trace_policy("none", "--trace"));
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
    Trace full = run_held(lesson);
    const Tensor& a = full.find("blocks.0.attn.hook_pattern")->held();
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
    Trace full = run_held(lesson);
    const Tensor& a = full.find("blocks.0.attn.hook_pattern")->held();
    CHECK(a.data[0] == 1.0f);
    CHECK(a.data[1] == 0.0f);
    CHECK(a.data[2] == 0.0f);
    both_ways(lesson);
}

TEST_CASE("denormal inputs give finite weights and values, both ways", "[edges]") {
    // 1e-40 is below float32's smallest normal (1.2e-38): scores underflow to 0 and the weights are uniform.
    Lesson lesson = attention_lesson(
        json::array({json::array({1e-40, 2e-40}), json::array({-1e-40, 3e-40}), json::array({0.0, 1e-39})}), 1, true);
    Trace full = run_held(lesson);
    const Tensor& a = full.find("blocks.0.attn.hook_pattern")->held();
    CHECK(a.data[3] == Approx(0.5));  // query 1 sees keys 0 and 1, with equal (zero) scores
    both_ways(lesson);
}

TEST_CASE("scores past float32's range are refused naming the step, never a silent NaN, both ways", "[edges]") {
    // X entries of 1e20: Q·Kᵀ = 1e40 overflows to +inf.
    Lesson lesson = attention_lesson(json::array({json::array({1e20, 0.0}), json::array({0.0, 1e20})}), 1, false);
    try {
        run_held(lesson);
        FAIL("the overflow was not refused");
    } catch (const InputError& e) {
        // The first cell past the range: head 0, query 0, key 0 (1e20 · 1e20).
        CHECK(std::string(e.what()).find("edge.json: blocks.0.attn.hook_scores_raw[0,0,0]: expected finite values, "
                                         "found +inf") == 0);
    }
    try {
        run_held(lesson, Arithmetic::exact, parse_trace_policy("none", "--trace"));
        FAIL("the streamed overflow was not refused");
    } catch (const InputError& e) {
        // Streamed, the scores never exist: the overflow shows in Z.
        CHECK(std::string(e.what()).find("edge.json: blocks.0.attn.hook_z[0,") == 0);
        CHECK(std::string(e.what()).find("expected finite values, found") != std::string::npos);
    }
}

namespace {

// attention_lesson with the raw scores given (an article's matrix): (1, T, T).
Lesson given_scores_lesson(const json& scores) {
    json X = json::array();
    for (std::size_t t = 0; t < scores.size(); ++t) X.push_back(json::array({double(t + 1), 0.5}));
    json doc = json::parse(R"({"format": "attntrace-lesson", "version": 1, "id": "edge", "title": "given scores",
        "source": {"document": "tests"}, "config": {"d_model": 2, "heads": 1, "mask": "none", "scale": false},
        "run": {"from": "embed", "to": "mix"},
        "weights": {"W_Q": [[1, 0], [0, 1]], "W_K": [[1, 0], [0, 1]], "W_V": [[1, 0], [0, 1]]}})");
    json tokens = json::array();
    for (std::size_t t = 0; t < scores.size(); ++t) tokens.push_back("t" + std::to_string(t));
    doc["tokens"] = tokens;
    doc["inputs"] = {{"X", X}};
    doc["given"] = {{"blocks.0.attn.hook_scores_raw", json::array({scores})}};
    return parse_lesson(doc.dump(), "edge.json");
}

const Tensor& step_value(const Trace& t, const char* name) {
    const Step* s = t.find(name);
    REQUIRE(s);
    return s->held();
}

}  // namespace

TEST_CASE("given scores of +-1e30 and -inf: exact one-hot and zero weights, a fully blocked row warned, no NaN",
          "[edges]") {
    // Row 0: every key blocked (-inf). Row 1: +1e30 against -1e30 and 0.
    // Row 2: one key blocked, the others ordinary.
    const json scores = json::array({json::array({"-inf", "-inf", "-inf"}), json::array({1e30, -1e30, 0.0}),
                                     json::array({"-inf", 0.0, std::log(3.0)})});
    Trace t = run_held(given_scores_lesson(scores));
    const Tensor& a = step_value(t, "blocks.0.attn.hook_pattern");  // (1, 3, 3)
    // A row with every key blocked has no distribution: weights 0 (F.softmax would give NaN).
    for (int j = 0; j < 3; ++j) CHECK(a.data[j] == 0.0f);
    // Scores 1e30 apart: the max subtracted first makes exp exact, weight exactly 1 on the top key.
    CHECK(a.data[3] == 1.0f);
    CHECK(a.data[4] == 0.0f);
    CHECK(a.data[5] == 0.0f);
    // exp(0) : exp(ln 3) = 1 : 3 over the two open keys; the blocked one exactly 0.
    CHECK(a.data[6] == 0.0f);
    CHECK(a.data[7] == Approx(0.25).epsilon(1e-6));
    CHECK(a.data[8] == Approx(0.75).epsilon(1e-6));
    // -inf flows from the given scores through the scaling, and only there.
    CHECK(step_value(t, "blocks.0.attn.hook_scores_scaled").data[0] == -std::numeric_limits<float>::infinity());
    // The fully blocked row mixes nothing: Z row 0 is 0, not NaN.
    const Tensor& z = step_value(t, "blocks.0.attn.hook_z");  // (T, NH, hs) = (3, 1, 2)
    CHECK(z.data[0] == 0.0f);
    CHECK(z.data[1] == 0.0f);
    REQUIRE(t.warnings.size() == 1);
    CHECK(t.warnings[0].find("1 row(s)") != std::string::npos);
    CHECK(t.warnings[0].find("every key masked") != std::string::npos);
}

TEST_CASE("a given score of +inf is refused naming the cell: -inf is the only infinity a score may be", "[edges]") {
    const json scores = json::array({json::array({0.0, "inf"}), json::array({0.0, 0.0})});
    try {
        given_scores_lesson(scores);
        FAIL("+inf was accepted");
    } catch (const InputError& e) {
        const std::string what = e.what();
        CHECK(what.find("edge.json: given.blocks.0.attn.hook_scores_raw[0][0][1]") == 0);
        CHECK(what.find("a number or \"-inf\"") != std::string::npos);
    }
}

TEST_CASE("LayerNorm over a row with zero variance gives beta, not NaN (eps keeps the division finite)", "[edges]") {
    // A residual stream whose rows are constant: (x - mean) = 0 and var = 0,
    // so the normalized row is 0 / sqrt(0 + eps) = 0 and the output is beta.
    json doc = json::parse(R"({"format": "attntrace-lesson", "version": 1, "id": "edge", "title": "flat rows",
        "source": {"document": "tests"}, "tokens": ["a", "b"],
        "config": {"d_model": 3, "heads": 1, "mask": "none"},
        "run": {"from": "embed", "to": "norm1"},
        "inputs": {"X": [[2, 2, 2], [-1, -1, -1]]},
        "weights": {"W_Q": [[1, 0, 0], [0, 1, 0], [0, 0, 1]], "W_K": [[1, 0, 0], [0, 1, 0], [0, 0, 1]],
                    "W_V": [[0, 0, 0], [0, 0, 0], [0, 0, 0]], "W_O": [[1, 0, 0], [0, 1, 0], [0, 0, 1]],
                    "ln1_gamma": [3, 3, 3], "ln1_beta": [0.5, -0.25, 0]}})");
    Trace t = run_held(parse_lesson(doc.dump(), "edge.json"));
    // V = 0, so the attention output is 0 and X + 0 = X: each row constant.
    CHECK(step_value(t, "blocks.0.ln1.hook_var").data[0] == 0.0f);
    CHECK(step_value(t, "blocks.0.ln1.hook_standardized").data[0] == 0.0f);
    const Step* out = t.find("blocks.0.ln1.hook_normalized");
    REQUIRE(out);
    const std::vector<float> beta = {0.5f, -0.25f, 0.0f};
    for (std::size_t i = 0; i < 2; ++i)
        for (std::size_t j = 0; j < 3; ++j) CHECK(out->held().data[i * 3 + j] == beta[j]);
}

}  // namespace test_numeric_edges

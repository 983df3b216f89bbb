// config.normalizer and config.max_shift (docs/lesson-format.md#normalizers):
// plain normalisation s / Σ s held to a double computation here, the steps
// each variant records, a zero row sum and an unshifted exp overflow refused
// naming the cell, decode, the plan's streaming, and explain's recomputation.
// (The whole block without the shift and with no normaliser, against the
// double reference, is in test_block_reference.cpp; bad values in bad-input/.)
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "decode/decode.hpp"
#include "evaluate/evaluate.hpp"
#include "pipeline/plan.hpp"
#include "pipeline/run.hpp"
#include "render/explain.hpp"
#include "explain_checks.hpp"
#include "support.hpp"

using namespace attntrace;
using nlohmann::json;

namespace test_normalizers {

namespace {

// s / Σ s of positive scores in float32 against double: a sum of T terms and
// one division, each within a few float32 ulps of the double (T ≤ 16 here).
constexpr double kPlainTol = 1e-6;

// A random lesson of T tokens through the block, with the given config fields.
json random_doc(const json& extra, const char* mask = "causal", std::size_t T = 9, std::size_t C = 8, std::size_t NH = 2) {
    json tokens = json::array();
    for (std::size_t i = 0; i < T; ++i) tokens.push_back("t" + std::to_string(i));
    json config = {{"d_model", C}, {"heads", NH}, {"mask", mask}};
    config.update(extra);
    return {{"format", "attntrace-lesson"}, {"version", 1}, {"id", "normalizers"}, {"title", "normalizers"},
            {"tokens", tokens}, {"config", config}, {"run", {{"from", "embed"}, {"to", "mix"}}},
            {"inputs", {{"X", {{"generate", "normal"}, {"seed", 3}}}}}, {"weights_seed", 4}};
}

Lesson lesson_of(const json& doc) { return parse_lesson(doc.dump(), "normalizers.json"); }

// Given positive scaled scores (NH, T, T) and a causal mask: the weights are s / Σ s over the keys j ≤ i.
json positive_scores(std::size_t NH, std::size_t T) {
    json s = json::array();
    for (std::size_t h = 0; h < NH; ++h) {
        json plane = json::array();
        for (std::size_t i = 0; i < T; ++i) {
            json row = json::array();
            for (std::size_t j = 0; j < T; ++j) row.push_back(0.25 + static_cast<double>((h * 31 + i * 7 + j * 5) % 13) / 3.0);
            plane.push_back(row);
        }
        s.push_back(plane);
    }
    return s;
}

std::string names(const Trace& t) {
    std::string out;
    for (const Step& s : t.steps) out += s.name + " ";
    return out;
}

}  // namespace

TEST_CASE("normalizer sum: each weight is its score over the row's sum of keys not blocked", "[normalizers]") {
    const std::size_t NH = 2, T = 7;
    json doc = random_doc({{"normalizer", "sum"}}, "causal", T, 4, NH);
    doc["run"] = {{"from", "mask"}, {"to", "softmax"}};
    doc["given"] = {{"blocks.0.attn.hook_scores_scaled", positive_scores(NH, T)}};
    const json S = doc["given"]["blocks.0.attn.hook_scores_scaled"];
    const Trace t = run_lesson(lesson_of(doc));
    const Step* sum = t.find("blocks.0.attn.hook_score_sum");
    const Step* a = t.find("blocks.0.attn.hook_pattern");
    REQUIRE(sum != nullptr);
    REQUIRE(a != nullptr);
    for (std::size_t h = 0; h < NH; ++h)
        for (std::size_t i = 0; i < T; ++i) {
            double want = 0;
            for (std::size_t j = 0; j <= i; ++j) want += S[h][i][j].get<double>();
            CHECK(sum->held().data[h * T + i] == Approx(want).epsilon(kPlainTol));
            double row = 0;
            for (std::size_t j = 0; j < T; ++j) {
                const double w = a->held().data[(h * T + i) * T + j];
                CHECK(w == Approx(j <= i ? S[h][i][j].get<double>() / want : 0.0).margin(kPlainTol));
                row += w;
            }
            CHECK(row == Approx(1.0).margin(T * kPlainTol));
        }
}

TEST_CASE("each normaliser records its own steps and refuses claims on the others'", "[normalizers]") {
    const std::string softmax = names(run_lesson(lesson_of(random_doc(json::object()))));
    const std::string unshifted = names(run_lesson(lesson_of(random_doc({{"max_shift", false}}))));
    const std::string sum = names(run_lesson(lesson_of(random_doc({{"normalizer", "sum"}}))));
    const std::string none = names(run_lesson(lesson_of(random_doc({{"normalizer", "none"}}))));
    for (const char* s : {"softmax.hook_row_max ", "softmax.hook_shifted ", "softmax.hook_exp ", "softmax.hook_row_sum "})
        CHECK(softmax.find(s) != std::string::npos);
    CHECK(softmax.find("hook_score_sum") == std::string::npos);
    CHECK(unshifted.find("softmax.hook_row_max ") == std::string::npos);
    CHECK(unshifted.find("softmax.hook_shifted ") == std::string::npos);
    CHECK(unshifted.find("softmax.hook_exp ") != std::string::npos);
    CHECK(sum.find("softmax.") == std::string::npos);
    CHECK(sum.find("attn.hook_score_sum ") != std::string::npos);
    CHECK(none.find("softmax.") == std::string::npos);
    CHECK(none.find("hook_score_sum") == std::string::npos);
    for (const char* s : {unshifted.c_str(), sum.c_str(), none.c_str()}) CHECK(std::string(s).find("attn.hook_pattern ") != std::string::npos);

    json claim = random_doc({{"max_shift", false}});
    claim["claims"] = {{{"id", "m"}, {"step", "hook_row_max"}, {"decimals", 2}, {"values", json::array()}, {"expect", "agrees"}}};
    const std::string e = attntrace::test::lesson_refusal(claim.dump());
    INFO(e);
    CHECK(e.find("claims[0].step: expected a step this lesson records") != std::string::npos);
    CHECK(e.find("with its max shift (config.max_shift true, the default)") != std::string::npos);
}

TEST_CASE("a zero row sum under plain normalisation and an unshifted exp past float32 are refused, naming the cell", "[normalizers]") {
    attntrace::test::TempDir dir;
    json doc = random_doc({{"normalizer", "sum"}}, "none", 2, 2, 1);
    doc["run"] = {{"from", "softmax"}, {"to", "softmax"}};
    doc["given"] = {{"blocks.0.attn.hook_attn_scores", {{1.0, -1.0}, {2.0, 1.0}}}};
    attntrace::test::write_text(dir.file("zero.json"), doc.dump());
    auto r = attntrace::test::run_cli({"run", dir.file("zero.json")});
    INFO(r.err);
    CHECK(r.status == 2);
    CHECK(r.err.find("blocks.0.attn.hook_score_sum[0,0]: expected a row sum other than 0") != std::string::npos);
    CHECK(r.err.find("found 0: the weights of head 0 query \"t0\" are not defined") != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);

    doc = random_doc({{"max_shift", false}}, "none", 2, 2, 1);
    doc["run"] = {{"from", "softmax"}, {"to", "softmax"}};
    doc["given"] = {{"blocks.0.attn.hook_attn_scores", {{100.0, 1.0}, {2.0, 1.0}}}};
    attntrace::test::write_text(dir.file("big.json"), doc.dump());
    r = attntrace::test::run_cli({"run", dir.file("big.json")});
    INFO(r.err);
    CHECK(r.status == 2);
    CHECK(r.err.find("blocks.0.attn.softmax.hook_exp[0,0,0]") != std::string::npos);
    CHECK(r.err.find("+inf") != std::string::npos);
    // The same scores with the shift (the default): exp(0) and exp(-99), a distribution.
    doc["config"].erase("max_shift");
    attntrace::test::write_text(dir.file("shifted.json"), doc.dump());
    CHECK(attntrace::test::run_cli({"run", dir.file("shifted.json")}).status == 0);
}

TEST_CASE("under each normaliser decode matches the causal run and the plan never streams", "[normalizers][decode]") {
    const TracePolicy none = parse_trace_policy("none", "--trace");
    for (const json& extra : {json{{"max_shift", false}}, json{{"normalizer", "none"}}, json{{"normalizer", "sum"}}}) {
        INFO(extra.dump());
        json doc = random_doc(extra, "causal", 10, 8, 2);
        if (extra.contains("normalizer") && extra["normalizer"] == "sum") {  // positive scores: no row sums to ~0
            doc["inputs"]["X"] = {{"generate", "ones"}};
            doc["weights"] = {{"W_Q", {{"generate", "ones"}}}, {"W_K", {{"generate", "ones"}}}};
        }
        const Lesson lesson = lesson_of(doc);
        CHECK_FALSE(make_plan(lesson, none, Arithmetic::exact, 1).stream_attention);
        auto e = evaluate(lesson);
        DecodeReport r = decode_lesson(e->lesson, e->exact);
        REQUIRE(r.applicable);
        CHECK(r.matches());
    }
    CHECK(make_plan(lesson_of(random_doc(json::object())), none, Arithmetic::exact, 1).stream_attention);
}

TEST_CASE("explain recomputes every normaliser's steps as the run does", "[normalizers][explain]") {
    struct Case {
        json extra;
        std::vector<CellRef> cells;
    };
    const std::vector<Case> cases = {
        {{{"max_shift", false}},
         {{"blocks.0.attn.softmax.hook_exp", {1, 4, 2}}, {"blocks.0.attn.softmax.hook_row_sum", {0, 5}},
          {"blocks.0.attn.hook_pattern", {1, 6, 3}}}},
        {{{"normalizer", "sum"}}, {{"blocks.0.attn.hook_score_sum", {0, 5}}, {"blocks.0.attn.hook_pattern", {1, 6, 3}},
                                   {"blocks.0.attn.hook_pattern", {1, 2, 5}}}},
        {{{"normalizer", "none"}}, {{"blocks.0.attn.hook_pattern", {0, 3, 1}}, {"blocks.0.attn.hook_pattern", {0, 1, 3}}}},
    };
    for (const Case& k : cases) {
        INFO(k.extra.dump());
        auto e = evaluate(lesson_of(random_doc(k.extra)));
        attntrace::test::require_recomputed(*e, k.cells);
    }
}

}  // namespace test_normalizers

// config.mask_at and config.renormalize (docs/lesson-format.md#mask-placement):
// the mask added to the raw scores before the scaling, or applied to the
// weights after a softmax over every key, renormalised or not. Held here to
// values computed in the test from the recorded inputs, to the default's
// weights, and on a hand-sized case; the steps each placement records, decode,
// the plan, explain, and a row with nothing left. (The whole block under each
// placement against the double reference is in test_block_reference.cpp; bad
// values in bad-input/.)
#include "held_trace.hpp"
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
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

namespace test_mask_placement {

namespace {

// Renormalising the zeroed weights against adding -inf before the softmax:
// the same weights by two float32 paths (a division of a division against
// one), a few ulps of a weight at most.
constexpr float kRenormTol = 4e-7f;

json random_doc(const json& extra, std::size_t T = 9, std::size_t C = 8, std::size_t NH = 2) {
    json tokens = json::array();
    for (std::size_t i = 0; i < T; ++i) tokens.push_back("t" + std::to_string(i));
    json config = {{"d_model", C}, {"heads", NH}, {"mask", "causal"}};
    config.update(extra);
    return {{"format", "attntrace-lesson"}, {"version", 1}, {"id", "mask-placement"}, {"title", "mask placement"},
            {"tokens", tokens}, {"config", config}, {"run", {{"from", "embed"}, {"to", "mix"}}},
            {"inputs", {{"X", {{"generate", "normal"}, {"seed", 5}}}}}, {"weights_seed", 6}};
}

Lesson lesson_of(const json& doc) { return parse_lesson(doc.dump(), "mask-placement.json"); }

const Step& step(const Trace& t, const std::string& leaf) {
    const Step* s = t.find("blocks.0.attn." + leaf);
    INFO(leaf);
    REQUIRE(s != nullptr);
    REQUIRE(s->source == StepSource::computed);
    return *s;
}

bool records(const Trace& t, const std::string& leaf) { return t.find("blocks.0.attn." + leaf) != nullptr; }

}  // namespace

TEST_CASE("mask_at raw: S + M is recorded, then scaled, and the weights are the default's bit for bit", "[mask_at]") {
    const Trace base = run_held(lesson_of(random_doc(json::object())));
    const Trace raw = run_held(lesson_of(random_doc({{"mask_at", "raw"}})));
    CHECK(records(raw, "hook_scores_masked"));
    CHECK_FALSE(records(raw, "hook_scores_scaled"));
    CHECK_FALSE(records(base, "hook_scores_masked"));
    const Step& S = step(raw, "hook_scores_raw");
    const Step& masked = step(raw, "hook_scores_masked");
    const Step& scores = step(raw, "hook_attn_scores");
    const std::size_t NH = 2, T = 9;
    const float s = std::sqrt(4.0f);  // hs = 8 / 2
    for (std::size_t h = 0; h < NH; ++h)
        for (std::size_t i = 0; i < T; ++i)
            for (std::size_t j = 0; j < T; ++j) {
                const std::size_t k = (h * T + i) * T + j;
                const float want = j <= i ? S.held().data[k] : -std::numeric_limits<float>::infinity();
                CHECK(masked.held().data[k] == want);
                CHECK(scores.held().data[k] == want / s);
            }
    // S/s + 0 = (S + 0)/s and -inf/s = -inf: nothing downstream moves
    for (const char* leaf : {"hook_attn_scores", "hook_pattern", "hook_z"})
        CHECK(step(raw, leaf).held().data == step(base, leaf).held().data);
}

TEST_CASE("mask_at raw divides the masked scores by a recorded or given scale factor", "[mask_at]") {
    json doc = random_doc({{"mask_at", "raw"}, {"scale", {{"divide_by", 1.73}}}}, 4, 4, 1);
    doc["run"] = {{"from", "scale"}, {"to", "softmax"}};
    doc["given"] = {{"blocks.0.attn.hook_scores_raw", {{{3.46, 1, 2, 3}, {1, 3.46, 2, 3}, {1, 2, 3.46, 3}, {1, 2, 3, 3.46}}}}};
    Trace t = run_held(lesson_of(doc));
    CHECK(step(t, "hook_scale_factor").held().data[0] == 1.73f);
    CHECK(step(t, "hook_attn_scores").held().data[0] == 3.46f / 1.73f);  // the query's own key: 2
    CHECK(std::isinf(step(t, "hook_attn_scores").held().data[1]));
    doc["given"]["blocks.0.attn.hook_scale_factor"] = {2.0};
    t = run_held(lesson_of(doc));
    CHECK(step(t, "hook_attn_scores").held().data[0] == 3.46f / 2.0f);
}

TEST_CASE("mask_at weights: the softmax over every key, zeroed where blocked, renormalised or not", "[mask_at]") {
    const std::size_t NH = 2, T = 9;
    const Trace base = run_held(lesson_of(random_doc(json::object())));
    for (bool renormalize : {false, true}) {
        INFO("renormalize " << renormalize);
        json extra = {{"mask_at", "weights"}};
        if (renormalize) extra["renormalize"] = true;
        const Trace t = run_held(lesson_of(random_doc(extra)));
        CHECK(records(t, "hook_pattern_zeroed") == renormalize);
        CHECK(records(t, "hook_zeroed_sum") == renormalize);
        const Step& M = step(t, "hook_mask");
        const Step& A0 = step(t, "hook_pattern_unmasked");
        const Step& A = step(t, "hook_pattern");
        // nothing is added to the scores: what the normaliser reads is S̃
        CHECK(step(t, "hook_attn_scores").held().data == step(t, "hook_scores_scaled").held().data);
        for (std::size_t i = 0; i < T; ++i)
            for (std::size_t j = 0; j < T; ++j) CHECK(M.held().data[i * T + j] == (j <= i ? 1.0f : 0.0f));
        for (std::size_t h = 0; h < NH; ++h)
            for (std::size_t i = 0; i < T; ++i) {
                float every = 0, left = 0;  // j ascending, as row_sum_ref
                for (std::size_t j = 0; j < T; ++j) {
                    const float a0 = A0.held().data[(h * T + i) * T + j];
                    CHECK(a0 > 0.0f);  // every key, the future ones too
                    every += a0;
                    left += j <= i ? a0 : 0.0f;
                }
                CHECK(every == Approx(1.0f).margin(T * 1e-7));
                if (renormalize) CHECK(step(t, "hook_zeroed_sum").held().data[h * T + i] == left);
                for (std::size_t j = 0; j < T; ++j) {
                    const std::size_t k = (h * T + i) * T + j;
                    const float zeroed = j <= i ? A0.held().data[k] : 0.0f;
                    if (renormalize) {
                        CHECK(step(t, "hook_pattern_zeroed").held().data[k] == zeroed);
                        CHECK(A.held().data[k] == zeroed / left);
                        // the default's weights (-inf before the softmax), by another rounding path
                        CHECK(A.held().data[k] == Approx(step(base, "hook_pattern").held().data[k]).margin(kRenormTol));
                    } else {
                        CHECK(A.held().data[k] == zeroed);
                    }
                }
            }
    }
}

TEST_CASE("mask_at weights: the zeroing on a hand-sized row", "[mask_at]") {
    // scaled scores [0, 1, 2] for query 0 (causal: sees key 0 only)
    // softmax: e^0, e^1, e^2 over 1 + e + e² = 11.1073: [0.0900, 0.2447, 0.6652]
    // zeroed: [0.0900, 0, 0]; renormalised: [1, 0, 0]
    json doc = random_doc({{"mask_at", "weights"}, {"renormalize", true}}, 3, 2, 1);
    doc["run"] = {{"from", "mask"}, {"to", "softmax"}};
    doc["given"] = {{"blocks.0.attn.hook_scores_scaled", {{0.0, 1.0, 2.0}, {1.0, 1.0, 0.0}, {2.0, 0.0, 1.0}}}};
    const Trace t = run_held(lesson_of(doc));
    CHECK(step(t, "hook_pattern_unmasked").held().data[2] == Approx(0.665241).epsilon(1e-5));
    CHECK(step(t, "hook_zeroed_sum").held().data[0] == Approx(0.0900306).epsilon(1e-5));
    CHECK(step(t, "hook_zeroed_sum").held().data[1] == Approx(0.844637).epsilon(1e-5));  // 2e / (2e + 1)
    CHECK(step(t, "hook_pattern").held().data[0] == 1.0f);
    CHECK(step(t, "hook_pattern").held().data[3] == Approx(0.5f));
}

TEST_CASE("mask_at weights: a row with every key blocked keeps weights of 0 and is named in a warning", "[mask_at]") {
    json doc = random_doc({{"mask_at", "weights"}, {"renormalize", true}}, 3, 2, 1);
    doc["config"]["mask"] = {{"kind", "custom"}, {"allowed", {{0, 0, 0}, {1, 1, 0}, {1, 1, 1}}}};
    const Trace t = run_held(lesson_of(doc));
    const Step& A = step(t, "hook_pattern");
    for (std::size_t j = 0; j < 3; ++j) CHECK(A.held().data[j] == 0.0f);
    CHECK(A.held().data[3] + A.held().data[4] == Approx(1.0f));
    REQUIRE(t.warnings.size() == 1);
    CHECK(t.warnings[0].find("head 0 query 0 \"t0\"") != std::string::npos);
}

TEST_CASE("mask placement: decode follows raw and refuses weights, and neither streams", "[mask_at][decode]") {
    const TracePolicy none = parse_trace_policy("none", "--trace");
    for (const char* at : {"raw", "weights"})
        CHECK_FALSE(make_plan(lesson_of(random_doc({{"mask_at", at}})), none, Arithmetic::exact, 1).stream_attention);
    auto raw = evaluate(lesson_of(random_doc({{"mask_at", "raw"}}, 10)));
    const DecodeReport r = decode_lesson(raw->lesson, raw->exact);
    REQUIRE(r.applicable);
    CHECK(r.matches());
    auto weights = evaluate(lesson_of(random_doc({{"mask_at", "weights"}, {"renormalize", true}}, 10)));
    const DecodeReport w = decode_lesson(weights->lesson, weights->exact);
    CHECK_FALSE(w.applicable);
    CHECK(w.why_not.find("config.mask_at \"weights\"") != std::string::npos);
}

TEST_CASE("explain recomputes every step of each mask placement as the run does", "[mask_at][explain]") {
    struct Case {
        json extra;
        std::vector<CellRef> cells;
    };
    const std::vector<Case> cases = {
        {{{"mask_at", "raw"}},
         {{"blocks.0.attn.hook_scores_masked", {1, 4, 2}}, {"blocks.0.attn.hook_scores_masked", {1, 2, 4}},
          {"blocks.0.attn.hook_attn_scores", {0, 6, 3}}, {"blocks.0.attn.hook_attn_scores", {0, 3, 6}}}},
        {{{"mask_at", "raw"}, {"scale", {{"multiply_by", 0.3}}}}, {{"blocks.0.attn.hook_attn_scores", {1, 5, 5}}}},
        {{{"mask_at", "weights"}},
         {{"blocks.0.attn.hook_mask", {2, 5}}, {"blocks.0.attn.hook_mask", {5, 2}},
          {"blocks.0.attn.hook_attn_scores", {0, 1, 7}}, {"blocks.0.attn.hook_pattern_unmasked", {1, 2, 7}},
          {"blocks.0.attn.hook_pattern", {1, 2, 7}}, {"blocks.0.attn.hook_pattern", {1, 7, 2}}}},
        {{{"mask_at", "weights"}, {"renormalize", true}},
         {{"blocks.0.attn.hook_pattern_zeroed", {0, 4, 3}}, {"blocks.0.attn.hook_zeroed_sum", {1, 6}},
          {"blocks.0.attn.hook_pattern", {0, 4, 3}}, {"blocks.0.attn.hook_pattern", {0, 3, 4}}}},
    };
    for (const Case& k : cases) {
        INFO(k.extra.dump());
        auto e = evaluate(lesson_of(random_doc(k.extra)));
        attntrace::test::require_recomputed(*e, k.cells);
    }
}

}  // namespace test_mask_placement

// config.scale (docs/lesson-format.md#scaling): the factor recorded as a step
// when the lesson writes it as an object, a given factor used downstream,
// the streamed run dividing by the same number, decoding with the factor's
// step, explain on both steps, and scale_mul held to its _ref twin.
// (The whole block under every scaling, against the double reference, is in
// test_block_reference.cpp; bad config.scale values in bad-input/.)
#include "held_trace.hpp"
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "decode/decode.hpp"
#include "evaluate/evaluate.hpp"
#include "kernels/attention.hpp"
#include "kernels/kernels.hpp"
#ifndef ATTNTRACE_SCALAR_ONLY
#include "kernels/simd/kernels.hpp"
#endif
#include "pipeline/plan.hpp"
#include "pipeline/run.hpp"
#include "render/explain.hpp"
#include "support.hpp"

using namespace attntrace;

namespace test_scaling {

namespace {

// Streamed attention (an online softmax over key blocks) and the materialised
// softmax·V sum in different orders: measured within 2e-7 of each other on
// these sizes; 1e-5 is far below a wrong divisor (a factor 1.7 off moves Z by
// ~1e-1).
constexpr double kStreamTol = 1e-5;

// A random lesson of T tokens, C wide, NH heads, with the given config.scale.
Lesson random_lesson(const nlohmann::json& scale, const char* mask = "none", std::size_t T = 9, std::size_t C = 12,
                     std::size_t NH = 3, const nlohmann::json& given = nlohmann::json::object()) {
    nlohmann::json tokens = nlohmann::json::array();
    for (std::size_t i = 0; i < T; ++i) tokens.push_back("t" + std::to_string(i));
    nlohmann::json doc = {{"format", "attntrace-lesson"}, {"version", 1}, {"id", "scaling"},
                          {"title", "scaling"}, {"source", {{"document", "test"}}}, {"tokens", tokens},
                          {"config", {{"d_model", C}, {"heads", NH}, {"mask", mask}, {"scale", scale}}},
                          {"run", {{"from", "embed"}, {"to", "mix"}}},
                          {"inputs", {{"X", {{"generate", "normal"}, {"seed", 5}}}}},
                          {"weights_seed", 6},
                          {"given", given}};
    return parse_lesson(doc.dump(), "scaling.json");
}

const Step& step(const Trace& t, const char* name) {
    const Step* s = t.find(name);
    REQUIRE(s != nullptr);
    return *s;
}

}  // namespace

TEST_CASE("config.scale as an object records the factor, true and false record none, with the same arithmetic", "[scaling]") {
    const Trace plain = run_held(random_lesson(true));
    const Trace named = run_held(random_lesson({{"divide_by", "sqrt_dk"}}));
    CHECK(plain.find("blocks.0.attn.hook_scale_factor") == nullptr);
    CHECK(run_held(random_lesson(false)).find("blocks.0.attn.hook_scale_factor") == nullptr);
    const Step& f = step(named, "blocks.0.attn.hook_scale_factor");
    CHECK(f.shape == Shape{3});
    for (float v : f.held().data) CHECK(v == std::sqrt(4.0f));  // hs = 12 / 3
    // {"divide_by": "sqrt_dk"} is the default's arithmetic, bit for bit
    const auto& a = step(plain, "blocks.0.attn.hook_scores_scaled").held().data;
    const auto& b = step(named, "blocks.0.attn.hook_scores_scaled").held().data;
    REQUIRE(a.size() == b.size());
    CHECK(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

TEST_CASE("divide_by and multiply_by scale each raw score by the lesson's number, rounded to float32 once", "[scaling]") {
    for (const auto& [scale, multiply, s] : {std::tuple{nlohmann::json{{"divide_by", 1.7}}, false, 1.7f},
                                            std::tuple{nlohmann::json{{"multiply_by", 0.3}}, true, 0.3f}}) {
        INFO(scale.dump());
        const Trace t = run_held(random_lesson(scale));
        for (float v : step(t, "blocks.0.attn.hook_scale_factor").held().data) CHECK(v == s);
        const auto& raw = step(t, "blocks.0.attn.hook_scores_raw").held().data;
        const auto& scaled = step(t, "blocks.0.attn.hook_scores_scaled").held().data;
        for (std::size_t i = 0; i < raw.size(); ++i) CHECK(scaled[i] == (multiply ? raw[i] * s : raw[i] / s));
    }
}

TEST_CASE("a given scale factor (an article's rounded √3) is what each head's scores are divided by", "[scaling]") {
    // three heads, each given its own factor: the per-head axis is used, not only its first cell
    const nlohmann::json given = {{"blocks.0.attn.hook_scale_factor", {1.73, 2.0, 0.5}}};
    const Trace t = run_held(random_lesson({{"divide_by", "sqrt_dk"}}, "none", 9, 12, 3, given));
    const Step& f = step(t, "blocks.0.attn.hook_scale_factor");
    CHECK(f.source == StepSource::given);
    const auto& raw = step(t, "blocks.0.attn.hook_scores_raw").held().data;
    const auto& scaled = step(t, "blocks.0.attn.hook_scores_scaled").held().data;
    const std::size_t plane = 9 * 9;
    const float s[] = {1.73f, 2.0f, 0.5f};
    for (std::size_t i = 0; i < raw.size(); ++i) CHECK(scaled[i] == raw[i] / s[i / plane]);
}

TEST_CASE("a streamed run divides by the lesson's divide_by too, multiply_by is never streamed", "[scaling]") {
    const TracePolicy none = parse_trace_policy("none", "--trace");
    const TracePolicy z_only = parse_trace_policy("hook_z", "--trace");
    for (const char* mask : {"none", "causal"}) {
        INFO(mask);
        const Lesson lesson = random_lesson({{"divide_by", 1.7}}, mask);
        CHECK(make_plan(lesson, none, Arithmetic::exact, 1).stream_attention);
        CHECK(make_plan(lesson, z_only, Arithmetic::exact, 1).stream_attention);
        CHECK_FALSE(make_plan(lesson, parse_trace_policy("full", "--trace"), Arithmetic::exact, 1).stream_attention);
        const Trace streamed = run_held(lesson, Arithmetic::exact, z_only);
        const Trace full = run_held(lesson);
        const auto& a = step(streamed, "blocks.0.attn.hook_z").held().data;
        const auto& b = step(full, "blocks.0.attn.hook_z").held().data;
        REQUIRE(a.size() == b.size());
        for (std::size_t i = 0; i < a.size(); ++i) CHECK(a[i] == Approx(b[i]).margin(kStreamTol));
        CHECK_FALSE(make_plan(random_lesson({{"multiply_by", 0.3}}, mask), none, Arithmetic::exact, 1).stream_attention);
    }
}

TEST_CASE("decoding a causal lesson with a recorded scale factor matches the causal run", "[scaling][decode]") {
    for (const nlohmann::json& scale : {nlohmann::json{{"multiply_by", 0.3}}, nlohmann::json{{"divide_by", 1.7}}}) {
        INFO(scale.dump());
        auto e = evaluate(random_lesson(scale, "causal", 12, 8, 2));
        DecodeReport r = decode_lesson(e->lesson, e->exact);
        REQUIRE(r.applicable);
        CHECK(r.matches());
    }
}

TEST_CASE("explain shows the factor and the scaled score from it, multiplying or dividing", "[scaling][explain]") {
    auto e = evaluate(random_lesson({{"multiply_by", 0.3}}));
    Explanation f = explain_cell(e->lesson, e->exact, {"blocks.0.attn.hook_scale_factor", {1}}, {});
    CHECK(f.text.find("config.scale.multiply_by = 0.3") != std::string::npos);
    REQUIRE(f.recomputed);
    CHECK(*f.recomputed == 0.3f);
    Explanation s = explain_cell(e->lesson, e->exact, {"blocks.0.attn.hook_scores_scaled", {2, 4, 5}}, {});
    CHECK(s.text.find("S̃ = S · s_h") != std::string::npos);
    REQUIRE(s.recomputed);
    CHECK(*s.recomputed == s.traced);
    const nlohmann::json given = {{"blocks.0.attn.hook_scale_factor", {1.73, 2.0, 0.5}}};
    auto g = evaluate(random_lesson({{"divide_by", "sqrt_dk"}}, "none", 9, 12, 3, given));
    Explanation d = explain_cell(g->lesson, g->exact, {"blocks.0.attn.hook_scores_scaled", {0, 1, 2}}, {});
    CHECK(d.text.find("S̃ = S / s_h") != std::string::npos);
    REQUIRE(d.recomputed);
    CHECK(*d.recomputed == d.traced);
}

TEST_CASE("scale_mul equals its _ref twin bit for bit, on every instruction set, at lane edges and past the threads' threshold", "[scaling][kernels]") {
    for (std::size_t n : {std::size_t{1}, std::size_t{7}, std::size_t{8}, std::size_t{9}, std::size_t{15}, std::size_t{16},
                          std::size_t{17}, std::size_t{33}, std::size_t{65}, std::size_t{129}, (std::size_t{1} << 18) + 7}) {
        INFO("n " << n);
        std::vector<float> x(n);
        for (std::size_t i = 0; i < n; ++i) x[i] = std::sin(0.37f * static_cast<float>(i)) * 40.0f;
        x[0] = -std::numeric_limits<float>::infinity();
        for (float factor : {0.3f, 1.0f / std::sqrt(7.0f), 0.125f}) {
            std::vector<float> want(n), got(n, 7.0f);
            scale_mul_ref(x.data(), factor, want.data(), n);
            scale_mul(x.data(), factor, got.data(), n);
            CHECK(std::memcmp(got.data(), want.data(), n * sizeof(float)) == 0);
#ifndef ATTNTRACE_SCALAR_ONLY
            const auto have = xsimd::available_architectures();
            auto twin = [&](auto arch, const char* name) {
                INFO(name);
                std::vector<float> simd(n, 7.0f);
                simd::ScaleMul{}(arch, x.data(), factor, simd.data(), n);
                CHECK(std::memcmp(simd.data(), want.data(), n * sizeof(float)) == 0);
            };
            if (have.avx512bw) twin(xsimd::avx512bw{}, "avx512");
            if (have.fma3_avx2) twin(xsimd::fma3<xsimd::avx2>{}, "avx2");
            if (have.sse4_2) twin(xsimd::sse4_2{}, "sse4.2");
#endif
        }
    }
}

}  // namespace test_scaling

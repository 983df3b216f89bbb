// Grouped-query and multi-query attention (config.kv_heads): query head h
// reads K/V head g = h / (NH/KVH). A case worked by hand, the invariants
// that tie GQA to multi-head attention, in the materialised and the streamed
// pipeline, and the CLI end to end.
//
// Letters: T tokens, C d_model, NH heads, KVH K/V heads, hs = C/NH.
#include "held_trace.hpp"
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "lesson/lesson.hpp"
#include "pipeline/run.hpp"
#include "render/explain.hpp"
#include "support.hpp"
#include "trace/policy.hpp"

using namespace attntrace;

namespace test_gqa {

namespace {

// Hand-computed decimals carry 10 significant digits, float32 ~7: a relative
// 1e-6 (~8 ulps) accepts the rounding; a wrong K/V head moves the 1st digit.
constexpr double kHandRel = 1e-6;
// Streamed against materialised attention: the online softmax groups its sums
// differently (tests/test_attention_kernels.cpp bounds it in ulps); on values
// of order 1 with 4 keys, 1e-5 absolute is far above that and far below the
// 0.1..1 a K/V head mix-up moves Z by.
constexpr double kStreamAbs = 1e-5;
// explain recomputes a cell in the _ref kernels' order without FMA; the SIMD
// kernels use FMA: sums of d_model = 8 terms of order 1 differ by a few ulp.
constexpr double kExplainAbs = 1e-5;

std::string lesson_text(const std::string& body) {
    return R"({"format": "attntrace-lesson", "version": 1, "id": "test", "title": "test",
               "source": {"document": "test_gqa.cpp"}, )" +
           body + "}";
}

const Step& step(const Trace& t, const std::string& name) {
    const Step* s = t.find(name);
    INFO("step " << name);
    REQUIRE(s != nullptr);
    return *s;
}

void require_close(const Tensor& got, const std::vector<float>& want, double rel) {
    REQUIRE(got.size() == want.size());
    for (std::size_t i = 0; i < want.size(); ++i) {
        INFO("cell " << i << ": got " << got.data[i] << ", want " << want[i]);
        CHECK(std::fabs(got.data[i] - want[i]) <= rel * std::fabs(want[i]) + 1e-7);
    }
}

// MQA: 2 query heads of hs 2 share 1 K/V head; scaling off so the weights are
// softmax of the raw scores.
//   Q = X·W_Q: the[h0 1 0 | h1 0 1]   cat[h0 0 1 | h1 1 0]
//   K = X·W_K: the[1 0]  cat[0 2]      V = X·W_V: the[1 2]  cat[3 4]
//   S h0: the [1 0], cat [0 2]     S h1: the [0 2], cat [1 0]   (both against the one K)
//   softmax([1, 0]) = [0.7310585786, 0.2689414214]   softmax([0, 2]) = [0.1192029220, 0.8807970780]
//   Z: 0.7310585786·[1 2] + 0.2689414214·[3 4] = [1.5378828428 2.5378828428]
//      0.1192029220·[1 2] + 0.8807970780·[3 4] = [2.7615941560 3.7615941560]
const char* kMqa = R"(
  "tokens": ["the", "cat"],
  "config": {"d_model": 4, "heads": 2, "kv_heads": 1, "scale": false},
  "run": {"from": "embed", "to": "mix"},
  "inputs": {"X": [[1, 0, 0, 0], [0, 1, 0, 0]]},
  "weights": {"W_Q": [[1, 0, 0, 1], [0, 1, 1, 0], [0, 0, 0, 0], [0, 0, 0, 0]],
              "W_K": [[1, 0], [0, 2], [0, 0], [0, 0]],
              "W_V": [[1, 2], [3, 4], [0, 0], [0, 0]]})";

}  // namespace

TEST_CASE("MQA worked by hand: 2 query heads of size 2 read the one K/V head", "[gqa]") {
    const Lesson lesson = parse_lesson(lesson_text(kMqa), "test.json");
    const Trace t = run_held(lesson);
    const Step& k = step(t, "blocks.0.attn.hook_k");
    CHECK(k.shape == Shape{2, 1, 2});
    CHECK(k.axes == std::vector<std::string>{"key", "kv_head", "d_head"});
    CHECK(k.labels[1] == std::vector<std::string>{"kv0"});
    require_close(step(t, "blocks.0.attn.hook_kv_head").held(), {0, 0}, 0);
    require_close(step(t, "blocks.0.attn.hook_scores_raw").held(), {1, 0, 0, 2, 0, 2, 1, 0}, 0);
    const std::vector<float> z = {1.5378828428f, 2.5378828428f, 2.7615941560f, 3.7615941560f,
                                  2.7615941560f, 3.7615941560f, 1.5378828428f, 2.5378828428f};
    require_close(step(t, "blocks.0.attn.hook_z").held(), z, kHandRel);
    SECTION("streamed over key blocks, the same Z") {
        const Trace s = run_held(lesson, Arithmetic::exact, parse_trace_policy("blocks.0.attn.hook_z", "test"));
        REQUIRE(s.streamed_attention);
        require_close(step(s, "blocks.0.attn.hook_z").held(), z, kHandRel);
    }
}

TEST_CASE("GQA equals MHA whose W_K and W_V repeat each K/V head's columns for its group", "[gqa]") {
    // 8 query heads of hs 2 sharing 2 K/V heads (4 per group), generated weights and biases.
    const std::string body = R"(
      "tokens": ["a", "b", "c", "d", "e"],
      "config": {"d_model": 16, "heads": 8, "kv_heads": 2, "mask": "causal"},
      "run": {"from": "embed", "to": "out"},
      "inputs": {"X": {"generate": "normal", "seed": 5}},
      "weights": {"b_K": {"generate": "normal", "seed": 6, "std": 0.5},
                  "b_V": {"generate": "normal", "seed": 7, "std": 0.5}},
      "weights_seed": 9)";
    const Lesson gqa = parse_lesson(lesson_text(body), "gqa.json");
    Lesson mha = gqa;
    mha.config.kv_heads = 0;  // as many as heads
    const Dims d = gqa.dims();
    REQUIRE(d.KVH == 2);
    for (const char* name : {"W_K", "W_V", "b_K", "b_V"}) {
        const Tensor& w = *gqa.weight(name);
        const std::size_t rows = w.rank() == 2 ? w.shape[0] : 1, kv = d.KVH * d.hs;
        Tensor wide(w.rank() == 2 ? Shape{rows, d.C} : Shape{d.C});
        for (std::size_t r = 0; r < rows; ++r)
            for (std::size_t h = 0; h < d.NH; ++h)
                for (std::size_t e = 0; e < d.hs; ++e)
                    wide.data[r * d.C + h * d.hs + e] = w.data[r * kv + d.kv_of(h) * d.hs + e];
        mha.weights[name] = wide;
    }
    for (const char* policy : {"full", "blocks.0.attn.hook_z,blocks.0.hook_attn_out"}) {
        INFO("trace policy " << policy);
        const TracePolicy p = parse_trace_policy(policy, "test");
        const Trace a = run_held(gqa, Arithmetic::exact, p), b = run_held(mha, Arithmetic::exact, p);
        // The same products in the same order, only read through another stride:
        // the same floats, bit for bit.
        for (const char* name : {"blocks.0.attn.hook_z", "blocks.0.hook_attn_out"})
            CHECK(same_bits(step(a, name).held(), step(b, name).held()));
        if (std::string(policy) == "full") {
            CHECK(same_bits(step(a, "blocks.0.attn.hook_q").held(), step(b, "blocks.0.attn.hook_q").held()));
            CHECK(same_bits(step(a, "blocks.0.attn.hook_pattern").held(), step(b, "blocks.0.attn.hook_pattern").held()));
            CHECK(step(a, "blocks.0.attn.hook_k").shape == Shape{5, 2, 2});
            CHECK(step(b, "blocks.0.attn.hook_k").shape == Shape{5, 8, 2});
            require_close(step(a, "blocks.0.attn.hook_kv_head").held(), {0, 0, 0, 0, 1, 1, 1, 1}, 0);
            require_close(step(b, "blocks.0.attn.hook_kv_head").held(), {0, 1, 2, 3, 4, 5, 6, 7}, 0);
        }
    }
    SECTION("streamed and materialised GQA agree") {
        const Trace full = run_held(gqa);
        const Trace streamed = run_held(gqa, Arithmetic::exact, parse_trace_policy("blocks.0.attn.hook_z", "test"));
        REQUIRE(streamed.streamed_attention);
        const Tensor& x = step(full, "blocks.0.attn.hook_z").held();
        const Tensor& y = step(streamed, "blocks.0.attn.hook_z").held();
        for (std::size_t i = 0; i < x.size(); ++i) CHECK(std::fabs(x.data[i] - y.data[i]) <= kStreamAbs);
    }
}

TEST_CASE("GQA with widths of their own (d_k 3, d_v 5) equals MHA whose W_K and W_V repeat each K/V head", "[gqa][widths]") {
    // 4 query heads over d_model 10 (not a multiple of 4: config.d_k), K heads 3 wide, V heads 5 wide, 2 K/V heads
    const std::string body = R"(
      "tokens": ["a", "b", "c", "d", "e", "f"],
      "config": {"d_model": 10, "heads": 4, "kv_heads": 2, "d_k": 3, "d_v": 5, "mask": "causal"},
      "run": {"from": "embed", "to": "out"},
      "inputs": {"X": {"generate": "normal", "seed": 15}},
      "weights": {"b_Q": {"generate": "normal", "seed": 16, "std": 0.5},
                  "b_K": {"generate": "normal", "seed": 17, "std": 0.5},
                  "b_V": {"generate": "normal", "seed": 18, "std": 0.5}},
      "weights_seed": 19)";
    const Lesson gqa = parse_lesson(lesson_text(body), "gqa-widths.json");
    const Dims d = gqa.dims();
    REQUIRE(d.hs == 3);
    REQUIRE(d.hv == 5);
    CHECK(gqa.weight("W_Q")->shape == Shape{10, 12});
    CHECK(gqa.weight("W_K")->shape == Shape{10, 6});
    CHECK(gqa.weight("W_V")->shape == Shape{10, 10});
    CHECK(gqa.weight("W_O")->shape == Shape{20, 10});
    Lesson mha = gqa;
    mha.config.kv_heads = 0;
    for (const char* name : {"W_K", "W_V", "b_K", "b_V"}) {
        const Tensor& w = *gqa.weight(name);
        const std::size_t width = name[2] == 'V' ? d.hv : d.hs, kv = d.KVH * width, wide_n = d.NH * width;
        const std::size_t rows = w.rank() == 2 ? w.shape[0] : 1;
        Tensor wide(w.rank() == 2 ? Shape{rows, wide_n} : Shape{wide_n});
        for (std::size_t r = 0; r < rows; ++r)
            for (std::size_t h = 0; h < d.NH; ++h)
                for (std::size_t e = 0; e < width; ++e)
                    wide.data[r * wide_n + h * width + e] = w.data[r * kv + d.kv_of(h) * width + e];
        mha.weights[name] = wide;
    }
    const Trace a = run_held(gqa), b = run_held(mha);
    CHECK(step(a, "blocks.0.attn.hook_v").shape == Shape{6, 2, 5});
    CHECK(step(b, "blocks.0.attn.hook_v").shape == Shape{6, 4, 5});
    CHECK(step(a, "blocks.0.attn.hook_z").shape == Shape{6, 4, 5});
    CHECK(step(a, "blocks.0.attn.hook_z").axes == std::vector<std::string>{"query", "head", "d_head"});
    for (const char* name : {"blocks.0.attn.hook_scores_raw", "blocks.0.attn.hook_pattern", "blocks.0.attn.hook_z",
                             "blocks.0.hook_attn_out"}) {
        INFO(name);
        CHECK(same_bits(step(a, name).held(), step(b, name).held()));
    }
    // Scaling uses d_k: the raw scores over √3
    const Tensor& raw = step(a, "blocks.0.attn.hook_scores_raw").held();
    const Tensor& scaled = step(a, "blocks.0.attn.hook_scores_scaled").held();
    for (std::size_t i = 0; i < raw.size(); ++i) CHECK(scaled.data[i] == raw.data[i] / std::sqrt(3.0f));
    SECTION("the plan does not stream value heads of another width, and streams d_k alone as materialised") {
        const TracePolicy z_only = parse_trace_policy("blocks.0.attn.hook_z", "test");
        CHECK_FALSE(run_held(gqa, Arithmetic::exact, z_only).streamed_attention);
        Lesson same = gqa;
        same.config.d_v = 0;  // d_v = d_k = 3
        for (const char* name : {"W_V", "b_V", "W_O"}) same.weights.erase(name);
        same.weights["W_V"] = Tensor(Shape{10, 6});
        same.weights["W_O"] = Tensor(Shape{12, 10});
        for (std::size_t i = 0; i < 60; ++i) same.weights["W_V"].data[i] = std::sin(0.37f * float(i));
        for (std::size_t i = 0; i < 120; ++i) same.weights["W_O"].data[i] = std::cos(0.21f * float(i));
        const Trace full = run_held(same);
        const Trace streamed = run_held(same, Arithmetic::exact, z_only);
        REQUIRE(streamed.streamed_attention);
        const Tensor& x = step(full, "blocks.0.attn.hook_z").held();
        const Tensor& y = step(streamed, "blocks.0.attn.hook_z").held();
        REQUIRE(x.shape == y.shape);
        for (std::size_t i = 0; i < x.size(); ++i) CHECK(std::fabs(x.data[i] - y.data[i]) <= kStreamAbs);
    }
}

TEST_CASE("kv_heads equal to heads gives the trace of a lesson without kv_heads, bit for bit", "[gqa]") {
    for (const std::string& file : test::lesson_files()) {
        const Lesson plain = read_lesson(file);
        if (plain.config.kv_heads != 0 || plain.dims().C > 64) continue;
        INFO(file);
        Lesson explicit_kv = plain;
        explicit_kv.config.kv_heads = plain.config.heads;
        const Trace a = run_held(plain), b = run_held(explicit_kv);
        REQUIRE(a.steps.size() == b.steps.size());
        for (std::size_t i = 0; i < a.steps.size(); ++i) {
            INFO(a.steps[i].name);
            CHECK(a.steps[i].axes == b.steps[i].axes);
            CHECK(same_bits(a.steps[i].held(), b.steps[i].held()));
        }
    }
}

TEST_CASE("explain names the K/V head a query head reads, and the map's arithmetic", "[gqa][explain]") {
    const Lesson lesson = parse_lesson(lesson_text(R"(
      "tokens": ["a", "b"],
      "config": {"d_model": 8, "heads": 4, "kv_heads": 2},
      "run": {"from": "embed", "to": "mix"},
      "inputs": {"X": {"generate": "normal", "seed": 1}},
      "weights_seed": 1)"), "test.json");
    const Trace t = run_held(lesson);
    auto explain = [&](const std::string& cell) {
        return explain_cell(lesson, t, parse_cell(t, cell), ExplainOptions{});
    };
    const Explanation map = explain("blocks.0.attn.hook_kv_head[3]");
    CHECK_THAT(map.text, Catch::Contains("⌊3 / 2⌋ = 1"));
    CHECK(map.recomputed == 1.0f);
    CHECK(map.traced == 1.0f);
    const Explanation s = explain("blocks.0.attn.hook_scores_raw[h2,a,b]");
    CHECK_THAT(s.text, Catch::Contains("K[b,kv1,d0]"));
    CHECK_THAT(s.text, Catch::Contains("query head h2 reads K/V head kv1"));
    REQUIRE(s.recomputed);
    CHECK(std::fabs(*s.recomputed - s.traced) <= kExplainAbs);
    const Explanation z = explain("blocks.0.attn.hook_z[a,h1,1]");
    CHECK_THAT(z.text, Catch::Contains("V[a,kv0,d1]"));
    REQUIRE(z.recomputed);
    CHECK(std::fabs(*z.recomputed - z.traced) <= kExplainAbs);
    const Explanation k = explain("blocks.0.attn.hook_k[b,kv1,0]");
    CHECK_THAT(k.text, Catch::Contains("query heads h2..h3"));
    REQUIRE(k.recomputed);
    CHECK(std::fabs(*k.recomputed - k.traced) <= kExplainAbs);
}

TEST_CASE("attntrace random --kv-heads writes a GQA lesson that runs, and refuses a K/V count not dividing --heads",
          "[gqa][cli]") {
    test::TempDir dir;
    auto made = test::run_cli({"random", "--tokens", "6", "--d-model", "16", "--heads", "4", "--kv-heads", "2",
                               "--d-ff", "8", "-o", dir.file("gqa.json")});
    REQUIRE(made.status == 0);
    CHECK_THAT(test::read_text(dir.file("gqa.json")), Catch::Contains("\"kv_heads\": 2"));
    auto ran = test::run_cli({"run", dir.file("gqa.json"), "--steps", "hook_kv_head", "hook_z"});
    INFO(ran.err);
    REQUIRE(ran.status == 0);
    CHECK_THAT(ran.out, Catch::Contains("K/V heads 2 (grouped-query): h0..h1 read kv0 · h2..h3 read kv1"));
    auto explained = test::run_cli({"explain", "002-gqa-groups", "blocks.0.attn.hook_kv_head[3]", "hook_z[cat,h5,1]"});
    REQUIRE(explained.status == 0);
    CHECK_THAT(explained.out, Catch::Contains("g(h3) = ⌊3 / 4⌋ = 0"));
    CHECK_THAT(explained.out, Catch::Contains("V[the,kv1,d1]"));
    auto bad = test::run_cli({"random", "--heads", "4", "--kv-heads", "3"});
    CHECK(bad.status == 2);
    CHECK_THAT(bad.err, Catch::Contains("--kv-heads"));
    auto bench = test::run_cli({"bench", "--tokens", "4", "--d-model", "8", "--heads", "4", "--kv-heads", "3"});
    CHECK(bench.status == 2);
    CHECK_THAT(bench.err, Catch::Contains("--kv-heads"));
}

TEST_CASE("a claim's head on K or V reads as kv_head when kv_heads = heads, and is refused under GQA", "[gqa]") {
    auto with = [](const std::string& config) {
        return lesson_text(R"("tokens": ["a", "b"], "config": )" + config + R"(,
          "run": {"from": "embed", "to": "qkv"}, "inputs": {"X": {"generate": "normal", "seed": 1}}, "weights_seed": 1,
          "claims": [{"id": "k", "step": "blocks.0.attn.hook_k", "shape": {"head": 2}, "expect": "agrees"}])");
    };
    const Lesson mha = parse_lesson(with(R"({"d_model": 4, "heads": 2})"), "mha.json");
    REQUIRE(mha.claims.size() == 1);
    CHECK(mha.claims[0].shape.front().first == Axis::kv_head);
    try {
        parse_lesson(with(R"({"d_model": 4, "heads": 2, "kv_heads": 1})"), "gqa.json");
        FAIL("a query-head axis on K under GQA was accepted");
    } catch (const InputError& e) {
        CHECK_THAT(e.what(), Catch::Contains("gqa.json: claims[0].shape.head: expected an axis of blocks.0.attn.hook_k "
                                             "(key, kv_head, d_head)"));
    }
}

}  // namespace test_gqa

// Positional encodings: sinusoidal and learned vectors added at the embed
// stage, ALiBi's slopes and bias (RoPE: test_rope.cpp). Hand-computed
// cases, the invariants that define each encoding, and the plan's choices.
//
// Letters: T tokens, Tq query tokens, C d_model, NH heads, hs = C/NH.
#include "held_trace.hpp"
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <complex>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "core/error.hpp"
#include "kernels/positions.hpp"
#include "positions_support.hpp"
#include "support.hpp"

using namespace attntrace;
using namespace attntrace::positions_test;

namespace test_positions {

TEST_CASE("sinusoidal PE for C = 4: row 0 is 0 1 0 1, row 1 is sin 1, cos 1, sin 0.01, cos 0.01", "[positions]") {
    // angle(p, i) = p / 10000^(2i/4): i = 0 -> p, i = 1 -> p / 100. Interleaved: even dims sin, odd cos.
    Trace t = run(R"("tokens": ["a", "b"], "config": {"d_model": 4, "positions": "sinusoidal"},
                    "run": {"from": "embed", "to": "embed"},
                    "inputs": {"X": [[1, 2, 3, 4], [0, 0, 0, 0]]})");
    check_values(t, "hook_pos_embed", {0, 1, 0, 1, 0.841470985, 0.540302306, 0.00999983333, 0.99995});
    check_values(t, "hook_embed", {1, 2, 3, 4, 0, 0, 0, 0});  // inputs.X taken as the token embeddings
    check_values(t, "blocks.0.hook_resid_pre", {1, 3, 3, 5, 0.841470985, 0.540302306, 0.00999983333, 0.99995});
    CHECK(value(t, "blocks.0.hook_resid_pre").shape == Shape{2, 4});
}

TEST_CASE("sinusoidal PE with an odd d_model: the last dimension is a sine of its own pair", "[positions]") {
    // C = 3, p = 1: dims 0, 1 use angle 1; dim 2 (i = 1) uses 1 / 10000^(2/3) = 1 / 464.158883.
    Trace t = run(R"("tokens": ["a", "b"], "config": {"d_model": 3, "positions": "sinusoidal"},
                    "run": {"from": "embed", "to": "embed"}, "inputs": {"X": [[0, 0, 0], [0, 0, 0]]})");
    check_values(t, "hook_pos_embed", {0, 1, 0, 0.841470985, 0.540302306, 0.00215443302});
}

TEST_CASE("sinusoidal PE in halves (layout half): every sine first, then every cosine of the same angles", "[positions]") {
    // C = 4: pair 0 in dims 0 (sin) and 2 (cos), angle p; pair 1 in dims 1 (sin) and 3 (cos), angle p / 100
    Trace t = run(R"("tokens": ["a", "b"], "config": {"d_model": 4, "positions": {"kind": "sinusoidal", "layout": "half"}},
                    "run": {"from": "embed", "to": "embed"}, "inputs": {"X": [[0, 0, 0, 0], [0, 0, 0, 0]]})");
    check_values(t, "hook_pos_embed", {0, 0, 1, 1, 0.841470985, 0.00999983333, 0.540302306, 0.99995});
    // the paper's layout stays the default, written out or not
    Trace i = run(R"("tokens": ["a", "b"], "config": {"d_model": 4, "positions": {"kind": "sinusoidal", "layout": "interleaved"}},
                    "run": {"from": "embed", "to": "embed"}, "inputs": {"X": [[0, 0, 0, 0], [0, 0, 0, 0]]})");
    check_values(i, "hook_pos_embed", {0, 1, 0, 1, 0.841470985, 0.540302306, 0.00999983333, 0.99995});
}

TEST_CASE("sinusoidal layouts refused in one line: an unknown layout, halves of an odd d_model, another field", "[positions][errors]") {
    auto refusal = [](const std::string& positions, int d_model) {
        const std::string l = R"({"format": "attntrace-lesson", "version": 1, "id": "p", "title": "p", "tokens": ["a", "b"],
            "config": {"d_model": )" + std::to_string(d_model) + R"(, "positions": )" + positions + R"(},
            "run": {"from": "embed", "to": "embed"}, "inputs": {"X": [[0, 0, 0], [0, 0, 0]]}})";
        return attntrace::test::lesson_refusal(l, "p.json");
    };
    CHECK(refusal(R"({"kind": "sinusoidal", "layout": "sines-first"})", 4) ==
          "p.json: config.positions.layout: expected \"interleaved\" (sin in d = 2i, cos in 2i+1: the paper's) or \"half\" (sin in "
          "d = i, cos in C/2 + i), found string \"sines-first\"");
    CHECK(refusal(R"({"kind": "sinusoidal", "layout": "half"})", 3) ==
          "p.json: config.d_model: expected an even d_model for sinusoidal positions in halves (sin and cos of each angle), found 3");
    CHECK(refusal(R"({"kind": "sinusoidal", "base": 500})", 4).find("p.json: config.positions") == 0);
}

TEST_CASE("learned positions add row p of inputs.positions to token p, from a longer table", "[positions]") {
    Trace t = run(R"("tokens": ["a", "b"], "token_ids": [1, 0], "config": {"d_model": 2, "positions": "learned"},
                    "run": {"from": "embed", "to": "embed"},
                    "inputs": {"embedding": [[1, 2], [3, 4]], "positions": [[0.5, -1], [10, 20], [99, 99]]})");
    check_values(t, "hook_embed", {3, 4, 1, 2});
    check_values(t, "hook_pos_embed", {0.5, -1, 10, 20});
    check_values(t, "blocks.0.hook_resid_pre", {3.5, 3, 11, 22});
}

TEST_CASE("ALiBi default slopes: NH = 8 gives 2^-1 .. 2^-8, NH = 6 interpolates as the paper", "[positions][alibi]") {
    const auto s8 = alibi_default_slopes(8);
    REQUIRE(s8.size() == 8);
    for (std::size_t h = 0; h < 8; ++h) CHECK(s8[h] == std::ldexp(1.0, -static_cast<int>(h + 1)));
    // NH = 6: the 4 slopes of n = 4 (2^-2, 2^-4, 2^-6, 2^-8), then slopes 0 and 2 of 2n = 8 (2^-1, 2^-3).
    CHECK(alibi_default_slopes(6) == std::vector<double>{0.25, 0.0625, 0.015625, 0.00390625, 0.5, 0.125});
    CHECK(alibi_default_slopes(1) == std::vector<double>{1.0 / 256});
}

TEST_CASE("ALiBi bias is -slope x distance, added before the mask, with queries at the last positions",
          "[positions][alibi]") {
    // Two heads: default slopes 2^-4 = 0.0625 and 2^-8. One query ("c", position 2) against 3 keys.
    Trace t = run(R"("tokens": ["a", "b", "c"], "query_tokens": ["c"],
        "config": {"d_model": 2, "heads": 2, "positions": {"kind": "alibi"}, "scale": false},
        "run": {"from": "scale", "to": "softmax"},
        "given": {"blocks.0.attn.hook_scores_raw": [[[1, 2, 3]], [[0, 0, 0]]]})");
    check_values(t, "blocks.0.attn.hook_alibi_slopes", {0.0625, 0.00390625});
    check_values(t, "blocks.0.attn.hook_alibi", {-0.125, -0.0625, 0, -0.0078125, -0.00390625, 0});
    check_values(t, "blocks.0.attn.hook_attn_scores", {0.875, 1.9375, 3, -0.0078125, -0.00390625, 0});
    // Lesson slopes, a causal mask on a 2 x 2 block: bias[0] = [[0, -3], [-3, 0]], the mask hides (0, 1).
    Trace c = run(R"("tokens": ["a", "b"], "config": {"d_model": 1, "mask": "causal", "scale": false,
        "positions": {"kind": "alibi", "slopes": [3]}}, "run": {"from": "scale", "to": "mask"},
        "given": {"blocks.0.attn.hook_scores_raw": [[[1, 1], [1, 1]]]})");
    check_values(c, "blocks.0.attn.hook_alibi", {0, -3, -3, 0});
    const Tensor& s = value(c, "blocks.0.attn.hook_attn_scores");
    CHECK(s.data[0] == 1.0f);
    CHECK(std::isinf(s.data[1]));
    CHECK(s.data[2] == -2.0f);
    CHECK(s.data[3] == 1.0f);
}

TEST_CASE("ALiBi's pattern is the paper's causal softmax(q·k/√hs + m·(j - i)) over j <= i, in double",
          "[positions][alibi]") {
    Trace t = run(seeded(7, 16, 4, R"({"kind": "alibi"})", R"(, "mask": "causal")"));
    const Tensor& s = value(t, "blocks.0.attn.hook_scores_scaled");  // (NH, T, T)
    const Tensor& a = value(t, "blocks.0.attn.hook_pattern");
    const std::size_t NH = 4, T = 7;
    // Weights in [0, 1] from float32 scores of size ~1: a few float32 ulps.
    constexpr double kWeightAbs = 1e-6;
    for (std::size_t h = 0; h < NH; ++h) {
        const double m = std::exp2(-8.0 * double(h + 1) / double(NH));  // the paper's slopes for 4 heads
        for (std::size_t i = 0; i < T; ++i) {
            double sum = 0;
            std::vector<double> e(i + 1);
            for (std::size_t j = 0; j <= i; ++j)
                sum += e[j] = std::exp(double(s.data[(h * T + i) * T + j]) + m * (double(j) - double(i)));
            for (std::size_t j = 0; j < T; ++j) {
                INFO("h" << h << " query " << i << " key " << j);
                CHECK(a.data[(h * T + i) * T + j] == Approx(j <= i ? e[j] / sum : 0.0).margin(kWeightAbs));
            }
        }
    }
}

TEST_CASE("ALiBi with zero slopes gives exactly the block without positions", "[positions][alibi]") {
    Trace none = run(seeded(6, 8, 2, "\"none\"", R"(, "mask": "causal")"));
    Trace zero = run(seeded(6, 8, 2, R"({"kind": "alibi", "slopes": [0, 0]})", R"(, "mask": "causal")"));
    for (const char* n : {"blocks.0.attn.hook_attn_scores", "blocks.0.attn.hook_pattern", "blocks.0.ln2.hook_normalized"}) {
        INFO(n);
        CHECK(same_bits(value(none, n), value(zero, n)));
    }
    // and the default slopes do change the pattern
    Trace alibi = run(seeded(6, 8, 2, R"({"kind": "alibi"})", R"(, "mask": "causal")"));
    CHECK_FALSE(same_bits(value(none, "blocks.0.attn.hook_pattern"), value(alibi, "blocks.0.attn.hook_pattern")));
}

TEST_CASE("ALiBi never streams: the plan materialises the scores even with --trace none", "[positions][alibi]") {
    Lesson l = lesson(seeded(6, 8, 2, R"({"kind": "alibi"})"));
    const Plan p = make_plan(l, parse_trace_policy("none", "--trace"), Arithmetic::exact, 1);
    CHECK_FALSE(p.stream_attention);
    Lesson r = lesson(seeded(6, 8, 2, R"({"kind": "rope", "layout": "half"})"));
    CHECK(make_plan(r, parse_trace_policy("none", "--trace"), Arithmetic::exact, 1).stream_attention);
    // The output under --trace none is the full run's
    Trace full = run_held(l);
    Trace none = run_held(l, Arithmetic::exact, parse_trace_policy("none", "--trace"));
    CHECK(same_bits(value(full, "blocks.0.ln2.hook_normalized"), value(none, "blocks.0.ln2.hook_normalized")));
}

TEST_CASE("without positions, permuting the tokens only permutes the output rows", "[positions]") {
    // What lesson 001 says and why positions exist; with sinusoidal positions it no longer holds.
    const std::string X = "[[1, 0, 2, -1], [0.5, 1, -1, 0], [2, -0.5, 0, 1]]", Xp = "[[2, -0.5, 0, 1], [1, 0, 2, -1], [0.5, 1, -1, 0]]";
    auto block = [&](const std::string& x, const char* positions) {
        return run(std::string(R"("tokens": ["a", "b", "c"], "config": {"d_model": 4, "heads": 2, "d_ff": 4,
            "positions": ")") + positions + R"("}, "inputs": {"X": )" + x + R"(}, "weights_seed": 8)");
    };
    for (const char* positions : {"none", "sinusoidal"}) {
        const Trace ta = block(X, positions), tb = block(Xp, positions);
        const Tensor& a = value(ta, "blocks.0.ln2.hook_normalized");
        const Tensor& b = value(tb, "blocks.0.ln2.hook_normalized");
        // permuted row 0 is original row 2, 1 is 0, 2 is 1
        bool permuted = true;
        const std::size_t from[3] = {2, 0, 1};
        for (std::size_t r = 0; r < 3; ++r)
            for (std::size_t c = 0; c < 4; ++c)
                permuted = permuted && std::abs(b.data[r * 4 + c] - a.data[from[r] * 4 + c]) <= kInvariantAbs;
        INFO(positions);
        CHECK(permuted == (std::string(positions) == "none"));
    }
}

TEST_CASE("positions in the CLI: run shows them, explain writes out RoPE, ALiBi and PE cells, export reads back",
          "[positions][cli]") {
    using test::run_cli;
    for (const auto& [name, cell, words] :
         std::vector<std::tuple<std::string, std::string, std::vector<std::string>>>{
             {"001-positions-rope", "blocks.0.attn.hook_rot_q[1,0,0]", {"partner", "cos", "sin", "position p = 1"}},
             {"001-positions-rope", "blocks.0.attn.hook_rot_k[2,0,3]", {"d3 pairs with d1", "second"}},
             {"001-positions-alibi", "blocks.0.attn.hook_alibi[0,3,1]", {"distance |3 - 1| = 2", "-m_h"}},
             {"001-positions-alibi", "blocks.0.attn.hook_alibi_slopes[1]", {"2^(-8(h+1)/n)"}},
             {"001-positions-sinusoidal", "hook_pos_embed[1,1]", {"cos", "angle = p / 10000^(2i/C)"}},
             {"001-positions-sinusoidal", "blocks.0.hook_resid_pre[2,0]", {"X = E + PE"}}}) {
        INFO(name << " " << cell);
        auto r = run_cli({"explain", name, cell});
        INFO(r.err);
        REQUIRE(r.status == 0);
        for (const auto& w : words) {
            INFO(r.out << "\nmissing: " << w);
            CHECK(r.out.find(w) != std::string::npos);
        }
        CHECK(r.out.find("✓ (the same)") != std::string::npos);
    }
    auto r = run_cli({"run", "001-positions-rope", "--steps", "hook_rot_q"});
    REQUIRE(r.status == 0);
    CHECK(r.out.find("positions: rope (layout half, base 10000)") != std::string::npos);

    test::TempDir dir;
    auto e = run_cli({"export", "001-positions-alibi", "-o", dir.file("t.json")});
    REQUIRE(e.status == 0);
    auto j = nlohmann::json::parse(test::read_text(dir.file("t.json")));
    CHECK(j["config"]["positions"]["kind"] == "alibi");
    bool has_bias = false;
    for (const auto& s : j["steps"]) has_bias = has_bias || s["name"] == "blocks.0.attn.hook_alibi";
    CHECK(has_bias);
    auto d = run_cli({"diff", dir.file("t.json"), dir.file("t.json")});  // the trace reader takes it back
    INFO(d.err);
    CHECK(d.status == 0);
    // A lesson without positions exports no "positions": older traces unchanged.
    auto n = run_cli({"export", "003-3.1-ring-fell", "-o", dir.file("n.json")});
    REQUIRE(n.status == 0);
    CHECK_FALSE(nlohmann::json::parse(test::read_text(dir.file("n.json")))["config"].contains("positions"));
}

}  // namespace test_positions

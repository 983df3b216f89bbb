// Positional encodings: sinusoidal and learned vectors added at the embed
// stage, RoPE's rotation of Q and K, ALiBi's slopes and bias. Hand-computed
// cases, the invariants that define each encoding, and the plan's choices.
//
// Letters: T tokens, Tq query tokens, C d_model, NH heads, hs = C/NH.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <complex>
#include <cstring>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "kernels/positions.hpp"
#include "lesson/lesson.hpp"
#include "pipeline/run.hpp"
#include "support.hpp"
#include "trace/policy.hpp"

using namespace attntrace;

namespace {

// Hand values to 9 significant digits against float32 results (~7 digits):
// a relative 1e-6 accepts rounding only; every mistake here moves a leading digit.
constexpr double kHandRel = 1e-6;
constexpr double kHandAbs = 1e-6;
// Invariants compare two float32 computations of the same real quantity by
// different routes (a norm before and after 4-8 rotated products; a score at
// two position pairs whose cos/sin were rounded separately): a few ulps of
// values of size ~1..10, summed over hs <= 8 terms.
constexpr double kInvariantAbs = 2e-5;

std::string lesson_text(const std::string& body) {
    return R"({"format": "attntrace-lesson", "version": 1, "id": "test", "title": "test",
               "source": {"document": "test_positions.cpp"}, )" +
           body + "}";
}

Lesson lesson(const std::string& body) { return parse_lesson(lesson_text(body), "test.json"); }

Trace run(const std::string& body, const TracePolicy& policy = {}) {
    return run_lesson(lesson(body), Arithmetic::exact, policy);
}

const Tensor& value(const Trace& t, const std::string& name) {
    const Step* s = t.find(name);
    INFO("step " << name);
    REQUIRE(s != nullptr);
    INFO(s->note);
    REQUIRE(s->source != StepSource::not_computable);
    return s->value;
}

void check_values(const Trace& t, const std::string& name, const std::vector<double>& want) {
    const Tensor& got = value(t, name);
    INFO("step " << name);
    REQUIRE(got.size() == want.size());
    for (std::size_t i = 0; i < want.size(); ++i) {
        INFO("cell " << i << ": got " << got.data[i] << ", want " << want[i]);
        CHECK(got.data[i] == Approx(want[i]).epsilon(kHandRel).margin(kHandAbs));
    }
}

bool same_bits(const Tensor& a, const Tensor& b) {
    return a.size() == b.size() && std::memcmp(a.ptr(), b.ptr(), a.size() * sizeof(float)) == 0;
}

// A seeded block of T tokens: X and every weight drawn from the seed.
std::string seeded(std::size_t T, std::size_t C, std::size_t NH, const std::string& positions,
                   const std::string& extra = "") {
    std::string tokens;
    for (std::size_t t = 0; t < T; ++t) tokens += (t ? ", " : "") + std::string("\"t") + std::to_string(t) + "\"";
    return "\"tokens\": [" + tokens + "], \"config\": {\"d_model\": " + std::to_string(C) +
           ", \"heads\": " + std::to_string(NH) + ", \"d_ff\": 8, \"positions\": " + positions + extra +
           "}, \"inputs\": {\"X\": {\"generate\": \"normal\", \"seed\": 5}}, \"weights_seed\": 11";
}

}  // namespace

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

TEST_CASE("learned positions add row p of inputs.positions to token p, from a longer table", "[positions]") {
    Trace t = run(R"("tokens": ["a", "b"], "token_ids": [1, 0], "config": {"d_model": 2, "positions": "learned"},
                    "run": {"from": "embed", "to": "embed"},
                    "inputs": {"embedding": [[1, 2], [3, 4]], "positions": [[0.5, -1], [10, 20], [99, 99]]})");
    check_values(t, "hook_embed", {3, 4, 1, 2});
    check_values(t, "hook_pos_embed", {0.5, -1, 10, 20});
    check_values(t, "blocks.0.hook_resid_pre", {3.5, 3, 11, 22});
}

TEST_CASE("RoPE with hs = 2 by hand: q at position p turns to (cos p, sin p), and scores are cos(m - n)",
          "[positions][rope]") {
    // One head of 2 dims, W_Q = W_K = I, every token x = (1, 0). θ_0 = base^0 = 1, so the
    // angle is p: q'_p = (cos p, sin p), and q'_m·k'_n = cos m cos n + sin m sin n = cos(m - n).
    for (const char* layout : {"half", "interleaved"}) {  // one pair: both layouts pair (0, 1)
        INFO(layout);
        Trace t = run(std::string(R"("tokens": ["a", "b", "c"],
            "config": {"d_model": 2, "positions": {"kind": "rope", "layout": ")") + layout + R"("}},
            "run": {"from": "embed", "to": "scores"},
            "inputs": {"X": [[1, 0], [1, 0], [1, 0]]},
            "weights": {"W_Q": [[1, 0], [0, 1]], "W_K": [[1, 0], [0, 1]], "W_V": [[1, 0], [0, 1]]})");
        check_values(t, "blocks.0.attn.hook_rot_q", {1, 0, 0.540302306, 0.841470985, -0.416146837, 0.909297427});
        check_values(t, "blocks.0.attn.hook_rot_k", {1, 0, 0.540302306, 0.841470985, -0.416146837, 0.909297427});
        check_values(t, "blocks.0.attn.hook_q", {1, 0, 1, 0, 1, 0});  // the projection itself is not rotated
        const double c1 = 0.540302306, c2 = -0.416146837;
        check_values(t, "blocks.0.attn.hook_scores_raw", {1, c1, c2, c1, 1, c1, c2, c1, 1});
    }
}

TEST_CASE("RoPE's base sets the slower pairs' frequency: base 100, hs = 4, pair 1 turns by p/10", "[positions][rope]") {
    // θ_1 = 100^(-2/4) = 0.1. A vector holding only pair 1's first member turns to (cos 0.1p, sin 0.1p) in that pair:
    // dims (1, 3) in the half layout, (2, 3) in the interleaved one.
    for (const auto& [layout, x, want] :
         std::vector<std::tuple<std::string, std::string, std::vector<double>>>{
             {"half", "[0, 1, 0, 0]", {0, 1, 0, 0, 0, 0.995004165, 0, 0.0998334166}},
             {"interleaved", "[0, 0, 1, 0]", {0, 0, 1, 0, 0, 0, 0.995004165, 0.0998334166}}}) {
        INFO(layout);
        Trace t = run(R"("tokens": ["a", "b"], "config": {"d_model": 4,
            "positions": {"kind": "rope", "layout": ")" + layout + R"(", "base": 100}},
            "run": {"from": "embed", "to": "rope"}, "inputs": {"X": [)" + x + ", " + x + R"(]},
            "weights": {"W_Q": {"generate": "identity"}, "W_K": {"generate": "identity"}, "W_V": {"generate": "identity"}})");
        check_values(t, "blocks.0.attn.hook_rot_q", want);
    }
}

TEST_CASE("RoPE agrees with RoFormer's complex form: each pair times e^(i·p·θ), in double", "[positions][rope]") {
    // An independent definition: pair (a, b) as the complex number a + ib, multiplied by
    // e^(i·p·θ_i), θ_i = base^(-2i/hs). Pairs: (i, i + hs/2) half, (2i, 2i+1) interleaved.
    for (const bool interleaved : {false, true}) {
        INFO((interleaved ? "interleaved" : "half"));
        Trace t = run(seeded(9, 16, 2, std::string(R"({"kind": "rope", "layout": ")") +
                                            (interleaved ? "interleaved" : "half") + R"(", "base": 500})"));
        for (const auto& [raw, rot] : {std::pair{"blocks.0.attn.hook_q", "blocks.0.attn.hook_rot_q"},
                                       std::pair{"blocks.0.attn.hook_k", "blocks.0.attn.hook_rot_k"}}) {
            const Tensor& x = value(t, raw);
            const Tensor& y = value(t, rot);
            const std::size_t rows = x.shape[0], heads = x.shape[1], hs = x.shape[2];
            for (std::size_t r = 0; r < rows; ++r)
                for (std::size_t h = 0; h < heads; ++h)
                    for (std::size_t i = 0; i < hs / 2; ++i) {
                        const std::size_t a = interleaved ? 2 * i : i, b = interleaved ? 2 * i + 1 : i + hs / 2;
                        const float* xv = x.ptr() + (r * heads + h) * hs;
                        const float* yv = y.ptr() + (r * heads + h) * hs;
                        const double theta = std::pow(500.0, -2.0 * double(i) / double(hs));
                        const std::complex<double> z =
                            std::complex<double>(xv[a], xv[b]) * std::polar(1.0, double(r) * theta);
                        INFO(rot << " row " << r << " head " << h << " pair " << i);
                        CHECK(yv[a] == Approx(z.real()).margin(kInvariantAbs));
                        CHECK(yv[b] == Approx(z.imag()).margin(kInvariantAbs));
                    }
        }
    }
}

TEST_CASE("RoPE pairs: half pairs d with d + hs/2, interleaved pairs 2i with 2i+1", "[positions][rope]") {
    CHECK(rope_pair(1, 8, false).partner == 5);
    CHECK(rope_pair(5, 8, false).partner == 1);
    CHECK(rope_pair(5, 8, false).i == 1);
    CHECK_FALSE(rope_pair(5, 8, false).first);
    CHECK(rope_pair(2, 8, true).partner == 3);
    CHECK(rope_pair(3, 8, true).partner == 2);
    CHECK(rope_pair(3, 8, true).i == 1);
    // θ_i = base^(-2i/hs): hs = 8, base 10000, i = 2 -> 10000^(-1/2) = 0.01
    CHECK(rope_theta(2, 8, 10000.0) == Approx(0.01).epsilon(1e-12));
}

TEST_CASE("RoPE preserves the norm of every head vector of Q and K", "[positions][rope]") {
    for (const char* layout : {"half", "interleaved"}) {
        INFO(layout);
        Trace t = run(seeded(7, 16, 2, std::string(R"({"kind": "rope", "layout": ")") + layout + "\"}"));
        for (const auto& [raw, rot] : {std::pair{"blocks.0.attn.hook_q", "blocks.0.attn.hook_rot_q"},
                                       std::pair{"blocks.0.attn.hook_k", "blocks.0.attn.hook_rot_k"}}) {
            const Tensor& x = value(t, raw);
            const Tensor& y = value(t, rot);
            REQUIRE(x.shape == y.shape);
            const std::size_t hs = x.shape[2];
            bool moved = false;
            for (std::size_t v = 0; v < x.size() / hs; ++v) {
                double nx = 0, ny = 0;
                for (std::size_t e = 0; e < hs; ++e) {
                    nx += double(x.data[v * hs + e]) * x.data[v * hs + e];
                    ny += double(y.data[v * hs + e]) * y.data[v * hs + e];
                    moved = moved || x.data[v * hs + e] != y.data[v * hs + e];
                }
                INFO(rot << " vector " << v);
                CHECK(std::sqrt(ny) == Approx(std::sqrt(nx)).margin(kInvariantAbs));
            }
            CHECK(moved);  // and it did rotate
        }
    }
}

TEST_CASE("with RoPE, q_m·k_n depends only on m - n: shifting both positions keeps the score", "[positions][rope]") {
    // Every token the same vector, so Q and K are the same at every position
    // before rotation: any difference between S[i,j] and S[i+1,j+1] could
    // only come from the absolute positions. Without RoPE S is constant.
    std::string x = "[";
    for (int t = 0; t < 6; ++t) x += std::string(t ? "," : "") + "[0.3, -1.2, 0.7, 0.1, 2.0, -0.4, 0.9, 1.1]";
    x += "]";
    for (const char* layout : {"half", "interleaved"}) {
        INFO(layout);
        Trace t = run(std::string(R"("tokens": ["a", "b", "c", "d", "e", "f"],
            "config": {"d_model": 8, "heads": 2, "positions": {"kind": "rope", "layout": ")") + layout +
                      R"(", "base": 100}}, "run": {"from": "embed", "to": "scores"},
            "inputs": {"X": )" + x + R"(}, "weights_seed": 3)");
        const Tensor& s = value(t, "blocks.0.attn.hook_scores_raw");  // (NH, T, T)
        const std::size_t T = 6;
        bool varies = false;
        for (std::size_t h = 0; h < 2; ++h)
            for (std::size_t i = 0; i + 1 < T; ++i)
                for (std::size_t j = 0; j + 1 < T; ++j) {
                    const float a = s.data[(h * T + i) * T + j], b = s.data[(h * T + i + 1) * T + j + 1];
                    INFO("h" << h << " S[" << i << "," << j << "] vs S[" << i + 1 << "," << j + 1 << "]");
                    CHECK(a == Approx(b).margin(kInvariantAbs));
                    varies = varies || std::abs(a - s.data[(h * T + i) * T + (j + 1)]) > 1e-3;
                }
        CHECK(varies);  // the scores do depend on the distance
    }
}

TEST_CASE("the two RoPE layouts are the same rotation up to a permutation of head dimensions",
          "[positions][rope]") {
    // Interleaved dim 2i <-> half dim i, interleaved 2i+1 <-> half i + hs/2.
    const std::size_t rows = 5, heads = 3, hs = 8;
    std::vector<float> x(rows * heads * hs), xh(x.size()), yi(x.size()), yh(x.size());
    for (std::size_t k = 0; k < x.size(); ++k) x[k] = std::sin(0.37f * static_cast<float>(k) + 0.1f) * 3.0f;
    auto perm = [&](std::size_t d) { return d % 2 == 0 ? d / 2 : d / 2 + hs / 2; };
    for (std::size_t v = 0; v < rows * heads; ++v)
        for (std::size_t d = 0; d < hs; ++d) xh[v * hs + perm(d)] = x[v * hs + d];
    rope_rows(x.data(), yi.data(), rows, heads, hs, 4, 10000.0, true);
    rope_rows(xh.data(), yh.data(), rows, heads, hs, 4, 10000.0, false);
    for (std::size_t v = 0; v < rows * heads; ++v)
        for (std::size_t d = 0; d < hs; ++d) {
            INFO("vector " << v << " dim " << d);
            CHECK(yi[v * hs + d] == yh[v * hs + perm(d)]);  // bit for bit: the same operations
        }
    // Without the permutation the two conventions give different numbers: why the lesson must name one.
    rope_rows(x.data(), yh.data(), rows, heads, hs, 4, 10000.0, false);
    CHECK(std::memcmp(yi.data(), yh.data(), yi.size() * sizeof(float)) != 0);
}

TEST_CASE("RoPE reads the head count from the tensor: K with fewer heads than Q", "[positions][rope]") {
    // Grouped-query attention gives K fewer heads: rows x 1 head x hs must rotate
    // exactly like the first head of a rows x 2 x hs tensor holding the same vector.
    const std::size_t rows = 3, hs = 4;
    std::vector<float> one = {1, 2, 3, 4, -1, 0.5f, 2, 0, 0.25f, 1, -2, 3}, two(rows * 2 * hs), y1(one.size()),
                       y2(two.size());
    for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t e = 0; e < hs; ++e) two[r * 2 * hs + e] = two[r * 2 * hs + hs + e] = one[r * hs + e];
    rope_rows(one.data(), y1.data(), rows, 1, hs, 0, 10000.0, false);
    rope_rows(two.data(), y2.data(), rows, 2, hs, 0, 10000.0, false);
    for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t e = 0; e < hs; ++e) {
            CHECK(y1[r * hs + e] == y2[r * 2 * hs + e]);
            CHECK(y1[r * hs + e] == y2[r * 2 * hs + hs + e]);
        }
}

TEST_CASE("RoPE attention streams, and the streamed Z agrees with the materialised one", "[positions][rope]") {
    const std::string body = seeded(70, 16, 2, R"({"kind": "rope", "layout": "interleaved"})", R"(, "mask": "causal")");
    Trace full = run(body);
    Trace streamed = run(body, parse_trace_policy("hook_z", "--trace"));
    REQUIRE(streamed.streamed_attention);
    const Tensor& a = value(full, "blocks.0.attn.hook_z");
    const Tensor& b = value(streamed, "blocks.0.attn.hook_z");
    REQUIRE(a.size() == b.size());
    // The online softmax sums in a different order: float32 rounding of weights summing to 1.
    constexpr double kStreamAbs = 1e-5;
    for (std::size_t i = 0; i < a.size(); ++i) CHECK(a.data[i] == Approx(b.data[i]).margin(kStreamAbs));
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
    Trace full = run_lesson(l);
    Trace none = run_lesson(l, Arithmetic::exact, parse_trace_policy("none", "--trace"));
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

// RoPE: the rotation of Q and K by position, in both layouts. Hand-computed
// cases, RoFormer's complex form in double, the invariants (norms kept, scores
// depend only on m - n, the layouts a permutation of each other), streaming.
//
// Letters: T tokens, Tq query tokens, C d_model, NH heads, hs = C/NH.
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

namespace test_rope {

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
    rope_rows(x.data(), yi.data(), rows, heads, hs, hs, 4, 10000.0, true);
    rope_rows(xh.data(), yh.data(), rows, heads, hs, hs, 4, 10000.0, false);
    for (std::size_t v = 0; v < rows * heads; ++v)
        for (std::size_t d = 0; d < hs; ++d) {
            INFO("vector " << v << " dim " << d);
            CHECK(yi[v * hs + d] == yh[v * hs + perm(d)]);  // bit for bit: the same operations
        }
    // Without the permutation the two conventions give different numbers: why the lesson must name one.
    rope_rows(x.data(), yh.data(), rows, heads, hs, hs, 4, 10000.0, false);
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
    rope_rows(one.data(), y1.data(), rows, 1, hs, hs, 0, 10000.0, false);
    rope_rows(two.data(), y2.data(), rows, 2, hs, hs, 0, 10000.0, false);
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

}  // namespace test_rope

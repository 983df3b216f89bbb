// Each pipeline stage on a small case worked out by hand, run the way a user
// runs it: a lesson (parse_lesson) through run_lesson. Then the run's rules:
// given values replace the formula's downstream (the formula is kept),
// document arithmetic rounds the named step, and a missing weight makes its
// step and everything after it not computable.
//
// Letters: T tokens, Tq query tokens, C d_model, NH heads, hs = C/NH, F d_ff.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "lesson/lesson.hpp"
#include "pipeline/run.hpp"

using namespace attntrace;

namespace test_stages {

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// Hand-computed decimals carry 9 significant digits; the pipeline's float32
// carries ~7. A relative 1e-6 (~8 ulps) accepts the rounding and nothing else:
// every mistake these cases can catch moves the 1st to 3rd digit.
constexpr double kHandRel = 1e-6;
// Values compared as absolute differences near 0 (x̂ = 0, sums that cancel):
// float32 rounding of operands of size ~1..10.
constexpr double kHandAbs = 1e-6;

// A lesson file around `body` (the fields after the header, as JSON text).
std::string lesson_text(const std::string& body) {
    return R"({"format": "attntrace-lesson", "version": 1, "id": "test", "title": "test",
               "source": {"document": "test_stages.cpp"}, )" +
           body + "}";
}

Trace run(const std::string& body, Arithmetic mode = Arithmetic::exact) {
    Lesson lesson = parse_lesson(lesson_text(body), "test.json");
    return run_lesson(lesson, mode);
}

const Step& step(const Trace& t, const std::string& name) {
    const Step* s = t.find(name);
    INFO("step " << name);
    REQUIRE(s != nullptr);
    return *s;
}

// The step's values, flat and row-major; the step must have been computed or given.
std::vector<float> values(const Trace& t, const std::string& name) {
    const Step& s = step(t, name);
    INFO("step " << name << ": " << s.note);
    REQUIRE(s.source != StepSource::not_computable);
    return std::vector<float>(s.held().data.begin(), s.held().data.end());
}

void check_values(const Trace& t, const std::string& name, const std::vector<double>& want) {
    const auto& got = values(t, name);
    INFO("step " << name);
    REQUIRE(got.size() == want.size());
    for (std::size_t i = 0; i < want.size(); ++i) {
        INFO("cell " << i << ": got " << got[i] << ", want " << want[i]);
        if (std::isinf(want[i])) CHECK(got[i] == static_cast<float>(want[i]));
        else if (want[i] == 0.0) CHECK(std::abs(got[i]) <= kHandAbs);
        else CHECK(got[i] == Approx(want[i]).epsilon(kHandRel).margin(kHandAbs));
    }
}

bool has(const std::vector<std::string>& v, const std::string& s) {
    for (const auto& x : v)
        if (x == s) return true;
    return false;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

double gelu(double x) { return 0.5 * x * std::erfc(-x / std::sqrt(2.0)); }

}  // namespace

// ---------------------------------------------------------------- embed

TEST_CASE("embed looks up each token's row of the embedding table") {
    // table (vocab 3, C 2) = [[1, 2], [3, 4], [5, 6]];  token ids [2, 0, 2] -> X = [[5, 6], [1, 2], [5, 6]]
    Trace t = run(R"(
        "tokens": ["c", "a", "c"], "token_ids": [2, 0, 2], "config": {"d_model": 2},
        "run": {"from": "embed", "to": "embed"},
        "inputs": {"embedding": [[1, 2], [3, 4], [5, 6]]})");
    check_values(t, "hook_embed", {5, 6, 1, 2, 5, 6});
    check_values(t, "blocks.0.hook_resid_pre", {5, 6, 1, 2, 5, 6});
}

// ---------------------------------------------------------------- qkv

TEST_CASE("qkv projects X with W (d_in x d_out) and adds the biases, and a missing bias is zero") {
    // X = [[1, 2], [3, 4]]
    // W_Q = [[1, 2], [3, 4]]:  X·W_Q = [[1+6, 2+8], [3+12, 6+16]] = [[7, 10], [15, 22]]
    //   + b_Q [0.5, -1]    -> Q = [[7.5, 9], [15.5, 21]]
    // W_K = [[0, 1], [1, 0]]:  X·W_K = [[2, 1], [4, 3]]   + b_K [1, 1] -> K = [[3, 2], [5, 4]]
    // W_V = [[2, 0], [0, -1]]: X·W_V = [[2, -2], [6, -4]]  no b_V     -> V = [[2, -2], [6, -4]]
    Trace t = run(R"(
        "tokens": ["a", "b"], "config": {"d_model": 2},
        "run": {"from": "embed", "to": "qkv"},
        "inputs": {"X": [[1, 2], [3, 4]]},
        "weights": {"W_Q": [[1, 2], [3, 4]], "b_Q": [0.5, -1],
                    "W_K": [[0, 1], [1, 0]], "b_K": [1, 1],
                    "W_V": [[2, 0], [0, -1]]})");
    check_values(t, "blocks.0.hook_resid_pre", {1, 2, 3, 4});
    check_values(t, "blocks.0.attn.hook_q", {7.5, 9, 15.5, 21});
    check_values(t, "blocks.0.attn.hook_k", {3, 2, 5, 4});
    check_values(t, "blocks.0.attn.hook_v", {2, -2, 6, -4});
    CHECK(step(t, "blocks.0.attn.hook_q").shape == Shape{2, 1, 2});  // (T, NH, hs)
    CHECK(has(step(t, "blocks.0.attn.hook_q").inputs, "weights.b_Q"));
    CHECK_FALSE(has(step(t, "blocks.0.attn.hook_v").inputs, "weights.b_V"));
}

// ---------------------------------------------------------------- scores

TEST_CASE("scores are Q_h·K_hᵀ per head, head h reading columns h·hs .. (h+1)·hs-1") {
    // C = 4, NH = 2, hs = 2. Q and K as the articles print them (T x C):
    // Q = [[1, 2, 3, 4], [5, 6, 7, 8]]   K = [[1, 0, 0, 1], [0, 1, 1, 0]]
    // head 0: Q_0 = [[1, 2], [5, 6]], K_0 = [[1, 0], [0, 1]] -> S_0 = [[1, 2], [5, 6]]
    // head 1: Q_1 = [[3, 4], [7, 8]], K_1 = [[0, 1], [1, 0]] -> S_1 = [[4, 3], [8, 7]]
    // (a head 1 reading columns 0..1 would repeat S_0; one reading all of C would give [[5, 5], ...])
    Trace t = run(R"(
        "tokens": ["a", "b"], "config": {"d_model": 4, "heads": 2},
        "run": {"from": "scores", "to": "scores"},
        "given": {"blocks.0.attn.hook_q": [[1, 2, 3, 4], [5, 6, 7, 8]],
                  "blocks.0.attn.hook_k": [[1, 0, 0, 1], [0, 1, 1, 0]]})");
    CHECK(step(t, "blocks.0.attn.hook_scores_raw").shape == Shape{2, 2, 2});  // (NH, Tq, T)
    check_values(t, "blocks.0.attn.hook_scores_raw", {1, 2, 5, 6, 4, 3, 8, 7});
}

// ---------------------------------------------------------------- scale

TEST_CASE("scale divides the scores by sqrt(hs), the head size, not sqrt(d_model)") {
    // C = 8, NH = 2: hs = 4, √hs = 2 (√C would be 2.83)
    // S = [[[2, 4], [-6, 1]], [[8, -2], [0, 3]]] -> S/2 = [[[1, 2], [-3, 0.5]], [[4, -1], [0, 1.5]]]
    Trace t = run(R"(
        "tokens": ["a", "b"], "config": {"d_model": 8, "heads": 2},
        "run": {"from": "scale", "to": "scale"},
        "given": {"blocks.0.attn.hook_scores_raw": [[[2, 4], [-6, 1]], [[8, -2], [0, 3]]]})");
    check_values(t, "blocks.0.attn.hook_scores_scaled", {1, 2, -3, 0.5, 4, -1, 0, 1.5});
}

TEST_CASE("with scale switched off the scaled scores equal the raw scores, and the step says so") {
    Trace t = run(R"(
        "tokens": ["a", "b"], "config": {"d_model": 8, "heads": 2, "scale": false},
        "run": {"from": "scale", "to": "scale"},
        "given": {"blocks.0.attn.hook_scores_raw": [[[2, 4], [-6, 1]], [[8, -2], [0, 3]]]})");
    check_values(t, "blocks.0.attn.hook_scores_scaled", {2, 4, -6, 1, 8, -2, 0, 3});
    CHECK(contains(step(t, "blocks.0.attn.hook_scores_scaled").note, "switched off"));
}

TEST_CASE("with scaling switched off, a not computable scaled step still says what it needs") {
    // W_Q is missing: Q, the raw scores and the scaled scores are not computable;
    // each step's note must give the reason, also when scale is false.
    Trace t = run(R"(
        "tokens": ["a"], "config": {"d_model": 2, "scale": false},
        "run": {"from": "embed", "to": "scale"},
        "inputs": {"X": [[1, 2]]},
        "weights": {"W_K": {"generate": "identity"}, "W_V": {"generate": "identity"}})");
    CHECK(contains(step(t, "blocks.0.attn.hook_q").note, "weights.W_Q"));
    const Step& raw = step(t, "blocks.0.attn.hook_scores_raw");
    CHECK(raw.source == StepSource::not_computable);
    CHECK(contains(raw.note, "blocks.0.attn.hook_q"));
    const Step& scaled = step(t, "blocks.0.attn.hook_scores_scaled");
    INFO("note: " << scaled.note);
    CHECK(scaled.source == StepSource::not_computable);
    CHECK(contains(scaled.note, "needs blocks.0.attn.hook_scores_raw"));
}

// ---------------------------------------------------------------- mask

TEST_CASE("a causal mask is -inf above the diagonal and is added to every head's scores") {
    // T = 3, NH = 2.  M = [[0, -inf, -inf], [0, 0, -inf], [0, 0, 0]]
    // head 0 scores [[1, 2, 3], [4, 5, 6], [7, 8, 9]] -> [[1, -inf, -inf], [4, 5, -inf], [7, 8, 9]]
    // head 1 scores = -(head 0)                       -> [[-1, -inf, -inf], [-4, -5, -inf], [-7, -8, -9]]
    Trace t = run(R"(
        "tokens": ["a", "b", "c"], "config": {"d_model": 4, "heads": 2, "mask": "causal"},
        "run": {"from": "mask", "to": "mask"},
        "given": {"blocks.0.attn.hook_scores_scaled": [[[1, 2, 3], [4, 5, 6], [7, 8, 9]],
                                                       [[-1, -2, -3], [-4, -5, -6], [-7, -8, -9]]]})");
    const double n = -INFINITY;
    check_values(t, "blocks.0.attn.hook_mask", {0, n, n, 0, 0, n, 0, 0, 0});
    // the mask's visible cells are +0, not just "small"
    const auto& m = values(t, "blocks.0.attn.hook_mask");
    CHECK(m[0] == 0.0f);
    CHECK(m[3] == 0.0f);
    check_values(t, "blocks.0.attn.hook_attn_scores", {1, n, n, 4, 5, n, 7, 8, 9, -1, n, n, -4, -5, n, -7, -8, -9});
}

TEST_CASE("without a mask every key is visible and the scores pass unchanged") {
    Trace t = run(R"(
        "tokens": ["a", "b"], "config": {"d_model": 2},
        "run": {"from": "mask", "to": "mask"},
        "given": {"blocks.0.attn.hook_scores_scaled": [[1, -2], [3, 4]]})");
    check_values(t, "blocks.0.attn.hook_mask", {0, 0, 0, 0});
    check_values(t, "blocks.0.attn.hook_attn_scores", {1, -2, 3, 4});
}

TEST_CASE("with fewer query tokens than tokens, causal queries are the last positions") {
    // T = 4 keys a b c d, Tq = 2 queries c d: query 0 sits at position 2 and
    // sees keys 0..2; query 1 at position 3 sees all four.
    // M = [[0, 0, 0, -inf], [0, 0, 0, 0]]
    Trace t = run(R"(
        "tokens": ["a", "b", "c", "d"], "query_tokens": ["c", "d"],
        "config": {"d_model": 2, "mask": "causal"},
        "run": {"from": "mask", "to": "softmax"},
        "given": {"blocks.0.attn.hook_scores_scaled": [[1, 2, 3, 4], [5, 6, 7, 8]]})");
    const double n = -INFINITY;
    CHECK(step(t, "blocks.0.attn.hook_mask").shape == Shape{2, 4});
    check_values(t, "blocks.0.attn.hook_mask", {0, 0, 0, n, 0, 0, 0, 0});
    check_values(t, "blocks.0.attn.hook_attn_scores", {1, 2, 3, n, 5, 6, 7, 8});
    // and softmax gives the blocked key exactly 0
    CHECK(values(t, "blocks.0.attn.hook_pattern")[3] == 0.0f);
    CHECK(t.warnings.empty());
}

TEST_CASE("a causal mask refuses more query tokens than tokens") {
    // Causal visibility: query i sits at position i + T - Tq. With more queries
    // than keys (3 over 2) T - Tq would be negative: the reader refuses it,
    // naming query_tokens, instead of building a mask that is not monotone.
    const std::string body = R"(
        "tokens": ["a", "b"], "query_tokens": ["x", "y", "z"],
        "config": {"d_model": 2, "mask": "causal"},
        "run": {"from": "mask", "to": "mask"},
        "given": {"blocks.0.attn.hook_scores_scaled": [[1, 2], [3, 4], [5, 6]]})";
    REQUIRE_THROWS_WITH(parse_lesson(lesson_text(body), "test.json"),
                        Catch::Contains("test.json: query_tokens: expected at most 2 query tokens with a causal mask"));
    // Without the mask the same queries are fine.
    std::string unmasked = body;
    unmasked.replace(unmasked.find("\"causal\""), 8, "\"none\"");
    CHECK_NOTHROW(parse_lesson(lesson_text(unmasked), "test.json"));
}

// ---------------------------------------------------------------- softmax

TEST_CASE("softmax records its internals, consistent with each other and with the pattern") {
    // rows of the masked scores (NH = 1, T = 3):
    //   [1, 2, 3]:        m = 3, shifted [-2, -1, 0], exp [0.135335283, 0.367879441, 1],
    //                     Σ = 1.50321472, A = [0.0900305732, 0.244728471, 0.665240956]
    //   [0, -inf, 0]:     m = 0, shifted [0, -inf, 0], exp [1, 0, 1], Σ = 2, A = [0.5, 0, 0.5]
    //   [-inf, -inf, -inf] (every key masked): m = -inf, exp 0, Σ = 0, A = 0, and a warning
    Trace t = run(R"(
        "tokens": ["a", "b", "c"], "config": {"d_model": 2},
        "run": {"from": "softmax", "to": "softmax"},
        "given": {"blocks.0.attn.hook_attn_scores": [[1, 2, 3], [0, "-inf", 0], ["-inf", "-inf", "-inf"]]})");
    const double n = -INFINITY;
    check_values(t, "blocks.0.attn.softmax.hook_row_max", {3, 0, n});
    check_values(t, "blocks.0.attn.softmax.hook_shifted", {-2, -1, 0, 0, n, 0, n, n, n});
    check_values(t, "blocks.0.attn.softmax.hook_exp", {0.135335283, 0.367879441, 1, 1, 0, 1, 0, 0, 0});
    check_values(t, "blocks.0.attn.softmax.hook_row_sum", {1.50321472, 2, 0});
    check_values(t, "blocks.0.attn.hook_pattern", {0.0900305732, 0.244728471, 0.665240956, 0.5, 0, 0.5, 0, 0, 0});
    REQUIRE(t.warnings.size() == 1);
    CHECK(contains(t.warnings[0], "1 row(s)"));

    // consistency, cell by cell: shifted = x - m, exp = e^shifted, Σ = Σ exp, A = exp / Σ
    // (each is one float32 operation on the recorded operands: within 2 ulps)
    const double ulps2 = 2.0 * 1.1920929e-7;
    const auto& x = values(t, "blocks.0.attn.hook_attn_scores");
    const auto& m = values(t, "blocks.0.attn.softmax.hook_row_max");
    const auto& sh = values(t, "blocks.0.attn.softmax.hook_shifted");
    const auto& e = values(t, "blocks.0.attn.softmax.hook_exp");
    const auto& s = values(t, "blocks.0.attn.softmax.hook_row_sum");
    const auto& a = values(t, "blocks.0.attn.hook_pattern");
    for (std::size_t i = 0; i < 2; ++i) {  // the two rows with a distribution
        double sum_e = 0, sum_a = 0;
        for (std::size_t j = 0; j < 3; ++j) {
            const std::size_t c = i * 3 + j;
            INFO("row " << i << ", key " << j);
            if (std::isinf(x[c])) {
                CHECK(sh[c] == -kInf);
                CHECK(e[c] == 0.0f);
                CHECK(a[c] == 0.0f);
            } else {
                CHECK(sh[c] == x[c] - m[i]);
                CHECK(e[c] == Approx(std::exp(static_cast<double>(sh[c]))).epsilon(ulps2));
                CHECK(a[c] == Approx(static_cast<double>(e[c]) / s[i]).epsilon(ulps2));
            }
            sum_e += e[c];
            sum_a += a[c];
        }
        CHECK(s[i] == Approx(sum_e).epsilon(4 * ulps2));
        CHECK(sum_a == Approx(1.0).epsilon(4 * ulps2));
    }
}

// ---------------------------------------------------------------- mix

TEST_CASE("mix gives each head A_h·V_h in that head's columns of Z") {
    // NH = 2, hs = 2, T = 2. V (T x C) = [[1, 2, 3, 4], [5, 6, 7, 8]]
    // head 0: A_0 = [[1, 0], [0.5, 0.5]],   V_0 = [[1, 2], [5, 6]] -> Z_0 = [[1, 2], [3, 4]]
    // head 1: A_1 = [[0, 1], [0.25, 0.75]], V_1 = [[3, 4], [7, 8]] -> Z_1 = [[7, 8], [0.75+5.25, 1+6]] = [[7, 8], [6, 7]]
    // Z = [Z_0 Z_1] = [[1, 2, 7, 8], [3, 4, 6, 7]]
    Trace t = run(R"(
        "tokens": ["a", "b"], "config": {"d_model": 4, "heads": 2},
        "run": {"from": "mix", "to": "mix"},
        "given": {"blocks.0.attn.hook_pattern": [[[1, 0], [0.5, 0.5]], [[0, 1], [0.25, 0.75]]],
                  "blocks.0.attn.hook_v": [[1, 2, 3, 4], [5, 6, 7, 8]]})");
    CHECK(step(t, "blocks.0.attn.hook_z").shape == Shape{2, 2, 2});  // (Tq, NH, hs)
    check_values(t, "blocks.0.attn.hook_z", {1, 2, 7, 8, 3, 4, 6, 7});
}

// ---------------------------------------------------------------- out

TEST_CASE("the output projection is concat(Z)·W_O + b_O") {
    // Z = [[1, 2], [3, 4]], W_O = [[1, -1], [2, 0.5]]:
    // Z·W_O = [[1+4, -1+1], [3+8, -3+2]] = [[5, 0], [11, -1]];  + b_O [0.25, 1] = [[5.25, 1], [11.25, 0]]
    Trace t = run(R"(
        "tokens": ["a", "b"], "config": {"d_model": 2},
        "run": {"from": "out", "to": "out"},
        "given": {"blocks.0.attn.hook_z": [[1, 2], [3, 4]]},
        "weights": {"W_O": [[1, -1], [2, 0.5]], "b_O": [0.25, 1]})");
    check_values(t, "blocks.0.hook_attn_out", {5.25, 1, 11.25, 0});
}

// ---------------------------------------------------------------- add1

TEST_CASE("the first residual adds the attention output to X") {
    // X = [[1, 2], [3, 4]] + attn_out [[0.5, -2], [10, 0]] = [[1.5, 0], [13, 4]]
    Trace t = run(R"(
        "tokens": ["a", "b"], "config": {"d_model": 2},
        "run": {"from": "add1", "to": "add1"},
        "given": {"blocks.0.hook_resid_pre": [[1, 2], [3, 4]],
                  "blocks.0.hook_attn_out": [[0.5, -2], [10, 0]]})");
    check_values(t, "blocks.0.hook_resid_mid", {1.5, 0, 13, 4});
}

// ---------------------------------------------------------------- norm1

TEST_CASE("LayerNorm 1 records mean, biased variance, sqrt(var + eps), x-hat and gamma·x-hat + beta") {
    // eps = 0.25 (large on purpose: eps's place inside the square root shows in the 1st digit)
    // γ = [1, 2, 0.5, -1], β = [0, 1, -1, 0.5]
    // row [1, 2, 3, 4]:  μ = 2.5, σ² = (2.25+0.25+0.25+2.25)/4 = 1.25, σ = √1.5 = 1.22474487
    //                    x̂ = [-1.5, -0.5, 0.5, 1.5]/σ = [-1.22474487, -0.408248290, 0.408248290, 1.22474487]
    //                    out = [-1.22474487, 0.183503419, -0.795875855, -0.724744871]
    // row [2, 2, 2, 2]:  μ = 2, σ² = 0, σ = √0.25 = 0.5, x̂ = 0, out = β
    // row [-3, 1, 0, 6]: μ = 1, σ² = (16+0+1+25)/4 = 10.5, σ = √10.75 = 3.27871926
    //                    x̂ = [-4, 0, -1, 5]/σ = [-1.21998856, 0, -0.304997141, 1.52498570]
    //                    out = [-1.21998856, 1, -1.15249857, -1.02498570]
    Trace t = run(R"(
        "tokens": ["a", "b", "c"], "config": {"d_model": 4, "eps": 0.25},
        "run": {"from": "norm1", "to": "norm1"},
        "given": {"blocks.0.hook_resid_mid": [[1, 2, 3, 4], [2, 2, 2, 2], [-3, 1, 0, 6]]},
        "weights": {"ln1_gamma": [1, 2, 0.5, -1], "ln1_beta": [0, 1, -1, 0.5]})");
    check_values(t, "blocks.0.ln1.hook_mean", {2.5, 2, 1});
    check_values(t, "blocks.0.ln1.hook_var", {1.25, 0, 10.5});
    check_values(t, "blocks.0.ln1.hook_scale", {1.22474487, 0.5, 3.27871926});
    check_values(t, "blocks.0.ln1.hook_standardized",
                 {-1.22474487, -0.408248290, 0.408248290, 1.22474487, 0, 0, 0, 0, -1.21998856, 0, -0.304997141,
                  1.52498570});
    check_values(t, "blocks.0.ln1.hook_normalized",
                 {-1.22474487, 0.183503419, -0.795875855, -0.724744871, 0, 1, -1, 0.5, -1.21998856, 1, -1.15249857,
                  -1.02498570});
}

// ---------------------------------------------------------------- ffn

TEST_CASE("the FFN with ReLU is relu(x·W_1 + b_1)·W_2 + b_2") {
    // x = [1, -2]; W_1 = [[1, 0, -1], [0.5, 1, 1]]: x·W_1 = [1-1, 0-2, -1-2] = [0, -2, -3]
    // + b_1 [0.5, 1, 4] -> H = [0.5, -1, 1];  relu -> [0.5, 0, 1]
    // W_2 = [[1, 2], [3, 4], [-1, 0.5]]: [0.5 - 1, 1 + 0.5] = [-0.5, 1.5];  + b_2 [1, -1] -> [0.5, 0.5]
    Trace t = run(R"(
        "tokens": ["a"], "config": {"d_model": 2, "d_ff": 3, "activation": "relu"},
        "run": {"from": "ffn", "to": "ffn"},
        "given": {"blocks.0.ln1.hook_normalized": [[1, -2]]},
        "weights": {"W_1": [[1, 0, -1], [0.5, 1, 1]], "b_1": [0.5, 1, 4],
                    "W_2": [[1, 2], [3, 4], [-1, 0.5]], "b_2": [1, -1]})");
    CHECK(step(t, "blocks.0.mlp.hook_pre").shape == Shape{1, 3});  // (T, F)
    check_values(t, "blocks.0.mlp.hook_pre", {0.5, -1, 1});
    check_values(t, "blocks.0.mlp.hook_post", {0.5, 0, 1});
    check_values(t, "blocks.0.hook_mlp_out", {0.5, 0.5});
}

TEST_CASE("the FFN with GELU uses the exact erf form h·Phi(h)") {
    // same x, W_1, b_1: H = [0.5, -1, 1]
    // gelu: [0.5·Φ(0.5), -Φ(-1), Φ(1)] = [0.345731231, -0.158655254, 0.841344746]
    // ·W_2 + b_2: [0.345731231 - 3·0.158655254 - 0.841344746 + 1,
    //              2·0.345731231 - 4·0.158655254 + 0.5·0.841344746 - 1] = [0.0284207224, -0.522486183]
    Trace t = run(R"(
        "tokens": ["a"], "config": {"d_model": 2, "d_ff": 3, "activation": "gelu"},
        "run": {"from": "ffn", "to": "ffn"},
        "given": {"blocks.0.ln1.hook_normalized": [[1, -2]]},
        "weights": {"W_1": [[1, 0, -1], [0.5, 1, 1]], "b_1": [0.5, 1, 4],
                    "W_2": [[1, 2], [3, 4], [-1, 0.5]], "b_2": [1, -1]})");
    check_values(t, "blocks.0.mlp.hook_post", {0.345731231, -0.158655254, 0.841344746});
    // the same, from the definition in double
    check_values(t, "blocks.0.mlp.hook_post", {gelu(0.5), gelu(-1), gelu(1)});
    check_values(t, "blocks.0.hook_mlp_out", {0.0284207224, -0.522486183});
}

// ---------------------------------------------------------------- add2, norm2

TEST_CASE("the second residual adds the FFN output to LayerNorm 1's output, and LayerNorm 2 uses ln2's weights") {
    // post-norm: X_mid2 = LN1 + FFN(LN1), not X_mid + FFN.
    // LN1 = [[1, -1]], FFN = [[2, -4]] -> X_mid2 = [[3, -5]]   (X_mid = [[100, 100]] must not enter)
    // LN2 (eps 1e-5): μ = -1, σ² = 16, σ = √16.00001 = 4.00000125, x̂ = [4, -4]/σ = [0.999999688, -0.999999688]
    // γ₂ = [2, 1], β₂ = [0, 3] -> [1.99999938, 2.00000031]   (ln1's γ = [5, 5] must not enter)
    Trace t = run(R"(
        "tokens": ["a"], "config": {"d_model": 2},
        "run": {"from": "add2", "to": "norm2"},
        "given": {"blocks.0.hook_resid_mid": [[100, 100]],
                  "blocks.0.ln1.hook_normalized": [[1, -1]],
                  "blocks.0.hook_mlp_out": [[2, -4]]},
        "weights": {"ln1_gamma": [5, 5], "ln1_beta": [5, 5], "ln2_gamma": [2, 1], "ln2_beta": [0, 3]})");
    check_values(t, "blocks.0.hook_resid_post", {3, -5});
    check_values(t, "blocks.0.ln2.hook_mean", {-1});
    check_values(t, "blocks.0.ln2.hook_var", {16});
    check_values(t, "blocks.0.ln2.hook_scale", {4.00000125});
    check_values(t, "blocks.0.ln2.hook_standardized", {0.999999688, -0.999999688});
    check_values(t, "blocks.0.ln2.hook_normalized", {1.99999938, 2.00000031});
}

// ---------------------------------------------------------------- the run's rules

TEST_CASE("a given step's values replace the computed ones downstream, and the formula's values are kept") {
    // X = [[1, 2], [3, 4]], W_Q = W_K = I: the formula gives Q = K = X.
    // The lesson gives Q = I instead: scores must be Q_given·Kᵀ = [[1, 3], [2, 4]]
    // (with the formula's Q they would be X·Xᵀ = [[5, 11], [11, 25]]).
    Trace t = run(R"(
        "tokens": ["a", "b"], "config": {"d_model": 2, "scale": false},
        "run": {"from": "embed", "to": "scores"},
        "inputs": {"X": [[1, 2], [3, 4]]},
        "weights": {"W_Q": {"generate": "identity"}, "W_K": {"generate": "identity"},
                    "W_V": {"generate": "identity"}},
        "given": {"blocks.0.attn.hook_q": [[1, 0], [0, 1]]})");
    const Step& q = step(t, "blocks.0.attn.hook_q");
    CHECK(q.source == StepSource::given);
    CHECK(std::vector<float>(q.held().data.begin(), q.held().data.end()) == std::vector<float>{1, 0, 0, 1});
    REQUIRE(q.formula.has_value());
    CHECK(std::vector<float>(q.formula->data.begin(), q.formula->data.end()) == std::vector<float>{1, 2, 3, 4});
    CHECK(q.formula->shape == q.shape);
    CHECK(q.checked_value() == &*q.formula);  // claims are checked against the formula
    CHECK(step(t, "blocks.0.attn.hook_k").source == StepSource::computed);
    CHECK_FALSE(step(t, "blocks.0.attn.hook_k").formula.has_value());
    check_values(t, "blocks.0.attn.hook_scores_raw", {1, 3, 2, 4});
}

TEST_CASE("document arithmetic rounds the named step before the next stage reads it, and nothing else") {
    // rows of masked scores [1, 2, 3], [0, 0, 0], [3, 2, 1]; V = I (C = 3), so Z = A.
    // exact A row 0 = [0.0900305732, 0.244728471, 0.665240956]; rounded to 2: [0.09, 0.24, 0.67]
    // row 1 = [1/3, 1/3, 1/3] -> [0.33, 0.33, 0.33]; row 2 = row 0 reversed -> [0.67, 0.24, 0.09]
    const std::string body = R"(
        "tokens": ["a", "b", "c"], "config": {"d_model": 3},
        "run": {"from": "softmax", "to": "mix"},
        "given": {"blocks.0.attn.hook_attn_scores": [[1, 2, 3], [0, 0, 0], [3, 2, 1]],
                  "blocks.0.attn.hook_v": [[1, 0, 0], [0, 1, 0], [0, 0, 1]]},
        "document_rounding": {"blocks.0.attn.hook_pattern": 2})";
    const std::vector<double> exact = {0.0900305732, 0.244728471, 0.665240956, 1 / 3.0, 1 / 3.0, 1 / 3.0,
                                       0.665240956,  0.244728471, 0.0900305732};
    const std::vector<double> rounded = {0.09, 0.24, 0.67, 0.33, 0.33, 0.33, 0.67, 0.24, 0.09};

    Trace doc = run(body, Arithmetic::document);
    CHECK(step(doc, "blocks.0.attn.hook_pattern").rounded_to == 2);
    check_values(doc, "blocks.0.attn.hook_pattern", rounded);
    check_values(doc, "blocks.0.attn.hook_z", rounded);  // mixing read the rounded weights
    // the other softmax steps are not rounded
    CHECK(step(doc, "blocks.0.attn.softmax.hook_exp").rounded_to == -1);
    check_values(doc, "blocks.0.attn.softmax.hook_exp",
                 {0.135335283, 0.367879441, 1, 1, 1, 1, 1, 0.367879441, 0.135335283});
    CHECK(step(doc, "blocks.0.attn.hook_z").rounded_to == -1);

    Trace ex = run(body, Arithmetic::exact);
    CHECK(step(ex, "blocks.0.attn.hook_pattern").rounded_to == -1);
    check_values(ex, "blocks.0.attn.hook_pattern", exact);
    check_values(ex, "blocks.0.attn.hook_z", exact);
}

TEST_CASE("document arithmetic rounds half away from zero, as by hand") {
    // X_mid = X + 0 = [0.125, -0.125, 0.5, 0.0049]; to 2 decimals: [0.13, -0.13, 0.5, 0]
    // (0.125 is exact in binary, so these are true ties)
    Trace t = run(R"(
        "tokens": ["a"], "config": {"d_model": 4},
        "run": {"from": "add1", "to": "add1"},
        "given": {"blocks.0.hook_resid_pre": [[0.125, -0.125, 0.5, 0.0049]],
                  "blocks.0.hook_attn_out": [[0, 0, 0, 0]]},
        "document_rounding": {"blocks.0.hook_resid_mid": 2})",
                  Arithmetic::document);
    const auto& v = values(t, "blocks.0.hook_resid_mid");
    CHECK(v[0] == 0.13f);
    CHECK(v[1] == -0.13f);
    CHECK(v[2] == 0.5f);
    CHECK(v[3] == 0.0f);
}

TEST_CASE("a missing weight makes its step and every step after it not computable, naming the weight") {
    // The whole block with every weight but W_O: attention up to Z is computed;
    // attn_out needs W_O; everything after reads attn_out, directly or not.
    Trace t = run(R"(
        "tokens": ["a", "b"], "config": {"d_model": 2, "d_ff": 2},
        "inputs": {"X": [[1, 2], [3, 4]]},
        "weights": {"W_Q": {"generate": "identity"}, "W_K": {"generate": "identity"},
                    "W_V": {"generate": "identity"},
                    "ln1_gamma": [1, 1], "ln1_beta": [0, 0], "ln2_gamma": [1, 1], "ln2_beta": [0, 0],
                    "W_1": {"generate": "identity"}, "W_2": {"generate": "identity"}})");
    CHECK(step(t, "blocks.0.attn.hook_z").source == StepSource::computed);
    const Step& out = step(t, "blocks.0.hook_attn_out");
    CHECK(out.source == StepSource::not_computable);
    CHECK(contains(out.note, "weights.W_O"));
    CHECK(out.held().data.empty());

    const std::vector<std::string> after = {
        "blocks.0.hook_resid_mid",        "blocks.0.ln1.hook_mean",         "blocks.0.ln1.hook_var",
        "blocks.0.ln1.hook_scale",        "blocks.0.ln1.hook_standardized", "blocks.0.ln1.hook_normalized",
        "blocks.0.mlp.hook_pre",          "blocks.0.mlp.hook_post",         "blocks.0.hook_mlp_out",
        "blocks.0.hook_resid_post",       "blocks.0.ln2.hook_mean",         "blocks.0.ln2.hook_var",
        "blocks.0.ln2.hook_scale",        "blocks.0.ln2.hook_standardized", "blocks.0.ln2.hook_normalized"};
    for (const auto& name : after) {
        const Step& s = step(t, name);
        INFO(name << ": " << s.note);
        CHECK(s.source == StepSource::not_computable);
        CHECK(s.held().data.empty());
        CHECK_FALSE(s.note.empty());
    }
    CHECK(contains(step(t, "blocks.0.hook_resid_mid").note, "blocks.0.hook_attn_out"));
}

TEST_CASE("a missing LayerNorm gain leaves the statistics computable and only the output and what follows not") {
    Trace t = run(R"(
        "tokens": ["a"], "config": {"d_model": 2, "d_ff": 2},
        "run": {"from": "norm1", "to": "ffn"},
        "given": {"blocks.0.hook_resid_mid": [[1, 3]]},
        "weights": {"ln1_beta": [0, 0], "W_1": {"generate": "identity"}, "W_2": {"generate": "identity"}})");
    // μ = 2, σ² = 1, σ = √(1 + 1e-5), x̂ = [-1, 1]/σ
    check_values(t, "blocks.0.ln1.hook_mean", {2});
    check_values(t, "blocks.0.ln1.hook_var", {1});
    check_values(t, "blocks.0.ln1.hook_standardized", {-1 / std::sqrt(1.00001), 1 / std::sqrt(1.00001)});
    const Step& ln = step(t, "blocks.0.ln1.hook_normalized");
    CHECK(ln.source == StepSource::not_computable);
    CHECK(contains(ln.note, "weights.ln1_gamma"));
    for (const char* name : {"blocks.0.mlp.hook_pre", "blocks.0.mlp.hook_post", "blocks.0.hook_mlp_out"}) {
        INFO(name);
        CHECK(step(t, name).source == StepSource::not_computable);
    }
}

// ---------------------------------------------------------------- review fixes

TEST_CASE("rounding an internal softmax step feeds the steps after it (document arithmetic)") {
    // exp of row [0.5, 0, 0] shifted by 0.5 is [1, 0.6065, 0.6065]; rounded to
    // 1 decimal [1, 0.6, 0.6], whose sum is 2.2: A = [1/2.2, 0.6/2.2, 0.6/2.2].
    const std::string body = R"(
        "tokens": ["a", "b", "c"], "config": {"d_model": 1, "scale": false},
        "run": {"from": "softmax", "to": "softmax"},
        "given": {"blocks.0.attn.hook_attn_scores": [[0.5, 0, 0], [0, 0.5, 1], [0, 1, 1]]},
        "document_rounding": {"blocks.0.attn.softmax.hook_exp": 1})";
    Lesson lesson = parse_lesson(lesson_text(body), "test.json");
    Trace doc = run_lesson(lesson, Arithmetic::document);
    const auto& a = values(doc, "blocks.0.attn.hook_pattern");
    CHECK(a[0] == Approx(1.0 / 2.2).epsilon(1e-6));
    CHECK(a[1] == Approx(0.6 / 2.2).epsilon(1e-6));
    CHECK(values(doc, "blocks.0.attn.softmax.hook_row_sum")[0] == Approx(2.2).epsilon(1e-6));
    // The exact run is untouched by the rounding.
    Trace exact = run_lesson(lesson, Arithmetic::exact);
    CHECK(values(exact, "blocks.0.attn.hook_pattern")[0] == Approx(0.45186).epsilon(1e-4));
}

TEST_CASE("a given LayerNorm std is the one the normalized rows divide by") {
    // x = [2.1, 2.2, 3.1, 3.2]: μ = 2.65; the article's σ = 0.48 gives x̂ = [-0.55, -0.45, 0.45, 0.55] / 0.48.
    const std::string body = R"(
        "tokens": ["ring"], "config": {"d_model": 4},
        "run": {"from": "norm1", "to": "norm1"},
        "given": {"blocks.0.hook_resid_mid": [[2.1, 2.2, 3.1, 3.2]], "blocks.0.ln1.hook_scale": [0.48]})";
    Trace t = run_lesson(parse_lesson(lesson_text(body), "test.json"));
    const auto& xhat = values(t, "blocks.0.ln1.hook_standardized");
    CHECK(xhat[0] == Approx(-0.55 / 0.48).epsilon(1e-5));
    CHECK(xhat[3] == Approx(0.55 / 0.48).epsilon(1e-5));
    const Step* sd = t.find("blocks.0.ln1.hook_scale");
    REQUIRE(sd->formula);
    CHECK(sd->formula->data[0] == Approx(0.5025037).epsilon(1e-6));  // √(0.2525 + 1e-5), kept beside
}

TEST_CASE("document rounding rounds decimal ties away from zero, as on paper") {
    // 0.145 is stored as 0.14499999; rounded to 2 decimals it must be 0.15, so Z = 0.15·10 = 1.5.
    const std::string body = R"(
        "tokens": ["a", "b"], "query_tokens": ["a"], "config": {"d_model": 1},
        "run": {"from": "mix", "to": "mix"},
        "given": {"blocks.0.attn.hook_pattern": [[0.145, 0.855]], "blocks.0.attn.hook_v": [[10], [0]]},
        "document_rounding": {"blocks.0.attn.hook_pattern": 2})";
    Trace doc = run_lesson(parse_lesson(lesson_text(body), "test.json"), Arithmetic::document);
    CHECK(values(doc, "blocks.0.attn.hook_pattern")[0] == 0.15f);
    CHECK(values(doc, "blocks.0.attn.hook_z")[0] == Approx(1.5).epsilon(1e-6));
}

}  // namespace test_stages

// LayerNorm as taught (config.norm_steps "all", docs/lesson-format.md#config):
// x - μ and (x - μ)² recorded as steps, σ² their mean, x̂ = (x - μ) / σ; held
// to values computed here, a given or rounded piece feeding the next, explain
// of every piece, and the default catalogue unchanged without it. (The whole
// block against the double reference is in test_block_reference.cpp.)
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

#include "evaluate/evaluate.hpp"
#include "pipeline/run.hpp"
#include "render/explain.hpp"
#include "explain_checks.hpp"
#include "support.hpp"

using namespace attntrace;
using nlohmann::json;

namespace test_layernorm_steps {

namespace {

json ln_doc(const json& extra = json::object()) {
    json config = {{"d_model", 4}, {"norm_steps", "all"}};
    config.update(extra);
    return {{"format", "attntrace-lesson"}, {"version", 1}, {"id", "ln-steps"}, {"title", "ln steps"},
            {"tokens", {"a", "b"}}, {"config", config}, {"run", {{"from", "norm1"}, {"to", "norm1"}}},
            {"given", {{"blocks.0.hook_resid_mid", {{1.0, 2.0, 3.0, 6.0}, {2.0, 4.0, 6.0, 8.5}}}}},
            {"weights", {{"ln1_gamma", {0.5, 1.0, 2.0, 1.0}}, {"ln1_beta", {0.0, 0.1, 0.0, -0.1}}}}};
}

const Step& step(const Trace& t, const std::string& leaf) {
    const Step* s = t.find("blocks.0.ln1." + leaf);
    INFO(leaf);
    REQUIRE(s != nullptr);
    return *s;
}

}  // namespace

TEST_CASE("norm_steps all: x - μ, (x - μ)², σ² their mean, x̂ and the output, against values computed here",
          "[layernorm_steps]") {
    const double rows[2][4] = {{1, 2, 3, 6}, {2, 4, 6, 8.5}};
    const double gamma[4] = {0.5, 1, 2, 1}, beta[4] = {0, 0.1, 0, -0.1};
    for (const char* variance : {"biased", "unbiased"}) {
        INFO(variance);
        const Trace t = run_lesson(parse_lesson(ln_doc({{"variance", variance}}).dump(), "ln.json"));
        const double n = std::string(variance) == "biased" ? 4 : 3;
        for (std::size_t r = 0; r < 2; ++r) {
            const double mu = (rows[r][0] + rows[r][1] + rows[r][2] + rows[r][3]) / 4;
            double sq = 0;
            for (double x : rows[r]) sq += (x - mu) * (x - mu);
            const double sd = std::sqrt(sq / n + 1e-5);
            CHECK(step(t, "hook_var").held().data[r] == Approx(sq / n).epsilon(1e-6));
            for (std::size_t c = 0; c < 4; ++c) {
                const double d = rows[r][c] - mu;
                CHECK(step(t, "hook_centred").held().data[r * 4 + c] == Approx(d).margin(1e-6));
                CHECK(step(t, "hook_sq_dev").held().data[r * 4 + c] == Approx(d * d).margin(1e-5));
                CHECK(step(t, "hook_normalized").held().data[r * 4 + c] ==
                      Approx(gamma[c] * d / sd + beta[c]).margin(1e-5));
            }
        }
    }
}

TEST_CASE("norm_steps all: a rounded deviation feeds the variance, as an article that rounds it", "[layernorm_steps]") {
    // row a: μ = 3, deviations [-2, -1, 0, 3] exact; row b: μ = 5.125, deviations -3.125 ... rounded to 1 decimal
    json doc = ln_doc();
    doc["document_rounding"] = {{"blocks.0.ln1.hook_centred", 1}};
    auto e = evaluate(parse_lesson(doc.dump(), "ln.json"));
    REQUIRE(e->document);
    const float* dev = step(*e->document, "hook_centred").held().ptr() + 4;
    const float* var = step(*e->document, "hook_var").held().ptr();
    double sq = 0;
    for (int c = 0; c < 4; ++c) sq += double(dev[c]) * dev[c];
    CHECK(dev[0] == Approx(-3.1f));  // -3.125 to 1 decimal
    CHECK(var[1] == Approx(sq / 4).epsilon(1e-6));
    CHECK(var[1] != step(e->exact, "hook_var").held().data[1]);
}

TEST_CASE("norm_steps all: explain recomputes every piece as the run does", "[layernorm_steps][explain]") {
    for (const char* variance : {"biased", "unbiased"}) {
        INFO(variance);
        auto e = evaluate(parse_lesson(ln_doc({{"variance", variance}}).dump(), "ln.json"));
        attntrace::test::require_recomputed(*e, {{"blocks.0.ln1.hook_centred", {1, 2}},
                                                 {"blocks.0.ln1.hook_sq_dev", {1, 0}},
                                                 {"blocks.0.ln1.hook_var", {1}},
                                                 {"blocks.0.ln1.hook_standardized", {0, 3}},
                                                 {"blocks.0.ln1.hook_normalized", {1, 1}}});
    }
}

TEST_CASE("without norm_steps the default records neither piece and computes the same output", "[layernorm_steps]") {
    json plain = ln_doc();
    plain["config"].erase("norm_steps");
    const Trace a = run_lesson(parse_lesson(plain.dump(), "ln.json"));
    const Trace b = run_lesson(parse_lesson(ln_doc().dump(), "ln.json"));
    CHECK(a.find("blocks.0.ln1.hook_centred") == nullptr);
    CHECK(a.find("blocks.0.ln1.hook_sq_dev") == nullptr);
    CHECK(a.steps.size() + 2 == b.steps.size());
    // the same numbers up to the variance's summation (double over float squares vs double deviations)
    for (std::size_t i = 0; i < 8; ++i)
        CHECK(step(b, "hook_normalized").held().data[i] == Approx(step(a, "hook_normalized").held().data[i]).margin(1e-6));
}

}  // namespace test_layernorm_steps

// The model's end as lesson steps: config.final_norm (ln_final.*) and
// config.unembed (the logits, step unembed), held to LayerNorm, RMSNorm and
// the unembedding computed here in double from the trace's last block output;
// explain of a logit, claims on logits by piece, decode through them, and the
// refusals of a wrong config.
#include <catch2/catch.hpp>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "evaluate/evaluate.hpp"
#include "lesson/lesson.hpp"
#include "support.hpp"

using namespace attntrace;
using namespace attntrace::test;

namespace test_model_end {

namespace {

// The final norm's output and the logits from float32 inputs, in double:
// float32 rounding of a 8-wide norm and a 8-long dot product, a few ulps of ~1.
constexpr double kModelEndTol = 1e-5;

constexpr std::size_t kC = 8, kV = 11;

// Two pre-norm causal blocks over 4 tokens of an 11-entry vocabulary, ending in the final norm and the logits.
nlohmann::json lesson_doc(const std::string& unembed, const std::string& norm = "layernorm") {
    return {{"format", "attntrace-lesson"},
            {"version", 1},
            {"id", "model-end"},
            {"title", "model end"},
            {"source", {{"document", "test"}}},
            {"tokens", {"the", "ring", "fell", "down"}},
            {"token_ids", {3, 7, 1, 10}},
            {"config",
             {{"d_model", kC}, {"heads", 2}, {"d_ff", 16}, {"blocks", 2}, {"norm_first", true}, {"mask", "causal"},
              {"norm", norm}, {"positions", "learned"}, {"final_norm", true}, {"unembed", unembed}}},
            {"inputs", {{"embedding", {{"generate", "normal"}, {"seed", 1}}},
                        {"positions", {{"generate", "normal"}, {"seed", 2}}}}},
            {"weights_seed", 5}};
}

// LN_f (or RMSNorm_f) of the trace's last block output and its logits, in double: (T, C) and (T, V).
struct Expected {
    std::vector<double> normalized, logits;
};
Expected expected(const Evaluation& e) {
    const Lesson& l = e.lesson;
    const Tensor& x = e.exact.find("blocks.1.hook_resid_post")->held();
    const Tensor& g = *l.weight("ln_final_gamma");
    const Tensor* b = l.weight("ln_final_beta");
    const bool rms = l.config.norm == NormKind::rmsnorm;
    const std::size_t T = x.shape[0];
    Expected out;
    for (std::size_t t = 0; t < T; ++t) {
        double mean = 0, var = 0;
        for (std::size_t c = 0; c < kC; ++c) mean += x.data[t * kC + c] / double(kC);
        if (rms) mean = 0;  // RMSNorm: the mean square, no mean taken away
        for (std::size_t c = 0; c < kC; ++c) var += (x.data[t * kC + c] - mean) * (x.data[t * kC + c] - mean) / double(kC);
        for (std::size_t c = 0; c < kC; ++c)
            out.normalized.push_back((x.data[t * kC + c] - mean) / std::sqrt(var + 1e-5) * g.data[c] + (b ? b->data[c] : 0.0));
    }
    const bool tied = l.config.unembed_tied;
    const Tensor& W = tied ? l.inputs.at("embedding") : *l.weight("W_U");  // (V, C) tied, else (C, V)
    for (std::size_t t = 0; t < T; ++t)
        for (std::size_t v = 0; v < kV; ++v) {
            double s = 0;
            for (std::size_t c = 0; c < kC; ++c) s += out.normalized[t * kC + c] * (tied ? W.data[v * kC + c] : W.data[c * kV + v]);
            out.logits.push_back(s);
        }
    return out;
}

double worst(const Tensor& t, const std::vector<double>& want) {
    REQUIRE(t.size() == want.size());
    double w = 0;
    for (std::size_t i = 0; i < want.size(); ++i) w = std::max(w, std::fabs(t.data[i] - want[i]));
    return w;
}

}  // namespace

TEST_CASE("config.final_norm and config.unembed: ln_final and the logits after the last block, W_U or tied, LayerNorm or RMSNorm",
          "[model_end]") {
    for (const char* unembed : {"W_U", "tied"})
        for (const char* norm : {"layernorm", "rmsnorm"}) {
            INFO(unembed << ", " << norm);
            auto e = evaluate(parse_lesson(lesson_doc(unembed, norm).dump(), "model-end.json"));
            const Expected want = expected(*e);
            const Step* ln = e->exact.find("ln_final.hook_normalized");
            const Step* logits = e->exact.find("unembed");
            REQUIRE(ln);
            REQUIRE(logits);
            CHECK(logits->shape == Shape{4, kV});
            CHECK(logits->axes == std::vector<std::string>{"pos", "vocab"});
            CHECK(worst(ln->held(), want.normalized) < kModelEndTol);
            CHECK(worst(logits->held(), want.logits) < kModelEndTol);
            // the final norm is a norm pass of its own, its statistics steps recorded as any norm's
            CHECK(e->exact.find(std::string(norm) == "rmsnorm" ? "ln_final.hook_mean_square" : "ln_final.hook_mean"));
            CHECK(ln->def->title.find("Final") == 0);
            // the formula says which table the logits read
            CHECK(formula_of(*logits).find(std::string(unembed) == "tied" ? "logits = LN_f·W_Eᵀ" : "logits = LN_f·W_U") == 0);
            // they are the run's last steps: the unembedding reads the final norm
            CHECK(&e->exact.steps.back() == logits);
        }
}

TEST_CASE("a logit explained, claimed by token and piece, and decoded one token at a time", "[model_end]") {
    TempDir d;
    nlohmann::json doc = lesson_doc("W_U");
    auto e = evaluate(parse_lesson(doc.dump(), "model-end.json"));
    const Expected want = expected(*e);
    // explain recomputes logits['fell', #4] from the final norm's row and W_U's column, term by term
    write_text(d.file("l.json"), doc.dump());
    auto r = run_cli({"explain", d.file("l.json"), "unembed[fell,#4]"});
    REQUIRE(r.status == 0);
    CHECK(r.out.find("x[d0] · W_U[0,4]") != std::string::npos);
    CHECK(r.out.find("✓ (the same)") != std::string::npos);
    // a claim on two logits of 'fell', by the vocabulary's labels, at 3 decimals: the right numbers agree
    const double a = want.logits[2 * kV + 4], b = want.logits[2 * kV + 9];
    auto rounded = [](double v) { return std::round(v * 1000) / 1000; };
    doc["claims"] = {{{"id", "logits"}, {"step", "unembed"}, {"at", {{"pos", "fell"}, {"vocab", {"#4", "#9"}}}},
                      {"decimals", 3}, {"values", {rounded(a), rounded(b)}}, {"expect", "agrees"}},
                     {{"id", "wrong"}, {"step", "unembed"}, {"at", {{"pos", "fell"}, {"vocab", "#4"}}},
                      {"decimals", 3}, {"values", rounded(a) + 0.5}, {"expect", "disagrees"}}};
    write_text(d.file("claims.json"), doc.dump());
    r = run_cli({"check", d.file("claims.json")});
    CHECK(r.status == 0);  // both verdicts as the lesson expects
    CHECK(r.out.find("1 disagree") != std::string::npos);
    // decode runs the final norm and the unembedding over each new row, each equal to the causal run's
    r = run_cli({"decode", d.file("l.json")});
    CHECK(r.status == 0);
    CHECK(r.out.find("through unembed") != std::string::npos);
}

TEST_CASE("a wrong model end is refused naming the field: no embedding, an unknown kind, W_U's shape, W_U beside tied",
          "[model_end][bad-input]") {
    auto refusal = [](const nlohmann::json& doc) {
        try {
            parse_lesson(doc.dump(), "end.json");
        } catch (const InputError& e) {
            return std::string(e.what());
        }
        return std::string("(accepted)");
    };
    nlohmann::json doc = lesson_doc("W_U");
    doc["config"]["unembed"] = "lm_head";
    CHECK_THAT(refusal(doc), Catch::Contains("config.unembed: expected \"W_U\"") && Catch::Contains("found string \"lm_head\""));
    doc["config"]["unembed"] = true;
    CHECK_THAT(refusal(doc), Catch::Contains("config.unembed: expected \"W_U\""));
    // no vocabulary to range over
    doc = lesson_doc("tied");
    doc.erase("token_ids");
    doc["inputs"] = {{"X", {{"generate", "normal"}, {"seed", 1}}}, {"positions", {{"generate", "normal"}, {"seed", 2}}}};
    CHECK_THAT(refusal(doc), Catch::Contains("config.unembed: expected a lesson with inputs.embedding"));
    // W_U of the wrong shape, named with its expected extents
    doc = lesson_doc("W_U");
    doc["weights"] = {{"W_U", std::vector<std::vector<double>>(kC, std::vector<double>(kV - 1, 0.0))}};
    CHECK_THAT(refusal(doc), Catch::Contains("weights.W_U") && Catch::Contains("d_model x vocab"));
    // tied reads no W_U
    doc = lesson_doc("tied");
    doc["weights"] = {{"W_U", std::vector<std::vector<double>>(kC, std::vector<double>(kV, 0.0))}};
    CHECK_THAT(refusal(doc), Catch::Contains("weights.W_U: expected a weight this config uses"));
    // the final norm's weights only with config.final_norm
    doc = lesson_doc("tied");
    doc["config"].erase("final_norm");
    doc["weights"] = {{"ln_final_gamma", std::vector<double>(kC, 1.0)}};
    CHECK_THAT(refusal(doc), Catch::Contains("weights.ln_final_gamma: expected a weight this config uses"));
}

}  // namespace test_model_end

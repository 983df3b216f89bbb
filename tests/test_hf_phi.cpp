// Phi (Phi-2's architecture): the family's declaration held to the float64
// forward of PyTorch that tests/models/make_tiny_phi.py saved beside the tiny
// model (tiny-phi/reference.json): one norm per block read by the attention
// and the MLP side by side, partial rotary positions, lm_head's bias; and the
// two lesson vocabulary entries it added, config.shared_norm and weights.b_U,
// with their refusals.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "evaluate/evaluate.hpp"
#include "lesson/lesson.hpp"
#include "model/hf_model.hpp"
#include "model_reference.hpp"
#include "support.hpp"

using namespace attntrace;
using namespace attntrace::test;

namespace test_hf_phi {

namespace {

// float32 against the float64 forward, the tolerances of tests/test_hf_neox.cpp (a model of the
// same kind, narrower: 20 wide, 2 heads of 10, 2 blocks, 48 hidden units): RoPE's queries (~5) are
// two products of float32 cos/sin with 20-term sums; a softmax weight keeps ~7 digits; the MLP's
// output (~1) two products of 20 and 48 terms; the residual stream (~10) after two blocks; the final
// LayerNorm (~unit scale); the logits (20-term sums and a bias).
constexpr double kRotTol = 1e-4;
constexpr double kPatternTol = 2e-5;
constexpr double kMlpTol = 5e-5;
constexpr double kResidTol = 2e-4;
constexpr double kNormTol = 1e-4;
constexpr double kLogitTol = 5e-4;
// lm_head's bias in tiny-phi is drawn with std 0.5: leaving it out moves some logit of every text
// far past kLogitTol (the test checks that it does, so that the bias is seen to be added).
constexpr double kBiasSeen = 100 * kLogitTol;

std::string tiny() { return source_dir() + "/tests/models/tiny-phi"; }

const nlohmann::json& reference() {
    static const nlohmann::json r = nlohmann::json::parse(read_text(tiny() + "/reference.json"));
    return r;
}

// A copy of tiny-phi with its config.json edited.
std::string with_config(const TempDir& d, const std::function<void(nlohmann::json&)>& edit) {
    copy_model(tiny(), d);
    auto cfg = nlohmann::json::parse(read_text(d.file("config.json")));
    edit(cfg);
    write_text(d.file("config.json"), cfg.dump());
    return d.path();
}

bool reads(const Step& s, const std::string& input) {
    return std::find(s.inputs.begin(), s.inputs.end(), input) != s.inputs.end();
}

}  // namespace

TEST_CASE("a tiny Phi checkpoint computes the float64 PyTorch forward: one norm read by attention and MLP, partial RoPE, the lm_head bias", "[models]") {
    for (const auto& text : reference()["texts"]) {
        INFO(text["text"].get<std::string>());
        ModelInput in;
        in.text = text["text"].get<std::string>();
        HfModel m = load_hf_model(tiny(), in);
        CHECK(m.model_type == "phi");
        CHECK(m.lesson.token_ids == text["ids"].get<std::vector<std::int64_t>>());
        CHECK(m.lesson.config.arch.parallel);
        CHECK(m.lesson.config.arch.shared_norm);
        CHECK(m.lesson.config.positions.rotary_dims == 4);  // partial_rotary_factor 0.4 of 10
        CHECK(m.lesson.dims().KVH == 2);                    // num_key_value_heads null: one per query head
        CHECK_FALSE(m.lesson.config.unembed_tied);
        auto e = evaluate(std::move(m.lesson));
        CHECK(max_abs_diff(e->exact.find("blocks.0.attn.hook_rot_q")->held(), flat(text["blocks.0.attn.hook_rot_q"])) < kRotTol);
        CHECK(max_abs_diff(e->exact.find("blocks.0.attn.hook_pattern")->held(), flat(text["blocks.0.attn.hook_pattern"])) < kPatternTol);
        CHECK(max_abs_diff(e->exact.find("blocks.0.hook_mlp_out")->held(), flat(text["blocks.0.hook_mlp_out"])) < kMlpTol);
        CHECK(max_abs_diff(e->exact.find("blocks.1.hook_resid_post")->held(), flat(text["blocks.1.hook_resid_post"])) < kResidTol);
        CHECK(max_abs_diff(e->exact.find("ln_final.hook_normalized")->held(), flat(text["ln_final.hook_normalized"])) < kNormTol);
        const std::vector<double> want = flat(text["last_logits"]);
        const Tensor last = last_row_of(e->exact, "unembed");
        CHECK(max_abs_diff(last, want) < kLogitTol);
        CHECK(next_tokens(last.ptr(), last.size(), 1)[0].id == std::max_element(want.begin(), want.end()) - want.begin());
        // the dimensions past the rotated four pass through bit for bit
        const Tensor& q = e->exact.find("blocks.0.attn.hook_q")->held();
        const Tensor& rq = e->exact.find("blocks.0.attn.hook_rot_q")->held();
        for (std::size_t i = 0; i < q.size(); ++i)
            if (i % 10 >= 4) REQUIRE(rq.data[i] == q.data[i]);
        // one norm per block: the MLP reads LN1, and the trace has no LayerNorm 2
        for (int b : {0, 1}) {
            const Step* pre = e->exact.find(fmt::format("blocks.{}.mlp.hook_pre", b));
            REQUIRE(pre != nullptr);
            CHECK(reads(*pre, fmt::format("blocks.{}.ln1.hook_normalized", b)));
            CHECK(formula_of(*pre).find("H = LN1·W_1") == 0);
            CHECK(e->exact.find(fmt::format("blocks.{}.ln2.hook_normalized", b)) == nullptr);
            CHECK(e->exact.find(fmt::format("blocks.{}.ln2.hook_mean", b)) == nullptr);
        }
        // the logits add lm_head's bias, and without it they would be far from PyTorch's
        const Step* logits = e->exact.find("unembed");
        CHECK(reads(*logits, "weights.b_U"));
        CHECK(formula_of(*logits) == "logits = LN_f·W_U + b_U");
        const Tensor* bU = e->lesson.weight("b_U");
        REQUIRE(bU != nullptr);
        Tensor unbiased = last;
        for (std::size_t v = 0; v < unbiased.size(); ++v) unbiased.data[v] -= bU->data[v];
        CHECK(max_abs_diff(unbiased, want) > kBiasSeen);
    }
}

TEST_CASE("Phi with tie_word_embeddings true reads the embedding table as the head weight and still adds the lm_head bias", "[models]") {
    TempDir d;
    const std::string dir = with_config(d, [](nlohmann::json& c) { c["tie_word_embeddings"] = true; });
    HfModel m = load_hf_model(dir, ids_input(reference()["tied"]["ids"]));
    CHECK(m.lesson.config.unembed_tied);
    auto e = evaluate(std::move(m.lesson));
    CHECK(max_abs_diff(last_row_of(e->exact, "unembed"), flat(reference()["tied"]["last_logits"])) < kLogitTol);
    const Step* logits = e->exact.find("unembed");
    CHECK(formula_of(*logits).find("logits = LN_f·W_Eᵀ + b_U") == 0);
    CHECK(reads(*logits, "inputs.embedding"));
    CHECK(reads(*logits, "weights.b_U"));
}

TEST_CASE("run, explain and decode on a Phi folder: a logit with its bias, the MLP reading LN1, the KV cache matching", "[models]") {
    const std::string text = reference()["texts"][0]["text"];
    auto r = run_cli({"explain", "--model", tiny(), "--text", text, "unembed[2,5]"});
    REQUIRE(r.status == 0);
    CHECK(r.out.find("+ b_U[5]") != std::string::npos);
    CHECK(r.out.find("+ b_U = ") != std::string::npos);
    CHECK(r.out.find("✓ (the same)") != std::string::npos);
    r = run_cli({"explain", "--model", tiny(), "--text", text, "blocks.1.mlp.hook_pre[1,7]"});
    REQUIRE(r.status == 0);
    CHECK(r.out.find("H = LN1·W_1 + b_1") != std::string::npos);  // the block's one norm, as the attention's Q
    CHECK(r.out.find("✓ (the same)") != std::string::npos);
    r = run_cli({"decode", "--model", tiny(), "--text", text});
    CHECK(r.status == 0);
    CHECK(r.out.find("through unembed") != std::string::npos);
    CHECK(r.out.find("differ") == std::string::npos);
    r = run_cli({"run", "--model", tiny(), "--text", text, "--trace", "none", "--top-k", "1"});
    CHECK(r.status == 0);
    CHECK(r.out.find("Phi from ") != std::string::npos);
    // the export names the bias among the logits' inputs and in their formula; its next token is PyTorch's
    TempDir d;
    r = run_cli({"export", "--model", tiny(), "--text", text, "-o", d.file("trace.json")});
    REQUIRE(r.status == 0);
    const auto doc = nlohmann::json::parse(read_text(d.file("trace.json")));
    bool seen = false;
    for (const auto& s : doc["steps"]) {
        CHECK(s["name"].get<std::string>().find(".ln2.") == std::string::npos);
        if (s["name"] != "unembed") continue;
        seen = true;
        CHECK(s["formula"] == "logits = LN_f·W_U + b_U");
        CHECK(std::find(s["inputs"].begin(), s["inputs"].end(), "weights.b_U") != s["inputs"].end());
    }
    CHECK(seen);
    const std::vector<double> want = flat(reference()["texts"][0]["last_logits"]);
    CHECK(doc["model"]["next_tokens"][0]["id"] == std::max_element(want.begin(), want.end()) - want.begin());
}

TEST_CASE("a Phi config it does not compute is refused naming the field: qk_layernorm, an odd rotary share, scaled RoPE", "[models]") {
    struct Case {
        const char* key;
        nlohmann::json value;
        const char* error;
    };
    const std::vector<Case> cases = {
        {"qk_layernorm", true, "config.json: qk_layernorm: expected false (no LayerNorm of Q and K after their projections), found true"},
        {"partial_rotary_factor", 0.3,
         "config.json: partial_rotary_factor: expected a share of the head size 10 giving an even number of rotated dimensions"},
        {"rope_scaling", {{"type", "linear"}, {"factor", 2.0}}, "config.json: rope_scaling.type: expected \"default\""},
        {"hidden_act", "relu", "config.json: hidden_act: expected \"gelu_new\" or \"gelu_pytorch_tanh\" (tanh), or \"gelu\" (erf)"},
    };
    for (const Case& c : cases) {
        INFO(c.key);
        TempDir d;
        const std::string dir = with_config(d, [&](nlohmann::json& cfg) { cfg[c.key] = c.value; });
        const auto r = run_cli({"run", "--model", dir, "--ids", "1,2"});
        CHECK(r.status == 2);
        CHECK(r.err.find(c.error) != std::string::npos);
    }
}

TEST_CASE("config.shared_norm: the FFN reads LN1, the same numbers as a parallel block whose LN2 has the LN1 weights, without the LN2 steps", "[models]") {
    // The same block twice: parallel_residual with ln2's γ and β set to ln1's (GPT-NeoX's wiring, two norms of
    // one input), and shared_norm (Phi's: one norm). Every weight but the norms' comes from the seed.
    nlohmann::json doc = {{"format", "attntrace-lesson"}, {"version", 1}, {"id", "s"}, {"title", "s"},
                          {"source", {{"document", "s"}}}, {"tokens", {"a", "b", "c"}},
                          {"inputs", {{"X", {{1, 0, 0.5, 2}, {0, 1, -1, 0}, {0.5, 0.5, 0.25, -2}}}}},
                          {"weights_seed", 3},
                          {"weights", {{"ln1_gamma", {1.5, 0.5, -1, 2}}, {"ln1_beta", {0.25, -0.5, 0, 1}}}},
                          {"config", {{"d_model", 4}, {"heads", 1}, {"d_ff", 8}, {"mask", "causal"}, {"norm_first", true},
                                      {"parallel_residual", true}, {"activation", "gelu_tanh"}}}};
    nlohmann::json two = doc;
    two["weights"]["ln2_gamma"] = doc["weights"]["ln1_gamma"];
    two["weights"]["ln2_beta"] = doc["weights"]["ln1_beta"];
    nlohmann::json one = doc;
    one["config"]["shared_norm"] = true;
    auto a = evaluate(parse_lesson(two.dump(), "two.json"));
    auto b = evaluate(parse_lesson(one.dump(), "one.json"));
    for (const char* step : {"blocks.0.hook_mlp_out", "blocks.0.hook_resid_post"}) {
        INFO(step);
        REQUIRE(b->exact.find(step) != nullptr);
        CHECK(b->exact.find(step)->held().data == a->exact.find(step)->held().data);  // bit for bit
    }
    CHECK(a->exact.find("blocks.0.ln2.hook_normalized") != nullptr);
    CHECK(b->exact.find("blocks.0.ln2.hook_normalized") == nullptr);
    CHECK(reads(*b->exact.find("blocks.0.mlp.hook_pre"), "blocks.0.ln1.hook_normalized"));
    CHECK(b->exact.find("blocks.0.ln1.hook_normalized")->def->explain.find("config.shared_norm") != std::string::npos);
    // decode holds each new row to the causal run's
    TempDir d;
    write_text(d.file("one.json"), one.dump());
    const auto r = run_cli({"decode", d.file("one.json")});
    CHECK(r.status == 0);
    CHECK(r.out.find("differ") == std::string::npos);

    // refused where it cannot apply: without the parallel residual, and beside LN2's weights
    nlohmann::json alone = one;
    alone["config"]["parallel_residual"] = false;
    CHECK(lesson_refusal(alone.dump()).find("config.shared_norm: expected config.shared_norm only with "
                                            "config.parallel_residual true") != std::string::npos);
    nlohmann::json ln2 = one;
    ln2["weights"]["ln2_gamma"] = {1, 1, 1, 1};
    CHECK(lesson_refusal(ln2.dump()).find("weights.ln2_gamma: expected a weight this config uses, found ln2_gamma "
                                          "(not with config.shared_norm: the block's one norm is LN1)") != std::string::npos);
}

TEST_CASE("weights.b_U: added to every row of the logits after the product, with W_U or the tied table, refused without config.unembed", "[models]") {
    constexpr std::size_t kV = 5;
    auto doc_of = [](const char* unembed) {
        return nlohmann::json{{"format", "attntrace-lesson"}, {"version", 1}, {"id", "u"}, {"title", "u"},
                              {"source", {{"document", "u"}}}, {"tokens", {"a", "b", "c"}}, {"token_ids", {3, 0, 4}},
                              {"inputs", {{"embedding", {{"generate", "normal"}, {"seed", 1}}}}},
                              {"weights_seed", 5},
                              {"config", {{"d_model", 4}, {"heads", 2}, {"d_ff", 8}, {"mask", "causal"}, {"norm_first", true},
                                          {"final_norm", true}, {"unembed", unembed}}}};
    };
    const std::vector<float> bias = {0.5f, -1.25f, 3.0f, 0.0f, -0.75f};
    for (const char* unembed : {"W_U", "tied"}) {
        INFO(unembed);
        nlohmann::json plain = doc_of(unembed);  // the vocabulary: token ids up to 4, so kV rows
        nlohmann::json biased = plain;
        biased["weights"] = {{"b_U", bias}};
        auto a = evaluate(parse_lesson(plain.dump(), "plain.json"));
        auto b = evaluate(parse_lesson(biased.dump(), "biased.json"));
        const Tensor& x = a->exact.find("unembed")->held();
        const Tensor& y = b->exact.find("unembed")->held();
        REQUIRE(x.shape == Shape{3, kV});
        REQUIRE(y.shape == x.shape);
        // the weights_seed's zero bias changes no logit; the lesson's is added to each row, after the whole sum
        for (std::size_t t = 0; t < 3; ++t)
            for (std::size_t v = 0; v < kV; ++v) CHECK(y.data[t * kV + v] == x.data[t * kV + v] + bias[v]);
        CHECK(formula_of(*b->exact.find("unembed")).find(std::string(unembed) == "tied" ? "·W_Eᵀ + b_U" : "·W_U + b_U") !=
              std::string::npos);
        // explain adds it as the last term
        TempDir d;
        write_text(d.file("b.json"), biased.dump());
        const auto r = run_cli({"explain", d.file("b.json"), "unembed[c,#2]"});
        REQUIRE(r.status == 0);
        CHECK(r.out.find("+ b_U = 3") != std::string::npos);
        CHECK(r.out.find("✓ (the same)") != std::string::npos);
    }
    nlohmann::json no_head = doc_of("W_U");
    no_head["config"].erase("unembed");
    no_head["weights"] = {{"b_U", bias}};
    CHECK(lesson_refusal(no_head.dump()).find("weights.b_U: expected a weight this config uses, found b_U (only with config.unembed)") !=
          std::string::npos);
}

}  // namespace test_hf_phi

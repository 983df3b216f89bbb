// Models beyond one post-norm encoder block (trace/catalogue.hpp): stacks of
// N blocks, pre-norm, and the decoder block with cross-attention, each held
// to an independent double-precision reference written from PyTorch's
// definitions (nn.TransformerEncoderLayer / nn.TransformerDecoderLayer,
// norm_first False and True, dropout 0), plus the catalogue's names, the
// lesson fields and the CLI.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "evaluate/evaluate.hpp"
#include "reference_block.hpp"
#include "support.hpp"
#include "trace/catalogue.hpp"

using namespace attntrace;

namespace test_models {
namespace ref = attntrace::reference;
using attntrace::test::run_cli;

namespace {

// float32 pipeline against double reference through two or three LayerNorms
// of d_model 8 with N(0,1) weights: a few hundred ulps of values near 1.
constexpr double kTol = 2e-5;

using json = nlohmann::json;

json model_lesson(json config, bool decoder) {
    json j = {{"format", "attntrace-lesson"}, {"version", 1}, {"id", "models"}, {"title", "models"},
              {"source", {{"document", "test"}}}, {"tokens", {"a", "b", "c", "d", "e"}}, {"config", config},
              {"inputs", {{"X", {{"generate", "normal"}, {"seed", 3}}}}}, {"weights_seed", 4}};
    if (decoder) {
        j["memory_tokens"] = {"m0", "m1", "m2"};
        j["inputs"]["memory"] = {{"generate", "normal"}, {"seed", 5}};
    }
    return j;
}

std::unique_ptr<Evaluation> eval(const json& doc) { return evaluate(parse_lesson(doc.dump(), "models.json")); }

ref::Mat to_mat(const Tensor& t) {
    ref::Mat m = xt::zeros<double>({t.shape.at(0), t.shape.at(1)});
    std::copy(t.data.begin(), t.data.end(), m.begin());
    return m;
}
ref::Vec to_vec(const Lesson& l, const std::string& name, std::size_t n, double fill) {
    ref::Vec v = xt::zeros<double>({n});
    if (const Tensor* t = l.weight(name)) std::copy(t->data.begin(), t->data.end(), v.begin());
    else std::fill(v.begin(), v.end(), fill);
    return v;
}

// The weights of one attention (prefix "", "blocks.1.", "cross.", "blocks.1.cross.").
struct Attn {
    ref::Mat W_Q, W_K, W_V, W_O;
    ref::Vec b_Q, b_K, b_V, b_O;
};
Attn attn_weights(const Lesson& l, const std::string& p) {
    const std::size_t C = l.config.d_model;
    return {to_mat(*l.weight(p + "W_Q")), to_mat(*l.weight(p + "W_K")), to_mat(*l.weight(p + "W_V")),
            to_mat(*l.weight(p + "W_O")), to_vec(l, p + "b_Q", C, 0),   to_vec(l, p + "b_K", C, 0),
            to_vec(l, p + "b_V", C, 0),   to_vec(l, p + "b_O", C, 0)};
}

// Multi-head attention, queries from xq (Tq, C), keys and values from xkv (S, C).
ref::Mat attention(const ref::Mat& xq, const ref::Mat& xkv, const Attn& w, std::size_t NH, bool causal) {
    const ref::Mat Q = ref::linear(xq, w.W_Q, w.b_Q), K = ref::linear(xkv, w.W_K, w.b_K), V = ref::linear(xkv, w.W_V, w.b_V);
    const std::size_t Tq = xq.shape(0), S = xkv.shape(0), C = xq.shape(1), hs = C / NH;
    ref::Mat Z = xt::zeros<double>({Tq, C});
    for (std::size_t h = 0; h < NH; ++h)
        for (std::size_t i = 0; i < Tq; ++i) {
            std::vector<double> s(S, -std::numeric_limits<double>::infinity());
            double mx = -std::numeric_limits<double>::infinity();
            for (std::size_t j = 0; j < S; ++j) {
                if (causal && j > i) continue;
                double acc = 0;
                for (std::size_t e = 0; e < hs; ++e) acc += Q(i, h * hs + e) * K(j, h * hs + e);
                s[j] = acc / std::sqrt(static_cast<double>(hs));
                mx = std::max(mx, s[j]);
            }
            double sum = 0;
            for (double& x : s) sum += (x = std::exp(x - mx));
            for (std::size_t j = 0; j < S; ++j)
                for (std::size_t e = 0; e < hs; ++e) Z(i, h * hs + e) += s[j] / sum * V(j, h * hs + e);
        }
    return ref::linear(Z, w.W_O, w.b_O);
}

ref::Mat norm(const Lesson& l, const std::string& p, int k, const ref::Mat& x) {
    const std::size_t C = l.config.d_model;
    return ref::layer_norm(x, to_vec(l, fmt::format("{}ln{}_gamma", p, k), C, 1),
                           to_vec(l, fmt::format("{}ln{}_beta", p, k), C, 0), l.config.eps).normalized;
}

ref::Mat ffn(const Lesson& l, const std::string& p, const ref::Mat& x) {
    const std::size_t F = l.config.d_ff, C = l.config.d_model;
    ref::Mat h = ref::linear(x, to_mat(*l.weight(p + "W_1")), to_vec(l, p + "b_1", F, 0));
    for (double& v : h) v = std::max(v, 0.0);
    return ref::linear(h, to_mat(*l.weight(p + "W_2")), to_vec(l, p + "b_2", C, 0));
}

// One block of the lesson's model, as PyTorch's layers compute it.
ref::Mat block(const Lesson& l, std::size_t b, const ref::Mat& x) {
    const std::string p = l.config.arch.blocks > 1 ? fmt::format("blocks.{}.", b) : "";
    const std::size_t NH = l.config.heads;
    const bool causal = l.config.mask == MaskKind::causal;
    const Attn self = attn_weights(l, p);
    if (!l.config.arch.decoder) {
        if (!l.config.arch.norm_first) {  // x = LN1(x + SA(x)); x = LN2(x + FF(x))
            const ref::Mat n1 = norm(l, p, 1, x + attention(x, x, self, NH, causal));
            return norm(l, p, 2, n1 + ffn(l, p, n1));
        }
        const ref::Mat r1 = x + attention(norm(l, p, 1, x), norm(l, p, 1, x), self, NH, causal);  // x + SA(LN1(x))
        return r1 + ffn(l, p, norm(l, p, 2, r1));                                                  // x + FF(LN2(x))
    }
    const ref::Mat M = to_mat(l.inputs.at("memory"));
    const Attn cross = attn_weights(l, p + "cross.");
    if (!l.config.arch.norm_first) {  // LN1(x + SA(x)); LN2(x + MHA(x, M)); LN3(x + FF(x))
        const ref::Mat n1 = norm(l, p, 1, x + attention(x, x, self, NH, causal));
        const ref::Mat n2 = norm(l, p, 2, n1 + attention(n1, M, cross, NH, false));
        return norm(l, p, 3, n2 + ffn(l, p, n2));
    }
    const ref::Mat n1 = norm(l, p, 1, x);
    const ref::Mat r1 = x + attention(n1, n1, self, NH, causal);
    const ref::Mat r2 = r1 + attention(norm(l, p, 2, r1), M, cross, NH, false);
    return r2 + ffn(l, p, norm(l, p, 3, r2));
}

ref::Mat model(const Lesson& l) {
    ref::Mat x = to_mat(l.inputs.at("X"));
    for (std::size_t b = 0; b < l.config.arch.blocks; ++b) x = block(l, b, x);
    return x;
}

// The trace's output: the last step of the last pass.
const Step& output(const Evaluation& e) { return e.exact.steps.back(); }

void require_matches_reference(const json& doc) {
    auto e = eval(doc);
    const ref::Mat want = model(e->lesson);
    const Step& got = output(*e);
    REQUIRE(got.held().size() == want.size());
    double worst = 0;
    for (std::size_t i = 0; i < want.size(); ++i) worst = std::max(worst, std::fabs(got.held().data[i] - want.data()[i]));
    INFO(got.name << " max |Δ| " << worst);
    CHECK(worst < kTol);
}

}  // namespace

TEST_CASE("the catalogue names every block's steps blocks.i. and orders the passes as PyTorch's layers", "[models]") {
    const Catalogue& post = catalogue_for(Arch{2, false, false});
    CHECK(post.find("blocks.1.attn.hook_pattern") != nullptr);
    CHECK(post.find("blocks.2.attn.hook_pattern") == nullptr);
    // Post-norm: block 1 reads block 0's last LayerNorm; pre-norm: block 0's residual stream.
    const Pass& qkv1 = post.passes()[static_cast<std::size_t>(post.find("blocks.1.attn.hook_q")->pass)];
    CHECK(post.at(qkv1.x).name == "blocks.0.ln2.hook_normalized");
    const Catalogue& pre = catalogue_for(Arch{2, true, false});
    CHECK(pre.at(pre.pass_of(*pre.find("blocks.1.attn.hook_q")).x).name == "blocks.1.ln1.hook_normalized");
    CHECK(pre.at(pre.pass_of(*pre.find("blocks.1.ln1.hook_mean")).x).name == "blocks.0.hook_resid_post");
    // Pre-norm: LN1 comes before Q in the run order; post-norm: after.
    CHECK(pre.find("blocks.0.ln1.hook_mean")->pass < pre.find("blocks.0.attn.hook_q")->pass);
    CHECK(post.find("blocks.0.ln1.hook_mean")->pass > post.find("blocks.0.attn.hook_q")->pass);
    const Catalogue& dec = catalogue_for(Arch{1, false, true});
    for (const char* n : {"blocks.0.cross_attn.hook_q", "blocks.0.cross_attn.hook_pattern", "blocks.0.hook_cross_attn_out",
                          "blocks.0.hook_resid_mid2", "blocks.0.ln3.hook_normalized"})
        CHECK(dec.find(n) != nullptr);
    CHECK(dec.find("blocks.0.cross_attn.hook_rot_q") == nullptr);  // positions rotate the self-attention only
    CHECK(dec.find("blocks.0.cross_attn.hook_q")->base == "blocks.0.attn.hook_q");
    // The default model is the template, names unchanged (but the unembedding, which is no block's).
    const auto block_templates = std::count_if(step_templates().begin(), step_templates().end(),
                                               [](const StepTemplate& t) { return t.stage != Stage::unembed; });
    CHECK(default_catalogue().steps().size() == static_cast<std::size_t>(block_templates));
    CHECK(default_catalogue().find("unembed") == nullptr);
}

TEST_CASE("a stack of one block is the block: config.blocks 1 gives the same trace bit for bit", "[models]") {
    json doc = model_lesson({{"d_model", 8}, {"heads", 2}, {"d_ff", 12}}, false);
    auto plain = eval(doc);
    doc["config"]["blocks"] = 1;
    doc["config"]["norm_first"] = false;
    doc["config"]["block"] = "encoder";
    auto one = eval(doc);
    REQUIRE(plain->exact.steps.size() == one->exact.steps.size());
    for (std::size_t i = 0; i < one->exact.steps.size(); ++i) {
        CHECK(plain->exact.steps[i].name == one->exact.steps[i].name);
        CHECK(values_of(plain->exact, plain->exact.steps[i])->data == values_of(one->exact, one->exact.steps[i])->data);
    }
}

TEST_CASE("block 1 of a stack is a one-block lesson run on block 0's output with block 1's weights", "[models]") {
    auto stack = eval(model_lesson({{"d_model", 8}, {"heads", 2}, {"d_ff", 12}, {"blocks", 2}}, false));
    const Lesson& l = stack->lesson;
    json one = model_lesson({{"d_model", 8}, {"heads", 2}, {"d_ff", 12}}, false);
    one.erase("weights_seed");
    const Tensor& x1 = stack->exact.find("blocks.0.ln2.hook_normalized")->held();
    one["inputs"]["X"] = json::array();
    for (std::size_t t = 0; t < 5; ++t)
        one["inputs"]["X"].push_back(std::vector<float>(x1.data.begin() + t * 8, x1.data.begin() + (t + 1) * 8));
    for (const auto& [name, t] : l.weights) {
        if (name.rfind("blocks.1.", 0) != 0) continue;
        json m = json::array();
        if (t.shape.size() == 1) m = t.data;
        else
            for (std::size_t r = 0; r < t.shape[0]; ++r)
                m.push_back(std::vector<float>(t.data.begin() + r * t.shape[1], t.data.begin() + (r + 1) * t.shape[1]));
        one["weights"][name.substr(9)] = m;
    }
    auto alone = eval(one);
    CHECK(alone->exact.find("blocks.0.ln2.hook_normalized")->held().data ==
          stack->exact.find("blocks.1.ln2.hook_normalized")->held().data);
    CHECK(alone->exact.find("blocks.0.attn.hook_pattern")->held().data ==
          stack->exact.find("blocks.1.attn.hook_pattern")->held().data);
}

TEST_CASE("stacks, pre-norm and decoder blocks match the double-precision reference of PyTorch's layers", "[models]") {
    const json base = {{"d_model", 8}, {"heads", 2}, {"d_ff", 12}};
    SECTION("post-norm stack of 3") {
        json c = base;
        c["blocks"] = 3;
        require_matches_reference(model_lesson(c, false));
    }
    SECTION("pre-norm, causal, stack of 2") {
        json c = base;
        c["blocks"] = 2;
        c["norm_first"] = true;
        c["mask"] = "causal";
        require_matches_reference(model_lesson(c, false));
    }
    SECTION("decoder, post-norm") {
        json c = base;
        c["block"] = "decoder";
        require_matches_reference(model_lesson(c, true));
    }
    SECTION("decoder, pre-norm, stack of 2") {
        json c = base;
        c["block"] = "decoder";
        c["norm_first"] = true;
        c["blocks"] = 2;
        require_matches_reference(model_lesson(c, true));
    }
}

TEST_CASE("cross-attention: queries from the decoder, keys from the memory, no mask", "[models]") {
    json c = {{"d_model", 8}, {"heads", 2}, {"d_ff", 12}, {"block", "decoder"}};
    auto e = eval(model_lesson(c, true));
    const Step& s = *e->exact.find("blocks.0.cross_attn.hook_pattern");
    CHECK(s.shape == Shape{2, 5, 3});  // heads, 5 decoder tokens, 3 memory tokens
    CHECK(s.labels[2] == std::vector<std::string>{"m0", "m1", "m2"});
    CHECK(s.labels[1] == std::vector<std::string>{"a", "b", "c", "d", "e"});
    for (float w : s.held().data) CHECK(w > 0.0f);  // every decoder token sees every memory token
    // The self-attention of a decoder is causal unless the lesson says otherwise.
    const Step& self = *e->exact.find("blocks.0.attn.hook_pattern");
    CHECK(self.held().data[1] == 0.0f);  // head 0, query a, key b
}

TEST_CASE("model fields refuse what does not fit, naming the field", "[models]") {
    json c = {{"d_model", 8}, {"heads", 2}, {"d_ff", 12}, {"blocks", 2}};
    json doc = model_lesson(c, false);
    doc["weights"] = {{"W_Q", {{"generate", "normal"}, {"seed", 1}}}};
    CHECK_THROWS_WITH(parse_lesson(doc.dump(), "m.json"), Catch::Contains("m.json: weights.W_Q: expected a weight name blocks.i.NAME"));
    doc = model_lesson(c, false);
    doc["config"]["blocks"] = 0;
    CHECK_THROWS_WITH(parse_lesson(doc.dump(), "m.json"), Catch::Contains("config.blocks"));
    doc = model_lesson({{"d_model", 8}, {"block", "decoder"}}, false);
    CHECK_THROWS_WITH(parse_lesson(doc.dump(), "m.json"), Catch::Contains("memory_tokens"));
    doc = model_lesson({{"d_model", 8}, {"block", "decoder"}}, true);
    doc["inputs"].erase("memory");
    CHECK_THROWS_WITH(parse_lesson(doc.dump(), "m.json"), Catch::Contains("inputs.memory: expected the encoder's output"));
    doc = model_lesson({{"d_model", 8}, {"block", "transformer"}}, false);
    CHECK_THROWS_WITH(parse_lesson(doc.dump(), "m.json"), Catch::Contains("config.block: expected \"encoder\" or \"decoder\""));
    doc = model_lesson({{"d_model", 8}, {"norm_first", true}}, false);
    doc["run"] = {{"from", "embed"}, {"to", "mix"}};
    CHECK_THROWS_WITH(parse_lesson(doc.dump(), "m.json"), Catch::Contains("m.json: run: expected no run range"));
}

TEST_CASE("attntrace runs, explains and compares the new models end to end", "[models][cli]") {
    auto r = run_cli({"check", "003-stacked-blocks", "001-cross-attention"});
    CHECK(r.status == 0);
    auto x = run_cli({"explain", "001-cross-attention", "blocks.0.cross_attn.hook_k[cat,kv1,1]"});
    CHECK(x.status == 0);
    CHECK_THAT(x.out, Catch::Contains("M[cat,d0]"));
    auto p = run_cli({"compare", "003-stacked-blocks", "--set", "norm_first=true"});
    CHECK(p.status == 0);
    CHECK_THAT(p.out, Catch::Contains("blocks.1.hook_resid_post"));
}

}  // namespace test_models

// RMSNorm, DyT, GELU's tanh approximation and SwiGLU: hand-computed values,
// the invariants that define them, the pipeline end to end (materialised and
// chunked FFN alike), explain, and the lesson fields they bring. DyT's whole
// block is held to a float64 reference in test_block_reference.cpp.
#include <catch2/catch.hpp>
#include <cmath>
#include <nlohmann/json.hpp>

#include "evaluate/evaluate.hpp"
#include "held_trace.hpp"
#include "kernels/activations.hpp"
#include "kernels/layernorm.hpp"
#include "kernels/softmax.hpp"
#include "support.hpp"

using namespace attntrace;
using attntrace::test::run_cli;

namespace test_norms {

namespace {

// Float32 arithmetic against values worked out in double: a few ulps.
constexpr double kTol = 1e-6;

nlohmann::json small_lesson(const char* activation, const char* norm) {
    return {{"format", "attntrace-lesson"}, {"version", 1}, {"id", "norms"}, {"title", "norms"},
            {"source", {{"document", "test"}}}, {"tokens", {"a", "b", "c", "d", "e"}},
            {"config", {{"d_model", 8}, {"heads", 2}, {"d_ff", 12}, {"activation", activation}, {"norm", norm}}},
            {"inputs", {{"X", {{"generate", "normal"}, {"seed", 3}}}}}, {"weights_seed", 4}};
}

std::unique_ptr<Evaluation> eval(const nlohmann::json& doc, const TracePolicy& policy = {}) {
    return evaluate(parse_lesson(doc.dump(), "norms.json"), policy);
}

}  // namespace

TEST_CASE("RMSNorm of a row by hand: no mean, divided by its root mean square", "[norms]") {
    const float x[4] = {1, 2, 3, 4}, gamma[4] = {1, 1, 2, 0.5f};
    float ms, sigma, xhat[4], out[4];
    row_mean_square_ref(x, 1, 4, &ms);
    CHECK(ms == 7.5f);  // (1 + 4 + 9 + 16) / 4
    std_eps_ref(&ms, 1, 1e-5f, &sigma);
    CHECK(sigma == Approx(std::sqrt(7.5 + 1e-5)).epsilon(kTol));
    divide_rows_ref(x, &sigma, 1, 4, xhat);
    gain_ref(xhat, gamma, 1, 4, out);
    for (int c = 0; c < 4; ++c) CHECK(out[c] == Approx(gamma[c] * x[c] / std::sqrt(7.5 + 1e-5)).epsilon(kTol));
}

TEST_CASE("DyT of a row by hand: tanh of alpha times each number alone, then gamma and beta", "[norms]") {
    const float x[5] = {-40, -1, 0, 0.5f, 3}, gamma[5] = {1, 2, 1, -1, 0.5f}, beta[5] = {0, 0, 0.25f, 0, 1};
    const float alpha = 0.5f;  // the paper's α₀
    float t[5], out[5];
    dyt_tanh_ref(x, alpha, t, 5);
    affine_ref(t, gamma, beta, 1, 5, out);
    for (int c = 0; c < 5; ++c) {
        INFO(c);
        CHECK(t[c] == Approx(std::tanh(0.5 * x[c])).margin(kTol));
        CHECK(out[c] == Approx(gamma[c] * std::tanh(0.5 * x[c]) + beta[c]).margin(kTol));
    }
    CHECK(t[0] == -1.0f);  // tanh(-20) is -1 in float: a large number saturates, nothing divides it
    CHECK(t[2] == 0.0f);
    // no statistic of the row: each number's x̂ is the same whatever the others are
    const float alone = x[3];
    float t_alone;
    dyt_tanh_ref(&alone, alpha, &t_alone, 1);
    CHECK(t_alone == t[3]);
}

TEST_CASE("GELU's tanh approximation: torch's values, and within 1e-3 of the exact GELU", "[norms]") {
    const float x[5] = {-3, -1, 0, 1, 2};
    float t[5], e[5];
    gelu_tanh_ref(x, t, 5);
    gelu_ref(x, e, 5);
    // torch.nn.GELU(approximate="tanh") at 1 and 2: 0.8411920, 1.9545977
    CHECK(t[3] == Approx(0.8411920).epsilon(kTol));
    CHECK(t[4] == Approx(1.9545977).epsilon(kTol));
    CHECK(t[2] == 0.0f);
    for (int i = 0; i < 5; ++i) CHECK(std::fabs(t[i] - e[i]) < 1e-3);
    CHECK(t[3] != e[3]);  // an approximation, not the same function
}

TEST_CASE("SwiGLU by hand: SiLU(gate) times the linear branch", "[norms]") {
    const float g[3] = {0, 1, -1}, u[3] = {2, 3, 4};
    float y[3];
    swiglu_ref(g, u, y, 3);
    CHECK(y[0] == 0.0f);
    CHECK(y[1] == Approx(3.0 / (1.0 + std::exp(-1.0))).epsilon(kTol));   // 2.1931758
    CHECK(y[2] == Approx(-4.0 / (1.0 + std::exp(1.0))).epsilon(kTol));   // -1.0757656
}

TEST_CASE("an RMSNorm block records the mean square and no mean or variance, and is scale-invariant", "[norms]") {
    auto e = eval(small_lesson("relu", "rmsnorm"));
    for (const char* name : {"blocks.0.ln1.hook_mean_square", "blocks.0.ln1.hook_scale", "blocks.0.ln2.hook_normalized"})
        CHECK(e->exact.find(name));
    CHECK(!e->exact.find("blocks.0.ln1.hook_mean"));
    CHECK(!e->exact.find("blocks.0.ln1.hook_var"));
    // ln1 output = γ ⊙ x / √(mean(x²) + eps) row by row, from resid_mid (γ = 1 generated)
    const Tensor& mid = e->exact.find("blocks.0.hook_resid_mid")->held();
    const Tensor& out = e->exact.find("blocks.0.ln1.hook_normalized")->held();
    for (std::size_t t = 0; t < 5; ++t) {
        double ms = 0;
        for (std::size_t c = 0; c < 8; ++c) ms += double(mid.data[t * 8 + c]) * mid.data[t * 8 + c];
        const double sigma = std::sqrt(ms / 8 + 1e-5);
        for (std::size_t c = 0; c < 8; ++c) CHECK(out.data[t * 8 + c] == Approx(mid.data[t * 8 + c] / sigma).epsilon(1e-5));
    }
}

TEST_CASE("a DyT block records tanh(alpha x) and its output, no statistic of the row, each norm its own alpha",
          "[norms]") {
    auto doc = small_lesson("relu", "dyt");
    doc["weights"] = {{"ln1_alpha", nlohmann::json::array({0.9})}, {"ln1_beta", {{"generate", "normal"}, {"seed", 5}, {"std", 0.5}}}};
    auto e = eval(doc);
    for (const char* name : {"blocks.0.ln1.hook_standardized", "blocks.0.ln1.hook_normalized", "blocks.0.ln2.hook_normalized"})
        CHECK(e->exact.find(name));
    for (const char* name : {"blocks.0.ln1.hook_mean", "blocks.0.ln1.hook_var", "blocks.0.ln1.hook_mean_square",
                             "blocks.0.ln1.hook_scale", "blocks.0.ln2.hook_scale"})
        CHECK(!e->exact.find(name));
    CHECK(formula_of(*e->exact.find("blocks.0.ln1.hook_standardized")).find("tanh(α·x") != std::string::npos);
    // ln1 = γ ⊙ tanh(0.9·x) + β from resid_mid (γ = 1 generated, β given); ln2's α is the generated 0.5
    const Tensor& mid = e->exact.find("blocks.0.hook_resid_mid")->held();
    const Tensor& out = e->exact.find("blocks.0.ln1.hook_normalized")->held();
    const Tensor& beta = e->lesson.weights.at("ln1_beta");
    CHECK(e->lesson.weights.at("ln2_alpha").shape == Shape{1});
    CHECK(e->lesson.weights.at("ln2_alpha").data[0] == 0.5f);
    for (std::size_t i = 0; i < 5 * 8; ++i)
        CHECK(out.data[i] == Approx(std::tanh(0.9 * mid.data[i]) + beta.data[i % 8]).margin(kTol));
}

TEST_CASE("an RMSNorm's and a DyT's steps are titled by their norm (its display name), a LayerNorm's keep theirs",
          "[norms]") {
    auto rms = eval(small_lesson("relu", "rmsnorm"));
    const Step* scale = rms->exact.find("blocks.0.ln1.hook_scale");
    REQUIRE(scale);
    CHECK(title_of(*scale) == "RMSNorm 1: root mean square");
    CHECK(formula_of(*scale) == "σ_i = √(ms_i + eps)");
    CHECK(meaning_of(*scale).find("root mean square") != std::string::npos);
    const Step* xhat = rms->exact.find("blocks.0.ln2.hook_standardized");
    REQUIRE(xhat);
    CHECK(title_of(*xhat) == "RMSNorm 2: normalized rows");
    CHECK(formula_of(*xhat).find("μ") == std::string::npos);  // no mean subtracted
    CHECK(formula_of(*xhat).find("/ σ_i") != std::string::npos);
    CHECK(formula_of(*rms->exact.find("blocks.0.ln1.hook_normalized")).find("β") == std::string::npos);
    for (const Step& s : rms->exact.steps) {
        INFO(s.name);
        CHECK(title_of(s).find("LayerNorm") == std::string::npos);
        CHECK(title_of(s).find("std σ") == std::string::npos);
        CHECK(formula_of(s).find("(RMSNorm:") == std::string::npos);
    }
    auto dyt = eval(small_lesson("relu", "dyt"));
    CHECK(title_of(*dyt->exact.find("blocks.0.ln1.hook_standardized")) == "DyT 1: tanh(α·x)");
    CHECK(title_of(*dyt->exact.find("blocks.0.ln1.hook_normalized")) == "DyT 1: output");
    CHECK(formula_of(*dyt->exact.find("blocks.0.ln1.hook_normalized")) == "DyT(X_mid) = γ ⊙ x̂ + β");
    for (const Step& s : dyt->exact.steps) {
        INFO(s.name);
        CHECK(title_of(s).find("LayerNorm") == std::string::npos);
        CHECK(formula_of(s).find("(RMSNorm:") == std::string::npos);
    }
    // LayerNorm's are the template's
    auto ln = eval(small_lesson("relu", "layernorm"));
    CHECK(title_of(*ln->exact.find("blocks.0.ln1.hook_scale")) == "LayerNorm 1: std σ");
    CHECK(title_of(*ln->exact.find("blocks.0.ln1.hook_scale")) == ln->exact.find("blocks.0.ln1.hook_scale")->def->title);
    // the views and the export show them: run's text and --json
    attntrace::test::TempDir d;
    attntrace::test::write_text(d.file("rms.json"), small_lesson("relu", "rmsnorm").dump());
    auto r = run_cli({"run", d.file("rms.json"), "--steps", "ln1.hook_scale"});
    REQUIRE(r.status == 0);
    CHECK(r.out.find("RMSNorm 1: root mean square") != std::string::npos);
    r = run_cli({"run", d.file("rms.json"), "--json"});
    REQUIRE(r.status == 0);
    const auto j = nlohmann::json::parse(r.out);
    bool found = false;
    for (const auto& s : j["steps"])
        if (s["name"] == "blocks.0.ln1.hook_scale") {
            CHECK(s["title"] == "RMSNorm 1: root mean square");
            found = true;
        }
    CHECK(found);
    r = run_cli({"explain", d.file("rms.json"), "ln1.hook_scale[2]"});
    REQUIRE(r.status == 0);
    CHECK(r.out.find("— RMSNorm 1: root mean square") != std::string::npos);
}

TEST_CASE("RMSNorm equals LayerNorm on rows of mean zero", "[norms]") {
    // x̂ = x / √(ms + eps) and (x - 0) / √(var + eps) with var = ms when μ = 0.
    const float x[4] = {-3, -1, 1, 3};
    float ms, sr, xr[4], mean, var, sl, xl[4];
    row_mean_square_ref(x, 1, 4, &ms);
    std_eps_ref(&ms, 1, 1e-5f, &sr);
    divide_rows_ref(x, &sr, 1, 4, xr);
    layernorm_rows_ref(x, 1, 4, 1e-5f, nullptr, nullptr, &mean, &var, &sl, xl, nullptr);
    for (int c = 0; c < 4; ++c) CHECK(xr[c] == xl[c]);
}

TEST_CASE("SwiGLU and GELU-tanh FFNs give the same output materialised and in row chunks", "[norms]") {
    for (const char* act : {"swiglu", "gelu_tanh"}) {
        INFO(act);
        // Keeping the weights keeps attention materialised in both: only the FFN streams.
        auto full = eval(small_lesson(act, "layernorm"));
        // 5 tokens 2 rows at a time: chunks of 2, 2 and 1 rows.
        const Trace chunked = run_ffn_chunks(parse_lesson(small_lesson(act, "layernorm").dump(), "norms.json"),
                                             parse_trace_policy("blocks.0.attn.hook_pattern,blocks.0.hook_mlp_out", "--trace"), 2);
        REQUIRE(!chunked.find("blocks.0.mlp.hook_pre"));  // the hidden units were never whole
        const Tensor& a = full->exact.find("blocks.0.hook_mlp_out")->held();
        const Tensor& b = chunked.find("blocks.0.hook_mlp_out")->held();
        REQUIRE(a.size() == b.size());
        for (std::size_t i = 0; i < a.size(); ++i) CHECK(a.data[i] == b.data[i]);
        CHECK((full->exact.find("blocks.0.mlp.hook_pre_linear") != nullptr) == (std::string(act) == "swiglu"));
    }
}

TEST_CASE("explain writes out the new steps and lands on the trace's values", "[norms][cli]") {
    attntrace::test::TempDir dir;
    auto doc = small_lesson("swiglu", "rmsnorm");
    attntrace::test::write_text(dir.file("n.json"), doc.dump());
    for (const char* cell : {"ln1.hook_mean_square[b]", "ln1.hook_scale[b]", "ln1.hook_standardized[b,d3]",
                             "ln2.hook_normalized[e,d7]", "mlp.hook_pre_linear[c,f5]", "mlp.hook_post[c,f5]"}) {
        auto r = run_cli({"explain", dir.file("n.json"), cell});
        INFO(cell << "\n" << r.out << r.err);
        CHECK(r.status == 0);
        CHECK(r.out.find("✓ (the same)") != std::string::npos);
    }
    doc["config"]["norm"] = "dyt";
    attntrace::test::write_text(dir.file("d.json"), doc.dump());
    for (const char* cell : {"ln1.hook_standardized[b,d3]", "ln2.hook_normalized[e,d7]"}) {
        auto r = run_cli({"explain", dir.file("d.json"), cell});
        INFO(cell << "\n" << r.out << r.err);
        CHECK(r.status == 0);
        CHECK(r.out.find("tanh(") != std::string::npos);
        CHECK(r.out.find("✓ (the same)") != std::string::npos);
    }
    doc["config"]["norm"] = "rmsnorm";
    doc["config"]["activation"] = "gelu_tanh";
    attntrace::test::write_text(dir.file("g.json"), doc.dump());
    auto g = run_cli({"explain", dir.file("g.json"), "mlp.hook_post[a,f0]"});
    CHECK(g.out.find("tanh") != std::string::npos);
}

TEST_CASE("lesson fields of RMSNorm and SwiGLU are checked", "[norms][bad-input]") {
    auto refused = [](nlohmann::json doc, const std::vector<std::string>& needles) {
        try {
            (void)parse_lesson(doc.dump(), "bad.json");
            FAIL("accepted");
        } catch (const std::exception& e) {
            const std::string msg = e.what();
            INFO(msg);
            for (const auto& n : needles) CHECK(msg.find(n) != std::string::npos);
        }
    };
    auto base = small_lesson("relu", "layernorm");
    auto w3 = base;
    w3["weights"] = {{"W_3", {{"generate", "zeros"}}}};
    refused(w3, {"weights.W_3", "only with config.activation \"swiglu\""});
    auto beta = small_lesson("relu", "rmsnorm");
    beta["weights"] = {{"ln1_beta", {{"generate", "zeros"}}}};
    refused(beta, {"weights.ln1_beta", "RMSNorm has no"});
    auto norm = base;
    norm["config"]["norm"] = "batchnorm";
    refused(norm, {"config.norm", "\"rmsnorm\"", "batchnorm"});
    auto act = base;
    act["config"]["activation"] = "silu";
    refused(act, {"config.activation", "\"swiglu\"", "silu"});
    // DyT's α: only with DyT, one number; DyT has no variance and no mean
    auto alpha = base;
    alpha["weights"] = {{"ln1_alpha", nlohmann::json::array({0.5})}};
    refused(alpha, {"weights.ln1_alpha", "only with config.norm \"dyt\""});
    auto dyt = small_lesson("relu", "dyt");
    dyt["weights"] = {{"ln2_alpha", nlohmann::json::array({0.5, 0.5})}};
    refused(dyt, {"weights.ln2_alpha", "array", "found"});
    dyt.erase("weights");
    dyt["config"]["variance"] = "unbiased";
    refused(dyt, {"config.variance", "DyT has no variance"});
    dyt["config"].erase("variance");
    dyt["config"]["norm_steps"] = "all";
    refused(dyt, {"config.norm_steps", "DyT subtracts no mean"});
}

TEST_CASE("compare switches LayerNorm for RMSNorm and names the steps each one records", "[norms][compare][cli]") {
    attntrace::test::TempDir dir;
    attntrace::test::write_text(dir.file("n.json"), small_lesson("relu", "layernorm").dump());
    auto r = run_cli({"compare", dir.file("n.json"), "--set", "norm=rmsnorm", "--json"});
    INFO(r.err);
    REQUIRE(r.status == 0);
    auto doc = nlohmann::json::parse(r.out);
    std::map<std::string, std::string> status;
    for (const auto& s : doc["steps"]) status[s["name"].get<std::string>()] = s["change"].get<std::string>();
    CHECK(status["blocks.0.ln1.hook_mean"] == "only-in-a");
    CHECK(status["blocks.0.ln1.hook_mean_square"] == "only-in-b");
    CHECK(status["blocks.0.hook_resid_mid"] == "unchanged");  // before the first norm
    CHECK(status["blocks.0.ln1.hook_normalized"] == "changed");
    auto d = run_cli({"compare", dir.file("n.json"), "--set", "norm=dyt", "--json"});
    INFO(d.err);
    REQUIRE(d.status == 0);
    status.clear();
    const auto dyt = nlohmann::json::parse(d.out);
    for (const auto& s : dyt["steps"]) status[s["name"].get<std::string>()] = s["change"].get<std::string>();
    CHECK(status["blocks.0.ln1.hook_scale"] == "only-in-a");
    CHECK(status["blocks.0.ln1.hook_standardized"] == "changed");
}

TEST_CASE("config.variance unbiased: LayerNorm divides the squared deviations by C - 1, as torch.var", "[norms]") {
    nlohmann::json doc = small_lesson("relu", "layernorm");
    doc["config"]["variance"] = "unbiased";
    const auto e = eval(doc);
    const Step* x = e->exact.find("blocks.0.hook_resid_mid");
    const Step* var = e->exact.find("blocks.0.ln1.hook_var");
    const Step* sd = e->exact.find("blocks.0.ln1.hook_scale");
    const Step* xhat = e->exact.find("blocks.0.ln1.hook_standardized");
    REQUIRE((x && var && sd && xhat));
    const std::size_t T = 5, C = 8;
    for (std::size_t t = 0; t < T; ++t) {
        double mu = 0, sq = 0;
        for (std::size_t c = 0; c < C; ++c) mu += x->held().data[t * C + c];
        mu /= C;
        for (std::size_t c = 0; c < C; ++c) sq += (x->held().data[t * C + c] - mu) * (x->held().data[t * C + c] - mu);
        const double want_var = sq / (C - 1);
        CHECK(var->held().data[t] == Approx(want_var).epsilon(kTol));
        CHECK(sd->held().data[t] == Approx(std::sqrt(want_var + 1e-5)).epsilon(kTol));
        for (std::size_t c = 0; c < C; ++c)
            CHECK(xhat->held().data[t * C + c] ==
                  Approx((x->held().data[t * C + c] - mu) / std::sqrt(want_var + 1e-5)).margin(kTol * 10));
    }
    // The biased run of the same lesson differs by exactly the factor C / (C - 1) in σ².
    doc["config"].erase("variance");
    const auto b = eval(doc);
    const Step* bvar = b->exact.find("blocks.0.ln1.hook_var");
    REQUIRE(bvar != nullptr);
    for (std::size_t t = 0; t < T; ++t) CHECK(var->held().data[t] == Approx(bvar->held().data[t] * C / (C - 1)).epsilon(kTol));
    // explain says which variance
    const auto r = run_cli({"explain", "conv-layernorm-unbiased", "ln1.hook_var[0]"});
    CHECK(r.status == 0);
    CHECK(r.out.find("C - 1: the unbiased variance") != std::string::npos);
}

TEST_CASE("config.eps 0: LayerNorm as a textbook writes it, and a constant row refused naming it", "[norms]") {
    nlohmann::json doc = small_lesson("relu", "layernorm");
    doc["config"]["eps"] = 0;
    const auto e = eval(doc);
    const Step* var = e->exact.find("blocks.0.ln1.hook_var");
    const Step* sd = e->exact.find("blocks.0.ln1.hook_scale");
    REQUIRE((var && sd));
    for (std::size_t t = 0; t < 5; ++t) CHECK(sd->held().data[t] == std::sqrt(var->held().data[t]));  // σ = √σ² exactly
    // A constant row: every deviation 0, σ = 0, x̂ = 0 / 0. One line, exit 2, the row named.
    attntrace::test::TempDir dir;
    for (const char* norm : {"layernorm", "rmsnorm"}) {
        INFO(norm);
        nlohmann::json c = small_lesson("relu", norm);
        c["config"]["eps"] = 0;
        c["run"] = {{"from", "norm1"}, {"to", "norm1"}};
        nlohmann::json rows = nlohmann::json::array();
        for (int t = 0; t < 5; ++t)
            rows.push_back(t == 2 ? nlohmann::json(std::vector<double>(8, std::string(norm) == "rmsnorm" ? 0.0 : 1.5))
                                  : nlohmann::json(std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8}));
        c["given"] = {{"blocks.0.hook_resid_mid", rows}};
        attntrace::test::write_text(dir.file("constant.json"), c.dump());
        const auto r = run_cli({"run", dir.file("constant.json")});
        INFO(r.err);
        CHECK(r.status == 2);
        CHECK(r.err.find("blocks.0.ln1.hook_scale[2]: expected σ above 0, found 0: row 2") != std::string::npos);
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
        c["config"]["eps"] = 1e-5;  // PyTorch's: the same row is fine, x̂ = 0
        attntrace::test::write_text(dir.file("constant.json"), c.dump());
        CHECK(run_cli({"run", dir.file("constant.json")}).status == 0);
    }
}

}  // namespace test_norms

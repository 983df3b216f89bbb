// The whole block against an independent reference (reference_block.hpp:
// plain loops in double, from PyTorch's definitions), every recorded step,
// on random inputs of several sizes, with and without a causal mask, with
// ReLU and GELU.
//
// Letters: T tokens, C d_model, NH heads, hs = C/NH, F d_ff.
#include "held_trace.hpp"
#include <catch2/catch.hpp>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lesson/lesson.hpp"
#include "support.hpp"
#include "pipeline/run.hpp"
#include "reference_block.hpp"

using namespace attntrace;

namespace test_block_reference {
namespace ref = attntrace::reference;

namespace {

// Tolerance. A float32 dot product of K terms has a worst-case relative error
// of K·u (u = FLT_EPSILON/2) and, with errors of random sign, a typical one of
// about √K·u. The block chains ~8 such stages (projections, scores, mixing,
// W_O, two LayerNorms dividing by σ, two FFN products), each adding its own
// rounding to what it inherits, with K up to max(C, F, T). Every cell of a step
// must be within
//     kBlockGrowth · √K · FLT_EPSILON · max(1, max |reference value of the step|)
// of the reference. Measured: the cases below reach 1.2 of those units; a sweep
// of 300 seeds over the same sizes (6000 blocks) reached 5.5, in LayerNorm 2
// at T = 1, C = 4, where a small σ of X_mid2 amplifies the inherited error.
// 32 leaves a margin of ~6x over that tail and is still only 4e-5 of the
// step's scale at the largest size, far below a real mistake (a wrong head's
// columns, a missing bias, C-1 for C in the variance: 1e-2 and more). Where
// eps goes moves values by only ~1e-5 at eps = 1e-5: test_stages.cpp checks
// that with eps = 0.25.
constexpr double kBlockGrowth = 32.0;

struct Size {
    std::size_t T, C, NH, F;
};

std::string lesson_json(const Size& s, bool causal, bool gelu, std::uint64_t seed,
                        const nlohmann::json& scale = true, const nlohmann::json& extra = nlohmann::json::object()) {
    nlohmann::json tokens = nlohmann::json::array();
    for (std::size_t t = 0; t < s.T; ++t) tokens.push_back("t" + std::to_string(t));
    auto normal = [&](std::uint64_t k, double sd) {
        return nlohmann::json{{"generate", "normal"}, {"seed", seed * 100 + k}, {"std", sd}};
    };
    nlohmann::json j = {
        {"format", "attntrace-lesson"},
        {"version", 1},
        {"id", "reference"},
        {"title", "random block"},
        {"source", {{"document", "test_block_reference.cpp"}}},
        {"tokens", tokens},
        {"config",
         {{"d_model", s.C},
          {"heads", s.NH},
          {"d_ff", s.F},
          {"mask", causal ? "causal" : "none"},
          {"scale", scale},
          {"activation", gelu ? "gelu" : "relu"}}},
        {"inputs", {{"X", {{"generate", "normal"}, {"seed", seed}}}}},
        // the weight matrices from weights_seed; biases and LayerNorm affines
        // non-trivial (weights_seed would make them 0 and 1, hiding their use)
        {"weights_seed", seed + 1},
        {"weights",
         {{"b_Q", normal(1, 0.5)},
          {"b_K", normal(2, 0.5)},
          {"b_V", normal(3, 0.5)},
          {"b_O", normal(4, 0.5)},
          {"b_1", normal(5, 0.5)},
          {"b_2", normal(6, 0.5)},
          {"ln1_gamma", normal(7, 1.0)},
          {"ln1_beta", normal(8, 0.5)},
          {"ln2_gamma", normal(9, 1.0)},
          {"ln2_beta", normal(10, 0.5)}}},
    };
    j["config"].update(extra);
    // DyT's α, one number per norm: apart from each other and from the generated 0.5
    if (extra.value("norm", "") == "dyt") j["weights"].update({{"ln1_alpha", nlohmann::json::array({0.75})}, {"ln2_alpha", nlohmann::json::array({1.6})}});
    return j.dump();
}

ref::Mat to_mat(const Tensor& t) {
    ref::Mat m = xt::zeros<double>({t.shape.at(0), t.shape.at(1)});
    std::copy(t.data.begin(), t.data.end(), m.begin());
    return m;
}

ref::Vec to_vec(const Tensor& t) {
    ref::Vec v = xt::zeros<double>({t.shape.at(0)});
    std::copy(t.data.begin(), t.data.end(), v.begin());
    return v;
}

template <class E>
std::vector<double> flat(const E& e) {
    return std::vector<double>(e.begin(), e.end());
}

// Every step the block records, by name, from the reference, flat in the
// trace's row-major order.
std::map<std::string, std::vector<double>> reference_steps(const Lesson& lesson) {
    auto w = [&](const char* name) -> const Tensor& {
        const Tensor* t = lesson.weight(name);
        REQUIRE(t != nullptr);
        return *t;
    };
    ref::BlockWeights bw;
    bw.W_Q = to_mat(w("W_Q"));
    bw.W_K = to_mat(w("W_K"));
    bw.W_V = to_mat(w("W_V"));
    bw.W_O = to_mat(w("W_O"));
    bw.b_Q = to_vec(w("b_Q"));
    bw.b_K = to_vec(w("b_K"));
    bw.b_V = to_vec(w("b_V"));
    bw.b_O = to_vec(w("b_O"));
    bw.ln1_gamma = to_vec(w("ln1_gamma"));
    bw.ln1_beta = to_vec(w("ln1_beta"));
    bw.ln2_gamma = to_vec(w("ln2_gamma"));
    bw.ln2_beta = to_vec(w("ln2_beta"));
    bw.W_1 = to_mat(w("W_1"));
    bw.b_1 = to_vec(w("b_1"));
    bw.W_2 = to_mat(w("W_2"));
    bw.b_2 = to_vec(w("b_2"));
    ref::BlockConfig cfg;
    cfg.dyt = lesson.config.norm == NormKind::dyt;
    if (cfg.dyt) {
        bw.ln1_alpha = w("ln1_alpha").data.at(0);
        bw.ln2_alpha = w("ln2_alpha").data.at(0);
    }
    cfg.heads = lesson.config.heads;
    cfg.causal = lesson.config.mask == MaskKind::causal;
    const Scaling& sc = lesson.config.scale;
    cfg.scale = sc.kind != ScaleKind::none;
    if (sc.kind == ScaleKind::divide_by) cfg.divide_by = sc.value;
    if (sc.kind == ScaleKind::multiply_by) cfg.multiply_by = sc.value;
    cfg.gelu = lesson.config.activation == Activation::gelu;
    cfg.eps = lesson.config.eps;
    cfg.max_shift = lesson.config.max_shift;
    REQUIRE(lesson.config.normalizer != Normalizer::sum);  // held to its own computation in test_normalizers
    cfg.normalize = lesson.config.normalizer == Normalizer::softmax;
    cfg.mask_raw = lesson.config.mask_at == MaskAt::raw;
    cfg.mask_weights = lesson.config.mask_at == MaskAt::weights;
    cfg.renormalize = lesson.config.renormalize;
    REQUIRE((!cfg.mask_weights || cfg.normalize));  // zeroing follows the reference's softmax
    ref::BlockOut o = ref::encoder_block(to_mat(lesson.inputs.at("X")), bw, cfg);

    const std::string b = "blocks.0.";
    std::map<std::string, std::vector<double>> m;
    m[b + "hook_resid_pre"] = flat(o.X);
    m[b + "attn.hook_q"] = flat(o.Q);
    m[b + "attn.hook_k"] = flat(o.K);
    m[b + "attn.hook_v"] = flat(o.V);
    // multi-head (the reference has no K/V sharing): query head h reads K/V head h
    for (std::size_t h = 0; h < cfg.heads; ++h) m[b + "attn.hook_kv_head"].push_back(static_cast<double>(h));
    m[b + "attn.hook_scores_raw"] = flat(o.scores_raw);
    if (sc.recorded) m[b + "attn.hook_scale_factor"] = std::vector<double>(cfg.heads, o.scale_factor);
    if (cfg.mask_raw) m[b + "attn.hook_scores_masked"] = flat(o.scores_masked);
    else m[b + "attn.hook_scores_scaled"] = flat(o.scores_scaled);
    // with mask_at "weights" the trace's M multiplies: 1 where the reference's adds 0, 0 where it adds -inf
    ref::Mat keep = o.mask;
    for (double& v : keep) v = std::isinf(v) ? 0.0 : 1.0;
    m[b + "attn.hook_mask"] = flat(cfg.mask_weights ? keep : o.mask);
    if (cfg.mask_weights) m[b + "attn.hook_pattern_unmasked"] = flat(o.pattern_unmasked);
    if (cfg.mask_weights && cfg.renormalize) {
        m[b + "attn.hook_pattern_zeroed"] = flat(o.pattern_zeroed);
        m[b + "attn.hook_zeroed_sum"] = flat(o.zeroed_sum);
    }
    m[b + "attn.hook_attn_scores"] = flat(o.attn_scores);
    if (cfg.normalize && cfg.max_shift) {
        m[b + "attn.softmax.hook_row_max"] = flat(o.row_max);
        m[b + "attn.softmax.hook_shifted"] = flat(o.shifted);
    }
    if (cfg.normalize) {
        m[b + "attn.softmax.hook_exp"] = flat(o.exp);
        m[b + "attn.softmax.hook_row_sum"] = flat(o.row_sum);
    }
    m[b + "attn.hook_pattern"] = flat(o.pattern);
    m[b + "attn.hook_z"] = flat(o.Z);
    m[b + "hook_attn_out"] = flat(o.attn_out);
    m[b + "hook_resid_mid"] = flat(o.resid_mid);
    for (auto [prefix, ln] : {std::pair{b + "ln1.", &o.ln1}, std::pair{b + "ln2.", &o.ln2}}) {
        if (cfg.dyt) {  // no statistic of the row: tanh(α·x) and the output alone
            m[prefix + "hook_standardized"] = flat(ln->standardized);
            m[prefix + "hook_normalized"] = flat(ln->normalized);
            continue;
        }
        m[prefix + "hook_mean"] = flat(ln->mean);
        if (lesson.config.norm_steps_all) {
            m[prefix + "hook_centred"] = flat(ln->centred);
            m[prefix + "hook_sq_dev"] = flat(ln->sq_dev);
        }
        m[prefix + "hook_var"] = flat(ln->var);
        m[prefix + "hook_scale"] = flat(ln->scale);
        m[prefix + "hook_standardized"] = flat(ln->standardized);
        m[prefix + "hook_normalized"] = flat(ln->normalized);
    }
    m[b + "mlp.hook_pre"] = flat(o.mlp_pre);
    m[b + "mlp.hook_post"] = flat(o.mlp_post);
    m[b + "hook_mlp_out"] = flat(o.mlp_out);
    m[b + "hook_resid_post"] = flat(o.resid_post);
    return m;
}

// The error of one step in units of √K·FLT_EPSILON·scale; -1 when a cell
// that must be -inf (masked) is not, or the other way round.
double error_units(const std::vector<float>& got, const std::vector<double>& want, double sqrtK) {
    double scale = 1.0;
    for (double v : want)
        if (std::isfinite(v)) scale = std::max(scale, std::abs(v));
    double worst = 0.0;
    for (std::size_t i = 0; i < want.size(); ++i) {
        if (std::isinf(want[i]) || std::isinf(got[i]) || std::isnan(got[i])) {
            if (!(std::isinf(got[i]) && static_cast<double>(got[i]) == want[i])) return -1.0;
            continue;
        }
        worst = std::max(worst, std::abs(got[i] - want[i]) / (sqrtK * FLT_EPSILON * scale));
    }
    return worst;
}

void check_against_reference(const Size& s, bool causal, bool gelu, std::uint64_t seed,
                             const nlohmann::json& scale = true, const nlohmann::json& extra = nlohmann::json::object()) {
    INFO("T, C, NH, F = " << s.T << ", " << s.C << ", " << s.NH << ", " << s.F << (causal ? ", causal" : "")
                          << (gelu ? ", gelu" : ", relu") << ", seed " << seed << ", scale " << scale.dump()
                          << ", config " << extra.dump());
    Lesson lesson = parse_lesson(lesson_json(s, causal, gelu, seed, scale, extra), "reference.json");
    Trace trace = run_held(lesson);
    auto want = reference_steps(lesson);
    // W_O's product sums over heads·d_v (config.d_v, d_k: C otherwise)
    const std::size_t dv = extra.value("d_v", extra.value("d_k", std::size_t{0}));
    const double sqrtK = std::sqrt(static_cast<double>(std::max({s.C, s.F, s.T, s.NH * dv})));

    // every step of the block is recorded (the embedding table's step aside: X is given inline)
    CHECK(trace.steps.size() == want.size());
    for (const Step& step : trace.steps) {
        INFO("step " << step.name << " " << step.note);
        auto it = want.find(step.name);
        REQUIRE(it != want.end());
        REQUIRE(step.source == StepSource::computed);
        REQUIRE(step.held().data.size() == it->second.size());
        const double units = error_units(std::vector<float>(step.held().data.begin(), step.held().data.end()), it->second, sqrtK);
        INFO("error: " << units << " units of sqrt(K)·FLT_EPSILON·scale (-1: a masked cell differs)");
        CHECK(units >= 0.0);
        CHECK(units <= kBlockGrowth);
    }
    CHECK(trace.warnings.empty());
}

const Size kSizes[] = {{1, 4, 1, 8}, {3, 4, 2, 16}, {7, 12, 3, 20}, {16, 32, 4, 64}, {33, 64, 8, 128}};

}  // namespace

TEST_CASE("the block matches the double-precision reference at every step, without a mask, with ReLU") {
    std::uint64_t seed = 1;
    for (const Size& s : kSizes) {
        const std::uint64_t k = seed++;  // one seed per size, read before it moves on
        check_against_reference(s, false, false, k);
    }
}

TEST_CASE("the block matches the double-precision reference at every step, with a causal mask, with ReLU") {
    std::uint64_t seed = 11;
    for (const Size& s : kSizes) {
        const std::uint64_t k = seed++;  // one seed per size, read before it moves on
        check_against_reference(s, true, false, k);
    }
}

TEST_CASE("the block matches the double-precision reference at every step, without a mask, with GELU") {
    std::uint64_t seed = 21;
    for (const Size& s : kSizes) {
        const std::uint64_t k = seed++;  // one seed per size, read before it moves on
        check_against_reference(s, false, true, k);
    }
}

TEST_CASE("the block matches the double-precision reference at every step, with a causal mask, with GELU") {
    std::uint64_t seed = 31;
    for (const Size& s : kSizes) {
        const std::uint64_t k = seed++;  // one seed per size, read before it moves on
        check_against_reference(s, true, true, k);
    }
}

TEST_CASE("the block matches the double-precision reference with every config.scale, the factor a step of its own") {
    // 0.3 and 1.7 are not float32 numbers: the run rounds them once, the reference does not
    const nlohmann::json scales[] = {false,
                                     {{"divide_by", "sqrt_dk"}},
                                     {{"divide_by", 1.7}},
                                     {{"multiply_by", 0.3}},
                                     {{"multiply_by", 2.0}}};
    std::uint64_t seed = 41;
    for (const nlohmann::json& scale : scales)
        for (const Size& s : kSizes) {
            const std::uint64_t k = seed++;  // one seed per size, read before it moves on
            check_against_reference(s, k % 2 == 0, false, k, scale);
        }
}

TEST_CASE("the block matches the double-precision reference without softmax's max shift and with no normaliser") {
    // exp(s) unshifted: the random scores stay far below exp's float32 limit (~88.7)
    const nlohmann::json configs[] = {{{"max_shift", false}}, {{"normalizer", "none"}}};
    std::uint64_t seed = 61;
    for (const nlohmann::json& extra : configs)
        for (const Size& s : kSizes) {
            const std::uint64_t k = seed++;  // one seed per size, read before it moves on
            check_against_reference(s, k % 2 == 0, false, k, true, extra);
        }
}

TEST_CASE("the block matches the double-precision reference with the mask before the scaling or on the weights") {
    // (S + M) / s; softmax over every key, zeroed, renormalised or not: the reference computes each in double
    const nlohmann::json configs[] = {{{"mask_at", "raw"}},
                                      {{"mask_at", "weights"}},
                                      {{"mask_at", "weights"}, {"renormalize", true}},
                                      {{"mask_at", "raw"}, {"max_shift", false}}};
    std::uint64_t seed = 71;
    for (const nlohmann::json& extra : configs)
        for (const Size& s : kSizes) {
            const std::uint64_t k = seed++;  // one seed per size, read before it moves on
            check_against_reference(s, true, k % 2 == 0, k, true, extra);
        }
}

TEST_CASE("the block matches the double-precision reference with LayerNorm's every piece a step") {
    // x - μ and (x - μ)² recorded, σ² their mean: the reference computes each in double
    const nlohmann::json configs[] = {{{"norm_steps", "all"}}};
    std::uint64_t seed = 81;
    for (const nlohmann::json& extra : configs)
        for (const Size& s : kSizes) {
            const std::uint64_t k = seed++;  // one seed per size, read before it moves on
            check_against_reference(s, k % 2 == 0, k % 3 == 0, k, true, extra);
        }
}

TEST_CASE("the block matches the double-precision reference with DyT for its norms") {
    // γ ⊙ tanh(α·x) + β in double, α apart in each norm; nothing of the row's statistics recorded
    std::uint64_t seed = 91;
    for (const Size& s : kSizes) {
        const std::uint64_t k = seed++;  // one seed per size, read before it moves on
        check_against_reference(s, k % 2 == 0, k % 3 == 0, k, true, {{"norm", "dyt"}});
    }
}

TEST_CASE("the block matches the double-precision reference with projection widths of their own (d_k, d_v)") {
    // heads·d_k and heads·d_v apart from d_model: W_Q, W_K (C, NH·d_k), W_V (C, NH·d_v), W_O (NH·d_v, C);
    // the reference reads the widths off the weights and scales by √d_k
    const nlohmann::json widths[] = {{{"d_k", 1}},                 // heads of width 1 (C = 4: NH·1 < C)
                                     {{"d_k", 3}, {"d_v", 5}},     // wider than C / NH, V wider than Q and K
                                     {{"d_k", 6}, {"d_v", 2}},     // V narrower than Q and K
                                     {{"d_v", 1}}};                // d_k = C / NH, d_v of its own
    std::uint64_t seed = 91;
    for (const nlohmann::json& extra : widths)
        for (const Size& s : kSizes) {
            const std::uint64_t k = seed++;  // one seed per size, read before it moves on
            check_against_reference(s, k % 2 == 0, k % 3 == 0, k, true, extra);
        }
    // heads that do not divide d_model: 2 heads of width 1 on 3-wide inputs, 3 heads on 4
    check_against_reference({5, 3, 2, 6}, true, false, 101, true, {{"d_k", 1}});
    check_against_reference({6, 4, 3, 8}, false, true, 102, {{"divide_by", "sqrt_dk"}}, {{"d_k", 2}, {"d_v", 3}});
}

TEST_CASE("an output projection of its own width (config.d_out): d_in 3, two heads of width 1, out_proj 2 -> 2 with a bias") {
    // A MultiHeadAttention module's out_proj = nn.Linear(d_out, d_out): attn_out is T x d_out, not T x d_model. The
    // reference is what PyTorch 1.13 computed for the same numbers: Q = X·W_Q (and K, V), each head's
    // softmax(q·kᵀ / 1)·v side by side, then ·W_O + b_O.
    nlohmann::json l = {{"format", "attntrace-lesson"},
                        {"version", 1},
                        {"id", "d-out"},
                        {"title", "out_proj 2 -> 2"},
                        {"tokens", {"a", "b", "c"}},
                        {"config", {{"d_model", 3}, {"heads", 2}, {"d_k", 1}, {"d_out", 2}}},
                        {"run", {{"from", "embed"}, {"to", "out"}}},
                        {"inputs", {{"X", {{0.4, 0.1, 0.9}, {0.6, 0.8, 0.2}, {0.3, 0.7, 0.5}}}}},
                        {"weights",
                         {{"W_Q", {{0.2, 0.7}, {0.5, 0.1}, {0.9, 0.3}}},
                          {"W_K", {{0.6, 0.2}, {0.1, 0.8}, {0.4, 0.5}}},
                          {"W_V", {{0.3, 0.9}, {0.7, 0.2}, {0.5, 0.6}}},
                          {"W_O", {{0.5, -0.2}, {0.3, 0.8}}},
                          {"b_O", {0.1, -0.1}}}},
                        {"claims", nlohmann::json::array()}};
    const Trace trace = run_held(parse_lesson(l.dump(), "d-out.json"));
    const Step* out = trace.find("blocks.0.hook_attn_out");
    REQUIRE(out);
    CHECK(out->shape == Shape{3, 2});
    CHECK(out->axes == std::vector<std::string>{"query", "d_model"});
    const double want[] = {0.726, 0.396422, 0.726653, 0.396161, 0.726553, 0.397228};  // PyTorch, rounded to 6 decimals
    for (std::size_t i = 0; i < 6; ++i) CHECK(out->held().data[i] == Approx(want[i]).margin(1e-6));

    // no residual of another width: a run past "out", or a W_O of d_model columns, is refused in one line
    nlohmann::json past = l;
    past["run"]["to"] = "norm1";
    CHECK(test::lesson_refusal(past.dump(), "d-out.json") ==
          "d-out.json: config.d_out: expected d_model (3) when the run goes past \"out\" (the residual adds attn_out to X), or run.to "
          "\"out\", found 2 with the run to norm1");
    nlohmann::json wide = l;
    wide["weights"]["W_O"] = {{0.5, -0.2, 0.0}, {0.3, 0.8, 0.0}};
    CHECK(test::lesson_refusal(wide.dump(), "d-out.json").find("weights.W_O: expected a 2x2 array") != std::string::npos);
}

TEST_CASE("the reference itself: one head, T = 2, worked by hand") {
    // Guards the reference against sharing a mistake with the pipeline.
    // Causal; X = I (2x2), W_Q = W_K = W_V = W_O = I, biases 0, γ = 1, β = 0, W_1 = W_2 = 0 (FFN = 0).
    // Q = K = V = X; S = X·Xᵀ = I; S̃ = I/√2 = [[0.707107, 0], [0, 0.707107]]
    // A row 0 sees key 0 only: [1, 0]; row 1: softmax([0, 0.707107]) = [0.330238, 0.669762]
    // Z = A·V = A; attn_out = Z; X_mid = X + Z = [[2, 0], [0.330238, 1.669762]]
    ref::BlockWeights w;
    ref::Mat I = {{1, 0}, {0, 1}};
    ref::Vec z2 = {0, 0}, one2 = {1, 1};
    w.W_Q = w.W_K = w.W_V = w.W_O = I;
    w.b_Q = w.b_K = w.b_V = w.b_O = w.b_2 = w.ln1_beta = w.ln2_beta = z2;
    w.ln1_gamma = w.ln2_gamma = one2;
    w.W_1 = xt::zeros<double>({2, 3});
    w.W_2 = xt::zeros<double>({3, 2});
    w.b_1 = xt::zeros<double>({3});
    ref::BlockConfig cfg;
    cfg.causal = true;
    ref::BlockOut o = ref::encoder_block(I, w, cfg);
    CHECK(o.pattern(0, 0, 0) == 1.0);
    CHECK(o.pattern(0, 0, 1) == 0.0);
    CHECK(o.pattern(0, 1, 0) == Approx(0.330238).epsilon(1e-5));
    CHECK(o.pattern(0, 1, 1) == Approx(0.669762).epsilon(1e-5));
    CHECK(std::isinf(o.mask(0, 1)));
    CHECK(o.mask(1, 0) == 0.0);
    // X_mid row 1 = [0.330238, 1.669762]: μ = 1, σ² = 0.669762² = 0.448581,
    // x̂ = [-1, 1]·0.669762/√(0.448581 + 1e-5) = [-0.999989, 0.999989]
    CHECK(o.ln1.mean(1) == Approx(1.0));
    CHECK(o.ln1.var(1) == Approx(0.448581).epsilon(1e-5));
    CHECK(o.ln1.standardized(1, 0) == Approx(-0.999989).epsilon(1e-5));
    // FFN is 0: X_mid2 = LN1, and LN2 of a standardized row is that row scaled by 1/√(σ² + eps)
    CHECK(o.resid_post(1, 1) == Approx(0.999989).epsilon(1e-5));
    CHECK(o.ln2.var(1) == Approx(0.999978).epsilon(1e-5));
}

}  // namespace test_block_reference

// GPT-NeoX (Pythia): the family's declaration held to the float64 forward of
// PyTorch that tests/models/make_tiny_neox.py saved beside the tiny model
// (tiny-neox/reference.json): the parallel residual, the partial rotation,
// Q, K and V fused head by head; and the two lesson fields it added,
// config.parallel_residual and config.positions.rotary_dims, with their refusals.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "evaluate/evaluate.hpp"
#include "model/hf_model.hpp"
#include "model_reference.hpp"
#include "support.hpp"

using namespace attntrace;
using namespace attntrace::test;

namespace test_hf_neox {

namespace {

// float32 against the float64 forward, the tolerances of tests/test_hf_models.cpp's GPT-2 of the
// same sizes (32 wide, 4 heads, 2 blocks): RoPE's queries (~5) are two products of float32 cos/sin
// with 32-term sums; a softmax weight keeps ~7 digits; the residual stream (~10) after two blocks
// of sums over 32..64 terms; the final LayerNorm (~unit scale) and the logits (32-term sums).
constexpr double kRotTol = 1e-4;
constexpr double kPatternTol = 2e-5;
constexpr double kResidTol = 2e-4;
constexpr double kNormTol = 1e-4;
constexpr double kLogitTol = 5e-4;

std::string tiny() { return source_dir() + "/tests/models/tiny-neox"; }

const nlohmann::json& reference() {
    static const nlohmann::json r = nlohmann::json::parse(read_text(tiny() + "/reference.json"));
    return r;
}

// A copy of tiny-neox with its config.json edited.
std::string with_config(const TempDir& d, const std::function<void(nlohmann::json&)>& edit) {
    copy_model(tiny(), d);
    auto cfg = nlohmann::json::parse(read_text(d.file("config.json")));
    edit(cfg);
    write_text(d.file("config.json"), cfg.dump());
    return d.path();
}

}  // namespace

TEST_CASE("a tiny GPT-NeoX checkpoint computes PyTorch's float64 forward: partial RoPE, block 0's pattern, the parallel residual, the logits", "[models]") {
    for (const auto& text : reference()["texts"]) {
        INFO(text["text"].get<std::string>());
        ModelInput in;
        in.text = text["text"].get<std::string>();
        HfModel m = load_hf_model(tiny(), in);
        CHECK(m.lesson.token_ids == text["ids"].get<std::vector<std::int64_t>>());
        CHECK(m.lesson.config.arch.parallel);
        CHECK(m.lesson.config.positions.rotary_dims == 4);  // rotary_pct 0.5 of 8
        auto e = evaluate(std::move(m.lesson));
        CHECK(max_abs_diff(e->exact.find("blocks.0.attn.hook_rot_q")->held(), flat(text["blocks.0.attn.hook_rot_q"])) < kRotTol);
        CHECK(max_abs_diff(e->exact.find("blocks.0.attn.hook_pattern")->held(), flat(text["blocks.0.attn.hook_pattern"])) < kPatternTol);
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
            if (i % 8 >= 4) REQUIRE(rq.data[i] == q.data[i]);
        // LN2 reads the block's input, beside the attention
        const Step* ln2 = e->exact.find("blocks.0.ln2.hook_normalized");
        REQUIRE(ln2 != nullptr);
        CHECK(std::find(ln2->inputs.begin(), ln2->inputs.end(), "blocks.0.hook_resid_pre") != ln2->inputs.end());
    }
}

TEST_CASE("GPT-NeoX with use_parallel_residual false runs its blocks one after the other, as PyTorch does", "[models]") {
    TempDir d;
    const std::string dir = with_config(d, [](nlohmann::json& c) { c["use_parallel_residual"] = false; });
    HfModel m = load_hf_model(dir, ids_input(reference()["sequential"]["ids"]));
    CHECK_FALSE(m.lesson.config.arch.parallel);
    auto e = evaluate(std::move(m.lesson));
    CHECK(max_abs_diff(last_row_of(e->exact, "unembed"), flat(reference()["sequential"]["last_logits"])) < kLogitTol);
}

TEST_CASE("run, explain and decode on a GPT-NeoX folder: the passed-through dimension explained, the KV cache matching", "[models]") {
    const std::string text = reference()["texts"][0]["text"];
    auto r = run_cli({"explain", "--model", tiny(), "--text", text, "blocks.0.attn.hook_rot_q[2,h1,d6]"});
    REQUIRE(r.status == 0);
    CHECK(unwrapped(r.out).find("passed through") != std::string::npos);
    CHECK(r.out.find("✓ (the same)") != std::string::npos);
    r = run_cli({"explain", "--model", tiny(), "--text", text, "blocks.0.attn.hook_rot_q[2,h1,d1]"});
    REQUIRE(r.status == 0);
    CHECK(r.out.find("✓ (the same)") != std::string::npos);
    r = run_cli({"decode", "--model", tiny(), "--text", text});
    CHECK(r.status == 0);
    CHECK(r.out.find("through unembed") != std::string::npos);
    CHECK(r.out.find("differ") == std::string::npos);
}

TEST_CASE("a GPT-NeoX config whose rotary share gives an odd number of dimensions is refused naming rotary_pct", "[models]") {
    TempDir d;
    const std::string dir = with_config(d, [](nlohmann::json& c) { c["rotary_pct"] = 0.375; });  // 3 of 8
    const auto r = run_cli({"run", "--model", dir, "--ids", "1,2"});
    CHECK(r.status == 2);
    CHECK(r.err.find("config.json: rotary_pct: expected a share of the head size 8 giving an even number of rotated dimensions") != std::string::npos);
}

TEST_CASE("lessons take config.parallel_residual and config.positions.rotary_dims, and refuse them where they cannot apply", "[models]") {
    const std::string base = R"({"format": "attntrace-lesson", "version": 1, "id": "p", "title": "p",
        "source": {"document": "p"}, "tokens": ["a", "b", "c"],
        "inputs": {"X": [[1, 0, 0.5, 2], [0, 1, -1, 0], [0.5, 0.5, 0.25, -2]]}, "weights_seed": 3,)";
    CHECK(lesson_refusal(base + R"("config": {"d_model": 4, "heads": 1, "d_ff": 8, "norm_first": true, "parallel_residual": true,
        "positions": {"kind": "rope", "layout": "half", "rotary_dims": 2}}})") == "(accepted)");
    CHECK(lesson_refusal(base + R"("config": {"d_model": 4, "heads": 1, "d_ff": 8, "parallel_residual": true}})")
              .find("config.parallel_residual: expected config.parallel_residual only with config.norm_first true") != std::string::npos);
    CHECK(lesson_refusal(base + R"("config": {"d_model": 4, "heads": 1, "d_ff": 8,
        "positions": {"kind": "rope", "layout": "half", "rotary_dims": 3}}})")
              .find("config.positions.rotary_dims: expected an even number from 2 to the head size 4") != std::string::npos);
}

}  // namespace test_hf_neox

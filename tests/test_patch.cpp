// attntrace patch (evaluate/patch.hpp): activation patching held to a PyTorch
// implementation of the same experiment on tiny-gpt2
// (tests/models/make_intervention_reference.py), each patched run started at
// its block held to the whole run it stands for, and the refusals.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cmath>

#include "core/error.hpp"
#include "evaluate/evaluate.hpp"
#include "evaluate/patch.hpp"
#include "model/hf_model.hpp"
#include "pipeline/run.hpp"
#include "support.hpp"
#include "trace/derived.hpp"

using namespace attntrace;
using namespace attntrace::test;

namespace test_patch {

namespace {

// The normalised logit difference from float32 logits against float64's: each
// LD is a difference of two logits (up to ~20, kLogitTol 5e-4 in
// test_hf_models, but both from one run, their errors mostly shared), over a
// denominator of ~3.9 here.
constexpr double kNormalizedTol = 2e-4;

std::string dir_of(const std::string& name) { return source_dir() + "/tests/models/" + name; }
const nlohmann::json& reference() {
    static const nlohmann::json r =
        nlohmann::json::parse(read_text(dir_of("tiny-gpt2") + "/interventions-reference.json"))["patching"];
    return r;
}

Lesson model(const std::string& name, const std::string& text) {
    ModelInput in;
    in.text = text;
    return load_hf_model(dir_of(name), in).lesson;
}

double last_ld(const Trace& t, std::int64_t answer, std::int64_t wrong) {
    const Step* s = t.find("unembed");
    REQUIRE(s);
    const StepValues v = values_of(t, *s);
    const std::size_t V = s->shape[1], last = s->shape[0] - 1;
    return double(v->data[last * V + std::size_t(answer)]) - double(v->data[last * V + std::size_t(wrong)]);
}

}  // namespace

TEST_CASE("activation patching equals the PyTorch reference on tiny-gpt2, for every step and axis") {
    const nlohmann::json& ref = reference();
    const Lesson clean = model("tiny-gpt2", ref["clean"]);
    Lesson corrupt = model("tiny-gpt2", ref["corrupt"]);
    CHECK(clean.token_ids == ref["clean_ids"].get<std::vector<std::int64_t>>());
    PatchSpec spec;
    spec.answer = vocab_token(corrupt, ref["answer"], "--answer");
    spec.wrong = vocab_token(corrupt, ref["wrong"], "--wrong");
    CHECK(spec.answer == ref["answer_id"].get<std::int64_t>());
    CHECK(spec.wrong == ref["wrong_id"].get<std::int64_t>());
    for (const auto& [step, over] : {std::pair{"hook_z", "heads"}, {"hook_z", "positions"}, {"hook_resid_pre", "positions"},
                                     {"hook_attn_out", "positions"}, {"hook_mlp_out", "positions"}}) {
        INFO(step << " over " << over);
        spec.step = step;
        spec.over = over;
        const PatchResult r = activation_patching(clean, corrupt, spec);
        CHECK(r.ld_clean == Approx(ref["logit_diff_clean"].get<double>()).margin(kNormalizedTol));
        CHECK(r.ld_corrupt == Approx(ref["logit_diff_corrupt"].get<double>()).margin(kNormalizedTol));
        const auto& want = ref[std::string(step) + "/" + over];
        REQUIRE(r.normalized.shape == Shape{want.size(), want[0].size()});
        for (std::size_t b = 0; b < want.size(); ++b)
            for (std::size_t c = 0; c < want[b].size(); ++c)
                CHECK(r.normalized.data[b * want[b].size() + c] == Approx(want[b][c].get<double>()).margin(kNormalizedTol));
        // block b's runs start at block b: fewer passes than a whole run after block 0
        REQUIRE(r.passes_per_block.size() == 2);
        CHECK(r.passes_per_block[1] < r.passes_per_block[0]);
        CHECK(r.passes_per_block[0] < r.passes_whole);
    }
    // The corrupt lesson is as it was.
    CHECK(corrupt.given.empty());
    CHECK(corrupt.first_pass == 0);
}

TEST_CASE("a patched run started at its block equals the whole run with the same cells given, bit for bit") {
    for (const std::string name : {"tiny-gpt2", "tiny-llama"}) {
        INFO(name);
        const Lesson clean = model(name, "the ring fell from the king");
        Lesson corrupt = model(name, "the king fell from the ring");
        REQUIRE(clean.tokens.size() == corrupt.tokens.size());
        PatchSpec spec;
        spec.answer = corrupt.token_ids[1];
        spec.wrong = corrupt.token_ids[2];
        const PatchResult r = activation_patching(clean, corrupt, spec);
        // The last block's head 1, given on the whole corrupt run instead.
        const int b = static_cast<int>(r.rows.size()) - 1;
        const std::string& step = r.rows.back();
        // The runs as the patching runs them: only the patched steps kept (so each attention runs as it does
        // there: fused where nothing of it but Z is kept), the patched run keeping only the logits.
        TracePolicy keep;
        keep.kind = TracePolicy::Kind::none;
        keep.keep = r.rows;
        const Trace clean_t = run_lesson(clean, Arithmetic::exact, keep);
        // the corrupt run keeps each block's input too, where the patched runs start from
        const Catalogue& cat = corrupt.catalogue();
        for (int blk = 0, i = 0; i < static_cast<int>(cat.passes().size()); ++i)
            if (cat.passes()[std::size_t(i)].block == blk) keep.keep.push_back(cat.at(cat.passes()[std::size_t(i)].x).name), ++blk;
        const Trace corrupt_t = run_lesson(corrupt, Arithmetic::exact, keep);
        Tensor values = values_of(corrupt_t, *corrupt_t.find(step)).take();
        const Tensor from = values_of(clean_t, *clean_t.find(step)).take();
        Tensor cells(values.shape);
        const std::size_t H = values.shape[1], hs = values.shape[2];
        for (std::size_t q = 0; q < values.shape[0]; ++q)
            for (std::size_t d = 0; d < hs; ++d) {
                const std::size_t at = (q * H + 1) * hs + d;
                values.data[at] = from.data[at];
                cells.data[at] = 1;
            }
        Lesson whole = corrupt;
        whole.given[step] = Given{values, cells, "test"};
        TracePolicy none;
        none.kind = TracePolicy::Kind::none;
        const double ld = last_ld(run_lesson(whole, Arithmetic::exact, none), spec.answer, spec.wrong);
        CHECK(static_cast<float>(ld) == r.logit_diff.data[std::size_t(b) * r.columns.size() + 1]);
    }
}

TEST_CASE("patch refuses what it cannot measure, in one line") {
    const auto one_line = [](const CliResult& r) {
        CHECK(r.status == 2);
        CHECK(r.out.empty());
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    };
    const std::string gpt2 = dir_of("tiny-gpt2");
    const std::vector<std::string> base{"patch", "--model", gpt2, "--answer", " ring", "--wrong", " king"};
    auto with = [&](std::vector<std::string> more) {
        std::vector<std::string> a = base;
        a.insert(a.end(), more.begin(), more.end());
        return run_cli(a);
    };
    const CliResult lengths = with({"--clean", "the ring fell", "--corrupt", "the ring fell from the king"});
    one_line(lengths);
    CHECK_THAT(lengths.err, Catch::Contains("--corrupt"));
    one_line(with({"--clean", "the ring", "--corrupt", "the king", "--step", "hook_mlp_out", "--over", "heads"}));
    const CliResult multi = run_cli({"patch", "--model", gpt2, "--clean", "the ring", "--corrupt", "the king", "--answer",
                                     " hand", "--wrong", " king"});
    one_line(multi);
    CHECK_THAT(multi.err, Catch::Contains("--answer"));
    one_line(run_cli({"patch", "--model", dir_of("tiny-bert"), "--clean", "the ring", "--corrupt", "the king", "--answer",
                      "ring", "--wrong", "king"}));
    one_line(with({"--clean", "the ring", "--corrupt", "the ring"}));  // nothing to normalise
}

TEST_CASE("patch prints a labelled heatmap and JSON") {
    const std::string gpt2 = dir_of("tiny-gpt2");
    const CliResult r = run_cli({"patch", "--model", gpt2, "--clean", "the ring fell from the king", "--corrupt",
                                 "the king fell from the ring", "--answer", " ring", "--wrong", " king", "--json"});
    INFO(r.err);
    REQUIRE(r.status == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["format"] == "attntrace-patch");
    CHECK(j["rows"].size() == 2);
    CHECK(j["columns"] == nlohmann::json({"h0", "h1", "h2", "h3"}));
    const CliResult text = run_cli({"patch", "--model", gpt2, "--clean", "the ring fell from the king", "--corrupt",
                                    "the king fell from the ring", "--answer", "#262", "--wrong", "#276", "--step",
                                    "hook_resid_pre"});
    REQUIRE(text.status == 0);
    CHECK_THAT(text.out, Catch::Contains("blocks.1"));
    CHECK_THAT(text.out, Catch::Contains("␣ring"));  // a position column labelled by its token
}

}  // namespace test_patch

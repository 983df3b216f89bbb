// The fused attention (plan.fuse_attention): the softmax pass computes each
// row block's raw scores, weights and Z together (softmax.cpp). The trace
// must hold the numbers the separate passes compute (the plan with fusion
// off), bit for bit, whatever the blocks: heads of several blocks and a
// partial last one, grouped K/V heads, RoPE, value heads of their own width,
// masks, a decoder's cross-attention (Tq != T), one thread or two.
#include "held_trace.hpp"

#include <catch2/catch.hpp>
#include <omp.h>

#include <nlohmann/json.hpp>
#include <string>

#include "lesson/lesson.hpp"
#include "pipeline/operation.hpp"
#include "pipeline/plan.hpp"
#include "pipeline/run.hpp"
#include "trace/derived.hpp"

using namespace attntrace;

namespace test_fused_attention {
using json = nlohmann::json;

namespace {

json lesson_doc(const json& config, std::size_t T) {
    json tokens = json::array(), memory_tokens = json::array();
    for (std::size_t i = 0; i < T; ++i) tokens.push_back("t" + std::to_string(i));
    json cfg = {{"d_model", 12}, {"heads", 3}, {"d_ff", 16}};
    cfg.update(config);
    json inputs = {{"X", {{"generate", "normal"}, {"seed", 5}}}};
    json doc = {{"format", "attntrace-lesson"}, {"version", 1}, {"id", "fused"}, {"title", "fused attention"},
                {"tokens", tokens}, {"config", cfg}, {"weights_seed", 6}};
    if (cfg.value("block", "") == "decoder") {
        for (std::size_t i = 0; i < T + 7; ++i) memory_tokens.push_back("m" + std::to_string(i));  // S != T
        doc["memory_tokens"] = memory_tokens;
        inputs["memory"] = {{"generate", "normal"}, {"seed", 7}};
    }
    doc["inputs"] = inputs;
    return doc;
}

Trace run_with(const Lesson& l, bool fuse) {
    Plan plan = make_plan(l, {}, Arithmetic::exact, omp_get_max_threads());
    REQUIRE(plan.fuse_attention);  // the full policy's plan fuses, as a run's would
    plan.fuse_attention = fuse;
    Trace t = run_planned(l, Arithmetic::exact, plan);
    materialise(t);
    return t;
}

// Whether the scores pass of the first attention left its scores to the softmax pass.
bool scores_deferred(const Lesson& l) {
    bool deferred = false;
    run_to_scores(l, make_plan(l, {}, Arithmetic::exact, omp_get_max_threads()),
                  [&](Run& run) { deferred = run.deferred(l.catalogue().step(Leaf::scores_raw, 0).name); });
    return deferred;
}

}  // namespace

TEST_CASE("the fused attention records every step as the separate passes do, bit for bit", "[fused]") {
    const json configs[] = {
        json::object(),
        {{"mask", "causal"}},
        {{"mask", {{"kind", "window"}, {"window", 9}, {"causal", true}}}},
        {{"kv_heads", 1}, {"d_k", 4}, {"d_v", 6}},
        {{"d_model", 16}, {"heads", 4}, {"kv_heads", 2}, {"positions", {{"kind", "rope"}, {"layout", "half"}}}, {"mask", "causal"}},
        {{"block", "decoder"}, {"blocks", 2}},
    };
    // T = 43: one row past a block of 42; 130: three blocks of 42 and a partial one.
    for (std::size_t T : {5, 43, 130})
        for (const json& config : configs)
            for (int threads : {1, 2}) {
                INFO("T " << T << ", config " << config.dump() << ", " << threads << " thread(s)");
                const Lesson l = parse_lesson(lesson_doc(config, T).dump(), "fused.json");
                omp_set_num_threads(threads);
                REQUIRE(scores_deferred(l));
                require_same_steps(run_with(l, true), run_with(l, false));
            }
    omp_set_num_threads(omp_get_num_procs());
}

TEST_CASE("a run that stops before the mix, or starts after the scores, does not fuse its attention", "[fused]") {
    json doc = lesson_doc(json::object(), 50);
    doc["run"] = {{"from", "embed"}, {"to", "softmax"}};
    const Lesson to_softmax = parse_lesson(doc.dump(), "fused.json");
    CHECK_FALSE(scores_deferred(to_softmax));
    const Trace t = run_planned(to_softmax, Arithmetic::exact,
                                make_plan(to_softmax, {}, Arithmetic::exact, omp_get_max_threads()));
    CHECK(t.find("blocks.0.attn.hook_pattern") != nullptr);
}

}  // namespace test_fused_attention

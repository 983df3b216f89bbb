// Derived steps (trace/derived.hpp): a run whose plan derives the scaled,
// masked, shifted and exp'd scores (plan.derive_attention) records the same
// numbers, bit for bit, as a run that computes every step into its own buffer
// (the plan with derivation switched off: the run as it recorded before),
// whatever reads them: values_of, the JSON export, a summary, explain, the
// claims. Their buffers are not in the plan's peak.
#include "held_trace.hpp"

#include <catch2/catch.hpp>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "evaluate/evaluate.hpp"
#include "export/trace_export.hpp"
#include "lesson/lesson.hpp"
#include "pipeline/operation.hpp"
#include "pipeline/plan.hpp"
#include "pipeline/run.hpp"
#include "pipeline/stages.hpp"
#include "render/explain.hpp"
#include "support.hpp"
#include "trace/derived.hpp"

using namespace attntrace;

namespace test_derived_steps {
using json = nlohmann::json;

namespace {

const char* const kDerived[] = {"hook_scores_scaled", "hook_attn_scores", "softmax.hook_shifted", "softmax.hook_exp"};

Plan plan_of(const Lesson& l, const TracePolicy& p, Arithmetic mode) {
    return make_plan(l, p, mode, omp_get_max_threads());
}

// The run with every step in its own buffer: the plan with derivation off.
Trace run_buffered(const Lesson& l, const TracePolicy& p = {}, Arithmetic mode = Arithmetic::exact) {
    Plan plan = plan_of(l, p, mode);
    plan.derive_attention = false;
    plan.derived.assign(plan.derived.size(), false);
    return run_planned(l, mode, plan);
}

Trace run_derived(const Lesson& l, const TracePolicy& p = {}, Arithmetic mode = Arithmetic::exact) {
    return run_planned(l, mode, plan_of(l, p, mode));
}

json doc_with(const json& config, std::size_t T, std::size_t C = 8, std::size_t NH = 2) {
    json tokens = json::array();
    for (std::size_t i = 0; i < T; ++i) tokens.push_back("t" + std::to_string(i));
    json cfg = {{"d_model", C}, {"heads", NH}, {"d_ff", 16}};
    cfg.update(config);
    return {{"format", "attntrace-lesson"}, {"version", 1}, {"id", "derived"}, {"title", "derived steps"},
            {"tokens", tokens}, {"config", cfg}, {"inputs", {{"X", {{"generate", "normal"}, {"seed", 5}}}}},
            {"weights_seed", 6}};
}

Lesson lesson_of(const json& doc) { return parse_lesson(doc.dump(), "derived.json"); }

TracePolicy policy(const std::string& text) { return parse_trace_policy(text, "--trace"); }

}  // namespace

TEST_CASE("derived steps read bit for bit as the buffered run records them, at every lane edge and config",
          "[derived]") {
    const json configs[] = {
        json::object(),
        {{"mask", "causal"}},
        {{"mask", {{"kind", "window"}, {"window", 3}}}},
        {{"scale", false}, {"mask", "causal"}},
        {{"scale", {{"divide_by", 3}}}},
        {{"scale", {{"multiply_by", 0.25}}}, {"mask", "causal"}},
        {{"kv_heads", 1}, {"heads", 4}, {"mask", "causal"}},
        {{"d_k", 3}, {"d_v", 5}, {"heads", 2}},
        {{"positions", {{"kind", "rope"}, {"layout", "half"}}}, {"mask", "causal"}},
    };
    for (const json& cfg : configs)
        for (std::size_t T : {1, 3, 15, 16, 17, 33, 70}) {
            INFO(cfg.dump() << " T " << T);
            const Lesson l = lesson_of(doc_with(cfg, T));
            REQUIRE(plan_of(l, {}, Arithmetic::exact).derive_attention);
            const Trace d = run_derived(l), b = run_buffered(l);
            CHECK(require_same_steps(d, b) == 4);  // the four derived steps of the one attention hold no buffer
            for (const char* leaf : kDerived) CHECK(is_derived(*d.find(std::string("blocks.0.attn.") + leaf)));
        }
}

TEST_CASE("every lesson, exact and as the article rounds, records the same numbers derived or buffered", "[derived]") {
    for (const std::string& file : test::lesson_files()) {
        const Lesson l = read_lesson(file);
        if (l.batch) continue;  // a batch's sequences are materialised before stacking (batch.cpp)
        for (Arithmetic mode : {Arithmetic::exact, Arithmetic::document}) {
            INFO(file << (mode == Arithmetic::exact ? " exact" : " document"));
            Trace d, b;
            try {
                b = run_buffered(l, {}, mode);
            } catch (const InputError& e) {  // a lesson refused (on purpose) is refused the same way
                CHECK_THROWS_WITH(run_derived(l, {}, mode), e.what());
                continue;
            }
            d = run_derived(l, {}, mode);
            require_same_steps(d, b);
            CHECK(dump_readable(trace_to_json(l, d, nullptr)) == dump_readable(trace_to_json(l, b, nullptr)));
        }
    }
}

TEST_CASE("derived steps under every trace policy: no buffer when the sources are kept, a buffer otherwise",
          "[derived]") {
    const Lesson l = lesson_of(doc_with({{"mask", "causal"}}, 17));
    SECTION("a summary is computed from the derived values, then freed") {
        const Trace d = run_derived(l, policy("summary")), b = run_buffered(l, policy("summary"));
        CHECK(require_same_steps(d, b) == 0);
    }
    SECTION("exps kept without the raw scores: computed into a buffer") {
        const TracePolicy p = policy("softmax.hook_exp,hook_pattern");
        const Plan plan = plan_of(l, p, Arithmetic::exact);
        CHECK(plan.derive_attention);
        const Trace d = run_derived(l, p), b = run_buffered(l, p);
        CHECK(require_same_steps(d, b) == 0);
        CHECK(d.find("blocks.0.attn.softmax.hook_exp")->held().size() > 0);
        CHECK(d.find("blocks.0.attn.softmax.hook_exp")->derivation);
    }
    SECTION("the raw scores, mask and row max kept: the exps stay a derivation") {
        const TracePolicy p = policy("hook_scores_raw,hook_mask,softmax.hook_row_max,softmax.hook_exp,hook_pattern");
        const Trace d = run_derived(l, p), b = run_buffered(l, p);
        CHECK(require_same_steps(d, b) == 1);
    }
}

TEST_CASE("the plan leaves derived steps out of its peak and counts them for the export", "[derived][memory]") {
    json doc = doc_with({{"mask", "causal"}}, 64, 16, 4);
    const std::size_t plane = 4 * 64 * 64 * sizeof(float);  // (NH, T, T)
    // The same lesson, once exact (derived) and once rounding its scaled scores as an article would: an
    // intervention in the attention runs it pass by pass, every step in a buffer.
    doc["document_rounding"] = {{"blocks.0.attn.hook_scores_scaled", 4}};
    const Lesson l = lesson_of(doc);
    const Plan derived = plan_of(l, {}, Arithmetic::exact);
    const Plan buffered = plan_of(l, {}, Arithmetic::document);
    REQUIRE(derived.derive_attention);
    REQUIRE_FALSE(buffered.derive_attention);
    CHECK(derived.derived_bytes == 4 * plane);
    CHECK(buffered.derived_bytes == 0);
    CHECK(buffered.kept_bytes - derived.kept_bytes == 4 * plane);
    // The derived plan also fuses the attention: each thread's scratch and Z, held from the softmax pass on.
    REQUIRE(derived.fuse_attention);
    const Dims d = l.dims();
    const std::size_t fused = omp_get_max_threads() * fused_attention_scratch_floats(d) * sizeof(float) +
                              d.Tq * d.NH * d.hv * sizeof(float);
    // The four planes are out of the peak, less at most what the fusion adds (its peak pass may be another).
    CHECK(derived.peak_bytes + 4 * plane <= buffered.peak_bytes + fused);
    CHECK(derived.peak_bytes + 3 * plane < buffered.peak_bytes);
    CHECK(plan_of(l, policy("none"), Arithmetic::exact).derived_bytes == 0);
}

TEST_CASE("a derived step exports, explains and checks as a buffered one", "[derived]") {
    const Lesson l = lesson_of(doc_with({{"mask", "causal"}}, 5));
    const Trace d = run_derived(l), b = run_buffered(l);
    CHECK(dump_readable(trace_to_json(l, d, nullptr)) == dump_readable(trace_to_json(l, b, nullptr)));
    std::string td, tb;  // the streamed writer: a derived step's values made when written
    StringSink sd(td), sb(tb);
    write_trace_json(sd, l, d, nullptr);
    write_trace_json(sb, l, b, nullptr);
    CHECK(td == tb);
    const ExplainOptions opt;
    for (const char* leaf : kDerived) {
        const CellRef cell{std::string("blocks.0.attn.") + leaf, {1, 3, 2}};
        INFO(cell.step);
        const Explanation ed = explain_cell(l, d, cell, opt), eb = explain_cell(l, b, cell, opt);
        CHECK(ed.text == eb.text);
        CHECK(ed.traced == eb.traced);
        REQUIRE(ed.recomputed);
        CHECK(*ed.recomputed == ed.traced);
    }
    const Explanation ep = explain_cell(l, d, CellRef{"blocks.0.attn.hook_pattern", {0, 4, 1}}, opt);
    CHECK(ep.text == explain_cell(l, b, CellRef{"blocks.0.attn.hook_pattern", {0, 4, 1}}, opt).text);
}

TEST_CASE("an overflow in a derived step is refused naming that step, as the buffered run names it", "[derived]") {
    // Inputs of 1e16 give raw scores near 1e33, finite; multiplied by 1e6 they overflow float32 in hook_scores_scaled.
    json doc = doc_with({{"scale", {{"multiply_by", 1e6}}}}, 4);
    json x = json::array();
    for (int i = 0; i < 4; ++i) {
        json row = json::array();
        for (int c = 0; c < 8; ++c) row.push_back(((i + c) % 3 - 1) * 1e16);
        x.push_back(row);
    }
    doc["inputs"]["X"] = x;
    const Lesson l = lesson_of(doc);
    std::string buffered;
    try {
        run_buffered(l);
    } catch (const InputError& e) {
        buffered = e.what();
    }
    REQUIRE(buffered.find("hook_scores_scaled") != std::string::npos);
    CHECK_THROWS_WITH(run_derived(l), buffered);
}

namespace {

// run_to_scores (held_trace.hpp) with the scores pass computing the scores itself
// (the fused attention leaves them to the softmax pass).
template <class Check>
void run_to_scores(const Lesson& l, Check check) {
    Plan plan = plan_of(l, {}, Arithmetic::exact);
    plan.fuse_attention = false;
    run_to_scores(l, plan, check);
}

double max_abs_of(const Tensor& t) {
    double m = 0;
    for (float x : t.data) m = std::max(m, static_cast<double>(std::fabs(x)));
    return m;
}

json scores_lesson(json q, json k) {
    return json{{"format", "attntrace-lesson"}, {"version", 1}, {"id", "l"}, {"title", "t"}, {"source", {{"document", "x"}}},
                {"tokens", {"a", "b"}}, {"config", {{"d_model", 4}, {"heads", 1}}}, {"run", {{"from", "scores"}, {"to", "softmax"}}},
                {"given", {{"blocks.0.attn.hook_q", q}, {"blocks.0.attn.hook_k", k}}}};
}

}  // namespace

TEST_CASE("the raw scores are bounded by hs · max|Q| · max|K| instead of scanned, and scanned when the bound leaves float32", "[derived]") {
    const std::string raw = "blocks.0.attn.hook_scores_raw";
    // A whole random block: bounded, and every score within hs · max|Q| · max|K|.
    const Lesson l = lesson_of(doc_with(json::object(), 6));
    run_to_scores(l, [&](Run& run) {
        CHECK(run.is_finite_by_construction(raw));
        const double hs = static_cast<double>(run.dims().hs);
        CHECK(max_abs_of(*run.value(raw)) <= hs * max_abs_of(*run.value("blocks.0.attn.hook_q")) *
                                                 max_abs_of(*run.value("blocks.0.attn.hook_k")));
    });
    // Every product at the largest magnitude and the same sign: the bound (4 · 3 · 5, and its slack) is reached.
    const Lesson tight = parse_lesson(scores_lesson({{3, 3, 3, 3}, {3, 3, 3, -3}}, {{5, 5, 5, 5}, {5, 5, 5, 5}}).dump(), "l.json");
    run_to_scores(tight, [&](Run& run) {
        CHECK(run.is_finite_by_construction(raw));
        CHECK(max_abs_of(*run.value(raw)) == 60.0);
    });
    // 4 · 1e20 · 1e18 is past float32 while the scores cancel (to what the products' rounding leaves): scanned,
    // and found finite.
    const Lesson past = parse_lesson(
        scores_lesson({{1e20, -1e20, 1e20, -1e20}, {1, -1, 1, -1}}, {{1e18, 1e18, 1e18, 1e18}, {1, 1, 1, 1}}).dump(), "l.json");
    run_to_scores(past, [&](Run& run) {
        CHECK_FALSE(run.is_finite_by_construction(raw));
        CHECK(max_abs_of(*run.value(raw)) < 1e36);
    });
    // Products past float32 (3e38 · 3e38): the bound leaves the range, the scores are scanned and refused.
    const Lesson inf = parse_lesson(scores_lesson({{3e38, 3e38, 0, 0}, {1, 1, 1, 1}}, {{3e38, 0, 0, 0}, {1, 1, 1, 1}}).dump(), "l.json");
    CHECK_THROWS_WITH(run_lesson(inf), Catch::Contains("hook_scores_raw[0,0,0]: expected finite values, found +inf"));
}

}  // namespace test_derived_steps

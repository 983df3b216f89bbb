// A run may start at any stage with that stage's inputs given (issue 14 item
// 8, docs/lesson-format.md#starting-at-any-stage): every stage of a block,
// started from the values a whole run recorded for what it reads, computes the
// same numbers as the whole run; and the pieces tutorials print on their own
// (a softmax of a given row, GELU of a given vector, LayerNorm of a given
// matrix) against values computed here by hand.
#include "held_trace.hpp"
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <string>

#include <nlohmann/json.hpp>

#include "pipeline/run.hpp"
#include "support.hpp"

using namespace attntrace;
using nlohmann::json;

namespace test_run_from_any_stage {

namespace {

json block_doc() {
    json tokens = json::array();
    for (int i = 0; i < 5; ++i) tokens.push_back("t" + std::to_string(i));
    return {{"format", "attntrace-lesson"}, {"version", 1}, {"id", "any-stage"}, {"title", "any stage"},
            {"tokens", tokens},
            {"config", {{"d_model", 8}, {"heads", 2}, {"d_ff", 16}, {"mask", "causal"}, {"activation", "gelu"}}},
            {"run", {{"from", "embed"}, {"to", "norm2"}}},
            {"inputs", {{"X", {{"generate", "normal"}, {"seed", 7}}}}}, {"weights_seed", 8}};
}

// A recorded value as the lesson format writes it: nested arrays, "-inf" for a blocked cell.
json nested(const Tensor& t, std::size_t axis = 0, std::size_t offset = 0) {
    json out = json::array();
    std::size_t stride = 1;
    for (std::size_t a = axis + 1; a < t.shape.size(); ++a) stride *= t.shape[a];
    for (std::size_t i = 0; i < t.shape[axis]; ++i) {
        const std::size_t at = offset + i * stride;
        if (axis + 1 < t.shape.size()) out.push_back(nested(t, axis + 1, at));
        else if (std::isinf(t.data[at])) out.push_back("-inf");
        else out.push_back(t.data[at]);
    }
    return out;
}

Trace run_doc(const json& doc) { return run_held(parse_lesson(doc.dump(), "any-stage.json")); }

// Runs the lesson whole, then from each stage with the whole run's values of
// what that stage reads given: every step computed must be the whole run's.
void check_every_stage(const json& doc) {
    const Lesson whole_lesson = parse_lesson(doc.dump(), "any-stage.json");
    const Trace whole = run_held(whole_lesson);
    const Catalogue& cat = whole_lesson.catalogue();
    for (const Pass& pass : cat.passes()) {
        bool records = false;  // the rope stage records nothing without RoPE, and cannot start a run then
        for (std::size_t i = pass.first; i < pass.end; ++i) records = records || whole_lesson.records(cat.steps()[i]);
        if (pass.stage == Stage::embed || !records) continue;
        INFO("run.from " << stage_name(pass.stage));
        json part = doc;
        part["run"]["from"] = std::string(stage_name(pass.stage));
        part["given"] = json::object();
        for (const StepDef* def : cat.consumed_by(pass, whole_lesson.reads()))
            if (const Step* s = whole.find(def->name)) part["given"][def->name] = nested(s->held());
        const Trace t = run_doc(part);
        std::size_t computed = 0;
        for (const Step& s : t.steps) {
            if (s.source != StepSource::computed) continue;
            INFO(s.name);
            const Step* w = whole.find(s.name);
            REQUIRE(w != nullptr);
            CHECK(s.held().data == w->held().data);
            ++computed;
        }
        CHECK(computed > 0);
    }
}

}  // namespace

TEST_CASE("every stage started from the whole run's values of what it reads computes the whole run's numbers",
          "[any_stage]") {
    check_every_stage(block_doc());
    json rope = block_doc();
    rope["config"]["positions"] = {{"kind", "rope"}, {"layout", "half"}};
    check_every_stage(rope);
}

TEST_CASE("GELU of a given vector: the FFN started at its own first step", "[any_stage]") {
    json doc = block_doc();
    doc["tokens"] = {"a"};
    doc["run"] = {{"from", "ffn"}, {"to", "ffn"}};
    doc["config"] = {{"d_model", 3}, {"d_ff", 4}, {"activation", "gelu"}};
    doc["given"] = {{"blocks.0.mlp.hook_pre", {{-1.0, 0.0, 1.0, 2.0}}}};
    doc.erase("weights_seed");
    const Trace t = run_doc(doc);
    const Step* post = t.find("blocks.0.mlp.hook_post");
    REQUIRE(post != nullptr);
    REQUIRE(post->source == StepSource::computed);
    // GELU(x) = x·Φ(x) = x/2·(1 + erf(x/√2))
    for (std::size_t i = 0; i < 4; ++i) {
        const double x = static_cast<double>(i) - 1.0;
        CHECK(post->held().data[i] == Approx(x / 2 * (1 + std::erf(x / std::sqrt(2.0)))).epsilon(1e-6));
    }
    // W_2 was not given: the output is not computable, with the reason
    const Step* out = t.find("blocks.0.hook_mlp_out");
    REQUIRE(out != nullptr);
    CHECK(out->source == StepSource::not_computable);
    CHECK(out->note.find("weights.W_2") != std::string::npos);
}

TEST_CASE("LayerNorm of a given matrix, with nn.LayerNorm's initial γ = 1 and β = 0", "[any_stage]") {
    json doc = block_doc();
    doc["tokens"] = {"a", "b"};
    doc["run"] = {{"from", "norm1"}, {"to", "norm1"}};
    doc["config"] = {{"d_model", 3}};
    doc["given"] = {{"blocks.0.hook_resid_mid", {{1.0, 2.0, 3.0}, {2.0, 4.0, 9.0}}}};
    doc["weights"] = {{"ln1_gamma", {{"generate", "ones"}}}, {"ln1_beta", {{"generate", "zeros"}}}};
    doc.erase("weights_seed");
    const Trace t = run_doc(doc);
    const Step* n = t.find("blocks.0.ln1.hook_normalized");
    REQUIRE(n != nullptr);
    REQUIRE(n->source == StepSource::computed);
    const double rows[2][3] = {{1, 2, 3}, {2, 4, 9}};
    for (std::size_t r = 0; r < 2; ++r) {
        const double mu = (rows[r][0] + rows[r][1] + rows[r][2]) / 3;
        double var = 0;
        for (double x : rows[r]) var += (x - mu) * (x - mu) / 3;
        for (std::size_t c = 0; c < 3; ++c)
            CHECK(n->held().data[r * 3 + c] == Approx((rows[r][c] - mu) / std::sqrt(var + 1e-5)).epsilon(1e-6));
    }
}

TEST_CASE("a first stage given nothing it reads nor any step of its own is refused, naming both", "[any_stage]") {
    json doc = block_doc();
    doc["run"] = {{"from", "ffn"}, {"to", "ffn"}};
    const std::string e = attntrace::test::lesson_refusal(doc.dump());
    INFO(e);
    CHECK(e.find("given: expected blocks.0.ln1.hook_normalized, or a step of the ffn stage itself") != std::string::npos);
}

}  // namespace test_run_from_any_stage

// --set and --ablate (compare/intervention.hpp, evaluate/intervened.hpp): the
// changed cells, everything after them recomputed from them, the steps before
// untouched, the original beside; ablations held to PyTorch's forward with the
// same head or MLP zeroed or mean-ablated (tests/models/make_intervention_reference.py).
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cmath>

#include "core/error.hpp"
#include "evaluate/intervened.hpp"
#include "export/trace_export.hpp"
#include "io/files.hpp"
#include "model/hf_model.hpp"
#include "model/model_lesson.hpp"
#include "support.hpp"
#include "trace/derived.hpp"

using namespace attntrace;
using namespace attntrace::test;

namespace test_interventions {

namespace {

// float32 logits against the float64 forward: as test_hf_models' kLogitTol
// (sums of 32 products, up to ~20, after two blocks).
constexpr double kLogitTol = 5e-4;

const std::string kFlagship = "003-3.1-ring-fell";

Lesson flagship() { return read_any_lesson(attntrace::test::lessons_dir() + "/" + kFlagship + ".json"); }

InterventionArg set(const std::string& text) { return {InterventionArg::Kind::set, text}; }
InterventionArg ablate(const std::string& text) { return {InterventionArg::Kind::ablate, text}; }

Tensor values(const Trace& t, const std::string& name) {
    const Step* s = t.find(name);
    REQUIRE(s);
    return values_of(t, *s).take();
}

// t's value at `at`, row-major.
float cell(const Tensor& t, std::initializer_list<std::size_t> at) {
    std::size_t i = 0, k = 0;
    for (std::size_t x : at) i = i * t.shape[k++] + x;
    return t.data[i];
}

std::string tiny() { return source_dir() + "/tests/models/tiny-gpt2"; }
const nlohmann::json& reference() {
    static const nlohmann::json r = nlohmann::json::parse(read_text(tiny() + "/interventions-reference.json"));
    return r;
}

Lesson tiny_lesson(const nlohmann::json& ids) {
    ModelInput in;
    in.ids = ids.get<std::vector<std::int64_t>>();
    return load_hf_model(tiny(), in).lesson;
}

std::string refusal(const Lesson& lesson, const std::vector<InterventionArg>& args) {
    try {
        evaluate_intervened(lesson, {}, args);
    } catch (const InputError& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("a --set replaces the cells it names and everything after them is recomputed from them") {
    const auto e = evaluate_intervened(flagship(), {}, {set("blocks.0.attn.hook_pattern[0, 1, :]=0.25")});
    const Trace &before = e->original->exact, &after = e->changed->exact;
    const Tensor a0 = values(before, "blocks.0.attn.hook_pattern"), a1 = values(after, "blocks.0.attn.hook_pattern");
    const std::size_t T = a1.shape[1];
    for (std::size_t i = 0; i < T; ++i)
        for (std::size_t j = 0; j < T; ++j)
            if (i == 1) CHECK(cell(a1, {0, i, j}) == 0.25f);
            else CHECK(cell(a1, {0, i, j}) == cell(a0, {0, i, j}));
    // Z's row 1 of head 0 is A'·V with the changed row: 0.25 × the sum of V's rows, in double.
    const Tensor v = values(after, "blocks.0.attn.hook_v"), z = values(after, "blocks.0.attn.hook_z");
    const std::size_t hs = z.shape[2];
    for (std::size_t d = 0; d < hs; ++d) {
        double want = 0;
        for (std::size_t j = 0; j < T; ++j) want += 0.25 * v.data[j * (v.size() / v.shape[0]) + d];  // head 0: a row's first hs
        CHECK(cell(z, {1, 0, d}) == Approx(want).margin(1e-6));
    }
    // Before the pattern nothing moved; the pattern and what follows it did.
    CHECK(e->comparison.find("blocks.0.attn.hook_v")->change == Change::unchanged);
    CHECK(e->comparison.find("blocks.0.attn.hook_scores_raw")->change == Change::unchanged);
    CHECK(e->comparison.find("blocks.0.attn.hook_pattern")->change == Change::changed);
    CHECK(e->comparison.find("blocks.0.attn.hook_z")->change == Change::changed);
    // The original run is the lesson's own, bit for bit.
    const auto plain = evaluate(flagship());
    CHECK(values(plain->exact, "blocks.0.attn.hook_z").data == values(before, "blocks.0.attn.hook_z").data);
    // The changed step says what set it.
    const Step* s = after.find("blocks.0.attn.hook_pattern");
    CHECK(s->source == StepSource::given);
    CHECK_THAT(s->note, Catch::Contains("--set blocks.0.attn.hook_pattern[0, 1, :]=0.25"));
    REQUIRE(e->interventions.size() == 1);
    CHECK(e->interventions[0].count == T);
}

TEST_CASE("a --set to from:TRACE copies the same cells from another run's export") {
    TempDir dir;
    const auto changed = evaluate_intervened(flagship(), {}, {set("hook_pattern[0, 1, :]=0.25")});
    {
        AtomicFile f(dir.file("changed.json"));
        write_trace_json(f, changed->changed->lesson, changed->changed->exact, &changed->changed->report);
        f.commit();
    }
    const auto copied = evaluate_intervened(flagship(), {}, {set("hook_pattern[0, 1, :]=from:" + dir.file("changed.json"))});
    CHECK(values(copied->changed->exact, "blocks.0.attn.hook_z").data ==
          values(changed->changed->exact, "blocks.0.attn.hook_z").data);
    // Only the named cells come from the file: row 0 stays the lesson's.
    CHECK(cell(values(copied->changed->exact, "blocks.0.attn.hook_pattern"), {0, 0, 0}) ==
          cell(values(copied->original->exact, "blocks.0.attn.hook_pattern"), {0, 0, 0}));
}

TEST_CASE("a bad --set or --ablate is one line naming the argument, before any second run") {
    const Lesson l = flagship();
    CHECK_THAT(refusal(l, {set("hook_pattern[0, 9, :]=1")}), Catch::Contains("out of range"));
    CHECK_THAT(refusal(l, {set("hook_pattern[0, 1]=1")}), Catch::Contains("3 indices"));
    CHECK_THAT(refusal(l, {set("hook_patern[0, 1, 1]=1")}), Catch::Contains("hook_pattern"));
    CHECK_THAT(refusal(l, {set("hook_pattern[0, 1, 1]=abc")}), Catch::Contains("\"abc\""));
    CHECK_THAT(refusal(l, {set("hook_pattern[0, 1, 1]")}), Catch::Contains("no '='"));
    CHECK_THAT(refusal(l, {set("hook_pattern[0, 1, 1]=1e39")}), Catch::Contains("float32"));
    CHECK_THAT(refusal(l, {set("hook_pattern[0, 1, 1]=from:/nonexistent/t.json")}), Catch::Contains("t.json"));
    CHECK_THAT(refusal(l, {set("hook_pattern[0, 1, 1]=-inf")}), Catch::Contains("-inf"));
    CHECK_THAT(refusal(l, {ablate("blocks.0.attn.h9")}), Catch::Contains("h9"));
    CHECK_THAT(refusal(l, {ablate("blocks.3.attn.h0")}), Catch::Contains("blocks.3.attn"));
    CHECK_THAT(refusal(l, {ablate("blocks.0.attn.h0:half")}), Catch::Contains(":half"));
    for (const std::string& r : {refusal(l, {set("hook_pattern[0, 9, :]=1")}), refusal(l, {ablate("blocks.0.attn.h9")})})
        CHECK(r.find('\n') == std::string::npos);
}

TEST_CASE("ablating a head or an MLP equals PyTorch's forward with it zeroed or mean-ablated") {
    const nlohmann::json& ref = reference()["ablations"];
    const Lesson lesson = tiny_lesson(ref["ids"]);
    for (const auto& c : ref["cases"]) {
        const std::string target = c["ablate"];
        INFO(target);
        const auto e = evaluate_intervened(lesson, {}, {ablate(target)});
        const Tensor logits = values(e->changed->exact, "unembed");
        const std::size_t V = logits.shape[1], last = logits.shape[0] - 1;
        const auto& want = c["last_logits"];
        REQUIRE(want.size() == V);
        double worst = 0;
        for (std::size_t v = 0; v < V; ++v) worst = std::max(worst, std::fabs(logits.data[last * V + v] - want[v].get<double>()));
        CHECK(worst < kLogitTol);
        // and the ablation changed the logits (the reference's are not the plain run's)
        const auto& none = ref["none"];
        double moved = 0;
        for (std::size_t v = 0; v < V; ++v) moved = std::max(moved, std::fabs(none[v].get<double>() - want[v].get<double>()));
        CHECK(moved > 100 * kLogitTol);
    }
}

TEST_CASE("the CLI shows the changed run, what changed, and the next tokens before and after") {
    const CliResult r = run_cli({"run", "--model", tiny(), "--text", "the ring fell", "--ablate", "blocks.0.attn.h1",
                                 "--steps", "hook_attn_out"});
    INFO(r.err);
    REQUIRE(r.status == 0);
    CHECK_THAT(r.out, Catch::Contains("--ablate blocks.0.attn.h1"));
    CHECK_THAT(r.out, Catch::Contains("before and after the interventions"));
    CHECK_THAT(r.out, Catch::Contains("blocks.1.hook_resid_post"));
    const CliResult j = run_cli({"run", "--model", tiny(), "--text", "the ring fell", "--set",
                                 "blocks.0.hook_mlp_out[:, :]=0", "--json"});
    REQUIRE(j.status == 0);
    const auto doc = nlohmann::json::parse(j.out);
    REQUIRE(doc.contains("interventions"));
    CHECK(doc["interventions"]["changes"][0]["step"] == "blocks.0.hook_mlp_out");
    CHECK(doc["interventions"]["next_tokens_before"]["next_tokens"].size() == 10);
    CHECK(!doc["interventions"]["changed_steps"].empty());
    // A bad one: exit 2, one line, nothing on standard output.
    const CliResult bad = run_cli({"run", "--model", tiny(), "--text", "the ring fell", "--ablate", "blocks.5.mlp"});
    CHECK(bad.status == 2);
    CHECK(bad.out.empty());
    CHECK(std::count(bad.err.begin(), bad.err.end(), '\n') == 1);
    // decode checks the changed run against its KV-cache steps; --generate refuses them.
    CHECK(run_cli({"decode", "--model", tiny(), "--text", "the ring fell", "--ablate", "blocks.0.attn.h1:mean"}).status == 0);
    CHECK(run_cli({"decode", "--model", tiny(), "--text", "the ring fell", "--ablate", "blocks.0.attn.h1", "--generate",
                   "2"}).status == 2);
}

TEST_CASE("explain and export take the interventions too") {
    TempDir dir;
    const CliResult x = run_cli({"explain", kFlagship, "hook_z[1, 0, 0]", "--set", "hook_pattern[0, 1, :]=0.25"});
    INFO(x.err);
    REQUIRE(x.status == 0);
    CHECK_THAT(x.out, Catch::Contains("without the interventions"));
    const CliResult e = run_cli({"export", kFlagship, "--ablate", "blocks.0.attn.h0:mean", "-o", dir.file("t.json")});
    REQUIRE(e.status == 0);
    const auto doc = nlohmann::json::parse(read_text(dir.file("t.json")));
    CHECK(doc["interventions"]["changes"][0]["flag"] == "--ablate blocks.0.attn.h0:mean");
    const CliResult page = run_cli({"report", kFlagship, "--set", "hook_pattern[0, 1, :]=0.25", "-o", dir.file("p.html")});
    CHECK(page.status == 0);
    CHECK_THAT(read_text(dir.file("p.html")), Catch::Contains("\"interventions\""));
}

}  // namespace test_interventions

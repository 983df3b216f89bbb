// attntrace compare: --set on a lesson's JSON (paths, bare config keys, step
// names with dots, removal, refusals), the step-by-step changes on shipped
// lessons checked against what the formulas say must change, and the real
// CLI: text, --json agreeing with it, one-line errors with exit 2.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

#include "compare/compare.hpp"
#include "compare/lesson_override.hpp"
#include "core/error.hpp"
#include "pipeline/run.hpp"
#include "support.hpp"

using namespace attntrace;
using attntrace::test::run_cli;
using nlohmann::json;

namespace test_compare {

namespace {

const std::string kRing = "003-3.1-ring-fell";  // d_model 4, one head: hs = 4, √hs = 2
const std::string kQ = "blocks.0.attn.hook_q", kK = "blocks.0.attn.hook_k", kV = "blocks.0.attn.hook_v";
const std::string kRaw = "blocks.0.attn.hook_scores_raw", kScaled = "blocks.0.attn.hook_scores_scaled";
const std::string kMask = "blocks.0.attn.hook_mask", kPattern = "blocks.0.attn.hook_pattern";

std::string lesson_path(const std::string& id) { return attntrace::test::lessons_dir() + "/" + id + ".json"; }

// The lessons and their comparison (which owns the two runs' traces).
struct Compared {
    LessonPair pair;
    Comparison c;
};
std::unique_ptr<Compared> compare(const std::string& id, const std::vector<std::string>& sets) {
    std::vector<Setting> settings;
    for (const auto& s : sets) settings.push_back(parse_setting(s));
    auto r = std::make_unique<Compared>(Compared{read_lesson_pair(lesson_path(id), settings), {}});
    r->c = compare_traces(run_lesson(r->pair.a), run_lesson(r->pair.b));
    return r;
}

Change change_of(const Compared& r, const std::string& name) {
    const StepChange* s = r.c.find(name);
    REQUIRE(s != nullptr);
    return s->change;
}

// The message of the InputError `f` throws ("" when it throws none).
template <class F>
std::string error_of(F f) {
    try {
        f();
    } catch (const InputError& e) {
        return e.what();
    }
    return "";
}

// "5 of 9 cells", as the text says it for a changed step.
std::string fmt_cells(const json& s) {
    return std::to_string(s["cells_changed"].get<std::size_t>()) + " of " + std::to_string(s["cells"].get<std::size_t>()) +
           " cells";
}

bool one_line(const std::string& err) {
    return !err.empty() && err.back() == '\n' && std::count(err.begin(), err.end(), '\n') == 1;
}

}  // namespace

TEST_CASE("parse_setting splits at the first '=' and reads VALUE as JSON when it parses, else as a string", "[compare]") {
    CHECK(parse_setting("config.scale=false").value == json(false));
    CHECK(parse_setting("heads=2").value == json(2));
    CHECK(parse_setting("config.mask=causal").value == json("causal"));
    CHECK(parse_setting("config.mask=\"none\"").value == json("none"));
    CHECK(parse_setting("run=null").value.is_null());
    const Setting obj = parse_setting(R"(config.mask={"kind":"window","window":3})");
    CHECK(obj.key == "config.mask");
    CHECK(obj.value == json::parse(R"({"kind":"window","window":3})"));
    CHECK(parse_setting("title=a=b").value == json("a=b"));  // only the first '=' splits
    CHECK(error_of([] { parse_setting("scale"); }).find("--set: expected KEY=VALUE") == 0);
    CHECK(error_of([] { parse_setting("=1"); }).find("--set: expected KEY=VALUE with a KEY") == 0);
}

TEST_CASE("set KEY=VALUE resolves bare config keys, top-level keys, array indices and step names holding dots", "[compare]") {
    SECTION("a bare config field is config.KEY, a bare top-level field stays top level") {
        auto r = compare(kRing, {"scale=false", "weights_seed=3"});
        REQUIRE(r->pair.settings.size() == 2);
        CHECK(r->pair.settings[0].path == "config.scale");
        CHECK(r->pair.settings[0].before == json(true));
        CHECK(r->pair.settings[0].after == json(false));
        CHECK(r->pair.settings[1].path == "weights_seed");
        CHECK_FALSE(r->pair.settings[1].before.has_value());  // the lesson sets no seed
        CHECK(r->pair.b.config.scale.kind == ScaleKind::none);
        CHECK(r->pair.a.config.scale.kind == ScaleKind::sqrt_dk);
    }
    SECTION("a step name under given is one key, whatever its dots") {
        auto r = compare(kRing, {"given.blocks.0.attn.hook_q=[[1,0,0,0],[0,1,0,0],[0,0,1,0]]"});
        CHECK(r->pair.settings[0].path == "given." + kQ);
        CHECK(change_of(*r, kQ) == Change::changed);
        CHECK(change_of(*r, kK) == Change::unchanged);
        CHECK(change_of(*r, kRaw) == Change::changed);
    }
    SECTION("[N] indexes an array: a token renamed changes labels, no value") {
        auto r = compare(kRing, {"tokens[1]=dog"});
        CHECK(r->pair.settings[0].path == "tokens[1]");
        CHECK(r->pair.b.tokens[1] == "dog");
        CHECK(r->c.count(Change::changed) == 0);
    }
    SECTION("null removes a field: its default applies") {
        auto r = compare(kRing, {"config.scale=null"});  // the default is true, as the lesson says
        CHECK_FALSE(r->pair.settings[0].after.has_value());
        CHECK(r->c.count(Change::unchanged) == r->c.steps.size());
        CHECK_FALSE(r->c.first_change().has_value());
    }
}

TEST_CASE("compare --set config.scale=false: Q, K, V and raw scores are unchanged, the scaled scores grow by exactly sqrt(hs)", "[compare]") {
    auto r = compare(kRing, {"config.scale=false"});
    for (const auto& name : {kQ, kK, kV, kRaw}) {
        INFO(name);
        CHECK(change_of(*r, name) == Change::unchanged);
    }
    CHECK(change_of(*r, kScaled) == Change::changed);
    CHECK(change_of(*r, kPattern) == Change::changed);
    CHECK(change_of(*r, kMask) == Change::unchanged);
    REQUIRE(r->c.first_change());
    CHECK(r->c.steps[*r->c.first_change()].name == kScaled);
    // hs = 4: dividing by √hs = 2 only lowers the exponent, so B = 2·A holds
    // bit for bit, and B is the raw scores themselves.
    const Tensor& raw = r->c.a->find(kRaw)->held();
    const StepValues av = values_of(*r->c.a, *r->c.a->find(kScaled)), bv = values_of(*r->c.b, *r->c.b->find(kScaled));
    const Tensor& a = *av;  // derived steps (trace/derived.hpp): computed on read
    const Tensor& b = *bv;
    REQUIRE(a.shape == b.shape);
    std::size_t nonzero = 0;
    for (std::size_t k = 0; k < a.size(); ++k) {
        CHECK(b.data[k] == raw.data[k]);
        CHECK(b.data[k] == 2.0f * a.data[k]);
        nonzero += raw.data[k] != 0;
    }
    const StepChange& s = *r->c.find(kScaled);
    CHECK(s.diff.beyond == nonzero);  // exactly the non-zero scores changed
    CHECK(s.diff.cells == a.size());
    // the largest change is at the largest raw score: 2 - 1
    CHECK(s.diff.max_abs->abs == 1.0);
    CHECK(cell_labels(*r->c.a->find(kScaled), s.diff.max_abs->index) == "h0, ring, fell");
    CHECK(s.diff.max_rel->rel == 0.5);  // |2x - x| / |2x| for every changed cell
    // B - A is A again (2a - a), and 0 where nothing changed
    const Tensor d = delta(a, b);
    for (std::size_t k = 0; k < a.size(); ++k) CHECK(d.data[k] == a.data[k]);
}

TEST_CASE("compare --set config.mask=causal: the mask changes and the weights of masked keys become 0", "[compare]") {
    auto r = compare(kRing, {"config.mask=causal"});
    CHECK(change_of(*r, kRaw) == Change::unchanged);
    CHECK(change_of(*r, kMask) == Change::changed);
    CHECK(r->c.steps[*r->c.first_change()].name == kMask);
    const Tensor& mask = r->c.b->find(kMask)->held();   // (Tq, T)
    const Tensor& w = r->c.b->find(kPattern)->held();   // (NH, Tq, T)
    const std::size_t T = mask.shape[1];
    for (std::size_t i = 0; i < T; ++i)
        for (std::size_t j = 0; j < T; ++j) {
            CHECK(r->c.a->find(kMask)->held().data[i * T + j] == 0.0f);
            CHECK(mask.data[i * T + j] == (j > i ? kNegInf : 0.0f));
            if (j > i) CHECK(w.data[i * T + j] == 0.0f);
        }
    // the first query sees only itself; the last sees every key, as without the mask
    CHECK(w.data[0] == 1.0f);
    for (std::size_t j = 0; j < T; ++j) CHECK(w.data[(T - 1) * T + j] == r->c.a->find(kPattern)->held().data[(T - 1) * T + j]);
    const StepChange& m = *r->c.find(kMask);
    CHECK(m.diff.beyond == T * (T - 1) / 2);
    CHECK(std::isinf(m.diff.max_abs->abs));
    // B - A: -inf where B masks, 0 elsewhere (never NaN)
    const Tensor d = delta(r->c.a->find(kMask)->held(), mask);
    for (std::size_t k = 0; k < d.size(); ++k) CHECK(d.data[k] == mask.data[k]);
}

TEST_CASE("compare --set config.heads reports the steps whose shape changes, and run.to the steps one run lacks", "[compare]") {
    auto r = compare(kRing, {"config.heads=2"});
    for (const auto& name : {kQ, kK, kV, kRaw, kPattern}) {
        INFO(name);
        CHECK(change_of(*r, name) == Change::shape_changed);
    }
    CHECK(r->c.find(kQ)->b->shape == Shape{3, 2, 2});
    CHECK(change_of(*r, kMask) == Change::unchanged);  // (Tq, T): no head axis
    CHECK(r->c.steps[*r->c.first_change()].name == kQ);

    auto to = compare(kRing, {"run.to=scores"});
    CHECK(change_of(*to, kRaw) == Change::unchanged);
    CHECK(change_of(*to, kPattern) == Change::only_a);
    CHECK(to->c.count(Change::only_b) == 0);
    // in pipeline order: nothing after the first step only in A is in both
    const auto first_only = std::find_if(to->c.steps.begin(), to->c.steps.end(),
                                         [](const StepChange& s) { return s.change == Change::only_a; });
    CHECK(std::all_of(first_only, to->c.steps.end(), [](const StepChange& s) { return s.change == Change::only_a; }));
}

TEST_CASE("compare reports the steps a removed setting leaves not computable, and shows the first of them", "[compare]") {
    auto r = compare("001-shapes", {"weights_seed=null"});  // its W_Q, W_K, W_V, W_O come from the seed
    CHECK(change_of(*r, "blocks.0.hook_resid_pre") == Change::unchanged);
    CHECK(change_of(*r, kQ) == Change::not_computable);
    CHECK(r->c.find(kQ)->note.find("not computable in B (needs weights.W_Q") == 0);
    CHECK(change_of(*r, kMask) == Change::unchanged);
    CHECK(change_of(*r, kPattern) == Change::not_computable);
    CHECK(r->c.count(Change::changed) == 0);
    REQUIRE(r->c.first_change());
    CHECK(r->c.steps[*r->c.first_change()].name == kQ);
}

TEST_CASE("compare refuses a KEY the lesson format lacks and a VALUE the reader refuses, naming the --set", "[compare]") {
    const std::string ring = lesson_path(kRing);
    auto read = [&](const std::string& s) { return error_of([&] { read_lesson_pair(ring, {parse_setting(s)}); }); };
    CHECK(read("config.nope=1").find("--set: config.nope=1: config.nope: expected one of the known fields") == 0);
    CHECK(read("nope=1").find("--set: nope=1: expected a field of config or of the lesson's top level") == 0);
    CHECK(read("weights.W_X=1").find("--set: weights.W_X=1: weights.W_X: expected a weight name") == 0);
    CHECK(read("config.mask.window=3").find("--set: config.mask.window=3: expected an object at config.mask") == 0);
    CHECK(read("tokens[9]=x").find("--set: tokens[9]=x: expected an index below 3") == 0);
    CHECK(read("claims[0].expect=agrees").find("--set: claims[0].expect=agrees: expected a field that changes the run") == 0);
    CHECK(read("run.nope=null").find("--set: run.nope=null: expected a field the lesson has") == 0);
    CHECK(read("config.heads=3") == ring + " (with --set config.heads=3): config.heads: expected a divisor of d_model = 4 "
                                              "(or config.d_k, the width of each head), found 3");
    CHECK(read("config.scale=maybe").find(ring + " (with --set config.scale=maybe): config.scale: expected true, false, {\"divide_by\"") == 0);
}

TEST_CASE("attntrace compare on a shipped lesson: every step in pipeline order, then the first change in full", "[compare][cli]") {
    auto r = run_cli({"compare", "001-shapes", "--set", "weights_seed=7", "--heatmap", "off"});
    REQUIRE(r.status == 0);
    CHECK(r.err.empty());
    CHECK(r.out.find("weights_seed  1 → 7") != std::string::npos);
    // X comes from the embedding table, which the seed does not make: unchanged; Q does change
    const auto line = [&](const std::string& name) {
        auto at = r.out.find("\n  " + name + " ");
        REQUIRE(at != std::string::npos);
        return r.out.substr(at + 1, r.out.find('\n', at + 1) - at - 1);
    };
    CHECK(line("blocks.0.hook_resid_pre").find("unchanged") != std::string::npos);
    CHECK(line(kQ).find("changed: ") != std::string::npos);
    CHECK(r.out.find("── " + kQ + " — ") != std::string::npos);
    CHECK(r.out.find("  B - A (0 where equal") != std::string::npos);
    const auto resid = r.out.find("blocks.0.hook_resid_pre"), q = r.out.find("  " + kQ + " ");
    CHECK(resid < q);  // pipeline order

    auto step = run_cli({"compare", kRing, "--set", "config.mask=causal", "--step", "hook_pattern"});
    REQUIRE(step.status == 0);
    CHECK(step.out.find("── " + kPattern + " — ") != std::string::npos);
    // A's and B's weights as heatmaps too, not B - A's
    CHECK(std::count(step.out.begin(), step.out.end(), '\n') > 0);
    std::size_t heatmaps = 0;
    for (auto at = step.out.find("    heatmap:"); at != std::string::npos; at = step.out.find("    heatmap:", at + 1)) ++heatmaps;
    CHECK(heatmaps == 2);
}

TEST_CASE("attntrace compare --json parses and says what the text says", "[compare][cli]") {
    const std::vector<std::string> args{"compare", kRing, "--set", "scale=false", "--set", "config.mask=causal"};
    auto text = run_cli(args);
    auto args_json = args;
    args_json.push_back("--json");
    auto js = run_cli(args_json);
    REQUIRE(text.status == 0);
    REQUIRE(js.status == 0);
    const json j = json::parse(js.out);
    CHECK(j["format"] == "attntrace-compare");
    CHECK(j["version"] == 1);
    REQUIRE(j["settings"].size() == 2);
    CHECK(j["settings"][0]["path"] == "config.scale");
    CHECK(j["settings"][0]["a"] == true);
    CHECK(j["settings"][0]["b"] == false);
    CHECK(j["settings"][1]["a"] == "none");
    CHECK(j["settings"][1]["b"] == "causal");
    const std::map<std::string, std::string> words{{"unchanged", "unchanged"}, {"changed", "changed: "},
                                                   {"shape-changed", "shape changed"}, {"only-in-a", "only in A"},
                                                   {"only-in-b", "only in B"}, {"not-computable", "not computable"}};
    std::map<std::string, std::size_t> counted;
    for (const auto& s : j["steps"]) {
        const std::string name = s["name"], change = s["change"];
        INFO(name);
        ++counted[change];
        const auto at = text.out.find("\n  " + name + " ");
        REQUIRE(at != std::string::npos);
        const std::string line = text.out.substr(at, text.out.find('\n', at + 1) - at);
        CHECK(line.find(words.at(change)) != std::string::npos);
        if (change == "changed")
            CHECK(line.find(fmt_cells(s)) != std::string::npos);
    }
    for (const auto& [k, n] : j["counts"].items()) CHECK(counted[k] == n.get<std::size_t>());
    CHECK(text.out.find(std::to_string(j["counts"]["changed"].get<int>()) + " changed,") != std::string::npos);
    CHECK(j["first_change"] == kScaled);
    CHECK(j["shown"]["step"] == kScaled);
}

TEST_CASE("attntrace compare: bad --set and --step give one line and exit 2", "[compare][cli]") {
    struct Case {
        std::vector<std::string> args;
        std::string says;
    };
    const std::vector<Case> cases{
        {{"--set", "config.nope=1"}, "--set: config.nope=1: config.nope: expected one of the known fields"},
        {{"--set", "config.scale=maybe"}, "(with --set config.scale=maybe): config.scale: expected true, false, {\"divide_by\""},
        {{"--set", "scale"}, "--set: expected KEY=VALUE"},
        {{"--set", "config.heads=3"}, "(with --set config.heads=3): config.heads: expected a divisor of d_model"},
        {{"--set", "scale=false", "--step", "hook_nope"}, "--step: expected a step of A or B"},
    };
    for (const auto& c : cases) {
        std::vector<std::string> args{"compare", kRing};
        args.insert(args.end(), c.args.begin(), c.args.end());
        auto r = run_cli(args);
        INFO(c.says << "\n" << r.err);
        CHECK(r.status == 2);
        CHECK(r.out.empty());
        CHECK(one_line(r.err));
        CHECK(r.err.find(c.says) != std::string::npos);
    }
    auto none = run_cli({"compare", kRing});
    CHECK(none.status == 2);  // --set is required
}

TEST_CASE("the README's compare excerpt is what attntrace compare prints", "[compare][docs][readme]") {
    const std::string readme = attntrace::test::read_text(attntrace::test::source_dir() + "/README.md");
    const std::string prompt = "$ attntrace compare 003-3.1-ring-fell --set scale=false\n";
    const auto at = readme.find(prompt);
    REQUIRE(at != std::string::npos);
    const std::string excerpt = readme.substr(at + prompt.size(), readme.find("```", at) - at - prompt.size());
    auto r = run_cli({"compare", kRing, "--set", "scale=false"});
    REQUIRE(r.status == 0);
    std::istringstream lines(excerpt);
    std::size_t n = 0;
    for (std::string line; std::getline(lines, line);) {
        INFO(line);
        CHECK(r.out.find(line + "\n") != std::string::npos);
        ++n;
    }
    CHECK(n >= 4);
}

TEST_CASE("docs/compare.md shows the --json fields compare writes", "[compare][docs]") {
    const std::string doc = attntrace::test::read_text(attntrace::test::source_dir() + "/docs/compare.md");
    auto r = run_cli({"compare", kRing, "--set", "scale=false", "--json"});
    REQUIRE(r.status == 0);
    const json j = json::parse(r.out);
    for (const auto& [key, value] : j.items()) {
        INFO(key);
        CHECK(doc.find("\"" + key + "\"") != std::string::npos);
    }
    for (const auto& [key, value] : j["steps"][5].items()) {
        INFO(key);
        CHECK(doc.find("\"" + key + "\"") != std::string::npos);
    }
}

TEST_CASE("a comparison owns its two traces: it outlives the runs it was made from and can be moved", "[compare]") {
    Comparison kept;
    {
        auto r = compare("003-3.1-ring-fell", {"config.scale=false"});
        kept = std::move(r->c);
    }  // the lessons and the Compared holder are gone
    const StepChange* s = kept.find("blocks.0.attn.hook_scores_scaled");
    REQUIRE(s != nullptr);
    REQUIRE(s->a != nullptr);
    REQUIRE(s->b != nullptr);
    CHECK(s->change == Change::changed);
    CHECK(s->a == kept.a->find("blocks.0.attn.hook_scores_scaled"));
    CHECK(kept.values_a(*s)->size() == kept.values_b(*s)->size());
}

}  // namespace test_compare

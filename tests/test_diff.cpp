// attntrace diff: the library on hand-made traces (errors and where they are,
// the tolerance rule on both sides of its boundary, -inf, shapes, steps on one
// side only), then the real CLI on exported lessons, an engineer's minimal
// trace, the bad-trace corpus (tests/bad-trace/) and the commands the docs show.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "support.hpp"
#include "trace/diff.hpp"

using namespace attntrace;
using attntrace::test::CliResult;
using attntrace::test::read_text;
using attntrace::test::run_cli;
using attntrace::test::TempDir;
using attntrace::test::write_text;
using nlohmann::json;

namespace test_diff {

namespace {

// A terminal wide enough that nothing wraps: a test of what a line says reads it whole (80 columns: test_text_width).
const std::string kWide = "COLUMNS=99999";

constexpr float kInf = std::numeric_limits<float>::infinity();
const std::string kLesson = "003-3.1-ring-fell";
const std::string kPattern = "blocks.0.attn.hook_pattern";

TraceStepData step(const std::string& name, Shape shape, std::vector<float> values) {
    TraceStepData s;
    s.name = name;
    s.shape = shape;
    s.source = "computed";
    s.values = Tensor(shape);
    REQUIRE(values.size() == s.values.size());
    std::copy(values.begin(), values.end(), s.values.data.begin());
    return s;
}

TraceData trace(const std::string& file, std::vector<TraceStepData> steps) {
    TraceData t;
    t.file = file;
    t.steps = std::move(steps);
    return t;
}

// The report's one step (a copy: the report is usually a temporary).
StepDiff only_step(const DiffReport& r) {
    REQUIRE(r.steps.size() == 1);
    return r.steps[0];
}

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
}

std::string export_lesson(const TempDir& dir, const std::string& name) {
    auto r = run_cli({"export", kLesson, "-o", dir.file(name)});
    REQUIRE(r.status == 0);
    return dir.file(name);
}

json* find_step(json& doc, const std::string& name) {
    for (auto& s : doc["steps"])
        if (s["name"] == name) return &s;
    return nullptr;
}

// Exit status 2, nothing on stdout, one line on stderr "attntrace: error: ..." holding every needle.
void require_one_line_error(const CliResult& r, const std::vector<std::string>& needles) {
    INFO("stderr: " << r.err);
    INFO("stdout: " << r.out.substr(0, 400));
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(r.err.rfind("attntrace: error: ", 0) == 0);
    for (const auto& n : needles) {
        INFO("expected in the error line: " << n);
        CHECK(r.err.find(n) != std::string::npos);
    }
}

}  // namespace

// ---- the library -------------------------------------------------------------------------------

TEST_CASE("diff finds the largest absolute and relative errors, their index and both values", "[diff]") {
    // (2, 3): [1][2] is off by 0.5 on 10 (largest |a - b|), [0][1] by 0.001 on 0.001 (largest relative)
    auto a = trace("a", {step("s", {2, 3}, {1, 0.001f, 3, 4, 5, 10})});
    auto b = trace("b", {step("s", {2, 3}, {1, 0.002f, 3, 4, 5, 10.5f})});
    const StepDiff s = only_step(diff_traces(a, b, {}));
    CHECK(s.verdict == StepVerdict::diverges);
    CHECK(s.cells == 6);
    CHECK(s.beyond == 2);
    REQUIRE(s.max_abs);
    CHECK(s.max_abs->index == std::vector<std::size_t>{1, 2});
    CHECK(s.max_abs->a == 10.0f);
    CHECK(s.max_abs->b == 10.5f);
    CHECK(s.max_abs->abs == 0.5);
    REQUIRE(s.max_rel);
    CHECK(s.max_rel->index == std::vector<std::size_t>{0, 1});
    CHECK(s.max_rel->rel == Approx(0.5));  // |a - b| / max(|a|, |b|) = 0.001 / 0.002
    REQUIRE(s.first_beyond);
    CHECK(s.first_beyond->index == std::vector<std::size_t>{0, 1});
}

TEST_CASE("diff names the first divergence in A's (pipeline) order, whatever B's order", "[diff]") {
    auto a = trace("a", {step("s1", {2}, {1, 2}), step("s2", {2}, {1, 2}), step("s3", {2}, {1, 2})});
    auto b = trace("b", {step("s3", {2}, {1, 9}), step("s2", {2}, {7, 2}), step("s1", {2}, {1, 2})});
    DiffReport r = diff_traces(a, b, {});
    REQUIRE(r.steps.size() == 3);
    CHECK(r.steps[0].name == "s1");
    CHECK(r.steps[2].name == "s3");
    CHECK(r.steps[0].verdict == StepVerdict::match);
    REQUIRE(r.first_divergence);
    CHECK(r.steps[*r.first_divergence].name == "s2");
    CHECK(r.steps[*r.first_divergence].first_beyond->index == std::vector<std::size_t>{0});
    CHECK(r.steps[2].verdict == StepVerdict::diverges);  // later divergences are still reported
}

TEST_CASE("diff: -inf equals -inf, -inf against a number diverges whatever the tolerance, 0/0 is no error",
          "[diff]") {
    DiffOptions loose;
    loose.atol = 1e30;
    loose.rtol = 1e30;
    SECTION("both -inf at the same cell") {
        auto a = trace("a", {step("mask", {2, 2}, {0, -kInf, 0, 0})});
        const StepDiff s = only_step(diff_traces(a, a, {}));
        CHECK(s.verdict == StepVerdict::match);
        CHECK(s.max_abs->abs == 0);
        CHECK(s.max_rel->rel == 0);
    }
    SECTION("-inf in A, a number in B, and the other way round") {
        auto a = trace("a", {step("mask", {2, 2}, {0, -kInf, 0, 0})});
        auto b = trace("b", {step("mask", {2, 2}, {0, 0.5f, 0, -kInf})});
        const StepDiff s = only_step(diff_traces(a, b, loose));
        CHECK(s.verdict == StepVerdict::diverges);
        CHECK(s.beyond == 2);
        CHECK(s.max_abs->index == std::vector<std::size_t>{0, 1});
        CHECK(std::isinf(s.max_abs->abs));
        CHECK(std::isinf(s.max_rel->rel));
        CHECK(s.max_abs->a == -kInf);
        CHECK(s.max_abs->b == 0.5f);
        CHECK(cell_diverges(-kInf, 0.5f, 1e30, 1e30));
        CHECK(cell_diverges(0.5f, -kInf, 1e30, 1e30));
        CHECK_FALSE(cell_diverges(-kInf, -kInf, 0, 0));
    }
    SECTION("zeros") {
        auto a = trace("a", {step("z", {2}, {0, 0})});
        auto b = trace("b", {step("z", {2}, {0, 1e-6f})});
        const StepDiff s = only_step(diff_traces(a, b, {}));
        CHECK(s.verdict == StepVerdict::match);  // 1e-6 <= atol
        CHECK(s.max_rel->index == std::vector<std::size_t>{1});
        CHECK(s.max_rel->rel == 1.0);  // against zero, any difference is 100 %
    }
}

TEST_CASE("diff reports a shape mismatch as a divergence with both shapes", "[diff]") {
    auto a = trace("a", {step("q", {3, 4}, std::vector<float>(12, 1)), step("z", {2}, {1, 2})});
    auto b = trace("b", {step("q", {4, 3}, std::vector<float>(12, 1)), step("z", {2}, {1, 2})});
    DiffReport r = diff_traces(a, b, {});
    REQUIRE(r.first_divergence == std::optional<std::size_t>{0});
    const StepDiff& s = r.steps[0];
    CHECK(s.verdict == StepVerdict::shape_mismatch);
    CHECK(s.diverges());
    CHECK(s.shape_a == Shape{3, 4});
    CHECK(s.shape_b == Shape{4, 3});
    CHECK_FALSE(s.max_abs);
    CHECK(r.steps[1].verdict == StepVerdict::match);
}

TEST_CASE("diff's tolerance: |a - b| = atol + rtol·|a| passes, one float more diverges, A is the reference",
          "[diff]") {
    const float above = std::nextafter(1.5f, 2.0f);
    CHECK_FALSE(cell_diverges(1.0f, 1.5f, 0.5, 0));  // exactly atol
    CHECK(cell_diverges(1.0f, above, 0.5, 0));
    CHECK_FALSE(cell_diverges(2.0f, 2.5f, 0, 0.25));  // exactly rtol·|a|
    CHECK(cell_diverges(2.0f, std::nextafter(2.5f, 3.0f), 0, 0.25));
    // rtol scales |a|, not |b|: swapping the traces can change the verdict, as in numpy's allclose
    CHECK(cell_diverges(2.0f, 2.5f, 0, 0.2));
    CHECK_FALSE(cell_diverges(2.5f, 2.0f, 0, 0.2));

    DiffOptions o;
    o.atol = 0.5;
    o.rtol = 0;
    auto a = trace("a", {step("s", {2}, {1, 1})});
    CHECK(only_step(diff_traces(a, trace("b", {step("s", {2}, {1.5f, 0.5f})}), o)).verdict == StepVerdict::match);
    const StepDiff s = only_step(diff_traces(a, trace("b", {step("s", {2}, {1.5f, above})}), o));
    CHECK(s.verdict == StepVerdict::diverges);
    CHECK(s.beyond == 1);
    CHECK(s.first_beyond->index == std::vector<std::size_t>{1});
}

TEST_CASE("diff lists steps on one side only, skips summaries, and --step narrows everything", "[diff]") {
    auto a = trace("a", {step("blocks.0.attn.hook_q", {1}, {1}), step("blocks.0.attn.hook_pattern", {1}, {1}),
                         step("blocks.0.attn.hook_z", {1}, {1}), step("blocks.0.hook_attn_out", {1}, {1})});
    auto b = trace("b", {step("blocks.0.attn.hook_z", {1}, {1}), step("blocks.0.attn.hook_pattern", {1}, {5}),
                         step("mine.extra", {1}, {1})});
    b.steps[1].recorded = "summary";
    b.steps[1].values = Tensor();
    DiffReport r = diff_traces(a, b, {});
    CHECK(r.only_a == std::vector<std::string>{"blocks.0.attn.hook_q", "blocks.0.hook_attn_out"});
    CHECK(r.only_b == std::vector<std::string>{"mine.extra"});
    REQUIRE(r.steps.size() == 2);
    CHECK(r.steps[0].verdict == StepVerdict::not_comparable);
    CHECK(r.steps[0].note.find("B holds a summary") != std::string::npos);
    CHECK(r.compared() == 1);
    CHECK_FALSE(r.first_divergence);  // a summary is no divergence, a step on one side neither

    DiffOptions o;
    o.steps = {"blocks.0.attn.*"};
    r = diff_traces(a, b, o);
    CHECK(r.only_a == std::vector<std::string>{"blocks.0.attn.hook_q"});
    CHECK(r.only_b.empty());
    CHECK(r.steps.size() == 2);
    o.steps = {"hook_z"};
    CHECK(diff_traces(a, b, o).steps.size() == 1);
}

// ---- the CLI -----------------------------------------------------------------------------------

TEST_CASE("diff of a lesson exported twice: exit 0, every step matches", "[diff]") {
    TempDir dir;
    auto r = run_cli({"diff", export_lesson(dir, "a.json"), export_lesson(dir, "b.json")});
    INFO(r.out << r.err);
    CHECK(r.status == 0);
    CHECK(r.err.empty());
    CHECK(r.out.find("DIVERGES") == std::string::npos);
    CHECK(lines_of(r.out).back().rfind("all 15 compared steps match", 0) == 0);
}

TEST_CASE("diff names the first diverging step and its cell, and --atol above the error lets it pass", "[diff]") {
    TempDir dir;
    const std::string a = export_lesson(dir, "a.json");
    json doc = json::parse(read_text(a));
    json* pattern = find_step(doc, kPattern);  // a middle step: 14 of 15
    REQUIRE(pattern);
    (*pattern)["values"][0][1][2] = (*pattern)["values"][0][1][2].get<float>() + 0.01f;
    const std::string b = dir.file("b.json");
    write_text(b, doc.dump(1));

    auto r = run_cli({"diff", a, b}, {kWide});
    INFO(r.out << r.err);
    CHECK(r.status == 1);
    CHECK(r.err.empty());
    auto lines = lines_of(r.out);
    CHECK(lines.back().rfind("first divergence: " + kPattern + " at [0,1,2]: A 0.50648", 0) == 0);
    CHECK(lines.back().find("(1 of 9 cells beyond tolerance)") != std::string::npos);
    auto row = std::find_if(lines.begin(), lines.end(), [](const std::string& l) { return l.rfind(kPattern, 0) == 0; });
    REQUIRE(row != lines.end());
    CHECK(row->find("[0,1,2]") != std::string::npos);
    CHECK(row->find("DIVERGES (1 of 9 cells)") != std::string::npos);
    auto matching = [](const std::string& l) { return l.find("  match") != std::string::npos; };
    CHECK(std::count_if(lines.begin(), lines.end(), matching) == 14);

    CHECK(run_cli({"diff", a, b, "--atol", "0.02"}).status == 0);
    CHECK(run_cli({"diff", a, b, "--rtol", "0.05"}).status == 0);  // 0.01 <= 1e-4 + 0.05·0.5065
    CHECK(run_cli({"diff", a, b, "--step", "hook_z", "--step", "blocks.0.attn.hook_q"}).status == 0);

    SECTION("--json") {
        auto j = run_cli({"diff", a, b, "--json"});
        CHECK(j.status == 1);
        json rep = json::parse(j.out);
        CHECK(rep["format"] == "attntrace-diff");
        CHECK(rep["version"] == 1);
        CHECK(rep["first_divergence"]["step"] == kPattern);
        CHECK(rep["first_divergence"]["at"] == json::array({0, 1, 2}));
        CHECK(rep["steps"].size() == 15);
        for (const auto& s : rep["steps"]) CHECK(s["verdict"] == (s["name"] == kPattern ? "diverges" : "match"));
    }
}

TEST_CASE("diff reads an engineer's minimal trace: format, version, a couple of steps with name, shape, values",
          "[diff]") {
    TempDir dir;
    const std::string full = export_lesson(dir, "ours.json");
    json doc = json::parse(read_text(full));
    json mine = {{"format", "attntrace-trace"}, {"version", 2}, {"steps", json::array()}};
    for (const char* name : {"blocks.0.attn.hook_q", "blocks.0.attn.hook_pattern"})
        mine["steps"].push_back({{"name", name}, {"shape", (*find_step(doc, name))["shape"]},
                                 {"values", (*find_step(doc, name))["values"]}});
    write_text(dir.file("mine.json"), mine.dump());

    auto r = run_cli({"diff", full, dir.file("mine.json")}, {kWide});
    INFO(r.out << r.err);
    CHECK(r.status == 0);
    CHECK(r.out.find("only in A (13): ") != std::string::npos);
    CHECK(lines_of(r.out).back().rfind("all 2 compared steps match", 0) == 0);
    // the other way round: the minimal trace as the reference
    r = run_cli({"diff", dir.file("mine.json"), full}, {kWide});
    CHECK(r.status == 0);
    CHECK(r.out.find("only in B (13): ") != std::string::npos);

    SECTION("Q written as (T, C), heads side by side, instead of (T, NH, hs)") {
        json& q = mine["steps"][0];
        q["shape"] = {3, 4};
        json rows = json::array();
        for (const auto& row : q["values"]) rows.push_back(row[0]);  // one head: (3, 1, 4) -> (3, 4)
        q["values"] = rows;
        write_text(dir.file("mine.json"), mine.dump());
        r = run_cli({"diff", full, dir.file("mine.json")}, {kWide});
        CHECK(r.status == 1);
        CHECK(r.out.find("3x1x4 vs 3x4") != std::string::npos);
        CHECK(lines_of(r.out).back().rfind("first divergence: blocks.0.attn.hook_q: A's shape is 3x1x4, B's 3x4 "
                                           "(the same 12 cells in another layout: B's must be 3x1x4",
                                           0) == 0);
    }
}

TEST_CASE("diff usage errors: bad tolerances, a --step naming nothing, no step in common", "[diff]") {
    TempDir dir;
    const std::string a = export_lesson(dir, "a.json");
    require_one_line_error(run_cli({"diff", a, a, "--atol", "-1"}), {"--atol", "finite number >= 0"});
    require_one_line_error(run_cli({"diff", a, a, "--atol", "nan"}), {"--atol"});
    require_one_line_error(run_cli({"diff", a, a, "--rtol", "inf"}), {"--rtol"});
    require_one_line_error(run_cli({"diff", a, a, "--rtol", "x"}), {"--rtol"});
    require_one_line_error(run_cli({"diff", a, a, "--step", "hook_nope"}), {"--step", "hook_nope"});
    require_one_line_error(run_cli({"diff", a}), {"B", "required"});
    require_one_line_error(run_cli({"diff", a, dir.file("missing.json")}), {dir.file("missing.json")});
    write_text(dir.file("other.json"),
               R"({"format": "attntrace-trace", "version": 2, "steps": [{"name": "q", "shape": [1], "values": [1]}]})");
    require_one_line_error(run_cli({"diff", a, dir.file("other.json")}), {a, dir.file("other.json"), "none in common"});
    auto summary = dir.file("summary.json");
    REQUIRE(run_cli({"export", kLesson, "--trace", "summary", "-o", summary}).status == 0);
    require_one_line_error(run_cli({"diff", a, summary, "--step", "hook_pattern"}), {"summary"});
}

TEST_CASE("the bad-trace corpus: diff refuses each file, as A and as B, with one line naming the file and field",
          "[diff][bad-input]") {
    const std::string dir = std::string(ATTNTRACE_TESTS_DIR) + "/bad-trace";
    json cases = json::parse(read_text(dir + "/cases.json"));
    std::size_t files = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir))
        if (e.path().extension() == ".json" && e.path().filename() != "cases.json") {
            ++files;
            INFO("file without an entry in cases.json: " << e.path().filename());
            CHECK(cases.contains(e.path().filename().string()));
        }
    CHECK(files == cases.size());
    CHECK(files >= 12);
    TempDir tmp;
    const std::string good = export_lesson(tmp, "good.json");
    for (auto it = cases.begin(); it != cases.end(); ++it) {
        const std::string path = dir + "/" + it.key();
        auto needles = it.value().get<std::vector<std::string>>();
        needles.push_back(path);
        INFO(it.key());
        require_one_line_error(run_cli({"diff", path, good}), needles);
        require_one_line_error(run_cli({"diff", good, path}), needles);
        require_one_line_error(run_cli({"diff", good, path, "--json"}), needles);
    }
}

// ---- the docs ----------------------------------------------------------------------------------

// The commands README.md and docs/diffing.md show, with the exit status each gives.
TEST_CASE("the diff commands in README.md and docs/diffing.md run as shown", "[diff][docs]") {
    const std::string src = attntrace::test::source_dir();
    const std::vector<std::pair<std::string, int>> commands = {
        {"attntrace export docs/examples/mine-lesson.json -o ours.json", 0},
        {"attntrace diff ours.json docs/examples/mine.json", 1},
        {"attntrace diff ours.json docs/examples/mine.json --step hook_q --step hook_scores_raw", 0},
    };
    const std::string readme = read_text(src + "/README.md"), doc = read_text(src + "/docs/diffing.md");
    TempDir dir;
    for (const auto& [command, status] : commands) {
        INFO(command);
        CHECK(readme.find("\n" + command + "\n") != std::string::npos);
        CHECK(doc.find("\n" + command + "\n") != std::string::npos);
        auto r = attntrace::test::run_shown(command, dir);
        INFO(r.out << r.err);
        CHECK(r.status == status);
    }
}

TEST_CASE("docs/diffing.md and README.md show the whole example script and the output diff really gives",
          "[diff][docs]") {
    const std::string src = attntrace::test::source_dir();
    const std::string doc = read_text(src + "/docs/diffing.md");
    CHECK(doc.find(read_text(src + "/docs/examples/my_attention.py")) != std::string::npos);

    TempDir dir;
    REQUIRE(run_cli({"export", src + "/docs/examples/mine-lesson.json", "-o", dir.file("ours.json")}).status == 0);
    auto r = run_cli({"diff", dir.file("ours.json"), src + "/docs/examples/mine.json"}, {kWide});
    REQUIRE(r.status == 1);
    // Each step line's name and verdict, and the last line up to the cell: the same in the doc's sample.
    // (The digits may differ in the last place between the SIMD and the scalar build.)
    auto key_lines = [](const std::vector<std::string>& lines) {
        std::vector<std::string> out;
        for (const auto& l : lines) {
            if (l.rfind("blocks.0.", 0) == 0)  // the step's name and the verdict, the last column
                out.push_back(l.substr(0, l.find(' ')) + " " + l.substr(l.rfind("  ") + 2));
            if (l.rfind("first divergence: ", 0) == 0) out.push_back(l.substr(0, l.find(']') + 1));
        }
        return out;
    };
    const auto want = key_lines(lines_of(r.out));
    REQUIRE(want.size() == 9);
    const std::string marker = "$ attntrace diff ours.json docs/examples/mine.json\n";
    auto at = doc.find(marker);
    REQUIRE(at != std::string::npos);
    const std::string sample = doc.substr(at + marker.size(), doc.find("```", at) - at - marker.size());
    CHECK(key_lines(lines_of(sample)) == want);
    CHECK(read_text(src + "/README.md").find("\n" + want.back()) != std::string::npos);
}

}  // namespace test_diff

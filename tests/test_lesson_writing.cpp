// Writing a lesson: what a new user writes first and gets wrong. Naming a
// step (trace/step_lookup.hpp): a claim may name a step by the end of its
// name when only one step ends so; an unknown name is quoted whole in the
// error with the nearest names; a short name several steps end with lists
// them. A trace given where a lesson is expected says so; a private lesson
// may leave out its source. (The bad-input corpus holds the one-line errors
// through the CLI.)
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "evaluate/evaluate.hpp"
#include "support.hpp"
#include "trace/step_lookup.hpp"

using namespace attntrace;
using attntrace::test::read_text;
using nlohmann::json;

namespace test_lesson_writing {

namespace {

json lesson_doc(const char* file) { return json::parse(read_text(attntrace::test::lessons_dir() + "/" + file)); }

std::string error_of(const json& doc) { return attntrace::test::lesson_refusal(doc.dump(), "lesson.json"); }

}  // namespace

TEST_CASE("closest_steps: a typo finds its step, a far name finds nothing, the nearest come first", "[steps]") {
    std::vector<std::string> names;
    for (const StepDef& d : default_catalogue().steps()) names.push_back(d.name);
    CHECK(closest_steps("hook_patern", names) == std::vector<std::string>{"blocks.0.attn.hook_pattern"});
    CHECK(closest_steps("blocks.0.attn.hook_patern", names).front() == "blocks.0.attn.hook_pattern");
    CHECK(closest_steps("blocks.0.attn.hook_q", names).front() == "blocks.0.attn.hook_q");
    CHECK(closest_steps("completely_unrelated_words", names).empty());
    CHECK(closest_steps("", names).empty());
    CHECK(closest_steps(std::string(5000, 'x'), names).empty());  // too long to compare: no suggestion, no delay
    const auto three = closest_steps("hook_k", names);
    CHECK(three.size() <= 3);
    REQUIRE(!three.empty());
    CHECK(three.front() == "blocks.0.attn.hook_k");  // distance 0 on the last part
}

TEST_CASE("a claim may name its step by the end of its name, and is then checked as with the whole name", "[steps]") {
    json whole = lesson_doc("003-3.1-ring-fell.json");
    json short_names = whole;
    for (auto& c : short_names["claims"]) {
        const std::string s = c["step"];
        c["step"] = s.substr(s.rfind('.') + 1);  // "hook_pattern"
    }
    const auto a = evaluate(parse_lesson(whole.dump(), "a.json"));
    const auto b = evaluate(parse_lesson(short_names.dump(), "b.json"));
    REQUIRE(a->report.results.size() == b->report.results.size());
    for (std::size_t i = 0; i < a->report.results.size(); ++i) {
        INFO(i);
        CHECK(b->lesson.claims[i].step == a->lesson.claims[i].step);  // kept as the whole name
        CHECK(b->report.results[i].verdict == a->report.results[i].verdict);
        CHECK(b->report.results[i].computed.data == a->report.results[i].computed.data);
    }
}

TEST_CASE("a short name that several steps end with is refused, listing them, an unknown one is quoted whole", "[steps]") {
    json doc = lesson_doc("003-stacked-blocks.json");  // two blocks: blocks.0.attn.hook_pattern and blocks.1's
    doc["claims"][2]["step"] = "hook_pattern";
    std::string e = error_of(doc);
    INFO(e);
    CHECK(e.find("claims[2].step") != std::string::npos);
    CHECK(e.find("\"hook_pattern\", which names 2 steps (blocks.0.attn.hook_pattern, blocks.1.attn.hook_pattern)") !=
          std::string::npos);
    doc["claims"][2]["step"] = "1.attn.hook_pattern";  // the end of one name: enough
    CHECK(error_of(doc) == "(accepted)");
    // A long misspelt name is quoted whole, not cut after 21 characters.
    doc["claims"][2]["step"] = "blocks.1.attn.softmax.hook_row_summ";
    e = error_of(doc);
    INFO(e);
    CHECK(e.find("\"blocks.1.attn.softmax.hook_row_summ\"") != std::string::npos);
    CHECK(e.find("closest: blocks.1.attn.softmax.hook_row_sum") != std::string::npos);
    CHECK(std::count(e.begin(), e.end(), '\n') == 0);
}

TEST_CASE("explain suggests the nearest steps for a name it does not know", "[steps][explain]") {
    const auto r = attntrace::test::run_cli({"explain", "003-3.1-ring-fell", "hook_patern[0,0,0]"});
    CHECK(r.status == 2);
    CHECK(r.err.find("\"hook_patern\" (closest: blocks.0.attn.hook_pattern)") != std::string::npos);
}

TEST_CASE("a trace given where a lesson is expected is named as a trace, in one line", "[steps][cli]") {
    attntrace::test::TempDir dir;
    const std::string trace = dir.file("t.json");
    REQUIRE(attntrace::test::run_cli({"export", "003-3.1-ring-fell", "-o", trace}).status == 0);
    for (const char* command : {"run", "check"}) {
        const auto r = attntrace::test::run_cli({command, trace});
        INFO(r.err);
        CHECK(r.status == 2);
        CHECK(r.err.find(trace + ": format: expected \"attntrace-lesson\"") != std::string::npos);
        CHECK(r.err.find("this is a trace (what export writes), not a lesson") != std::string::npos);
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    }
}

TEST_CASE("a private lesson may leave out its source: it runs, and run and list print no empty source line", "[steps][cli]") {
    json doc = lesson_doc("003-3.1-ring-fell.json");
    doc.erase("source");
    attntrace::test::TempDir dir;
    attntrace::test::write_text(dir.file("private.json"), doc.dump());
    const auto r = attntrace::test::run_cli({"--color", "never", "check", dir.file("private.json")});
    INFO(r.err);
    CHECK(r.status == 0);
    const auto run = attntrace::test::run_cli({"--color", "never", "run", dir.file("private.json")});
    CHECK(run.status == 0);
    CHECK(run.out.find("source:") == std::string::npos);
    const auto list = attntrace::test::run_cli({"list"}, {"ATTNTRACE_LESSONS=" + dir.path()});
    CHECK(list.out.find("(no source: a private lesson)") != std::string::npos);
    // Written, it is still checked whole.
    doc["source"] = {{"title", "no document"}};
    CHECK(error_of(doc).find("source.document") != std::string::npos);
}

TEST_CASE("a disagreeing claim's right values are printed at the claim's own precision", "[steps][cli]") {
    // conv-weight-layout-out-in's claim Q-read-as-x-W prints Q to 0 decimals and disagrees.
    const auto r = attntrace::test::run_cli({"--color", "never", "run", "conv-weight-layout-out-in", "--steps", "hook_q"});
    INFO(r.out);
    CHECK(r.status == 0);
    CHECK(r.out.find("right values: 1 0 | 2 1 | 3 1\n") != std::string::npos);
}

}  // namespace test_lesson_writing

// Finding a step: `run --steps` takes a step's number, a stage, a name or
// glob, or a piece of a name, and an unknown one gets the nearest names;
// `attntrace steps LESSON` lists what can be named, numbered as run numbers it.
#include <catch2/catch.hpp>

#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "evaluate/evaluate.hpp"
#include "support.hpp"
#include "trace/step_lookup.hpp"

using namespace attntrace;
using attntrace::test::run_cli;

namespace {

std::vector<std::string> picked(const Trace& t, std::vector<std::string> patterns) {
    const StepSelection s = select_steps(t, patterns);
    INFO(s.unknown);
    CHECK(s.unknown.empty());
    return s.names;
}

// The "── N/M name" headers of run's text output.
std::vector<std::string> shown(const std::string& out) {
    std::vector<std::string> names;
    const std::regex header("── [0-9]+/[0-9]+ ([^ ]+) ");
    for (std::sregex_iterator it(out.begin(), out.end(), header), end; it != end; ++it) names.push_back((*it)[1]);
    return names;
}

}  // namespace

TEST_CASE("select_steps: numbers, stages, names, globs and pieces of names, in the trace's order", "[steps]") {
    const auto e = evaluate(read_lesson(attntrace::test::lessons_dir() + "/003-3.1-ring-fell.json"));
    const Trace& t = e->exact;
    REQUIRE(t.steps.size() == 15);
    CHECK(picked(t, {"14"}) == std::vector<std::string>{"blocks.0.attn.hook_pattern"});
    CHECK(picked(t, {"1"}) == std::vector<std::string>{"blocks.0.hook_resid_pre"});
    // a stage: the softmax's internals and its output, hook_pattern included
    CHECK(picked(t, {"softmax"}) ==
          std::vector<std::string>{"blocks.0.attn.softmax.hook_row_max", "blocks.0.attn.softmax.hook_shifted",
                                   "blocks.0.attn.softmax.hook_exp", "blocks.0.attn.softmax.hook_row_sum",
                                   "blocks.0.attn.hook_pattern"});
    CHECK(picked(t, {"hook_pattern"}) == std::vector<std::string>{"blocks.0.attn.hook_pattern"});
    // a glob ending in a stage's name: its steps by name and the stage's output, hook_pattern
    CHECK(picked(t, {"blocks.0.attn.softmax.*"}) == picked(t, {"softmax"}));
    CHECK(picked(t, {"softmax.*"}) == picked(t, {"softmax"}));
    // the part before the stage still has to match
    CHECK(attntrace::select_steps(t, {"blocks.1.attn.softmax.*"}).unknown == "blocks.1.attn.softmax.*");
    CHECK(picked(t, {"pattern"}) == std::vector<std::string>{"blocks.0.attn.hook_pattern"});  // a piece of a name
    // a stage's name wins over a piece of names: "scores" is the stage (S = Q·Kᵀ), "score" the three names
    CHECK(picked(t, {"scores"}) == std::vector<std::string>{"blocks.0.attn.hook_scores_raw"});
    CHECK(picked(t, {"score"}).size() == 3);
    // several patterns: the union, in the trace's order, each once
    CHECK(picked(t, {"14", "2", "hook_q"}) == std::vector<std::string>{"blocks.0.attn.hook_q", "blocks.0.attn.hook_pattern"});
    // nothing picked: the first such pattern, with the nearest names
    for (const char* bad : {"0", "16", "99", "patern", "zzzz"}) {
        INFO(bad);
        const StepSelection s = select_steps(t, {"hook_q", bad});
        CHECK(s.unknown == bad);
    }
    CHECK(select_steps(t, {"patern"}).closest == std::vector<std::string>{"blocks.0.attn.hook_pattern"});
}

TEST_CASE("attntrace steps lists what run numbers and shows, and run --steps N shows step N", "[steps][cli]") {
    const auto list = run_cli({"steps", "003-3.1-ring-fell"});
    REQUIRE(list.status == 0);
    CHECK(list.out.find("15 steps, stages embed → mix") != std::string::npos);
    CHECK(list.out.find("blocks.0.attn.hook_pattern          softmax  1x3x3        head x query x key") != std::string::npos);
    const auto all = run_cli({"--color", "never", "run", "003-3.1-ring-fell"});
    const std::vector<std::string> order = shown(all.out);
    REQUIRE(order.size() == 15);
    for (std::size_t k = 0; k < order.size(); ++k) {
        INFO(order[k]);
        const std::regex line(" " + std::to_string(k + 1) + "  " + order[k] + " ");
        CHECK(std::regex_search(list.out, line));  // the same number in both
        const auto one = run_cli({"--color", "never", "run", "003-3.1-ring-fell", "--steps", std::to_string(k + 1)});
        CHECK(shown(one.out) == std::vector<std::string>{order[k]});
    }
    const auto bad = run_cli({"run", "003-3.1-ring-fell", "--steps", "patern"});
    CHECK(bad.status == 2);
    CHECK(bad.err.find("found \"patern\" (closest: blocks.0.attn.hook_pattern)") != std::string::npos);
    CHECK(run_cli({"steps", "no-such-lesson"}).status == 2);
}

TEST_CASE("the weights' formula names the row sum s_i, not a Σ_i that reads as a column sum", "[steps][cli]") {
    const auto r = run_cli({"--color", "never", "run", "003-3.1-ring-fell", "--steps", "softmax"});
    CHECK(r.out.find("A[i,j] = e[i,j] / s_i") != std::string::npos);
    CHECK(r.out.find("s_i = Σ_j e[i,j]") != std::string::npos);
    CHECK(r.out.find("Σ_i") == std::string::npos);
}

TEST_CASE("every command that takes a step pattern answers an unknown one with the closest names", "[steps][cli]") {
    const auto trace = run_cli({"run", "003-3.1-ring-fell", "--trace", "hook_patern"});
    CHECK(trace.status == 2);
    CHECK(trace.err.find("\"hook_patern\" (closest: blocks.0.attn.hook_pattern)") != std::string::npos);
    const auto compare = run_cli({"compare", "003-3.1-ring-fell", "--set", "scale=false", "--step", "hook_patern"});
    CHECK(compare.status == 2);
    CHECK(compare.err.find("\"hook_patern\" (closest: blocks.0.attn.hook_pattern)") != std::string::npos);
    attntrace::test::TempDir dir;
    REQUIRE(run_cli({"export", "003-3.1-ring-fell", "-o", dir.file("a.json")}).status == 0);
    const auto diff = run_cli({"diff", dir.file("a.json"), dir.file("a.json"), "--step", "hook_patern"});
    CHECK(diff.status == 2);
    CHECK(diff.err.find("\"hook_patern\" (closest: blocks.0.attn.hook_pattern)") != std::string::npos);
}

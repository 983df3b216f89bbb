// Finding a step: `run --steps` takes a step's number, a stage, a name or
// glob, or a piece of a name, and an unknown one gets the nearest names;
// `attntrace steps LESSON` lists what can be named, numbered as run numbers it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cctype>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "evaluate/evaluate.hpp"
#include "support.hpp"
#include "trace/step_lookup.hpp"

using namespace attntrace;
using attntrace::test::run_cli;

namespace test_step_selection {

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

// The names whose last part, "hook_" left out, contains `piece`, in the trace's order: what a piece picks.
std::vector<std::string> last_parts_containing(const Trace& t, const std::string& piece) {
    std::vector<std::string> names;
    for (const Step& s : t.steps) {
        std::string last = s.name.substr(s.name.rfind('.') + 1);
        if (last.rfind("hook_", 0) == 0) last = last.substr(5);
        if (last.find(piece) != std::string::npos) names.push_back(s.name);
    }
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
    CHECK(picked(t, {"pattern"}) == std::vector<std::string>{"blocks.0.attn.hook_pattern"});  // a last part, hook_ left out
    // "scores" is a stage (S = Q·Kᵀ, its output the raw scores) and a piece of the scaled and masked scores'
    // names: it picks them all, as "score" does
    CHECK(picked(t, {"scores"}) == last_parts_containing(t, "scores"));
    CHECK(picked(t, {"score"}) == last_parts_containing(t, "score"));
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

TEST_CASE("select_steps: a one-letter name is a last part, not a letter of every name", "[steps]") {
    const auto e = evaluate(read_lesson(attntrace::test::lessons_dir() + "/003-3.1-ring-fell.json"));
    const Trace& t = e->exact;
    // "k" is in "blocks", which every step of a block has; as a last part it is the keys alone
    CHECK(picked(t, {"k"}) == std::vector<std::string>{"blocks.0.attn.hook_k"});
    CHECK(picked(t, {"hook_k"}) == picked(t, {"k"}));
    CHECK(picked(t, {"q", "v"}) == std::vector<std::string>{"blocks.0.attn.hook_q", "blocks.0.attn.hook_v"});
    // a last part of two steps picks both, and "v" is no piece of "hook_var"
    const auto l = evaluate(read_lesson(attntrace::test::lessons_dir() + "/003-3.4-add-norm.json"));
    const std::vector<std::string> var = picked(l->exact, {"var"});
    REQUIRE(var.size() == 2);
    for (const std::string& name : var) CHECK(name.substr(name.size() - 9) == ".hook_var");
    // this lesson records no V: "v" names nothing here, rather than the variances
    REQUIRE(l->exact.find("blocks.0.attn.hook_v") == nullptr);
    CHECK(select_steps(l->exact, {"v"}).unknown == "v");
    // whole dotted parts still pick their steps: a block's LayerNorm, its attention
    for (const std::string& name : picked(l->exact, {"ln1"})) CHECK(name.find(".ln1.") != std::string::npos);
    CHECK(picked(l->exact, {"ln1"}).size() >= 4);  // mean, variance, scale, normalized at least
}

TEST_CASE("select_steps: a word of the steps' titles, when no name or stage says it", "[steps]") {
    const auto e = evaluate(read_lesson(attntrace::test::lessons_dir() + "/003-3.1-ring-fell.json"));
    const Trace& t = e->exact;
    // The steps whose title has the word, from the titles themselves (any case)
    auto titled = [&](const std::string& word) {
        std::vector<std::string> names;
        for (const Step& s : t.steps) {
            std::string title = s.def->title;
            for (char& c : title) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
            if (std::regex_search(title, std::regex("\\b" + word + "\\b"))) names.push_back(s.name);
        }
        return names;
    };
    REQUIRE(titled("weights") == std::vector<std::string>{"blocks.0.attn.hook_pattern"});
    CHECK(picked(t, {"weights"}) == titled("weights"));
    CHECK(picked(t, {"Weights"}) == titled("weights"));
    CHECK(picked(t, {"weight"}) == titled("weights"));  // a plural's s optional
    REQUIRE(!titled("attention").empty());
    CHECK(picked(t, {"attention"}) == titled("attention"));
}

TEST_CASE("select_steps: a number outside the steps says their range, a misspelling gets the nearest stage", "[steps]") {
    const auto e = evaluate(read_lesson(attntrace::test::lessons_dir() + "/003-3.1-ring-fell.json"));
    const Trace& t = e->exact;
    const std::size_t n = t.steps.size();
    for (const std::string bad : {std::string("0"), std::to_string(n + 1), std::string("99")}) {
        INFO(bad);
        const StepSelection s = select_steps(t, {bad});
        CHECK(s.unknown == bad);
        CHECK(s.number);
        CHECK(s.closest.empty());  // no hook_q for "99"
        CHECK(selection_found(s) == "\"" + bad + "\" (steps are numbered 1 to " + std::to_string(n) + ")");
    }
    CHECK_FALSE(select_steps(t, {"patern"}).number);
    CHECK(select_steps(t, {"softmx"}).closest == std::vector<std::string>{"softmax"});
    CHECK(picked(t, {std::to_string(n)}).size() == 1);
}

TEST_CASE("run --steps k shows the keys alone, and a number past the end says the range in one line", "[steps][cli]") {
    const auto k = run_cli({"--color", "never", "run", "003-3.1-ring-fell", "--steps", "k"});
    REQUIRE(k.status == 0);
    CHECK(shown(k.out) == std::vector<std::string>{"blocks.0.attn.hook_k"});
    const auto all = run_cli({"--color", "never", "run", "003-3.1-ring-fell"});
    const std::size_t n = shown(all.out).size();
    const auto scores = run_cli({"--color", "never", "run", "003-3.1-ring-fell", "--steps", "scores"});
    CHECK(shown(scores.out).size() >= 3);  // raw, scaled, masked
    const auto weights = run_cli({"--color", "never", "run", "003-3.1-ring-fell", "--steps", "weights"});
    CHECK(shown(weights.out) == std::vector<std::string>{"blocks.0.attn.hook_pattern"});
    const auto far = run_cli({"run", "003-3.1-ring-fell", "--steps", "99"});
    CHECK(far.status == 2);
    CHECK(far.out.empty());
    CHECK(std::count(far.err.begin(), far.err.end(), '\n') == 1);
    CHECK(far.err.find("--steps: expected") != std::string::npos);
    CHECK(far.err.find("found \"99\" (steps are numbered 1 to " + std::to_string(n) + ")") != std::string::npos);
    // --step, as compare and diff spell it, is the same option, not a parser's refusal
    const auto one = run_cli({"--color", "never", "run", "003-3.1-ring-fell", "--step", "k"});
    CHECK(one.status == 0);
    CHECK(shown(one.out) == shown(k.out));
    // explain takes its step inside the cell: --step there is refused in the one line, naming the flag
    const auto explain = run_cli({"explain", "003-3.1-ring-fell", "--step", "hook_pattern"});
    CHECK(explain.status == 2);
    CHECK(std::count(explain.err.begin(), explain.err.end(), '\n') == 1);
    CHECK(explain.err.find("--step: expected the step inside the cell") != std::string::npos);
    CHECK(explain.err.find("found \"--step hook_pattern\"") != std::string::npos);
    const auto typo = run_cli({"run", "003-3.1-ring-fell", "--steps", "softmx"});
    CHECK(typo.status == 2);
    CHECK(typo.err.find("found \"softmx\" (closest: softmax)") != std::string::npos);
}

TEST_CASE("compare's and diff's --step name a step as run --steps does", "[steps][cli]") {
    const auto compare = run_cli({"--color", "never", "compare", "003-3.1-ring-fell", "--set", "scale=false", "--step", "k"});
    REQUIRE(compare.status == 0);
    CHECK(compare.out.find("blocks.0.attn.hook_k") != std::string::npos);
    const auto far = run_cli({"compare", "003-3.1-ring-fell", "--set", "scale=false", "--step", "99"});
    CHECK(far.status == 2);
    CHECK(far.err.find("--step: expected") != std::string::npos);
    CHECK(far.err.find("(steps are numbered 1 to ") != std::string::npos);
    attntrace::test::TempDir dir;
    REQUIRE(run_cli({"export", "003-3.1-ring-fell", "-o", dir.file("a.json")}).status == 0);
    const auto diff = run_cli({"diff", dir.file("a.json"), dir.file("a.json"), "--step", "k", "--json"});
    REQUIRE(diff.status == 0);
    CHECK(diff.out.find("\"blocks.0.attn.hook_k\"") != std::string::npos);
    CHECK(diff.out.find("\"blocks.0.attn.hook_q\"") == std::string::npos);
    CHECK(diff.out.find("\"blocks.0.hook_resid_pre\"") == std::string::npos);
}

TEST_CASE("attntrace steps lists what run numbers and shows, and run --steps N shows step N", "[steps][cli]") {
    const auto list = run_cli({"steps", "003-3.1-ring-fell"});
    REQUIRE(list.status == 0);
    CHECK(list.out.find("15 steps, stages embed → mix") != std::string::npos);
    CHECK(list.out.find("blocks.0.attn.hook_pattern          softmax  1x3x3  head x query x key") != std::string::npos);
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
    CHECK(bad.err.find("--steps: expected") != std::string::npos);
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

}  // namespace test_step_selection

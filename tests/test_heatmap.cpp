// Heatmaps and elision in `attntrace run`: colour only when asked or on a
// terminal, shading otherwise, numpy-like elision that fits the width.
#include <catch2/catch.hpp>

#include <sstream>

#include "render/heatmap.hpp"
#include "render/matrix.hpp"
#include "support.hpp"

using attntrace::test::run_cli;

namespace {
bool has_escape(const std::string& s) { return s.find('\x1b') != std::string::npos; }
}  // namespace

TEST_CASE("colour is decided from --color, the terminal, NO_COLOR and TERM", "[heatmap]") {
    using attntrace::decide_color;
    CHECK(decide_color("always", false, "1", "dumb"));
    CHECK_FALSE(decide_color("never", true, nullptr, "xterm-256color"));
    CHECK(decide_color("auto", true, nullptr, "xterm-256color"));
    CHECK(decide_color("auto", true, "", "xterm"));  // NO_COLOR set but empty: ignored, as no-color.org says
    CHECK_FALSE(decide_color("auto", true, "1", "xterm"));
    CHECK_FALSE(decide_color("auto", true, nullptr, "dumb"));
    CHECK_FALSE(decide_color("auto", false, nullptr, "xterm"));
}

TEST_CASE("run --color=always draws the weights and the mask in 24-bit colour with a legend", "[heatmap][cli]") {
    auto r = run_cli({"--color=always", "run", "003-3.1-ring-fell", "--steps", "hook_pattern"});
    REQUIRE(r.status == 0);
    CHECK(r.out.find("\x1b[48;2;") != std::string::npos);
    CHECK(r.out.find("legend:  0.00 ") != std::string::npos);
    auto m = run_cli({"run", "004-causal-pattern", "--color", "always", "--steps", "hook_mask"});
    REQUIRE(m.status == 0);
    CHECK(m.out.find("\x1b[48;2;") != std::string::npos);
    CHECK(m.out.find("× -inf (masked)") != std::string::npos);
}

TEST_CASE("without colour there is no escape byte at all, and the heatmap is shaded", "[heatmap][cli]") {
    const std::vector<std::string> args{"run", "004-causal-pattern", "--steps", "hook_mask"};
    auto never = args;
    never.push_back("--color=never");
    auto auto_ = args;
    auto_.push_back("--color=auto");
    // stdout is a pipe here, not a terminal: auto must mean no colour even without NO_COLOR.
    for (const auto& [a, env] : {std::pair{never, std::vector<std::string>{}}, std::pair{auto_, std::vector<std::string>{"NO_COLOR=1"}},
                                 std::pair{auto_, std::vector<std::string>{}}, std::pair{args, std::vector<std::string>{}}}) {
        auto r = run_cli(a, env);
        REQUIRE(r.status == 0);
        CHECK_FALSE(has_escape(r.out));
        CHECK(r.out.find("heatmap:") != std::string::npos);
        CHECK(r.out.find("█") != std::string::npos);  // visible cells: mask 0 is the top of the scale
        CHECK(r.out.find("    ×") != std::string::npos);
        CHECK(r.out.find("legend:  █ 0 (visible)  × -inf (masked)") != std::string::npos);
    }
    auto off = run_cli({"run", "004-causal-pattern", "--steps", "hook_mask", "--heatmap=off"});
    CHECK(off.out.find("heatmap:") == std::string::npos);
    auto w = run_cli({"run", "003-3.1-ring-fell", "--steps", "hook_pattern", "--color=never"});
    CHECK(w.out.find("legend:  ' ' <0.20  ░ <0.40  ▒ <0.60  ▓ <0.80  █ ≤1.00  × -inf (masked)") != std::string::npos);
    CHECK(w.out.find("█0.51") == std::string::npos);
    CHECK(w.out.find("▒ 0.51") != std::string::npos);
}

TEST_CASE("a big lesson is elided with first and last tokens, --full shows all, lines fit COLUMNS", "[heatmap][cli]") {
    attntrace::test::TempDir dir;
    REQUIRE(run_cli({"random", "--tokens", "40", "--d-model", "16", "--out", dir.file("big.json")}).status == 0);
    auto r = run_cli({"run", dir.file("big.json"), "--steps", "hook_pattern"}, {"COLUMNS=60"});
    REQUIRE(r.status == 0);
    CHECK(r.out.find("...") != std::string::npos);
    for (const char* t : {" t0 ", " t1 ", " t2 ", "t37", "t38", "t39"}) {
        INFO(t);
        CHECK(r.out.find(t) != std::string::npos);
    }
    const std::string step = r.out.substr(r.out.find("── "));  // the header above lists every token
    CHECK(step.find("t20") == std::string::npos);
    std::istringstream lines(step);
    for (std::string line; std::getline(lines, line);) {
        // tables, heatmaps and legends; the step's title and prose are not cut
        if (line.rfind("    t", 0) != 0 && line.rfind("     ", 0) != 0 && line.rfind("    legend", 0) != 0) continue;
        INFO(line);
        CHECK(attntrace::display_width(line) <= 60);
    }
    auto f = run_cli({"run", dir.file("big.json"), "--steps", "hook_pattern", "--full"}, {"COLUMNS=60"});
    REQUIRE(f.status == 0);
    for (int t = 0; t < 40; ++t) CHECK(f.out.find(" t" + std::to_string(t) + " ") != std::string::npos);
}

TEST_CASE("format_tensor summarises as numpy above 1000 cells and fits the width below", "[heatmap]") {
    attntrace::Tensor t({50, 30});
    std::vector<std::string> rows, cols;
    for (int i = 0; i < 50; ++i) rows.push_back("r" + std::to_string(i));
    for (int i = 0; i < 30; ++i) cols.push_back("c" + std::to_string(i));
    attntrace::TableOptions o;
    std::string s = attntrace::format_tensor(t, {"query", "key"}, {rows, cols}, o);
    CHECK(s.find("r2 ") != std::string::npos);
    CHECK(s.find("r3 ") == std::string::npos);
    CHECK(s.find("r47") != std::string::npos);
    CHECK(s.find("c27") != std::string::npos);
    CHECK(s.find("c3 ") == std::string::npos);
    attntrace::Tensor small({10, 30});
    o.width = 50;
    std::string w = attntrace::format_tensor(small, {"query", "key"}, {std::vector<std::string>(rows.begin(), rows.begin() + 10), cols}, o);
    CHECK(w.find("r9") != std::string::npos);  // 300 cells: every row
    CHECK(w.find("...") != std::string::npos);
    std::istringstream lines(w);
    for (std::string line; std::getline(lines, line);) CHECK(attntrace::display_width(line) <= 50);
}

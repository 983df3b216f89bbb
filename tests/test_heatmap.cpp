// Heatmaps and elision in `attntrace run`: colour only when asked or on a
// terminal, shading otherwise, numpy-like elision that fits the width.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "evaluate/evaluate.hpp"
#include "lesson/lesson.hpp"
#include "pipeline/plan.hpp"
#include "render/heat_colour.hpp"
#include "render/heatmap.hpp"
#include "render/matrix.hpp"
#include "render/text.hpp"
#include "render/wrap.hpp"
#include "trace/derived.hpp"
#include "support.hpp"

using attntrace::test::run_cli;

namespace test_heatmap {

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
    auto r = run_cli({"run", dir.file("big.json"), "--steps", "hook_pattern", "--heatmap", "cells"}, {"COLUMNS=60"});
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
    auto f = run_cli({"run", dir.file("big.json"), "--steps", "hook_pattern", "--full", "--heatmap", "cells"}, {"COLUMNS=60"});
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

namespace {
// A causal lesson of 64 tokens: the size issue 15 measured (a 6 x 6 corner before the dense map).
std::string causal_64(const attntrace::test::TempDir& dir) {
    const std::string file = dir.file("c64.json");
    REQUIRE(run_cli({"random", "--tokens", "64", "--d-model", "32", "--heads", "2", "--d-ff", "64", "--mask", "causal",
                     "--out", file})
                .status == 0);
    return file;
}
// The lines of `text` from the first line starting with `from` (or the first line) up to the next "    legend:".
std::vector<std::string> map_lines(const std::string& text, const std::string& from) {
    std::vector<std::string> out;
    const auto at = text.rfind(from, 0) == 0 ? 0 : text.find("\n" + from) + 1;
    std::istringstream in(text.substr(at));
    for (std::string line; std::getline(in, line) && line.rfind("    legend:", 0) != 0;) out.push_back(line);
    return out;
}
std::size_t count(const std::string& s, const std::string& what) {
    std::size_t n = 0;
    for (auto at = s.find(what); at != std::string::npos; at = s.find(what, at + what.size())) ++n;
    return n;
}
}  // namespace

TEST_CASE("at 64 tokens the dense heatmap draws the whole causal triangle in 80 columns, masked cells apart", "[heatmap][cli]") {
    attntrace::test::TempDir dir;
    const std::string file = causal_64(dir);
    // In a pipe: 80 columns, no colour; dense is what auto chooses at 64 keys.
    auto r = run_cli({"run", file, "--steps", "hook_pattern"});
    REQUIRE(r.status == 0);
    CHECK(r.out == run_cli({"run", file, "--steps", "hook_pattern", "--heatmap", "dense"}).out);
    std::istringstream all(r.out.substr(r.out.find("── ")));
    for (std::string line; std::getline(all, line);) {
        INFO(line);
        CHECK(attntrace::display_width(line) <= 80);
    }
    // Head h0's map: a ruler, then one line per query, each of its 64 keys one character:
    // key j > i is masked by the causal rule, so query i's line ends with 63 - i dots.
    const auto lines = map_lines(r.out, "    heatmap:");
    REQUIRE(lines.size() > 66);
    CHECK(lines[1] == "    head h0");
    for (std::size_t i = 0; i < 64; ++i) {
        const std::string& line = lines[3 + i];
        INFO(line);
        CHECK(line.rfind(fmt::format("    {:>2} ", i), 0) == 0);
        CHECK(attntrace::display_width(line) == 4 + 2 + 1 + 64);
        CHECK(count(line, "·") == 63 - i);
    }
    CHECK(r.out.find("legend:  ' ' <0.20  ░ <0.40  ▒ <0.60  ▓ <0.80  █ ≤1.00  · masked") != std::string::npos);
    // The table above it: the masked weights as ×, not 0.0000 (first row: the one visible key, then ×).
    CHECK(r.out.find("    t0   1.0000       ×       ×  ...       ×       ×       ×") != std::string::npos);
}

TEST_CASE("the dense heatmap in colour: two query rows per line, 24-bit or 256 colours, masked cells grey", "[heatmap][cli]") {
    attntrace::test::TempDir dir;
    const std::string file = causal_64(dir);
    for (const std::string colour : {"24bit", "256"}) {
        INFO(colour);
        auto r = run_cli({"--color", colour, "run", file, "--steps", "hook_pattern", "--heatmap", "dense"});
        REQUIRE(r.status == 0);
        const std::string map = r.out.substr(r.out.find("    heatmap:"), r.out.find("    legend:") - r.out.find("    heatmap:"));
        CHECK(count(map, "▀") == 2 * 32 * 64);  // 2 heads, 32 lines of 64 characters
        const bool truecolor = colour == "24bit";
        CHECK((map.find("\x1b[38;2;") != std::string::npos) == truecolor);
        CHECK((map.find("\x1b[38;5;") != std::string::npos) == !truecolor);
        // the grey of a masked cell (70, 70, 70): the 256-colour palette's nearest is grey 239 (78)... or 238 (68)
        CHECK(map.find(truecolor ? "\x1b[48;2;70;70;70m" : "\x1b[48;5;238m") != std::string::npos);
    }
    // In 256 colours the scale's darkest (a small weight) is a colour of the cube; only the masked grey is grey.
    CHECK(attntrace::ramp_256(0.0) < 232);
    CHECK(attntrace::palette_256(attntrace::kMaskedGrey) >= 232);
    // COLORTERM says 24 bits; TERM=xterm-256color without it, 256 colours.
    auto t = run_cli({"--color", "always", "run", file, "--steps", "hook_pattern"}, {"COLORTERM=truecolor", "TERM=xterm-256color"});
    CHECK(t.out.find("\x1b[38;2;") != std::string::npos);
    auto p = run_cli({"--color", "always", "run", file, "--steps", "hook_pattern"}, {"COLORTERM=", "TERM=xterm-256color"});
    CHECK(p.out.find("\x1b[38;5;") != std::string::npos);
    CHECK(p.out.find("\x1b[38;2;") == std::string::npos);
}

TEST_CASE("a dense map wider than the width is pooled, by max or mean, as its legend says", "[heatmap]") {
    // 40 x 40, zero but one cell: at width 27 (4 indent, 2 label, 1 space: 20 columns) every 2 x 2 block is one character.
    attntrace::Tensor t({40, 40});
    t.data[7 * 40 + 13] = 1.0f;
    attntrace::HeatmapOptions o;
    o.mode = attntrace::HeatmapMode::dense;
    o.style.width = 27;
    const std::string max_map = attntrace::format_heatmap(t, {"query", "key"}, {}, o);
    INFO(max_map);
    const auto lines = map_lines(max_map, "    ");
    REQUIRE(lines.size() == 1 + 20);  // the ruler and 20 pooled rows
    for (std::size_t r = 0; r < 20; ++r) {
        const std::string cells = lines[1 + r].substr(4 + 2 + 1);
        std::string want(20, ' ');
        if (r == 3) want = std::string(6, ' ').append("█").append(13, ' ');
        CHECK(cells == want);
    }
    CHECK(attntrace::test::unwrapped(max_map).find("the max of 2 x 2 cells") != std::string::npos);
    o.pool = attntrace::Pooling::mean;
    const std::string mean_map = attntrace::format_heatmap(t, {"query", "key"}, {}, o);
    CHECK(map_lines(mean_map, "    ")[4].substr(7) == std::string(6, ' ') + "░" + std::string(13, ' '));  // 0.25
    CHECK(attntrace::test::unwrapped(mean_map).find("the mean of 2 x 2 cells") != std::string::npos);
}

TEST_CASE("prose is wrapped to the width at spaces, long token lists are elided with a count, --help fits", "[heatmap][cli]") {
    const std::string text = "one two three four five six seven eight nine ten eleven twelve thirteen fourteen";
    const std::string w = attntrace::wrap_text(text, 20, "  note: ", "        ");
    std::istringstream lines(w);
    std::string joined;
    for (std::string line; std::getline(lines, line);) {
        INFO(line);
        CHECK(attntrace::display_width(line) <= 20);
        joined += (joined.empty() ? "" : " ") + line.substr(8);
    }
    CHECK(joined == text);
    CHECK(attntrace::wrap_text("a-word-longer-than-the-line b", 10, "", "") == "a-word-longer-than-the-line\nb\n");

    attntrace::test::TempDir dir;
    REQUIRE(run_cli({"random", "--tokens", "40", "--d-model", "16", "--out", dir.file("big.json")}).status == 0);
    auto r = run_cli({"run", dir.file("big.json"), "--steps", "1"});
    CHECK(r.out.find("\ntokens: t0 t1 t2 t3 t4 t5 t6 t7 … t36 t37 t38 t39  (40 tokens)\n") != std::string::npos);
    std::istringstream out(r.out);
    for (std::string line; std::getline(out, line);) {
        INFO(line);
        CHECK(attntrace::display_width(line) <= 80);
    }
    auto h = run_cli({"run", "--help"});
    REQUIRE(h.status == 0);
    std::istringstream help(h.out);
    for (std::string line; std::getline(help, line);) {  // the examples too: broken with " \\", copied whole
        INFO(line);
        CHECK(attntrace::display_width(line) <= 80);
    }
}

TEST_CASE("on a terminal, step headings and verdicts are coloured, and --color=never keeps them plain", "[heatmap][cli]") {
    auto r = run_cli({"--color", "always", "run", "003-3.1-ring-fell"});
    REQUIRE(r.status == 0);
    CHECK(r.out.find("\x1b[1m── 14/15 blocks.0.attn.hook_pattern") != std::string::npos);
    CHECK(r.out.find("\x1b[33m≈\x1b[0m claim Z") != std::string::npos);
    auto c = run_cli({"--color", "always", "check", "003-3.1-ring-fell"});
    CHECK(c.out.find("\x1b[36m↳\x1b[0m") != std::string::npos);
    CHECK_FALSE(has_escape(run_cli({"--color", "never", "check", "003-3.1-ring-fell"}).out));
}

TEST_CASE("dense heads side by side when several fit the width: 6 heads of 16 tokens, three to a row at 80 columns", "[heatmap][cli]") {
    attntrace::test::TempDir dir;
    REQUIRE(run_cli({"random", "--tokens", "16", "--d-model", "48", "--heads", "6", "--d-ff", "32", "--mask", "causal",
                     "--out", dir.file("h6.json")})
                .status == 0);
    auto r = run_cli({"run", dir.file("h6.json"), "--steps", "hook_pattern", "--heatmap", "dense"});
    REQUIRE(r.status == 0);
    const auto lines = map_lines(r.out, "    heatmap:");
    // heatmap:, then per row of maps a caption line, a ruler and 16 query lines
    REQUIRE(lines.size() == 1 + 2 * 18);
    for (std::size_t row = 0; row < 2; ++row) {
        const std::string& caption = lines[1 + row * 18];
        for (std::size_t h = 3 * row; h < 3 * row + 3; ++h) CHECK(caption.find("head h" + std::to_string(h)) != std::string::npos);
        for (std::size_t i = 0; i < 16; ++i) {
            const std::string& line = lines[3 + row * 18 + i];
            INFO(line);
            CHECK(attntrace::display_width(line) <= 80);
            CHECK(count(line, "·") == 3 * (15 - i));  // each of the three heads: keys after query i masked
        }
    }
    // Grouped-query attention: each map names the K/V head its query head reads (8 heads, 2 K/V heads: 4 to a group).
    auto g = run_cli({"run", "002-gqa-groups", "--steps", "hook_pattern", "--heatmap", "dense"});
    REQUIRE(g.status == 0);
    CHECK(g.out.find("head h3 · kv0") != std::string::npos);
    CHECK(g.out.find("head h4 · kv1") != std::string::npos);
}

TEST_CASE("run's views read a big step's rows as they draw them: no copy of a derived step, within the plan's view bytes",
          "[heatmap]") {
#if ATTNTRACE_TEST_ASAN
    WARN("not measured under AddressSanitizer: its shadow memory is not what a user's run holds");
    return;
#endif
    using namespace attntrace;
    test::TempDir dir;
    const std::string file = dir.file("r.json");
    // 2048 tokens, 4 heads: each (4, 2048, 2048) attention step is 64 MiB; the scaled, masked, shifted and
    // exp'd scores are derived steps, which a view copied whole when it read them through values_of.
    REQUIRE(run_cli({"random", "--tokens", "2048", "--d-model", "32", "--heads", "4", "--d-ff", "32", "-o", file}).status == 0);
    const Lesson lesson = read_lesson(file);
    // the views read a block of rows per thread, as many threads as the run's
    const Plan plan = make_plan(lesson, TracePolicy{}, Arithmetic::exact, omp_get_max_threads());
    auto e = evaluate(read_lesson(file));
    const Step* masked = e->exact.find("blocks.0.attn.hook_attn_scores");
    REQUIRE(masked);
    REQUIRE(is_derived(*masked));
    const std::size_t step_bytes = numel(masked->shape) * sizeof(float);
    // the views' text goes nowhere: only what they hold while drawing is measured
    std::ostream nowhere(nullptr);
    RunView view;
    view.style.width = 100;
    if (!test::reset_peak_rss()) {
        WARN("/proc/self/clear_refs not writable: not measured");
        return;
    }
    const std::size_t before = test::resident_bytes();
    render_run(nowhere, e->lesson, e->exact, e->report, view);
    const std::size_t held = test::peak_resident_bytes() - before;
    INFO("the views held " << held << " bytes; a derived step is " << step_bytes << ", the plan counts "
                           << plan.view_bytes);
    CHECK(held < step_bytes / 4);
    // room for the allocator's and the output's own pages beside what the plan counts
    constexpr std::size_t kSlackBytes = std::size_t{4} << 20;
    CHECK(held <= plan.view_bytes + kSlackBytes);
}

TEST_CASE("a pooled map of 3 heads of 700 x 700 is each block's max or mean on the finite range, whatever the threads",
          "[heatmap]") {
    // Pooling in the test's own plain loop (doubles, one cell at a time) against the views' kernel
    // (float lanes, the pooled rows shared among threads): the same character in every cell.
    using attntrace::Pooling;
    constexpr std::size_t NH = 3, R = 700, C = 700;
    const float inf = std::numeric_limits<float>::infinity();
    attntrace::Tensor t({NH, R, C});
    std::uint32_t s = 12345;
    for (std::size_t h = 0; h < NH; ++h)
        for (std::size_t r = 0; r < R; ++r)
            for (std::size_t c = 0; c < C; ++c) {
                s = s * 1664525u + 1013904223u;
                const float x = static_cast<float>(s >> 8) / 16777216.0f * 10.0f - 5.0f + static_cast<float>(h);
                t.data[(h * R + r) * C + c] = c > r ? -inf : x;  // causal: the upper triangle masked
            }
    attntrace::HeatmapOptions o;
    o.mode = attntrace::HeatmapMode::dense;
    o.auto_range = true;
    o.style.width = 100;  // 4 indent, 3 label digits, 1 space: 92 columns, so f = ceil(700 / 92) = 8
    constexpr std::size_t f = 8, P = (C + f - 1) / f;
    float lo = inf, hi = -inf;
    for (float x : t.data)
        if (std::isfinite(x)) lo = std::min(lo, x), hi = std::max(hi, x);
    const char* shades[] = {" ", "░", "▒", "▓", "█"};
    for (Pooling pool : {Pooling::max, Pooling::mean}) {
        o.pool = pool;
        std::string expected;
        for (std::size_t h = 0; h < NH; ++h) {
            expected += "    head " + std::to_string(h) + "\n";
            expected += "    " + std::string(4, ' ');
            std::string ruler(P, ' ');
            for (std::size_t pc = 0; pc < P; pc += 10) {
                const std::string mark = std::to_string(pc * f);
                if (pc + mark.size() <= P) ruler.replace(pc, mark.size(), mark);
            }
            ruler.erase(ruler.find_last_not_of(' ') + 1);
            expected += ruler + "\n";
            for (std::size_t pr = 0; pr < P; ++pr) {
                std::string line = "    " + fmt::format("{:>3} ", pr * f);
                for (std::size_t pc = 0; pc < P; ++pc) {
                    double sum = 0, best = -inf;
                    std::size_t n = 0;
                    for (std::size_t r = pr * f; r < std::min(R, pr * f + f); ++r)
                        for (std::size_t c = pc * f; c < std::min(C, pc * f + f); ++c) {
                            const float x = t.data[(h * R + r) * C + c];
                            if (x == -inf) continue;
                            sum += x, ++n, best = std::max(best, static_cast<double>(x));
                        }
                    if (!n) {
                        line += "·";
                        continue;
                    }
                    const float v = pool == Pooling::max ? static_cast<float>(best) : static_cast<float>(sum / n);
                    const double norm = std::clamp((static_cast<double>(v) - lo) / (static_cast<double>(hi) - lo), 0.0, 1.0);
                    line += shades[std::min<std::size_t>(static_cast<std::size_t>(norm * 5), 4)];
                }
                expected += line + "\n";
            }
        }
        for (int threads : {1, 2}) {
            INFO((pool == Pooling::max ? "max" : "mean") << ", threads " << threads);
            const int before = omp_get_max_threads();
            omp_set_num_threads(threads);
            const std::string map = attntrace::format_heatmap(t, {"head", "query", "key"}, {}, o);
            omp_set_num_threads(before);
            REQUIRE(map.substr(0, map.find("    legend:")) == expected);
            CHECK(map.find("≤" + attntrace::legend_number(hi, attntrace::Scale{lo, hi})) !=
                  std::string::npos);  // the scale up to the finite maximum
        }
    }
}

}  // namespace test_heatmap

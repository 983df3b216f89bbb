// Text views at 80 columns (a pipe's width): every line of run, check,
// explain and decode fits 80 display columns for every lesson, and the
// wrapping only moves line breaks: the text is the one printed at a width
// nothing wraps at, and no number is split across two lines. And numbers in a
// table have one format: fixed decimals, or scientific notation for every
// cell when the range needs it, said above the table.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/tensor.hpp"
#include "evaluate/evaluate.hpp"
#include "model/model_lesson.hpp"
#include "render/heatmap.hpp"
#include "render/matrix.hpp"
#include "render/wrap.hpp"
#include "support.hpp"

using attntrace::test::CliResult;
using attntrace::test::run_cli;

namespace {

constexpr std::size_t kPipeWidth = 80;            // a file or a pipe: terminal.cpp's width without COLUMNS
const std::string kUnwrapped = "COLUMNS=99999";  // the widest COLUMNS terminal.cpp takes: nothing wraps

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
}

// The numbers of a text in order, each as written: a number broken by a line
// break reads as two ("0.383" and "7").
std::vector<std::string> numbers_in(const std::string& text) {
    static const std::regex number(R"(-?(?:inf|[0-9]+(?:\.[0-9]+)?(?:e[+-]?[0-9]+)?))");
    std::vector<std::string> out;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), number); it != std::sregex_iterator(); ++it)
        out.push_back(it->str());
    return out;
}

std::string without_spaces(const std::string& text) {
    std::string out;
    for (char c : text)
        if (c != ' ' && c != '\n') out += c;
    return out;
}

// Every line within the width, no glue character left, and the same text and
// numbers as printed unwrapped.
void check_wrapped(const std::string& narrow, const std::string& wide) {
    for (const auto& line : lines_of(narrow)) {
        INFO(line);
        CHECK(attntrace::display_width(line) <= kPipeWidth);
    }
    CHECK(narrow.find(attntrace::kNoBreak) == std::string::npos);
    CHECK(without_spaces(narrow) == without_spaces(wide));
    CHECK(numbers_in(narrow) == numbers_in(wide));
}

// A run's claims: each header line ("    ✓ claim ...") and the lines under it
// (indented 6 or more), together; the step tables around them are drawn for
// the width (columns dropped, dense maps), so only the claims read alike at
// any width.
std::string claims_of(const std::string& run) {
    std::string out;
    bool inside = false;
    for (const auto& line : lines_of(run)) {
        const bool header = std::regex_search(line, std::regex("^    \\S+ claim "));
        if (header) inside = true;
        else if (line.find_first_not_of(' ') < 6) inside = false;
        if (inside) out += line + "\n";
    }
    return out;
}

// Cells to explain in a lesson: the first and the last of every step it keeps.
std::vector<std::string> cells_of(const std::string& file) {
    const auto e = attntrace::evaluate(attntrace::read_any_lesson(file));
    std::vector<std::string> cells;
    for (const auto& s : e->exact.steps) {
        if (s.recorded != attntrace::Record::full || s.shape.empty()) continue;
        std::string first, last;
        for (std::size_t k = 0; k < s.shape.size(); ++k) {
            first += k ? ",0" : "0";
            last += fmt::format("{}{}", k ? "," : "", s.shape[k] - 1);
        }
        cells.push_back(s.name + "[" + first + "]");
        cells.push_back(s.name + "[" + last + "]");
    }
    return cells;
}

CliResult narrow_run(const std::vector<std::string>& args) { return run_cli(args); }
CliResult wide_run(const std::vector<std::string>& args) { return run_cli(args, {kUnwrapped}); }

}  // namespace

TEST_CASE("every lesson's run, check, explain and decode fit 80 columns, and the wrapping splits no number", "[cli]") {
    std::vector<std::string> files = attntrace::test::lesson_files();
    for (const auto& lesson : files) {
        INFO(lesson);
        {
            const auto n = narrow_run({"run", lesson}), w = wide_run({"run", lesson});
            REQUIRE(n.status == 0);
            REQUIRE(w.status == 0);
            for (const auto& line : lines_of(n.out)) {
                INFO(line);
                CHECK(attntrace::display_width(line) <= kPipeWidth);
            }
            CHECK(n.out.find(attntrace::kNoBreak) == std::string::npos);
            const std::string claims = claims_of(n.out);
            CHECK((claims.empty() || claims.find(" claim ") != std::string::npos));
            CHECK(without_spaces(claims) == without_spaces(claims_of(w.out)));
            CHECK(numbers_in(claims) == numbers_in(claims_of(w.out)));
        }
        for (const char* command : {"check", "decode"}) {
            INFO(command);
            const auto n = narrow_run({command, lesson}), w = wide_run({command, lesson});
            CHECK(n.status == w.status);
            if (std::string(command) == "decode" && n.status == 2) continue;  // not causal: decode refuses it
            CHECK(n.status == 0);
            check_wrapped(n.out, w.out);
        }
        std::vector<std::string> explain{"explain", lesson};
        for (const auto& cell : cells_of(lesson)) explain.push_back(cell);
        const auto n = narrow_run(explain), w = wide_run(explain);
        REQUIRE(n.status == 0);
        check_wrapped(n.out, w.out);
    }
    // The check table of every lesson at once, cost lessons too, and its summary line.
    std::vector<std::string> all{"check"};
    for (const auto& e : std::filesystem::directory_iterator(attntrace::test::lessons_dir() + "/cost"))
        if (e.path().extension() == ".json") files.push_back(e.path().string());
    all.insert(all.end(), files.begin(), files.end());
    const auto n = narrow_run(all), w = wide_run(all);
    REQUIRE(n.status == 0);
    check_wrapped(n.out, w.out);
}

TEST_CASE("a checkpoint's run, decode and generation fit 80 columns, and the wrapping splits no number", "[cli]") {
    const std::string model = attntrace::test::source_dir() + "/tests/models/tiny-gpt2";
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"decode", "--model", model, "--text", "the ring fell"},
          std::vector<std::string>{"decode", "--model", model, "--text", "the ring fell", "--generate", "3", "--top-k", "3"},
          std::vector<std::string>{"explain", "--model", model, "--text", "the ring fell", "blocks.1.attn.hook_pattern[h2,2,0]",
                                   "blocks.0.mlp.hook_post[1,5]"}}) {
        INFO(args[0] << " " << args.back());
        const auto n = narrow_run(args), w = wide_run(args);
        REQUIRE(n.status == 0);
        check_wrapped(n.out, w.out);
    }
    const auto r = narrow_run({"run", "--model", model, "--text", "the ring fell", "--top-k", "5"});
    REQUIRE(r.status == 0);
    for (const auto& line : lines_of(r.out)) {
        INFO(line);
        CHECK(attntrace::display_width(line) <= kPipeWidth);
    }
}

TEST_CASE("a row of numbers wraps whole rows under its first number, a long row between numbers", "[cli]") {
    // "computed:" beside three rows too wide for one line: one row a line, each ending in its " |".
    auto r = narrow_run({"run", "003-3.1-ring-fell", "--steps", "hook_z"});
    REQUIRE(r.status == 0);
    CHECK(r.out.find("      computed:       1.2741 0.4519 0.5481 1.3703 |\n"
                     "                      1.7058 0.1863 0.6144 2.1338 |\n"
                     "                      1.3837 0.2327 0.7673 1.9183\n") != std::string::npos);
    // Unwrapped, the same numbers on one line.
    r = wide_run({"run", "003-3.1-ring-fell", "--steps", "hook_z"});
    CHECK(r.out.find("computed:       1.2741 0.4519 0.5481 1.3703 | 1.7058 0.1863 0.6144 2.1338 | "
                     "1.3837 0.2327 0.7673 1.9183\n") != std::string::npos);
    // An operator standing alone ends the line it breaks, never begins one.
    CHECK(attntrace::wrap_text("0.25 + 0.50 + 0.75 = 1.50", 13, "", "") == "0.25 + 0.50 +\n0.75 = 1.50\n");
    // A word longer than a line breaks after a bracket's comma when the pieces fit, else after any comma.
    CHECK(attntrace::wrap_text("A = [[1.26,0.45],[1.72,0.19]]", 20, "", "") == "A = [[1.26,0.45],\n[1.72,0.19]]\n");
    CHECK(attntrace::wrap_text("[1.26,0.45,1.72,0.19]", 12, "", "") == "[1.26,0.45,\n1.72,0.19]\n");
    // Glued words stay on one line, and the glue is written as a space.
    CHECK(attntrace::wrap_text("x " + attntrace::unbroken("max |Δ| 0.02"), 10, "", "") == "x\nmax |Δ| 0.02\n");
}

TEST_CASE("a table prints every cell in one format, said above it: decimals, or scientific for all past 1e8",
          "[heatmap]") {
    const std::regex fixed(R"(^-?[0-9]+\.[0-9]{4}$)"), scientific(R"(^-?[0-9]\.[0-9]{4}e[+-][0-9]{2}$)");
    // The cells of a table: the words of its lines after the caption and the column labels, less the row labels.
    auto cells = [](const std::string& table) {
        std::vector<std::string> out;
        for (const auto& line : lines_of(table)) {
            std::istringstream words(line);
            std::vector<std::string> w;
            for (std::string x; words >> x;) w.push_back(x);
            if (w.size() < 2 || w[0] == "values" || w[0] == "head" || w[0] == "c0") continue;
            out.insert(out.end(), w.begin() + 1, w.end());
        }
        return out;
    };
    const std::vector<std::string> axes{"query", "key"};
    const std::vector<std::vector<std::string>> labels{{"r0", "r1"}, {"c0", "c1", "c2"}};
    attntrace::TableOptions opt;
    opt.width = kPipeWidth;

    attntrace::Tensor normal(attntrace::Shape{2, 3});
    normal.data = {0.5f, -2.0f, 0.001f, 12345.678f, 99999992.0f, 0.0f};  // the float32 just below 1e8 included
    const std::string n = attntrace::format_tensor(normal, axes, labels, opt);
    INFO(n);
    CHECK(n.find("    values to 4 decimals\n") != std::string::npos);
    CHECK(cells(n).size() == 6);
    for (const auto& c : cells(n)) CHECK(std::regex_match(c, fixed));

    attntrace::Tensor wide = normal;
    wide.data[1] = 3e9f;  // one value past 1e8: every cell scientific, 0 and 0.5 included
    const std::string s = attntrace::format_tensor(wide, axes, labels, opt);
    INFO(s);
    CHECK(s.find("    values in scientific notation, 5 significant digits") != std::string::npos);
    CHECK(cells(s).size() == 6);
    for (const auto& c : cells(s)) CHECK(std::regex_match(c, scientific));

    // Two heads: the large value in head 1 puts head 0 in scientific notation too, under one caption.
    attntrace::Tensor heads(attntrace::Shape{2, 2, 3});
    heads.data = {0.5f, 0.25f, 1.0f, 2.0f, 3.0f, 4.0f, 0.5f, 0.25f, 1.0f, 2.0f, 3.0f, -4e10f};
    const std::string h = attntrace::format_tensor(heads, {"head", "query", "key"}, {{"h0", "h1"}, labels[0], labels[1]}, opt);
    INFO(h);
    const auto head_lines = lines_of(h);
    CHECK(std::count(head_lines.begin(), head_lines.end(),
                     "    values in scientific notation, 5 significant digits (one reaches 1e8)") == 1);
    CHECK(cells(h).size() == 12);
    for (const auto& c : cells(h)) CHECK(std::regex_match(c, scientific));

    // A heatmap's cells (six columns each): two decimals, or scientific for all past 1e5, as its legend says.
    attntrace::HeatmapOptions map;
    map.auto_range = true;
    map.style.width = kPipeWidth;
    attntrace::Tensor small = normal;
    small.data[4] = 99999.0f;
    const std::string m = attntrace::format_heatmap(small, axes, labels, map);
    INFO(m);
    CHECK(m.find("cells to 2 decimals") != std::string::npos);
    CHECK(m.find("99999.00") != std::string::npos);
    CHECK(m.find("e+") == std::string::npos);
    const std::string ms = attntrace::format_heatmap(wide, axes, labels, map);
    INFO(ms);
    CHECK(ms.find("cells in scientific notation") != std::string::npos);
    CHECK(ms.find("5e-01") != std::string::npos);  // 0.5, as every other cell
    CHECK(ms.find("0.50") == std::string::npos);
}

TEST_CASE("diff, compare and cost write each column of numbers in one format, and say which", "[cli]") {
    attntrace::test::TempDir dir;
    const std::string src = attntrace::test::source_dir();
    REQUIRE(run_cli({"export", src + "/docs/examples/mine-lesson.json", "-o", dir.file("ours.json")}).status == 0);
    // diff's differences range from 1e-7 to 1: scientific for every one, the matching steps' 0 too.
    const auto d = run_cli({"diff", dir.file("ours.json"), src + "/docs/examples/mine.json"});
    REQUIRE(d.status == 1);
    INFO(d.out);
    CHECK(d.out.find("max |a-b| and max rel in scientific notation, 3 significant digits") != std::string::npos);
    const auto lines = lines_of(d.out);
    const auto header = std::find_if(lines.begin(), lines.end(), [](const std::string& l) { return l.rfind("step ", 0) == 0; });
    REQUIRE(header != lines.end());
    const std::size_t abs_at = header->find("max |a-b|"), rel_at = header->find("max rel");
    std::size_t rows = 0;
    for (auto it = header + 1; it != lines.end() && it->rfind("blocks.", 0) == 0; ++it, ++rows)
        for (std::size_t at : {abs_at, rel_at}) {
            const std::string cell = it->substr(at, it->find(' ', at) - at);
            INFO(cell);
            CHECK(std::regex_match(cell, std::regex(R"([0-9]\.[0-9]{2}e[+-][0-9]{2})")));
        }
    CHECK(rows == 8);

    // compare's differences of the scaling are 0.16 to 1: four decimals for every one.
    const auto c = run_cli({"compare", "003-3.1-ring-fell", "--set", "scale=false"}, {kUnwrapped});
    REQUIRE(c.status == 0);
    CHECK(c.out.find("(max |Δ| and max rel to 4 decimals;") != std::string::npos);
    const std::regex difference("(max \\|Δ\\||max rel) ([^ ]+) at");
    std::size_t found = 0;
    for (auto it = std::sregex_iterator(c.out.begin(), c.out.end(), difference); it != std::sregex_iterator(); ++it, ++found)
        CHECK(std::regex_match((*it)[2].str(), std::regex(R"([0-9]+\.[0-9]{4})")));
    CHECK(found == 16);  // 8 changed steps, two each

    // cost's FLOPs: exact while all are below 1e8, else every one scientific.
    const auto small = run_cli({"cost", "--tokens", "8", "--d-model", "4", "--heads", "1"});
    const auto big = run_cli({"cost", "--tokens", "512"});
    REQUIRE(small.status == 0);
    REQUIRE(big.status == 0);
    CHECK(small.out.find("one layer, one sequence (FLOPs exact)") != std::string::npos);
    CHECK(big.out.find("one layer, one sequence (FLOPs in scientific notation, 3 significant digits)") != std::string::npos);
    auto flops = [](const std::string& out) {  // the last word of each row of the step table
        std::vector<std::string> f;
        const auto l = lines_of(out);
        auto it = std::find_if(l.begin(), l.end(), [](const std::string& x) { return x.find("elements") != std::string::npos; });
        for (++it; it != l.end() && !it->empty(); ++it) f.push_back(it->substr(it->find_last_of(' ') + 1));
        return f;
    };
    CHECK(flops(small.out).size() == 7);
    for (const auto& f : flops(small.out)) CHECK(std::regex_match(f, std::regex(R"([0-9]{1,3}(,[0-9]{3})*)")));
    CHECK(flops(big.out).size() == 7);
    for (const auto& f : flops(big.out)) CHECK(std::regex_match(f, std::regex(R"([0-9]\.[0-9]{2}e\+[0-9]{2})")));
}

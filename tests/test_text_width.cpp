// Text views at 80 columns (a pipe's width): every line of every command
// (run, check, explain, decode, steps, draft, diff, compare, cost, list,
// golden, bench, every --help) fits 80 display columns, and the wrapping only
// moves line breaks: the text is the one printed at a width nothing wraps at,
// and no number is split across two lines; a table too wide folds columns
// under its rows, its numbers all there and whole. And numbers in a table have
// one format: fixed decimals, or scientific notation for every cell when the
// range needs it, said above the table.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/tensor.hpp"
#include "evaluate/evaluate.hpp"
#include "model/model_lesson.hpp"
#include "render/bench_view.hpp"
#include "trace/policy.hpp"
#include "render/heatmap.hpp"
#include "render/matrix.hpp"
#include "render/text_table.hpp"
#include "render/wrap.hpp"
#include "support.hpp"

using attntrace::test::CliResult;
using attntrace::test::run_cli;

namespace test_text_width {

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

// How the narrow text may differ from the wide one besides its line breaks.
enum class Layout {
    same,       // only line breaks and the spaces at them
    continued,  // commands broken with the shell's " \" continuation (--help's examples)
    folded,     // a table's columns folded under its rows: the same numbers, in another order
};

std::string sorted(std::vector<std::string> v) {
    std::sort(v.begin(), v.end());
    std::string out;
    for (const auto& x : v) out += x + " ";
    return out;
}

std::string without_continuations(std::string text) {
    for (std::size_t at; (at = text.find(" \\\n")) != std::string::npos;) text.erase(at, 2);
    return text;
}

// Every line within the width, no glue character left, and the same text and
// numbers as printed unwrapped (folded: the same numbers, each whole).
void check_wrapped(const std::string& narrow, const std::string& wide, Layout layout = Layout::same) {
    for (const auto& line : lines_of(narrow)) {
        INFO(line);
        CHECK(attntrace::display_width(line) <= kPipeWidth);
    }
    CHECK(narrow.find(attntrace::kNoBreak) == std::string::npos);
    CHECK(wide.find(attntrace::kNoBreak) == std::string::npos);
    if (layout == Layout::folded) {
        CHECK(sorted(numbers_in(narrow)) == sorted(numbers_in(wide)));
        return;
    }
    const std::string text = layout == Layout::continued ? without_continuations(narrow) : narrow;
    CHECK(without_spaces(text) == without_spaces(wide));
    CHECK(numbers_in(text) == numbers_in(wide));
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

TEST_CASE("steps, draft, diff, compare, cost, list, golden and every help text fit 80 columns, no number split",
          "[cli]") {
    const std::string src = attntrace::test::source_dir();
    attntrace::test::TempDir dir;
    // A command's standard output and error at 80 columns and unwrapped.
    auto both = [](const std::vector<std::string>& args, Layout layout, const std::vector<std::string>& env = {}) {
        INFO(fmt::format("{}", fmt::join(args, " ")));
        std::vector<std::string> wide_env = env;
        wide_env.push_back(kUnwrapped);
        const auto n = run_cli(args, env), w = run_cli(args, wide_env);
        CHECK(n.status == w.status);
        CHECK(n.status != 2);  // no refusal: the views are what is under test
        check_wrapped(n.out, w.out, layout);
        check_wrapped(n.err, w.err, layout);
        return n;
    };
    for (const auto& lesson : attntrace::test::lesson_files()) {
        // the steps' table: its axes wrap under their column when the names are long
        const auto r = both({"steps", lesson}, Layout::same);
        CHECK(r.out.find("  1  ") != std::string::npos);
    }
    both({"list"}, Layout::same);
    both({"golden"}, Layout::same);
    // A golden that differs: its lines name the step, the values and the command that rewrites it.
    const std::string golden = dir.file("golden");
    std::filesystem::create_directory(golden);
    std::filesystem::copy_file(src + "/golden/003-3.1-ring-fell.json", golden + "/003-3.1-ring-fell.json");
    {
        std::string text = attntrace::test::read_text(golden + "/003-3.1-ring-fell.json");
        const std::size_t at = text.find("0.5064804");
        REQUIRE(at != std::string::npos);
        text.replace(at, 9, "0.5164804");
        std::ofstream(golden + "/003-3.1-ring-fell.json") << text;
    }
    const auto g = both({"golden", "003-3.1-ring-fell"}, Layout::same, {"ATTNTRACE_GOLDEN=" + golden});
    CHECK(g.status == 1);
    CHECK(g.out.find("    (if intended: attntrace golden --update 003-3.1-ring-fell)\n") != std::string::npos);

    // draft: its report on standard output, or on standard error beside the lesson on standard output (JSON, not
    // a view: its lines are data); the claims fold their positions and notes under them.
    for (const char* article : {"tiny-attention.md", "two-examples.md"}) {
        const std::string path = src + "/docs/examples/draft/" + article;
        both({"draft", path, "-o", dir.file("drafted.json"), "--explain"}, Layout::folded);
        both({"draft", path, "-o", dir.file("drafted.json")}, Layout::folded);
        const auto n = run_cli({"draft", path, "--explain"}), w = run_cli({"draft", path, "--explain"}, {kUnwrapped});
        REQUIRE(n.status == 0);
        check_wrapped(n.err, w.err, Layout::folded);
        CHECK(n.out == w.out);
    }

    // diff: a table of nine columns folds where and what each step's largest error is under it.
    REQUIRE(run_cli({"export", src + "/docs/examples/mine-lesson.json", "-o", dir.file("ours.json")}).status == 0);
    REQUIRE(run_cli({"export", "003-3.1-ring-fell", "-o", dir.file("ring.json")}).status == 0);
    const auto d = both({"diff", dir.file("ours.json"), src + "/docs/examples/mine.json"}, Layout::folded);
    CHECK(d.out.find("\nblocks.0.attn.hook_scores_scaled  2x4x4  9.86e-01   2.93e-01  DIVERGES\n"
                     "    32 of 32 cells beyond tolerance, max |a-b| at [0,1,1], a ") != std::string::npos);
    both({"diff", dir.file("ours.json"), src + "/docs/examples/mine.json", "--step", "blocks.0.attn.*"}, Layout::folded);
    both({"diff", dir.file("ring.json"), dir.file("ring.json")}, Layout::folded);

    for (const char* lesson : {"003-3.1-ring-fell", "001-cross-attention", "002-gqa-groups", "003-stacked-blocks"})
        both({"compare", lesson, "--set", "scale=false"}, Layout::same);
    both({"compare", "003-3.1-ring-fell", "--set", "config.mask=causal", "--step", "hook_pattern"}, Layout::same);

    // cost: the steps' shapes fold under them
    both({"cost", "--tokens", "8", "--d-model", "4", "--heads", "1"}, Layout::folded);
    both({"cost", "--tokens", "512"}, Layout::folded);
    both({"cost", "--tokens", "32K", "--d-model", "4096", "--heads", "32", "--kv-heads", "8", "--d-ff", "14336",
          "--activation", "swiglu", "--layers", "32", "--batch", "8", "--dtype", "bf16", "--attention", "causal-window",
          "--window", "4096"},
         Layout::folded);

    // --help of the program and of every command: the examples broken with " \" between an option and the next
    both({"--help"}, Layout::continued);
    for (const char* c : {"run", "steps", "explain", "compare", "draft", "list", "check", "decode", "export", "diff", "cost",
                          "report", "golden", "random", "bench"}) {
        const auto h = both({c, "--help"}, Layout::continued);
        CHECK(h.status == 0);
    }
    const auto h = run_cli({"cost", "--help"});
    CHECK(h.out.find("  attntrace cost --tokens 4K --d-model 4096 --heads 32 --kv-heads 8 \\\n"
                     "      --layers 32 --d-ff 14336 --activation swiglu --dtype bf16\n") != std::string::npos);
    // the command so broken still runs: the shell joins its lines
    const auto shell = attntrace::test::run_shell(
        "'" + attntrace::test::binary_path() + "' cost --tokens 4K --d-model 4096 --heads 32 --kv-heads 8 \\\n"
        "      --layers 32 --d-ff 14336 --activation swiglu --dtype bf16");
    CHECK(shell.status == 0);
    CHECK(shell.out.find("d_ff 14336 (swiglu)") != std::string::npos);
}

TEST_CASE("bench's report fits 80 columns: its products a table of their own when beside the stages is too wide",
          "[cli]") {
    // A report as bench makes it (the numbers made up: the view is under test, not the timing).
    attntrace::BenchReport r;
    r.spec.tokens = 512;
    r.spec.d_model = 768;
    r.spec.heads = 12;
    r.spec.d_ff = 3072;
    r.model_type = "gpt2";
    r.model_dir = attntrace::test::source_dir() + "/tests/models/tiny-gpt2";
    r.threads = 2;
    r.repeat = 3;
    r.kernels = "avx2";
    r.peak_gflops = 97.25;
    r.micro_kernel_gflops = 45.5;
    r.have_blas = true;
    r.blocking.tile = {6, 16};
    r.blocking.blocking = {1024, 714, 96};
    r.blocking.derived = true;
    r.blocking.caches.source = "sysfs";
    r.blocking.caches.l1d = {32 << 10, 8, 1};
    r.blocking.caches.l2 = {512 << 10, 8, 1};
    r.blocking.caches.l3 = {32 << 20, 16, 2};
    for (const char* policy : {"full", "none"}) {
        attntrace::PolicyTimings run;
        run.policy = attntrace::parse_trace_policy(policy, "--trace");
        run.streamed_attention = std::string(policy) == "none";
        run.estimated_peak = 23456789;
        double t = 1e-3;
        for (const char* stage : {"embed", "qkv", "scores", "softmax", "mix", "out", "ffn", "block"}) {
            attntrace::StageTiming s;
            s.name = stage;
            s.median = t, s.min = 0.9 * t, s.max = 1.2 * t;
            t *= 1.7;
            if (std::string(stage) == "qkv" || std::string(stage) == "ffn") {
                s.flops = 2.0 * 64 * 768 * 2304;
                s.kernel_median = 0.5 * s.median;
                s.blas_median = 0.6 * s.median;
            }
            run.stages.push_back(s);
        }
        r.runs.push_back(run);
    }
    std::ostringstream narrow, wide;
    attntrace::render_bench(narrow, r, true, kPipeWidth);
    attntrace::render_bench(wide, r, true, 0);
    INFO(narrow.str());
    check_wrapped(narrow.str(), wide.str(), Layout::folded);
    auto first_row = [](const std::string& text, const std::string& stage) {
        for (const auto& line : lines_of(text))
            if (line.rfind(stage + " ", 0) == 0) return line;
        return std::string();
    };
    CHECK(first_row(wide.str(), "stage").find("GFLOP  |  ") != std::string::npos);
    const std::string below = "\nthe stages' matrix products alone (GFLOP/s):\nstage ";
    REQUIRE(narrow.str().find(below) != std::string::npos);
    const auto products = lines_of(narrow.str().substr(narrow.str().find(below) + 1));
    REQUIRE(products.size() > 4);
    CHECK(products[2].rfind("qkv ", 0) == 0);  // the stages with products alone
    CHECK(products[3].rfind("ffn ", 0) == 0);
    CHECK(products[4].empty());
    CHECK(first_row(wide.str(), "qkv").find('|') != std::string::npos);  // the products beside the stages
    CHECK(first_row(narrow.str(), "qkv").find('|') == std::string::npos);  // below them

    // The real command, as a process (bench sets the allocator's thresholds): every line within 80 columns.
    const auto b = attntrace::test::run_process({"--threads", "1", "bench", "--tokens", "16", "--d-model", "16", "--heads",
                                                  "2", "--d-ff", "32", "--repeat", "1", "--trace", "full", "--trace", "none"});
    REQUIRE(b.status == 0);
    for (const auto& line : lines_of(b.out)) {
        INFO(line);
        CHECK(attntrace::display_width(line) <= kPipeWidth);
    }
}

TEST_CASE("a table too wide folds its folding columns under each row, else wraps its last column under itself",
          "[cli]") {
    using attntrace::TextColumn;
    const std::vector<TextColumn> columns{{"name"}, {"where", false, true, "at"}, {"value", true}, {"note"}};
    const std::vector<std::vector<std::string>> rows{{"alpha", "[0,1]", "0.25", "a short note"},
                                                     {"beta", "", "12.50", "a note long enough to wrap under itself"}};
    // Wide: every column on its row, the numbers right-aligned.
    CHECK(attntrace::format_text_table(columns, rows, 0) ==
          "name   where  value  note\n"
          "alpha  [0,1]   0.25  a short note\n"
          "beta          12.50  a note long enough to wrap under itself\n");
    // 48 columns: the note keeps 16 or more beside the others and takes two lines: it wraps under itself.
    CHECK(attntrace::format_text_table(columns, rows, 48) ==
          "name   where  value  note\n"
          "alpha  [0,1]   0.25  a short note\n"
          "beta          12.50  a note long enough to wrap\n"
          "                     under itself\n");
    // 40: beside all three the note would take three lines; "where" folds under its row as "at ...", none for
    // an empty cell, and the note wraps in the room left.
    CHECK(attntrace::format_text_table(columns, rows, 40) ==
          "name   value  note\n"
          "alpha   0.25  a short note\n"
          "    at [0,1]\n"
          "beta   12.50  a note long enough to wrap\n"
          "              under itself\n");
    // A table with nothing to fold wraps its last column however many lines it takes.
    const std::vector<TextColumn> plain{{"name"}, {"value", true}, {"note"}};
    CHECK(attntrace::format_text_table(plain, {{"alpha", "0.25", "a short note"}, {"beta", "12.50", rows[1][3]}}, 30) ==
          "name   value  note\n"
          "alpha   0.25  a short note\n"
          "beta   12.50  a note long\n"
          "              enough to wrap\n"
          "              under itself\n");
    CHECK(attntrace::table_fits(columns, rows, 60));
    CHECK_FALSE(attntrace::table_fits(columns, rows, 59));
    // A command broken between words, an option with its value, "&&" before the next command.
    CHECK(attntrace::wrap_command("attntrace run x.json --steps hook_pattern", 30, "  ", "      ") ==
          "  attntrace run x.json \\\n      --steps hook_pattern\n");
    CHECK(attntrace::wrap_command("attntrace export a -o t.json && attntrace report t.json", 40, "", "  ") ==
          "attntrace export a -o t.json && \\\n  attntrace report t.json\n");
    CHECK(attntrace::wrap_command("attntrace run --text \"the ring fell\" x", 26, "", "  ") ==
          "attntrace run \\\n  --text \"the ring fell\" x\n");
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
    const auto d = run_cli({"diff", dir.file("ours.json"), src + "/docs/examples/mine.json"}, {kUnwrapped});
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
    const auto small = run_cli({"cost", "--tokens", "8", "--d-model", "4", "--heads", "1"}, {kUnwrapped});
    const auto big = run_cli({"cost", "--tokens", "512"}, {kUnwrapped});
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

}  // namespace test_text_width

// Hostile numbers: values near float32's limit (3.4e38) that the pipeline
// carries without overflow, but whose sums attntrace computes for display (a
// claim's row sums, a summary's row sums) would not fit. Such an overflow is
// refused like a step's own, naming the step, with exit 2, never printed as
// "inf" with exit 0; heatmap legends and cells show such numbers compactly.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "core/decimal.hpp"
#include "render/heatmap.hpp"
#include "support.hpp"

using attntrace::test::CliResult;
using attntrace::test::read_text;
using attntrace::test::run_cli;
using attntrace::test::TempDir;
using attntrace::test::write_text;
using nlohmann::json;

namespace test_hostile_numbers {

namespace {

// The softmax lesson with a given row of scores `row` and one claim on the row sum of those scores.
std::string lesson_with_scores(const TempDir& dir, const json& row) {
    json doc = json::parse(read_text(attntrace::test::lessons_dir() + "/000-softmax-example-row.json"));
    doc["given"] = {{"blocks.0.attn.hook_attn_scores", {row}}};
    doc["claims"] = {{{"id", "sum"},
                      {"step", "blocks.0.attn.hook_attn_scores"},
                      {"of", "row_sum"},
                      {"decimals", 1},
                      {"values", {1.0}},
                      {"expect", "disagrees"}}};
    const std::string file = dir.file("scores.json");
    write_text(file, doc.dump());
    return file;
}

void require_overflow_refused(const CliResult& r, const std::vector<std::string>& needles) {
    INFO(r.err);
    CHECK(r.status == 2);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    for (const auto& n : needles) CHECK(r.err.find(n) != std::string::npos);
    CHECK(r.out.find("inf inf") == std::string::npos);
    CHECK(r.out.find("computed:       inf") == std::string::npos);
}

}  // namespace

TEST_CASE("a claim's row sum past float32 is refused, naming the claim and the step", "[hostile]") {
    TempDir dir;
    // 3e38 + 3e38 + 1 + 1: finite scores, softmax runs (it subtracts the max), the sum is no float.
    const std::string file = lesson_with_scores(dir, {3e38, 3e38, 1.0, 1.0});
    for (const char* command : {"run", "check", "export", "report"}) {
        INFO(command);
        std::vector<std::string> args{command, file};
        if (std::string(command) == "export" || std::string(command) == "report") args.insert(args.end(), {"-o", dir.file("out")});
        require_overflow_refused(run_cli(args), {file, "claims[0]", "blocks.0.attn.hook_attn_scores", "+inf", "overflow"});
    }
    CHECK(dir.entries() == std::vector<std::string>{"scores.json"});
    // Near the limit but within it (3e38 + 3e38 - 3e38 + 1): checked as any claim, the sum shown.
    const std::string within = lesson_with_scores(dir, {3e38, 3e38, -3e38, 1.0});
    const CliResult r = run_cli({"run", within});
    CHECK(r.status == 0);
    CHECK(r.out.find("✗ claim sum (row sums): disagrees") != std::string::npos);
}

TEST_CASE("a summary's row sum past float32 is refused, naming the step", "[hostile]") {
    TempDir dir;
    json doc = json::parse(read_text(lesson_with_scores(dir, {3e38, 3e38, 1.0, 1.0})));
    doc["claims"] = json::array();
    write_text(dir.file("summary.json"), doc.dump());
    require_overflow_refused(run_cli({"run", dir.file("summary.json"), "--trace", "summary"}),
                             {dir.file("summary.json"), "blocks.0.attn.hook_attn_scores", "summary", "+inf"});
    // The full trace shows no row sums: it runs.
    CHECK(run_cli({"run", dir.file("summary.json")}).status == 0);
}

TEST_CASE("heatmap legends and cells near float32's limit are compact numbers, never inf", "[hostile][heatmap]") {
    attntrace::Tensor t(attntrace::Shape{1, 4});
    t.data = {3e38f, -3e38f, 1.0f, 0.0f};
    const std::vector<std::vector<std::string>> labels{{"q"}, {"a", "b", "c", "d"}};
    for (const bool colour : {false, true}) {
        attntrace::HeatmapOptions opt;
        opt.auto_range = true;
        opt.style.color = colour;
        opt.style.width = 0;
        const std::string map = attntrace::format_heatmap(t, {"query", "key"}, labels, opt);
        INFO(map);
        const std::string legend = map.substr(map.find("legend:"));
        CHECK(legend.find("inf") == legend.find("-inf (masked)") + 1);  // the only inf: the masked cells' entry
        CHECK(!std::regex_search(map, std::regex("[0-9]{7}")));       // no 39-digit fixed-point number
        // One format for the legend's bounds, one for the cells: scientific for all, 1 and 0 included.
        CHECK(legend.find("3.0e+38") != std::string::npos);
        CHECK(legend.find("cells in scientific notation") != std::string::npos);
        CHECK(map.find("1e+00") != std::string::npos);
        CHECK(map.find("0e+00") != std::string::npos);
        CHECK(map.find("1.00") == std::string::npos);
        if (!colour) {
            CHECK(legend.find("≤3.0e+38") != std::string::npos);
            CHECK(legend.find("<-1.8e+38") != std::string::npos);  // the first fifth of [-3e38, 3e38]
            CHECK(legend.find("<6.0e+37") != std::string::npos);   // not "6e+37": every bound with 2 digits
            CHECK(map.find("█3e+38") != std::string::npos);        // a cell: six columns, as every other
        }
    }
    // An ordinary scale keeps its two decimals (the goldens and the README hold the rest).
    attntrace::Tensor w(attntrace::Shape{1, 2});
    w.data = {0.25f, 0.75f};
    attntrace::HeatmapOptions opt;
    const std::string map = attntrace::format_heatmap(w, {"query", "key"}, {{"q"}, {"a", "b"}}, opt);
    CHECK(map.find("' ' <0.20  ░ <0.40  ▒ <0.60  ▓ <0.80  █ ≤1.00") != std::string::npos);
    CHECK(map.find("cells to 2 decimals") != std::string::npos);
    CHECK(map.find("e+") == std::string::npos);
}

TEST_CASE("tables and claims near float32's limit print in scientific notation, as numpy does past 1e8", "[hostile]") {
    TempDir dir;
    // Within float32 all the way: the row sum 3e38 + 3e38 - 3e38 + 1 is 3e38.
    const std::string file = lesson_with_scores(dir, {3e38, 3e38, -3e38, 1.0});
    const CliResult r = run_cli({"--color", "never", "run", file, "--precision", "4"});
    INFO(r.out);
    CHECK(r.status == 0);
    CHECK(!std::regex_search(r.out, std::regex("[0-9]{10}")));  // no 39-digit fixed-point number anywhere
    // The scores' table: every cell of it in one notation, 1 included.
    CHECK(r.out.find("3.0000e+38") != std::string::npos);
    CHECK(r.out.find("-3.0000e+38") != std::string::npos);
    CHECK(r.out.find("1.0000e+00") != std::string::npos);
    // The claim's computed row sum too.
    CHECK(std::regex_search(r.out, std::regex("computed: +3\\.0+e\\+38")));
    // Below the threshold nothing changes: fixed-point, as the goldens and README hold.
    CHECK(attntrace::format_number(99999992.0f, 2) == "99999992.00");  // the float32 just below 1e8
    CHECK(attntrace::format_number(12345.678f, 2) == "12345.68");
    CHECK(attntrace::format_number(-1e8f, 1) == "-1.0e+08");
    CHECK(attntrace::format_number(-0.00001f, 3) == "0.000");
}

}  // namespace test_hostile_numbers

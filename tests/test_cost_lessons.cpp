// Cost lessons (docs/cost.md): the articles' cost claims checked like the
// pipeline lessons' claims, with units, ratios and an article's rounded
// intermediates; the shipped cost lessons; bad cost lessons refused with one
// line naming the file and field.
#include <catch2/catch.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "cost/cost_lesson.hpp"
#include "support.hpp"

using namespace attntrace;
using attntrace::test::read_text;
using attntrace::test::run_cli;

namespace test_cost_lessons {

namespace {

namespace fs = std::filesystem;

const std::string kCostBadDir = std::string(ATTNTRACE_TESTS_DIR) + "/bad-input/cost";

// A cost lesson with the given claims over a one-head fp32 spec of n tokens.
CostLesson lesson_with(const nlohmann::json& claims, std::uint64_t n = 4096) {
    nlohmann::json doc = {{"format", "attntrace-cost-lesson"},
                          {"version", 1},
                          {"id", "t"},
                          {"title", "t"},
                          {"source", {{"document", "test"}}},
                          {"spec", {{"tokens", n}, {"d_model", 64}, {"heads", 1}, {"dtype", "fp32"}}},
                          {"claims", claims}};
    return parse_cost_lesson(doc, "test.json");
}

nlohmann::json claim(const char* quantity, const char* unit, double value, int decimals, const char* expect) {
    return {{"id", "c"}, {"quantity", quantity}, {"unit", unit}, {"value", value}, {"decimals", decimals}, {"expect", expect}};
}

CostClaimResult check_one(const nlohmann::json& c, std::uint64_t n = 4096) {
    static CostLesson keep;  // the result points into the lesson
    keep = lesson_with(nlohmann::json::array({c}), n);
    return check_cost_lesson(keep).results.at(0);
}

}  // namespace

TEST_CASE("a cost claim is read in its unit: binary prefixes are powers of 1024, decimal ones powers of 1000",
          "[cost-lesson]") {
    // 4096² x 4 bytes = 67,108,864 bytes = 64 MiB = 67.1 MB.
    auto mib = check_one(claim("matrix_bytes", "MiB", 64, 0, "agrees"));
    CHECK(mib.exact == 64.0);
    CHECK(mib.verdict == Verdict::agrees);
    auto mb = check_one(claim("matrix_bytes", "MB", 64, 0, "disagrees"));
    CHECK(mb.exact == Approx(67.108864).epsilon(1e-12));
    CHECK(mb.verdict == Verdict::disagrees);
    CHECK(check_one(claim("matrix_bytes", "MB", 67.1, 1, "agrees")).verdict == Verdict::agrees);
    CHECK(check_one(claim("matrix_entries", "Mi", 16, 0, "agrees")).exact == 16.0);
    CHECK(check_one(claim("matrix_entries", "million", 16.78, 2, "agrees")).verdict == Verdict::agrees);
    CHECK(check_one(claim("matrix_entries", "", 16777216, 0, "agrees")).verdict == Verdict::agrees);
}

TEST_CASE("a printed cost agrees when the computed one rounds to it, ties included", "[cost-lesson]") {
    // 1000² = 1,000,000 entries x 4 bytes = 4 MB exactly; 4.5 printed with 0 decimals is a tie away.
    CHECK(check_one(claim("matrix_bytes", "MB", 4, 0, "agrees"), 1000).verdict == Verdict::agrees);
    CHECK(check_one(claim("matrix_bytes", "MB", 4.0, 3, "agrees"), 1000).verdict == Verdict::agrees);
    CHECK(check_one(claim("matrix_bytes", "MB", 4.001, 3, "disagrees"), 1000).verdict == Verdict::disagrees);
    CHECK(check_one(claim("matrix_bytes", "MB", 5, 0, "disagrees"), 1000).verdict == Verdict::disagrees);
}

TEST_CASE("a rounded intermediate gives agrees-when-rounded only when the exact figure disagrees", "[cost-lesson]") {
    // 002: 4096² = 16.78 million; x 32 x 32 = 17.18 billion. From 16 million (cut down): 16.38 billion.
    auto c = claim("model_scores", "billion", 16, 0, "agrees-when-rounded");
    c["spec"] = {{"heads", 32}, {"layers", 32}, {"d_model", 4096}};
    c["round_first"] = {{{"quantity", "matrix_entries"}, {"unit", "million"}, {"decimals", 0}, {"mode", "down"}}};
    auto r = check_one(c);
    CHECK(r.exact == Approx(17.179869184).epsilon(1e-12));
    REQUIRE(r.document);
    CHECK(*r.document == Approx(16.384).epsilon(1e-12));
    CHECK(r.verdict == Verdict::agrees_when_rounded);
    // Rounded to the nearest million instead, 16.78 is 17: 17.4 billion, which 16 does not explain.
    c["round_first"][0]["mode"] = "nearest";
    auto nearest = check_one(c);
    CHECK(*nearest.document == Approx(17.408).epsilon(1e-12));
    CHECK(nearest.verdict == Verdict::disagrees);
    // A claim the exact figure already explains stays "agrees", rounding or not.
    c["value"] = 17;
    CHECK(check_one(c).verdict == Verdict::agrees);
}

TEST_CASE("a ratio divides the quantity of the claim's spec by the same quantity of `over`", "[cost-lesson]") {
    auto c = claim("matrix_entries", "x", 4, 0, "agrees");
    c["spec"] = {{"tokens", 8192}};
    c["over"] = {{"tokens", 4096}};
    CHECK(check_one(c).exact == 4.0);
    // 004: 200,000² / 102,334,464 window pairs = 390.87.
    auto w = claim("scores_needed", "x", 390, 0, "disagrees");
    w["over"] = {{"attention", "window"}, {"window", 512}};
    auto r = check_one(w, 200000);
    CHECK(r.exact == Approx(4e10 / 102334464.0).epsilon(1e-12));
    CHECK(r.verdict == Verdict::disagrees);
}

TEST_CASE("the derived quantities equal estimate_cost's figures", "[cost-lesson]") {
    auto c = claim("model_matrix_bytes", "B", 0, 0, "disagrees");
    c["spec"] = {{"tokens", 3000}, {"heads", 8}, {"d_model", 512}, {"layers", 6}, {"batch", 2}, {"dtype", "bf16"},
                 {"attention", "causal-window"}, {"window", 700}};
    CostLesson l = lesson_with(nlohmann::json::array({c}));
    const CostReport ref = estimate_cost(l.claims[0].spec);
    struct Q {
        const char* name;
        double want;
    };
    for (const Q& q : {Q{"model_matrix_bytes", ref.model_matrix_bytes}, Q{"model_scores", ref.model_scores},
                       Q{"model_scores_needed", ref.model_scores_needed}, Q{"matrix_bytes", ref.matrix_bytes},
                       Q{"scores_needed", ref.scores_needed}, Q{"layer_flops", ref.layer_flops},
                       Q{"model_flops", ref.model_flops}, Q{"streaming_bytes", ref.streaming_bytes}}) {
        c["quantity"] = q.name;
        c["unit"] = std::string(q.name).find("bytes") != std::string::npos ? "B" : "";
        INFO(q.name);
        CHECK(check_one(c).exact == q.want);
    }
}

TEST_CASE("an answer is computed and shown, with no verdict to expect", "[cost-lesson]") {
    nlohmann::json a = {{"id", "q"}, {"answer", true}, {"quantity", "matrix_bytes"}, {"unit", "GiB"}, {"decimals", 0},
                        {"spec", {{"tokens", 32768}, {"dtype", "fp16"}}}};
    auto r = check_one(a);
    CHECK(r.exact == 2.0);
    CHECK(r.verdict == Verdict::not_checkable);
    CHECK(r.as_expected());
}

TEST_CASE("every shipped cost lesson checks as its author expects", "[cost-lesson]") {
    std::size_t n = 0;
    for (const auto& e : fs::directory_iterator(attntrace::test::lessons_dir() + "/cost")) {
        if (e.path().extension() != ".json") continue;
        ++n;
        CostLesson l = read_cost_lesson(e.path().string());
        CostCheckReport r = check_cost_lesson(l);
        for (const auto& res : r.results) {
            INFO(l.id << " claim " << res.claim.id << ": " << verdict_name(res.verdict) << ", computed " << res.exact);
            CHECK(res.as_expected());
        }
    }
    CHECK(n >= 3);
}

TEST_CASE("attntrace check reads a cost lesson by id, as text and as JSON", "[cost-lesson][cli]") {
    auto r = run_cli({"check", "002-attention-scores"});
    INFO(r.err);
    CHECK(r.status == 0);
    CHECK(r.out.find("agrees-when-rounded") != std::string::npos);
    CHECK(r.out.find("right   16.78 million") != std::string::npos);
    auto j = run_cli({"check", "004-sliding-window-saving", "--format", "json"});
    REQUIRE(j.status == 0);
    auto doc = nlohmann::json::parse(j.out);
    const auto& entry = doc["lessons"][0];
    CHECK(entry["kind"] == "cost");
    CHECK(entry["as_expected"] == true);
    CHECK(entry["claims"][2]["verdict"] == "disagrees");
    CHECK(entry["claims"][2]["computed"].get<double>() == Approx(390.87).epsilon(1e-4));
}

TEST_CASE("commands that run the pipeline refuse a cost lesson in one line", "[cost-lesson][cli]") {
    attntrace::test::TempDir dir;
    for (const char* cmd : {"run", "export", "report", "explain"}) {
        std::vector<std::string> args = {cmd, "000-memory-table"};
        if (std::string(cmd) == "explain") args.push_back("blocks.0.attn.hook_pattern[0,0,0]");
        if (std::string(cmd) == "export" || std::string(cmd) == "report") {
            args.push_back("-o");
            args.push_back(dir.file("out"));
        }
        auto r = run_cli(args);
        INFO(cmd << ": " << r.err);
        CHECK(r.status == 2);
        CHECK(r.err.find("format") != std::string::npos);
        CHECK(r.err.find("attntrace check") != std::string::npos);
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    }
    CHECK(dir.entries().empty());
}

TEST_CASE("every bad cost lesson is refused by check with one line naming the file and field", "[cost-lesson][bad-input]") {
    auto cases = nlohmann::json::parse(read_text(kCostBadDir + "/cases.json"));
    std::size_t files = 0;
    for (const auto& e : fs::directory_iterator(kCostBadDir))
        if (e.path().extension() == ".json" && e.path().filename() != "cases.json") {
            ++files;
            INFO("file without an entry in cases.json: " << e.path().filename());
            CHECK(cases.contains(e.path().filename().string()));
        }
    CHECK(files == cases.size());
    CHECK(files >= 20);
    for (auto it = cases.begin(); it != cases.end(); ++it) {
        const std::string path = kCostBadDir + "/" + it.key();
        auto r = run_cli({"check", path});
        INFO(it.key() << ": " << r.err);
        CHECK(r.status == 2);
        CHECK(r.out.empty());
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
        CHECK(r.err.find(path) != std::string::npos);
        for (const auto& needle : it.value()) {
            INFO("expected in the error line: " << needle.get<std::string>());
            CHECK(r.err.find(needle.get<std::string>()) != std::string::npos);
        }
    }
}

}  // namespace test_cost_lessons

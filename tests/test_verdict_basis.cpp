// Verdicts that say what they rest on (issue 14 item 12, docs/lesson-format.md
// Claims): a claim agreeing with values computed from a given step the article
// got wrong is agrees-from-given, naming that step, in the check, run, the
// summary lines and the JSON; a given step that rounds from its formula, or
// has none, leaves a plain agrees. A claim that still disagrees in a lesson
// that rounds shows the rounded run's numbers beside the exact ones.
#include <catch2/catch.hpp>

#include <string>

#include <nlohmann/json.hpp>

#include "evaluate/evaluate.hpp"
#include "support.hpp"

using namespace attntrace;
using nlohmann::json;

namespace test_verdict_basis {

namespace {

// X = I, W_Q = diag(q00, 1), W_K = W_V = I: Q = diag(q00, 1), and with Q
// given, S = Q_given·Kᵀ = Q_given (K = I).
json doc_with_q(double q00, const json& given_q) {
    return {{"format", "attntrace-lesson"}, {"version", 1}, {"id", "verdict-basis"}, {"title", "verdict basis"},
            {"tokens", {"a", "b"}}, {"config", {{"d_model", 2}, {"heads", 1}}},
            {"run", {{"from", "qkv"}, {"to", "softmax"}}},
            {"weights", {{"W_Q", {{q00, 0}, {0, 1}}}, {"W_K", {{1, 0}, {0, 1}}}, {"W_V", {{1, 0}, {0, 1}}}}},
            {"given", {{"blocks.0.hook_resid_pre", {{1, 0}, {0, 1}}}, {"blocks.0.attn.hook_q", given_q}}},
            {"claims", {{{"id", "S"}, {"step", "blocks.0.attn.hook_scores_raw"}, {"decimals", 2},
                         {"values", given_q}, {"expect", "agrees"}}}}};
}

ClaimResult only_claim(const json& doc) {
    auto e = evaluate(parse_lesson(doc.dump(), "verdict-basis.json"));
    REQUIRE(e->report.results.size() == 1);
    return e->report.results[0];
}

}  // namespace

TEST_CASE("agreeing with numbers computed from a wrong given value is agrees-from-given, naming it", "[verdicts]") {
    // X·W_Q = I, but the article prints Q with a 2: S follows from its Q, not from its inputs
    const ClaimResult r = only_claim(doc_with_q(1, {{1, 0}, {0, 2}}));
    CHECK(r.verdict == Verdict::agrees_from_given);
    CHECK(r.rests_on == "blocks.0.attn.hook_q");
    CHECK(r.max_deviation == 0);
}

TEST_CASE("a given value that rounds from its formula, or has none, leaves a plain agrees", "[verdicts]") {
    // X·W_Q has 0.333, printed 0.33 at the 2 decimals the given is written with: not wrong
    CHECK(only_claim(doc_with_q(0.333, {{0.33, 0}, {0, 1}})).verdict == Verdict::agrees);
    // 0.333 printed 0.3 is also its rounding (to 1 decimal); 0.34 is not (to 2)
    CHECK(only_claim(doc_with_q(0.333, {{0.3, 0}, {0, 1}})).verdict == Verdict::agrees);
    CHECK(only_claim(doc_with_q(0.333, {{0.34, 0}, {0, 1}})).verdict == Verdict::agrees_from_given);
    // without W_Q the given Q has no formula: nothing shows it wrong
    json doc = doc_with_q(1, {{1, 0}, {0, 2}});
    doc["weights"].erase("W_Q");
    const ClaimResult r = only_claim(doc);
    CHECK(r.verdict == Verdict::agrees);
    CHECK(r.rests_on.empty());
}

TEST_CASE("agrees-from-given in check, run, the summary lines and the JSON, and as an expectation", "[verdicts]") {
    attntrace::test::TempDir dir;
    json doc = doc_with_q(1, {{1, 0}, {0, 2}});
    attntrace::test::write_text(dir.file("wrong.json"), doc.dump());
    auto r = attntrace::test::run_cli({"--color", "never", "check", dir.file("wrong.json")});
    INFO(r.out);
    CHECK(r.status == 1);  // the lesson expects a plain agrees
    CHECK(r.out.find("agrees-from-given") != std::string::npos);
    CHECK(r.out.find("from    blocks.0.attn.hook_q") != std::string::npos);
    CHECK(attntrace::test::unwrapped(r.out).find(
              "1 lesson: 0 agree, 1 agree only from the article's given values, 0 agree when rounded") != std::string::npos);

    doc["claims"][0]["expect"] = "agrees-from-given";
    attntrace::test::write_text(dir.file("expected.json"), doc.dump());
    CHECK(attntrace::test::run_cli({"check", dir.file("expected.json")}).status == 0);
    r = attntrace::test::run_cli({"--color", "never", "run", dir.file("expected.json"), "--steps", "hook_scores_raw"});
    // Wrapped to 80 columns: the phrases are found across line breaks.
    CHECK(attntrace::test::unwrapped(r.out).find(
              "agrees only from the article's given values: computed from blocks.0.attn.hook_q") != std::string::npos);
    CHECK(attntrace::test::unwrapped(r.out).find("claims: 0 agree, 1 agree only from the article's given values") !=
          std::string::npos);

    r = attntrace::test::run_cli({"export", dir.file("expected.json"), "-o", "-"});
    REQUIRE(r.status == 0);
    const json claim = json::parse(r.out)["claims"][0];
    CHECK(claim["verdict"] == "agrees-from-given");
    CHECK(claim["expected"] == "agrees-from-given");
    CHECK(claim["rests_on"] == "blocks.0.attn.hook_q");
}

TEST_CASE("a claim that still disagrees in a lesson that rounds shows the rounded run's numbers", "[verdicts]") {
    // softmax of [0, ln 2] is [1/3, 2/3]; the article rounds the weights to 1 decimal ([0.3, 0.7]) and
    // prints [0.5, 0.5]: wrong either way
    json doc = {{"format", "attntrace-lesson"}, {"version", 1}, {"id", "rounded"}, {"title", "rounded"},
                {"tokens", {"a", "b"}}, {"query_tokens", {"q"}}, {"config", {{"d_model", 2}}},
                {"run", {{"from", "softmax"}, {"to", "softmax"}}},
                {"given", {{"blocks.0.attn.hook_attn_scores", {{0.0, 0.6931472}}}}},
                {"document_rounding", {{"blocks.0.attn.hook_pattern", 1}}},
                {"claims", {{{"id", "A"}, {"step", "hook_pattern"}, {"decimals", 2}, {"values", {{0.5, 0.5}}},
                             {"expect", "disagrees"}}}}};
    attntrace::test::TempDir dir;
    attntrace::test::write_text(dir.file("rounded.json"), doc.dump());
    auto r = attntrace::test::run_cli({"--color", "never", "check", dir.file("rounded.json")});
    INFO(r.out);
    CHECK(r.status == 0);
    const auto rounded = r.out.find("      rounded ");
    REQUIRE(rounded != std::string::npos);
    const std::string line = r.out.substr(rounded, r.out.find('\n', rounded) - rounded);
    CHECK(line.find("0.30 0.70") != std::string::npos);
    CHECK(r.out.find("right   0.33 0.67") != std::string::npos);
    r = attntrace::test::run_cli({"--color", "never", "run", dir.file("rounded.json")});
    CHECK(r.out.find("with the article's rounding: ") != std::string::npos);

    // nothing rounded before the claim's step: no rounded line
    doc["document_rounding"] = {{"blocks.0.attn.softmax.hook_row_max", 1}};  // the max, 1, is its own rounding
    doc["given"]["blocks.0.attn.hook_attn_scores"] = {{0.0, 1.0}};
    doc["claims"][0]["values"] = {{0.5, 0.5}};
    attntrace::test::write_text(dir.file("same.json"), doc.dump());
    r = attntrace::test::run_cli({"--color", "never", "check", dir.file("same.json")});
    CHECK(r.out.find("      rounded ") == std::string::npos);
}

}  // namespace test_verdict_basis

// Claims as tutorials print them (docs/lesson-format.md, Claims): a precision
// per row or per value, significant figures (core/decimal.hpp), `at` by label,
// list and range, and `of` as a row's or a column's sum, min, max, mean or
// population std. Every expected number is worked here by hand: the lesson's
// weights are plain normalisations of small integers, exact in float32.
// (The one-line refusals of each wrong form are in bad-input/.)
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/decimal.hpp"
#include "evaluate/evaluate.hpp"
#include "support.hpp"

using namespace attntrace;
using nlohmann::json;

namespace test_claim_selections {

namespace {

constexpr Precision sig(int n) { return {Precision::Unit::significant, n}; }

// Weights s / Σ s of the given scores, exact in float32:
//        a      b      c
//   a  0.25   0.25   0.5        (1, 1, 2) / 4
//   b  0.125  0.375  0.5        (1, 3, 4) / 8
//   c  0.25   0.25   0.5        (2, 2, 4) / 8
const std::vector<std::vector<double>> kWeights = {{0.25, 0.25, 0.5}, {0.125, 0.375, 0.5}, {0.25, 0.25, 0.5}};

json lesson_with(const json& claims, const json& tokens = {"a", "b", "c"}, const char* mask = "none") {
    return {{"format", "attntrace-lesson"}, {"version", 1}, {"id", "claim-selections"}, {"title", "claims"},
            {"tokens", tokens},
            {"config", {{"d_model", 2}, {"heads", 1}, {"normalizer", "sum"}, {"mask", mask}}},
            {"run", {{"from", "mask"}, {"to", "softmax"}}},
            {"given", {{"blocks.0.attn.hook_scores_scaled", {{1, 1, 2}, {1, 3, 4}, {2, 2, 4}}}}},
            {"claims", claims}};
}

json claim(const std::string& id, json fields) {
    fields["id"] = id;
    if (!fields.contains("step")) fields["step"] = "hook_pattern";
    if (!fields.contains("expect")) fields["expect"] = "agrees";
    return fields;
}

std::unique_ptr<Evaluation> run(const json& claims, const char* mask = "none") {
    return evaluate(parse_lesson(lesson_with(claims, {"a", "b", "c"}, mask).dump(), "claims.json"));
}

// The computed cells of a claim, flattened.
std::vector<double> computed(const ClaimResult& r) { return {r.computed.data.begin(), r.computed.data.end()}; }

void require_near(const std::vector<double>& got, const std::vector<double>& want) {
    REQUIRE(got.size() == want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        INFO(i);
        CHECK(got[i] == Approx(want[i]).margin(1e-6));
    }
}

// Σ(x - μ)² / n, square-rooted: the population standard deviation, by the book.
double population_std(const std::vector<double>& x) {
    double mean = 0, squares = 0;
    for (double v : x) mean += v / static_cast<double>(x.size());
    for (double v : x) squares += (v - mean) * (v - mean);
    return std::sqrt(squares / static_cast<double>(x.size()));
}

std::vector<double> column(std::size_t j) { return {kWeights[0][j], kWeights[1][j], kWeights[2][j]}; }

}  // namespace

TEST_CASE("significant figures: a computed value agrees when it rounds to the printed figures", "[claims][decimal]") {
    CHECK(agrees_at_significance(6.03374e-06f, 6.0337e-06f, 5));
    CHECK(!agrees_at_significance(6.03376e-06f, 6.0337e-06f, 5));  // 6.0338e-06
    CHECK(agrees_at_significance(6.03376e-06f, 6.034e-06f, 4));
    CHECK(agrees_at_significance(123456.0f, 123500.0f, 4));
    CHECK(!agrees_at_significance(123456.0f, 123400.0f, 4));
    CHECK(agrees_at_significance(-0.0123456f, -0.01235f, 4));
    CHECK(!agrees_at_significance(0.0123456f, -0.01235f, 4));
    // Ties round half away from zero, as by hand, though 0.145 is stored as 0.14499999.
    CHECK(agrees_at_significance(0.125f, 0.13f, 2));
    CHECK(agrees_at_significance(-0.125f, -0.13f, 2));
    CHECK(agrees_at_significance(0.145f, 0.15f, 2));
    CHECK(!agrees_at_significance(0.145f, 0.14f, 2));
    // A printed 0 has no figure to round at; inf only agrees with itself.
    CHECK(agrees_at_significance(0.0f, 0.0f, 3));
    CHECK(!agrees_at_significance(1e-30f, 0.0f, 3));
    CHECK(agrees_at_significance(-INFINITY, -INFINITY, 3));
    CHECK(!agrees_at_significance(-3e38f, -INFINITY, 3));
}

TEST_CASE("significant figures around powers of ten: the figures and the power both count", "[claims][decimal]") {
    // 0.99996 is 1.000 at 4 figures; 0.99951 is 0.9995, though it is within half of 1.000's last figure.
    CHECK(agrees_at_significance(0.99996f, 1.0f, 4));
    CHECK(!agrees_at_significance(0.99951f, 1.0f, 4));
    CHECK(agrees_at_significance(0.99951f, 0.9995f, 4));
    CHECK(agrees_at_precision(0.99951f, 1.0f, 3));  // at 3 decimals it would agree: the rules differ here
    // Upwards across 10 and down across 0.001.
    CHECK(agrees_at_significance(9.9996f, 10.0f, 4));
    CHECK(!agrees_at_significance(9.9996f, 9.999f, 4));
    CHECK(agrees_at_significance(0.00099996f, 0.001f, 4));
    CHECK(agrees_at_significance(0.0010004f, 0.001f, 4));
    CHECK(!agrees_at_significance(0.0010006f, 0.001f, 4));
    CHECK(round_significant(0.000060337f, 3) == 6.03e-05f);
    CHECK(round_significant(-1250.0f, 2) == -1300.0f);
    CHECK(round_significant(99.96f, 3) == 100.0f);
}

TEST_CASE("numbers at significant figures print with their trailing zeros, and 6 is float32's limit", "[claims][decimal]") {
    CHECK(format_printed(6.0337e-06f, sig(5), Notation::fixed) == "6.0337e-06");
    CHECK(format_printed(0.25f, sig(3), Notation::fixed) == "0.250");
    CHECK(format_printed(0.25f, sig(1), Notation::fixed) == "0.3");  // half away from zero, not %g's half to even
    CHECK(format_printed(100.0f, sig(3), Notation::fixed) == "100");
    CHECK(format_printed(0.99996f, sig(4), Notation::fixed) == "1.000");
    CHECK(format_printed(-0.0f, sig(3), Notation::fixed) == "0.00");
    CHECK(format_printed(0.125f, {Precision::Unit::decimals, 2}, Notation::fixed) == format_number(0.125f, 2));
    // Beyond a claim's figures (the computed values shown with two more), the float as it is: the tie slack
    // (~4 units of the 8th figure here) would move it.
    CHECK(format_printed(1.2345675f, sig(8), Notation::fixed) == "1.2345675");
    // Why at most 6: a lesson's 8.589973e9 is held as the float32 8589973504, which does not read back
    // as 8.589973e9 at 7 figures; a 6-figure 8.58997e9 (held as 8589970432) does at 6.
    CHECK(kMaxSignificant == 6);
    CHECK(format_printed(8.589973e9f, sig(7), Notation::fixed) != "8.589973e+09");
    CHECK(format_printed(8.58997e9f, sig(6), Notation::fixed) == "8.58997e+09");
}

TEST_CASE("decimals per row and per value: each printed number checked at its own", "[claims]") {
    const json printed = {{0.25, 0.25, 0.5}, {0.13, 0.38, 0.5}, {0.25, 0.25, 0.5}};  // 0.125 and 0.375 to 2 decimals
    const auto e = run({claim("per-row-2", {{"decimals", {2, 2, 2}}, {"values", printed}}),
                        claim("per-row-3", {{"decimals", {2, 3, 2}}, {"values", printed}, {"expect", "disagrees"}}),
                        claim("per-value", {{"decimals", {{2, 2, 1}, {2, 3, 1}, {2, 2, 1}}}, {"values", printed},
                                            {"expect", "disagrees"}}),
                        claim("per-value-ok", {{"decimals", {{2, 2, 1}, {3, 3, 1}, {2, 2, 1}}},
                                               {"values", {{0.25, 0.25, 0.5}, {0.125, 0.375, 0.5}, {0.25, 0.25, 0.5}}}})});
    const auto& r = e->report.results;
    REQUIRE(r.size() == 4);
    CHECK(r[0].verdict == Verdict::agrees);
    CHECK(r[1].verdict == Verdict::disagrees);  // 0.125 at 3 decimals is not 0.13, nor 0.375 0.38
    CHECK(r[1].cells_off == 2);
    CHECK(r[2].verdict == Verdict::disagrees);  // only 0.38 is held to 3 decimals
    CHECK(r[2].cells_off == 1);
    CHECK(r[3].verdict == Verdict::agrees);
    CHECK(e->report.all_as_expected());
    // One per value of each row as written, in the order of the values.
    CHECK(e->lesson.claims[1].cell_digits == std::vector<int>{2, 2, 2, 3, 3, 3, 2, 2, 2});
    CHECK(e->lesson.claims[2].precision_at(4) == Precision{Precision::Unit::decimals, 3});
}

TEST_CASE("significant figures in a lesson: written in scientific notation, one or per value", "[claims]") {
    const auto e = run({claim("sig-agrees", {{"at", {{"query", 1}}}, {"sig", 2}, {"values", {0.13, 0.38, 0.5}}}),
                        claim("sig-disagrees", {{"at", {{"query", 1}}}, {"sig", 2}, {"values", {0.12, 0.38, 0.5}},
                                                {"expect", "disagrees"}}),
                        claim("sig-scientific", {{"at", {{"query", 1}, {"key", 0}}}, {"sig", 3}, {"values", 1.25e-1}}),
                        claim("sig-per-value", {{"at", {{"query", 1}}}, {"sig", {1, 3, 1}}, {"values", {0.1, 0.375, 0.5}}}),
                        claim("sig-per-value-off", {{"at", {{"query", 1}}}, {"sig", {3, 3, 1}},
                                                    {"values", {0.1, 0.375, 0.5}}, {"expect", "disagrees"}})});
    const auto& r = e->report.results;
    REQUIRE(r.size() == 5);
    CHECK(r[0].verdict == Verdict::agrees);
    CHECK(r[1].verdict == Verdict::disagrees);
    CHECK(r[1].cells_off == 1);
    CHECK(r[2].verdict == Verdict::agrees);
    CHECK(r[3].verdict == Verdict::agrees);  // 0.125 at 1 figure is 0.1
    CHECK(r[4].verdict == Verdict::disagrees);  // at 3 it is 0.125
    CHECK(e->lesson.claims[0].precision == sig(2));
}

TEST_CASE("at selects rows and columns by label, list and range, in axis order", "[claims]") {
    const auto e = run({claim("labels", {{"at", {{"query", {"a", "c"}}}}, {"decimals", 3},
                                          {"values", {{0.25, 0.25, 0.5}, {0.25, 0.25, 0.5}}}}),
                        claim("range", {{"at", {{"key", {{"from", "b"}, {"to", "c"}}}}}, {"decimals", 3},
                                         {"values", {{0.25, 0.5}, {0.375, 0.5}, {0.25, 0.5}}}}),
                        claim("fixed-and-list", {{"at", {{"query", "b"}, {"key", {0, "c"}}}}, {"decimals", 3},
                                                  {"values", {0.125, 0.5}}}),
                        claim("range-from-only", {{"at", {{"query", {{"from", 1}}}, {"head", "h0"}}}, {"decimals", 3},
                                                   {"values", {{0.125, 0.375, 0.5}, {0.25, 0.25, 0.5}}}}),
                        claim("both-narrowed", {{"at", {{"query", {0, 1}}, {"key", {{"to", "a"}}}}}, {"decimals", 3},
                                                 {"values", {0.25, 0.125}}})});
    const auto& r = e->report.results;
    REQUIRE(r.size() == 5);
    for (const auto& x : r) {
        INFO(x.claim.id);
        CHECK(x.verdict == Verdict::agrees);
    }
    require_near(computed(r[0]), {0.25, 0.25, 0.5, 0.25, 0.25, 0.5});
    CHECK(r[0].computed.shape == Shape{1, 2, 3});
    require_near(computed(r[1]), {0.25, 0.5, 0.375, 0.5, 0.25, 0.5});
    CHECK(r[1].computed.shape == Shape{1, 3, 2});
    require_near(computed(r[2]), {0.125, 0.5});
    require_near(computed(r[3]), {0.125, 0.375, 0.5, 0.25, 0.25, 0.5});
    require_near(computed(r[4]), {0.25, 0.125});
    // Labels resolve to the indices the trace labels them with.
    CHECK(e->lesson.claims[0].select == std::vector<std::pair<Axis, std::vector<std::size_t>>>{{Axis::query, {0, 2}}});
    CHECK(e->lesson.claims[2].at == std::vector<std::pair<Axis, std::size_t>>{{Axis::query, 1}});
}

TEST_CASE("labels are the trace's: a batch's b1, a cross-attention's memory tokens", "[claims]") {
    // The same cells named by label and by index give the same numbers.
    auto same_cells = [](const char* file, const std::string& step, const json& by_label, const json& by_index) {
        json doc = json::parse(attntrace::test::read_text(attntrace::test::lessons_dir() + "/" + file));
        doc["claims"] = json::array();
        for (const json& at : {by_label, by_index})
            doc["claims"].push_back(claim("c" + std::to_string(doc["claims"].size()),
                                          {{"step", step}, {"at", at}, {"decimals", 8}, {"values", 0}, {"expect", "disagrees"}}));
        // One value is expected, so each selection must be one cell; its verdict is beside the point.
        const auto e = evaluate(parse_lesson(doc.dump(), file));
        REQUIRE(e->report.results.size() == 2);
        CHECK(e->report.results[0].computed.data == e->report.results[1].computed.data);
        return std::vector<double>(e->report.results[0].computed.data.begin(), e->report.results[0].computed.data.end());
    };
    const auto b = same_cells("001-batch-padding.json", "hook_pattern",
                              {{"batch", "b1"}, {"head", "h1"}, {"query", "p3"}, {"key", "p2"}},
                              {{"batch", 1}, {"head", 1}, {"query", 3}, {"key", 2}});
    CHECK(b == std::vector<double>{0.0});  // b1 is two tokens long: p2 is padding, blocked
    same_cells("001-cross-attention.json", "blocks.0.cross_attn.hook_pattern",
               {{"head", "h0"}, {"query", "chat"}, {"key", "sleeping"}}, {{"head", 0}, {"query", 1}, {"key", 3}});
}

TEST_CASE("a label that names two positions is refused as ambiguous, naming it", "[claims][errors]") {
    const json claims = json::array({claim("twice", {{"at", {{"key", "the"}}}, {"decimals", 2}, {"values", {0.25, 0.375, 0.25}}})});
    const std::string e = attntrace::test::lesson_refusal(lesson_with(claims, {"the", "b", "the"}).dump(), "twice.json");
    CHECK(e == "twice.json: claims[0].at.key: expected a label naming one key position, or an index, found \"the\", "
               "which names key 0 and 2 (ambiguous)");
    // By index it is fine: the same column of the same lesson.
    json by_index = claims;
    by_index[0]["at"]["key"] = 2;
    by_index[0]["values"] = {0.5, 0.5, 0.5};
    CHECK(attntrace::test::lesson_refusal(lesson_with(by_index, {"the", "b", "the"}).dump()) == "(accepted)");
}

TEST_CASE("wrong selections and precisions are refused in one line naming the field", "[claims][errors]") {
    auto refusal = [](const json& c) { return attntrace::test::lesson_refusal(lesson_with(json::array({c})).dump(), "l.json"); };
    const json full = {{0.25, 0.25, 0.5}, {0.125, 0.375, 0.5}, {0.25, 0.25, 0.5}};
    CHECK(refusal(claim("x", {{"at", {{"query", {"c", "a"}}}}, {"decimals", 2}, {"values", full}})) ==
          "l.json: claims[0].at.query[1]: expected a position after query 2 (\"c\") (a list names positions in axis "
          "order, each once), found query 0 (\"a\")");
    CHECK(refusal(claim("x", {{"at", {{"query", {{"from", 2}, {"to", 0}}}}}, {"decimals", 2}, {"values", full}})) ==
          "l.json: claims[0].at.query.to: expected a position at or after \"from\", query 2 (\"c\"), found query 0 (\"a\")");
    CHECK(refusal(claim("x", {{"sig", 7}, {"values", full}})) ==
          "l.json: claims[0].sig: expected an integer from 1 to 6, found 7");
    // decimals past float32's: the refusal says what to write instead, one value or per value
    CHECK(refusal(claim("x", {{"decimals", 10}, {"values", full}})) ==
          "l.json: claims[0].decimals: expected an integer from 0 to 8 (float32 holds no more decimals; for more digits, "
          "\"sig\": significant figures, up to 6), found 10");
    CHECK(refusal(claim("x", {{"decimals", {2, 9, 2}}, {"values", full}})).find("claims[0].decimals[1]: expected an integer "
                                                                                 "from 0 to 8 (float32 holds no more decimals; "
                                                                                 "for more digits, \"sig\"") != std::string::npos);
    CHECK(refusal(claim("x", {{"sig", 2}, {"decimals", 2}, {"values", full}})) ==
          "l.json: claims[0]: expected either \"decimals\" or \"sig\", found both");
    CHECK(refusal(claim("x", {{"decimals", {2, 2}}, {"values", full}})) ==
          "l.json: claims[0].decimals: expected one integer, an array of 3 (one per row of values) or a 3x3 array "
          "(one per value), found an array of 2");
    CHECK(refusal(claim("x", {{"of", "col_median"}, {"decimals", 2}, {"values", {1, 1, 1}}})) ==
          "l.json: claims[0].of: expected \"values\", \"terms\", \"next_token\", \"angle\", \"frequency\", or row_, col_ or all_ "
          "with sum, min, max, mean, std or "
          "std_unbiased (\"row_sum\", \"col_max\", \"all_mean\"), or head_ with one of them (\"head_mean\": across the heads), "
              "found string \"col_median\"");
    for (const json& c : {claim("x", {{"at", {{"query", {}}}}, {"decimals", 2}, {"values", full}}),
                          claim("x", {{"at", {{"key", "z"}}}, {"decimals", 2}, {"values", full}}),
                          claim("x", {{"sig", {{1, 1, 1}, {1, 0, 1}, {1, 1, 1}}}, {"values", full}})}) {
        const std::string e = refusal(c);
        INFO(e);
        CHECK(e.rfind("l.json: claims[0].", 0) == 0);
        CHECK(e.find('\n') == std::string::npos);
    }
}

TEST_CASE("of: each reduction of rows and of columns against the hand-computed numbers", "[claims]") {
    struct Case {
        const char* of;
        std::vector<double> want;
    };
    const std::vector<Case> cases = {
        {"row_sum", {1, 1, 1}},
        {"row_min", {0.25, 0.125, 0.25}},
        {"row_max", {0.5, 0.5, 0.5}},
        {"row_mean", {1.0 / 3, 1.0 / 3, 1.0 / 3}},
        {"row_std", {population_std(kWeights[0]), population_std(kWeights[1]), population_std(kWeights[2])}},
        {"col_sum", {0.625, 0.875, 1.5}},
        {"col_min", {0.125, 0.25, 0.5}},
        {"col_max", {0.25, 0.375, 0.5}},
        {"col_mean", {0.625 / 3, 0.875 / 3, 0.5}},
        {"col_std", {population_std(column(0)), population_std(column(1)), 0.0}},
    };
    // By hand: row b's std is √(((1/8 - 1/3)² + (3/8 - 1/3)² + (1/2 - 1/3)²) / 3) = √(42/576 / 3) = 0.155902.
    CHECK(population_std(kWeights[1]) == Approx(0.155902).margin(1e-6));
    json claims = json::array();
    for (const Case& c : cases) {
        json printed = json::array();
        for (double v : c.want) printed.push_back(std::round(v * 1e4) / 1e4);
        claims.push_back(claim(c.of, {{"of", c.of}, {"decimals", 4}, {"values", {printed}}}));
    }
    const auto e = run(claims);
    REQUIRE(e->report.results.size() == cases.size());
    for (std::size_t i = 0; i < cases.size(); ++i) {
        INFO(cases[i].of);
        CHECK(e->report.results[i].verdict == Verdict::agrees);
        require_near(computed(e->report.results[i]), cases[i].want);
    }
    // Population, not sample: the sample std of row b (÷ 2) is printed, and disagrees.
    const double sample_b = std::sqrt(42.0 / 576 / 2);
    const auto s = run(json::array({claim("sample", {{"at", {{"query", "b"}}}, {"of", "row_std"}, {"decimals", 4},
                                         {"values", std::round(sample_b * 1e4) / 1e4}, {"expect", "disagrees"}})}));
    CHECK(s->report.results[0].verdict == Verdict::disagrees);
    require_near(computed(s->report.results[0]), {population_std(kWeights[1])});
}

TEST_CASE("of: the whole region to one number, and the standard deviation with Bessel correction", "[claims]") {
    // The weights' cells: 0.25 0.25 0.5 / 0.125 0.375 0.5 / 0.25 0.25 0.5, total 3 (three rows of 1), largest 0.5.
    std::vector<double> all;
    for (const auto& r : kWeights) all.insert(all.end(), r.begin(), r.end());
    double mean = 0, sq = 0;
    for (double x : all) mean += x / 9;
    for (double x : all) sq += (x - mean) * (x - mean);
    const double sample_b = std::sqrt(42.0 / 576 / 2);  // row b ÷ (n - 1): √(42/576 / 2) = 0.190941
    CHECK(sample_b == Approx(0.190941).margin(1e-6));
    const auto e = run(json::array({claim("total", {{"of", "all_sum"}, {"decimals", 4}, {"values", 3.0}}),
                                    claim("largest", {{"of", "all_max"}, {"decimals", 4}, {"values", 0.5}}),
                                    claim("smallest-of-b-c", {{"at", {{"query", {"b", "c"}}}}, {"of", "all_min"}, {"decimals", 4},
                                                              {"values", 0.125}}),
                                    claim("spread", {{"of", "all_std"}, {"decimals", 4}, {"values", std::round(std::sqrt(sq / 9) * 1e4) / 1e4}}),
                                    claim("spread-1", {{"of", "all_std_unbiased"}, {"decimals", 4},
                                                       {"values", std::round(std::sqrt(sq / 8) * 1e4) / 1e4}}),
                                    claim("torch-std-b", {{"at", {{"query", "b"}}}, {"of", "row_std_unbiased"}, {"decimals", 4},
                                                          {"values", std::round(sample_b * 1e4) / 1e4}}),
                                    claim("torch-std-cols", {{"of", "col_std_unbiased"}, {"decimals", 4},
                                                             {"values", {std::round(std::sqrt(0.0625 / 24 * 2 / 2) * 1e4) / 1e4, 0.0722, 0}},
                                                             {"expect", "disagrees"}})}));
    REQUIRE(e->report.results.size() == 7);
    for (std::size_t i = 0; i < 6; ++i) {
        INFO(e->report.results[i].claim.id);
        CHECK(e->report.results[i].verdict == Verdict::agrees);
    }
    require_near(computed(e->report.results[0]), {3.0});
    require_near(computed(e->report.results[3]), {std::sqrt(sq / 9)});
    require_near(computed(e->report.results[4]), {std::sqrt(sq / 8)});
    require_near(computed(e->report.results[5]), {sample_b});
    // by hand, column a (0.25, 0.125, 0.25): mean 5/24, Σ(x - μ)² = 2·(1/24)² + (2/24)² = 6/576, ÷ 2 = 0.0541266
    require_near(computed(e->report.results[6]), {std::sqrt(6.0 / 576 / 2), std::sqrt(6.0 / 576 / 2), 0.0});
    CHECK(e->report.results[6].verdict == Verdict::disagrees);  // its first number is not the column's
    // over one cell Bessel's std divides by zero: refused in one line naming the claim's field
    try {
        run(json::array({claim("one", {{"at", {{"query", "a"}, {"key", "a"}}}, {"of", "all_std_unbiased"}, {"decimals", 4}, {"values", 0}})}));
        FAIL("a std_unbiased of one cell was accepted");
    } catch (const InputError& err) {
        CHECK(std::string(err.what()) ==
              "claims.json: claims[0].of: expected all_std_unbiased of at least two cells (it divides by n - 1), found a single value");
    }
}

TEST_CASE("of: head_ reduces across the heads, the averaged weights nn.MultiheadAttention returns", "[claims]") {
    // Two heads' weights s / Σ s, exact in float32: head 0 as kWeights, head 1 of the scores 2 1 1 / 4 3 1 / 1 1 2:
    //   0.5 0.25 0.25 / 0.5 0.375 0.125 / 0.25 0.25 0.5. Their mean, by hand:
    //   0.375 0.25 0.375 / 0.3125 0.375 0.3125 / 0.25 0.25 0.5
    json l = lesson_with(json::array());
    l["config"]["heads"] = 2;
    l["given"]["blocks.0.attn.hook_scores_scaled"] = {{{1, 1, 2}, {1, 3, 4}, {2, 2, 4}}, {{2, 1, 1}, {4, 3, 1}, {1, 1, 2}}};
    l["claims"] = json::array(
        {claim("averaged", {{"of", "head_mean"}, {"decimals", 4}, {"values", {{0.375, 0.25, 0.375}, {0.3125, 0.375, 0.3125}, {0.25, 0.25, 0.5}}}}),
         claim("averaged-b", {{"at", {{"query", "b"}}}, {"of", "head_mean"}, {"decimals", 4}, {"values", {0.3125, 0.375, 0.3125}}}),
         claim("largest-a", {{"at", {{"query", "a"}}}, {"of", "head_max"}, {"decimals", 4}, {"values", {0.5, 0.25, 0.5}}}),
         claim("wrong", {{"at", {{"query", "c"}}}, {"of", "head_mean"}, {"decimals", 2}, {"values", {0.25, 0.3, 0.5}}, {"expect", "disagrees"}})});
    const auto e = evaluate(parse_lesson(l.dump(), "claims.json"));
    REQUIRE(e->report.results.size() == 4);
    for (std::size_t i = 0; i < 3; ++i) {
        INFO(e->report.results[i].claim.id);
        CHECK(e->report.results[i].verdict == Verdict::agrees);
    }
    require_near(computed(e->report.results[1]), {0.3125, 0.375, 0.3125});
    CHECK(e->report.results[3].verdict == Verdict::disagrees);
    require_near(computed(e->report.results[3]), {0.25, 0.25, 0.5});
    // a head fixed by `at` leaves no heads to reduce: refused in one line naming the claim's field
    l["claims"] = json::array({claim("one", {{"at", {{"head", 0}}}, {"of", "head_mean"}, {"decimals", 4}, {"values", kWeights}})});
    try {
        evaluate(parse_lesson(l.dump(), "claims.json"));
        FAIL("a head_mean with its head fixed was accepted");
    } catch (const InputError& err) {
        CHECK(std::string(err.what()) ==
              "claims.json: claims[0].of: expected head_mean of a step with heads left after \"at\" (hook_q, hook_pattern, hook_z ...), "
              "found no head axis");
    }
}

TEST_CASE("reductions over masked scores: -inf cells give -inf sums, minima and means, an infinite std", "[claims]") {
    // Under the causal mask row a's masked scores are (1, -inf, -inf): max 1, the rest unbounded.
    const json at_a = {{"query", "a"}};
    const auto e = run({claim("max", {{"step", "hook_attn_scores"}, {"at", at_a}, {"of", "row_max"}, {"decimals", 0}, {"values", 1}}),
                        claim("min", {{"step", "hook_attn_scores"}, {"at", at_a}, {"of", "row_min"}, {"decimals", 0}, {"values", "-inf"}}),
                        claim("mean", {{"step", "hook_attn_scores"}, {"at", at_a}, {"of", "row_mean"}, {"decimals", 0}, {"values", "-inf"}}),
                        claim("std", {{"step", "hook_attn_scores"}, {"at", at_a}, {"of", "row_std"}, {"decimals", 0}, {"values", 0},
                                      {"expect", "disagrees"}}),
                        claim("key-a-mean", {{"step", "hook_attn_scores"}, {"at", {{"key", "a"}}}, {"of", "row_mean"},
                                             {"decimals", 3}, {"values", (1.0 + 1 + 2) / 3}})},
                       "causal");
    const auto& r = e->report.results;
    REQUIRE(r.size() == 5);
    CHECK(computed(r[0]) == std::vector<double>{1});
    CHECK(computed(r[1]) == std::vector<double>{-INFINITY});
    CHECK(computed(r[2]) == std::vector<double>{-INFINITY});
    CHECK(computed(r[3]) == std::vector<double>{INFINITY});
    CHECK(r[4].verdict == Verdict::agrees);  // key a is seen by every query: scores 1, 1, 2
    CHECK(e->report.all_as_expected());
}

TEST_CASE("the export carries the new fields and verdicts, and check prints the right values at each precision", "[claims][cli]") {
    attntrace::test::TempDir dir;
    const json printed = {{0.25, 0.25, 0.5}, {0.13, 0.38, 0.5}, {0.25, 0.25, 0.5}};
    const json claims = {
        claim("per-row", {{"decimals", {2, 3, 2}}, {"values", printed}, {"expect", "disagrees"}}),
        claim("tiny", {{"at", {{"query", "b"}, {"key", "a"}}}, {"sig", 2}, {"values", 1.3e-1}}),
        claim("keys", {{"at", {{"key", {"a", "c"}}}}, {"of", "col_max"}, {"decimals", 2}, {"values", {0.25, 0.5}}}),
        claim("sums", {{"of", "row_sum"}, {"decimals", 2}, {"values", {1, 1, 1}}}),
    };
    attntrace::test::write_text(dir.file("l.json"), lesson_with(claims).dump());
    const auto x = attntrace::test::run_cli({"export", dir.file("l.json"), "-o", "-"});
    REQUIRE(x.status == 0);
    const json c = json::parse(x.out)["claims"];
    REQUIRE(c.size() == 4);
    CHECK(c[0]["decimals"] == json({{{2, 2, 2}, {3, 3, 3}, {2, 2, 2}}}));  // per value, shaped as printed (head, query, key)
    CHECK(c[0]["verdict"] == "disagrees");
    CHECK(c[0]["cells_off"] == 2);
    CHECK(c[1]["sig"] == 2);
    CHECK(!c[1].contains("decimals"));
    CHECK(c[1]["at"] == json({{"key", 0}, {"query", 1}}));
    CHECK(c[1]["verdict"] == "agrees");
    CHECK(c[2]["at"] == json({{"key", {0, 2}}}));
    CHECK(c[2]["of"] == "col_max");
    CHECK(c[2]["verdict"] == "agrees");
    CHECK(c[3]["of"] == "row_sum");  // as before
    CHECK(c[3]["decimals"] == 2);

    const auto k = attntrace::test::run_cli({"--color", "never", "check", dir.file("l.json")});
    INFO(k.out);
    CHECK(k.status == 0);
    CHECK(k.out.find("printed 0.25 0.25 0.50 | 0.130 0.380 0.500 | 0.25 0.25 0.50\n") != std::string::npos);
    CHECK(k.out.find("right   0.25 0.25 0.50 | 0.125 0.375 0.500 | 0.25 0.25 0.50\n") != std::string::npos);
    // The step and what the claim selects, wrapped under the step's column at 80 columns.
    const std::string rows = attntrace::test::unwrapped(k.out);
    CHECK(rows.find("blocks.0.attn.hook_pattern (key ['a' 'c'], column maxima)") != std::string::npos);
    CHECK(rows.find("blocks.0.attn.hook_pattern (row sums)") != std::string::npos);
    const auto v = attntrace::test::run_cli({"--color", "never", "run", dir.file("l.json"), "--steps", "hook_pattern"});
    CHECK(v.out.find("printed (2-3 dp): 0.25 0.25 0.50 | 0.130 0.380 0.500 | 0.25 0.25 0.50\n") != std::string::npos);
    CHECK(v.out.find("printed (2 sig): 0.13\n") != std::string::npos);
}

}  // namespace test_claim_selections

namespace test_claim_selections {

TEST_CASE("axes: an array printed transposed (a key per row of Aᵀ) is checked cell for cell against the step", "[claims]") {
    // Aᵀ of kWeights: row j is key j's weight from each query
    const json transposed = {{0.25, 0.125, 0.25}, {0.25, 0.375, 0.25}, {0.5, 0.5, 0.5}};
    json wrong = transposed;
    wrong[0][1] = 0.3;  // query b's weight on key a, printed wrong: 0.125
    const auto e = run(json::array({claim("t", {{"axes", {"key", "query"}}, {"decimals", 3}, {"values", transposed}}),
                                    claim("w", {{"axes", {"key", "query"}}, {"decimals", 3}, {"values", wrong}, {"expect", "disagrees"}}),
                                    claim("as-printed", {{"decimals", 3}, {"values", transposed}, {"expect", "disagrees"}}),
                                    // a column of the step, fixed key: one axis left, `axes` naming it alone
                                    claim("col", {{"at", {{"key", "c"}}}, {"axes", {"query"}}, {"decimals", 1}, {"values", {0.5, 0.5, 0.5}}})}));
    REQUIRE(e->report.results.size() == 4);
    for (const auto& r : e->report.results) {
        INFO(r.claim.id);
        CHECK(r.as_expected());
    }
    const ClaimResult& w = e->report.results[1];
    CHECK(w.cells_off == 1);
    // held in the step's order: the wrong number is query b (row 1), key a (column 0)
    CHECK(w.claim.values.data[1 * 3 + 0] == Approx(0.3));
    CHECK(w.claim.values.data[0 * 3 + 1] == Approx(0.25));
    require_near(computed(w), {0.25, 0.25, 0.5, 0.125, 0.375, 0.5, 0.25, 0.25, 0.5});
}

TEST_CASE("axes: refused in one line when it names no free axis, repeats one, leaves one out, or comes with of", "[claims][errors]") {
    auto refusal = [](const json& c) { return attntrace::test::lesson_refusal(lesson_with(json::array({c})).dump(), "l.json"); };
    const json full = {{0.25, 0.25, 0.5}, {0.125, 0.375, 0.5}, {0.25, 0.25, 0.5}};
    CHECK(refusal(claim("x", {{"axes", {"key", "d_model"}}, {"decimals", 2}, {"values", full}})) ==
          "l.json: claims[0].axes[1]: expected an axis the claim leaves free (head, query, key), found string \"d_model\"");
    CHECK(refusal(claim("x", {{"axes", {"key", "key"}}, {"decimals", 2}, {"values", full}})) ==
          "l.json: claims[0].axes[1]: expected each axis once, found key again");
    CHECK(refusal(claim("x", {{"axes", {"key"}}, {"decimals", 2}, {"values", full}})) ==
          "l.json: claims[0].axes: expected every free axis longer than 1 (query is 3), found it left out");
    CHECK(refusal(claim("x", {{"axes", {"key", "query"}}, {"of", "row_sum"}, {"decimals", 2}, {"values", {1, 1, 1}}})) ==
          "l.json: claims[0].axes: expected axes only on a claim of values (not with \"of\"), found an array of 2");
    CHECK(refusal(claim("x", {{"axes", {"key", "query"}}, {"decimals", 2}, {"values", {{0.25, 0.25}, {0.5, 0.5}}}})) ==
          "l.json: claims[0].values: expected a 3x3 array (the selected part of blocks.0.attn.hook_pattern, its axes in the order "
          "of \"axes\"), found a 2x2 array");
}

}  // namespace test_claim_selections

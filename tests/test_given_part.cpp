// Given values for part of a step, and the provenance of agrees-from-given
// per cell (docs/lesson-format.md, Given values): a claim rests on a given
// value the article got wrong only where its own cells were computed from it.
// The lesson: one head, X = [[1, 0], [0, 1]], identity W^Q, W^K, W^V, so
// A = softmax(I / √2) and Z = A (exactly: Z[0] = (e^0.707, 1) / (e^0.707 + 1)
// = (0.6698, 0.3302), Z[1] the same reversed), and W^O = [[1, 2], [0, 1]]:
// out = Z·W^O, out[i] = (Z[i,0], 2·Z[i,0] + Z[i,1]).
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

#include "evaluate/evaluate.hpp"
#include "support.hpp"

using namespace attntrace;
using nlohmann::json;

namespace test_given_part {

namespace {

const double kZ0 = std::exp(1 / std::sqrt(2.0)) / (std::exp(1 / std::sqrt(2.0)) + 1);  // 0.6698

json lesson_with(const json& given, const json& claims) {
    return {{"format", "attntrace-lesson"},
            {"version", 1},
            {"id", "given-part"},
            {"title", "given in part"},
            {"tokens", {"a", "b"}},
            {"config", {{"d_model", 2}, {"heads", 1}}},
            {"run", {{"from", "embed"}, {"to", "out"}}},
            {"inputs", {{"X", {{1, 0}, {0, 1}}}}},
            {"weights", {{"W_Q", {{1, 0}, {0, 1}}}, {"W_K", {{1, 0}, {0, 1}}}, {"W_V", {{1, 0}, {0, 1}}},
                         {"W_O", {{1, 2}, {0, 1}}}}},
            {"given", given},
            {"claims", claims}};
}

// The article's out, computed from its Z whose row b is wrong: (0.35, 0.65) for the right (0.33, 0.67).
json out_claims() {
    return json::array({
        {{"id", "out-a"}, {"step", "hook_attn_out"}, {"at", {{"query", "a"}}}, {"decimals", 2},
         {"values", {0.67, 1.67}}, {"expect", "agrees"}},
        {{"id", "out-b"}, {"step", "hook_attn_out"}, {"at", {{"query", "b"}}}, {"decimals", 2},
         {"values", {0.35, 1.35}}, {"expect", "agrees-from-given"}},
        {{"id", "out"}, {"step", "hook_attn_out"}, {"decimals", 2}, {"values", {{0.67, 1.67}, {0.35, 1.35}}},
         {"expect", "agrees-from-given"}},
    });
}

const ClaimResult& result(const Evaluation& e, const std::string& id) {
    for (const ClaimResult& r : e.report.results)
        if (r.claim.id == id) return r;
    FAIL("no claim " << id);
    throw;
}

}  // namespace

TEST_CASE("a given row replaces that row only: the others keep the formula's values", "[given][pipeline]") {
    const json given = {{"blocks.0.attn.hook_z", {{"at", {{"query", "b"}}}, {"values", {0.35, 0.65}}}}};
    auto e = evaluate(parse_lesson(lesson_with(given, out_claims()).dump(), "l.json"));
    const Step* z = e->exact.find("blocks.0.attn.hook_z");
    REQUIRE(z);
    CHECK(z->source == StepSource::given);
    REQUIRE(z->formula);
    const Tensor& held = z->held();
    CHECK(held.data[0] == z->formula->data[0]);  // row a: the formula's, exactly
    CHECK(held.data[1] == z->formula->data[1]);
    CHECK(held.data[2] == 0.35f);  // row b: the article's
    CHECK(held.data[3] == 0.65f);
    CHECK(std::fabs(z->formula->data[2] - (1 - kZ0)) < 1e-6);
    CHECK(z->note.find("in part (2 of 4 cells") != std::string::npos);
}

TEST_CASE("a claim rests on a wrong given value only where its own cells were computed from it", "[given][check]") {
    const json part = {{"blocks.0.attn.hook_z", {{"at", {{"query", "b"}}}, {"values", {0.35, 0.65}}}}};
    // The same mistake with the whole step given: row a is the right one at 2 decimals.
    const json whole = {{"blocks.0.attn.hook_z", {{0.67, 0.33}, {0.35, 0.65}}}};
    for (const json& given : {part, whole}) {
        auto e = evaluate(parse_lesson(lesson_with(given, out_claims()).dump(), "l.json"));
        const ClaimResult& a = result(*e, "out-a");
        CHECK(a.verdict == Verdict::agrees);  // row a of out reads row a of Z only
        CHECK(a.rests_on.empty());
        CHECK(a.formula_only.size() == 0);
        const ClaimResult& b = result(*e, "out-b");
        CHECK(b.verdict == Verdict::agrees_from_given);
        CHECK(b.rests_on == "blocks.0.attn.hook_z");
        // Without the article's row: out[b] = (Z[b,0], 2·Z[b,0] + Z[b,1]) from the right Z[b] = (1 - kZ0, kZ0).
        REQUIRE(b.formula_only.size() == 2);
        CHECK(std::fabs(b.formula_only.data[0] - (1 - kZ0)) < 1e-6);
        CHECK(std::fabs(b.formula_only.data[1] - (2 * (1 - kZ0) + kZ0)) < 1e-6);
        CHECK(result(*e, "out").verdict == Verdict::agrees_from_given);
    }
}

TEST_CASE("a given value right at its printed decimals rests nothing on it", "[given][check]") {
    // Row b given as the formula rounds it: nothing the article got wrong, every claim agrees plainly.
    const json given = {{"blocks.0.attn.hook_z", {{"at", {{"query", "b"}}}, {"values", {0.33, 0.67}}}}};
    json claims = out_claims();
    claims[1]["values"] = {0.33, 1.33};
    claims[1]["expect"] = "agrees";
    claims[2]["values"] = {{0.67, 1.67}, {0.33, 1.33}};
    claims[2]["expect"] = "agrees";
    auto e = evaluate(parse_lesson(lesson_with(given, claims).dump(), "l.json"));
    for (const ClaimResult& r : e->report.results) CHECK(r.verdict == Verdict::agrees);
}

TEST_CASE("a claim after a right given step computed from a wrong one still rests on the wrong one", "[given][check]") {
    // V row b wrong (the article's (0, 2) for (0, 1)), then Z given as the article computes it from
    // that V (right from the article's V, wrong from X·W^V): out rests on V through Z.
    const double z00 = kZ0, z01 = 1 - kZ0;
    const json given = {{"blocks.0.attn.hook_v", {{"at", {{"key", "b"}}}, {"values", {0, 2}}}},
                        {"blocks.0.attn.hook_z", {{"at", {{"query", "a"}}},
                                                  {"values", {std::round(z00 * 100) / 100, std::round(z01 * 2 * 100) / 100}}}}};
    const json claims = json::array({{{"id", "out-a"}, {"step", "hook_attn_out"}, {"at", {{"query", "a"}}}, {"decimals", 2},
                                      {"values", {0.67, 2.0}}, {"expect", "agrees-from-given"}}});
    auto e = evaluate(parse_lesson(lesson_with(given, claims).dump(), "l.json"));
    const ClaimResult& a = result(*e, "out-a");
    CHECK(a.verdict == Verdict::agrees_from_given);
    CHECK(a.rests_on == "blocks.0.attn.hook_v");
    REQUIRE(a.formula_only.size() == 2);
    CHECK(std::fabs(a.formula_only.data[1] - (2 * z00 + z01)) < 1e-6);  // 1.67: V and Z as the formula gives them
}

TEST_CASE("a wrong given part is refused in one line naming the field", "[given][errors]") {
    auto refusal = [](const json& given) {
        return attntrace::test::lesson_refusal(lesson_with(given, out_claims()).dump(), "l.json");
    };
    CHECK(refusal({{"blocks.0.attn.hook_z", {{"at", {{"pos", "b"}}}, {"values", {0.35, 0.65}}}}}) ==
          "l.json: given.blocks.0.attn.hook_z.at.pos: expected an axis of blocks.0.attn.hook_z (query, head, d_head), "
          "found an unknown axis");
    CHECK(refusal({{"blocks.0.attn.hook_z", {{"at", {{"query", "b"}}}, {"values", {0.35, 0.65, 1}}}}}) ==
          "l.json: given.blocks.0.attn.hook_z.values: expected a 1x2 array (the axes \"at\" leaves of "
          "blocks.0.attn.hook_z: head, d_head), found an array of 3");
    CHECK(refusal({{"blocks.0.attn.hook_z", {{"at", {{"query", "b"}}}}}}) ==
          "l.json: given.blocks.0.attn.hook_z.values: expected a value, found nothing (the field is missing)");
    CHECK(refusal({{"blocks.0.attn.hook_z", {{"at", {{"query", "b"}}}, {"values", {0.35, 0.65}}, {"cells", 1}}}})
              .find("given.blocks.0.attn.hook_z") != std::string::npos);
}

TEST_CASE("a part of a step before run.from is refused: an input has no formula for the other cells", "[given][errors]") {
    json l = lesson_with({{"blocks.0.attn.hook_q", {{"at", {{"query", "b"}}}, {"values", {0, 1}}}}}, json::array());
    l["run"] = {{"from", "scores"}, {"to", "mix"}};
    l["given"]["blocks.0.attn.hook_k"] = {{1, 0}, {0, 1}};
    l["given"]["blocks.0.attn.hook_v"] = {{1, 0}, {0, 1}};
    CHECK(attntrace::test::lesson_refusal(l.dump(), "l.json") ==
          "l.json: given.blocks.0.attn.hook_q: expected the whole step: a step before run.from (\"scores\") is an input, "
          "with no formula to keep the cells it does not give, found a part (\"at\")");
}

}  // namespace test_given_part

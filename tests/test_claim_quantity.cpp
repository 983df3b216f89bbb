// Claims on a quantity inside a step's formula (docs/lesson-format.md,
// Quantities inside a formula): a sinusoidal position's angle p / 10000^(2i/C)
// and frequency, RoPE's p·θ_i and θ_i, per selected cell. The numbers are
// worked here by hand: C = 4, so ω_0 = 1 and ω_1 = 10000^(-2/4) = 0.01.
#include <catch2/catch.hpp>

#include <string>

#include <nlohmann/json.hpp>

#include "evaluate/evaluate.hpp"
#include "support.hpp"

using namespace attntrace;
using nlohmann::json;

namespace test_claim_quantity {

namespace {

json lesson_with(const json& positions, const json& claims) {
    return {{"format", "attntrace-lesson"},
            {"version", 1},
            {"id", "quantities"},
            {"title", "quantities"},
            {"tokens", {"a", "b", "c"}},
            {"config", {{"d_model", 4}, {"heads", 1}, {"positions", positions}}},
            {"run", {{"from", "embed"}, {"to", "scores"}}},
            {"inputs", {{"X", {{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}}}}},
            {"weights", {{"W_Q", {{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}, {0, 0, 0, 1}}},
                         {"W_K", {{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}, {0, 0, 0, 1}}},
                         {"W_V", {{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}, {0, 0, 0, 1}}}}},
            {"claims", claims}};
}

json claim(const std::string& id, const std::string& step, const json& at, const std::string& of, const json& values,
           const std::string& expect) {
    return {{"id", id}, {"step", step}, {"at", at}, {"of", of}, {"decimals", 2}, {"values", values}, {"expect", expect}};
}

}  // namespace

TEST_CASE("a sinusoidal position's angles and frequencies are claimed per cell", "[claims][positions]") {
    const json claims = json::array({
        claim("angles-c", "hook_pos_embed", {{"pos", "c"}}, "angle", {2.0, 2.0, 0.02, 0.02}, "agrees"),
        claim("freq", "hook_pos_embed", {{"pos", 1}, {"d_model", {0, 2}}}, "frequency", {1.0, 0.01}, "agrees"),
        // a tutorial that forgot the 2i/C exponent's 2: 2 / 10000^(1/4) = 0.2
        claim("wrong", "hook_pos_embed", {{"pos", "c"}, {"d_model", 2}}, "angle", 0.2, "disagrees"),
    });
    auto e = evaluate(parse_lesson(lesson_with("sinusoidal", claims).dump(), "q.json"));
    REQUIRE(e->report.results.size() == 3);
    for (const ClaimResult& r : e->report.results) CHECK(r.as_expected());
    const ClaimResult& wrong = e->report.results[2];
    REQUIRE(wrong.computed.size() == 1);
    CHECK(wrong.computed.data[0] == Approx(0.02).epsilon(1e-6));
}

TEST_CASE("RoPE's angles p·θ and frequencies θ are claimed on the rotated queries and keys", "[claims][positions]") {
    const json rope = {{"kind", "rope"}, {"layout", "half"}};
    const json claims = json::array({
        // half layout, hs 4: d0 and d2 are pair 0 (θ_0 = 1), d1 and d3 pair 1 (θ_1 = 0.01)
        claim("q-angles", "hook_rot_q", {{"query", "c"}}, "angle", {2.0, 0.02, 2.0, 0.02}, "agrees"),
        claim("k-freq", "hook_rot_k", {{"key", "a"}}, "frequency", {1.0, 0.01, 1.0, 0.01}, "agrees"),
    });
    auto e = evaluate(parse_lesson(lesson_with(rope, claims).dump(), "q.json"));
    for (const ClaimResult& r : e->report.results) {
        INFO(r.claim.id << " " << r.reason);
        CHECK(r.verdict == Verdict::agrees);
    }
}

TEST_CASE("a quantity a step's formula does not have is refused, naming the field", "[claims][errors]") {
    const json on_q = json::array({claim("x", "hook_q", json::object(), "angle", json::array(), "agrees")});
    CHECK(attntrace::test::lesson_refusal(lesson_with("sinusoidal", on_q).dump(), "q.json") ==
          "q.json: claims[0].step: expected a step whose formula has an angle (hook_pos_embed with sinusoidal "
          "positions; attn.hook_rot_q or hook_rot_k with RoPE), since \"of\" is \"angle\", found blocks.0.attn.hook_q");
    json learned = lesson_with("learned", json::array({claim("x", "hook_pos_embed", {{"pos", 0}}, "frequency",
                                                             {1, 1, 1, 1}, "agrees")}));
    learned["inputs"]["positions"] = {{0, 0, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0}};
    CHECK(attntrace::test::lesson_refusal(learned.dump(), "q.json").find(
              "claims[0].step: expected a step whose formula has a frequency") != std::string::npos);
}

}  // namespace test_claim_quantity

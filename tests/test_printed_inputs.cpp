// Claims off only by the rounding of the inputs an article printed
// (docs/lesson-format.md, Inputs printed rounded): tests/draft-articles/
// linear-causal.ipynb prints nn.Linear weights at PyTorch's 4 decimals and
// A @ V computed from all their digits, so A @ V from the printed weights
// differs in the 4th decimal. Its draft names the weights in input_decimals.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

#include "core/decimal.hpp"
#include "draft/article.hpp"
#include "draft/draft.hpp"
#include "evaluate/evaluate.hpp"
#include "evaluate/printed_inputs.hpp"
#include "support.hpp"

using namespace attntrace;
using nlohmann::json;

namespace test_printed_inputs {

namespace {

// The notebook as an article that shows its printed weights but not the seed they came from (with the seed,
// the draft generates the weights PyTorch had, all their digits, and needs no input_decimals).
json drafted() {
    const std::string file = attntrace::test::source_dir() + "/tests/draft-articles/linear-causal.ipynb";
    std::string text = attntrace::test::read_text(file);
    const std::size_t seed = text.find("\"torch.manual_seed(0)\\n\",");
    REQUIRE(seed != std::string::npos);
    text.erase(seed, std::string("\"torch.manual_seed(0)\\n\",").size());
    return json::parse(draft_lesson(read_article_text(text, file, "notebook")).lesson.dump());
}

const ClaimResult& claim_z(const Evaluation& e) {
    for (const ClaimResult& r : e.report.results)
        if (r.claim.step == "blocks.0.attn.hook_z" && r.claim.at.empty()) return r;
    FAIL("no claim on the whole of Z");
    throw;
}

}  // namespace

TEST_CASE("a notebook's A @ V off in its last digit by the weights' printing agrees when rounded, with a witness run",
          "[printed-inputs][draft]") {
    json l = drafted();
    INFO(l.dump(1));
    REQUIRE(l.contains("input_decimals"));
    CHECK(l["input_decimals"] == json({{"weights.W_Q", 4}, {"weights.W_K", 4}, {"weights.W_V", 4}}));
    l.erase("document_rounding");  // the inputs' rounding alone
    auto with = evaluate(parse_lesson(l.dump(), "nb.json"));
    const ClaimResult& z = claim_z(*with);
    CHECK(z.verdict == Verdict::agrees_when_rounded);
    CHECK(z.reason.find("weights.W_Q at 4") != std::string::npos);
    REQUIRE(z.document.size() == z.claim.values.size());
    for (std::size_t i = 0; i < z.document.size(); ++i)
        CHECK(agrees_as_printed(z.document.data[i], z.claim.values.data[i], z.claim.precision_at(i)));

    json without = l;
    without.erase("input_decimals");
    auto plain = evaluate(parse_lesson(without.dump(), "nb.json"));
    CHECK(claim_z(*plain).verdict == Verdict::disagrees);  // the printed weights alone give another last digit

    // a real mistake, ten units of the last digit, is no rounding of the inputs
    for (auto& c : l["claims"])
        if (c["step"] == "blocks.0.attn.hook_z" && !c.contains("at")) c["values"][0][1] = 0.3125;
    auto wrong = evaluate(parse_lesson(l.dump(), "nb.json"));
    CHECK(claim_z(*wrong).verdict == Verdict::disagrees);
}

TEST_CASE("every run the witness search makes has inputs that print as the article printed them", "[printed-inputs]") {
    json l = drafted();
    l.erase("document_rounding");
    const Lesson lesson = parse_lesson(l.dump(), "nb.json");
    auto e = evaluate(lesson);
    // the report before the search: every claim as the exact run judges it
    CheckReport report = check_claims(lesson, e->exact, nullptr);
    std::size_t runs = 0;
    within_printed_inputs(lesson, report, [&](const Lesson& moved) {
        ++runs;
        for (const auto& [key, decimals] : lesson.input_decimals) {
            const std::string name = key.substr(key.find('.') + 1);
            const Tensor& was = lesson.weights.at(name);
            const Tensor& now = moved.weights.at(name);
            for (std::size_t i = 0; i < was.size(); ++i) REQUIRE(round_decimals(now.data[i], decimals) == was.data[i]);
        }
        auto again = evaluate(moved);
        return again->report;
    });
    CHECK(runs >= 18);  // one per printed weight value (3 weights of 2 x 3), then the witnesses
}

TEST_CASE("a whole matrix off in many cells by the weights' printing: a witness for every cell at once", "[printed-inputs][draft]") {
    // masked-before-scaling.ipynb's 4 x 4 raw scores, from nn.Linear weights scaled up: seven cells off by one or
    // two units of the 4th decimal in both directions, which no single direction of the weights moves together
    const std::string file = attntrace::test::source_dir() + "/tests/draft-articles/masked-before-scaling.ipynb";
    json l = json::parse(draft_lesson(read_article(file)).lesson.dump());
    REQUIRE(l.contains("input_decimals"));
    auto scores = [](const Evaluation& e) -> const ClaimResult& {
        for (const ClaimResult& r : e.report.results)
            if (r.claim.step == "blocks.0.attn.hook_scores_raw" && r.claim.at.empty()) return r;
        FAIL("no claim on the whole of the raw scores");
        throw;
    };
    auto e = evaluate(parse_lesson(l.dump(), "nb.json"));
    const ClaimResult& s = scores(*e);
    CHECK(s.verdict == Verdict::agrees_when_rounded);
    REQUIRE(s.document.size() == s.claim.values.size());
    std::size_t moved = 0;
    for (std::size_t i = 0; i < s.document.size(); ++i) {
        CHECK(agrees_as_printed(s.document.data[i], s.claim.values.data[i], s.claim.precision_at(i)));
        moved += !agrees_as_printed(s.computed.data[i], s.claim.values.data[i], s.claim.precision_at(i));
    }
    CHECK(moved >= 3);  // cells the printed weights alone get wrong

    // three units of the last digit in one cell: more than the weights' printing can move it
    for (auto& c : l["claims"])
        if (c["step"] == "blocks.0.attn.hook_scores_raw" && !c.contains("at")) c["values"][1][1] = 1.9246;
    CHECK(scores(*evaluate(parse_lesson(l.dump(), "nb.json"))).verdict == Verdict::disagrees);
}

TEST_CASE("input_decimals names inputs and weights the lesson holds, or is refused in one line", "[printed-inputs][errors]") {
    json l = drafted();
    l["input_decimals"] = {{"weights.W_O", 4}};
    CHECK(attntrace::test::lesson_refusal(l.dump(), "nb.json") ==
          "nb.json: input_decimals.weights.W_O: expected \"inputs.NAME\", \"weights.NAME\" or \"given.STEP\" of an input, a "
          "weight or a whole given step the lesson gives, found \"weights.W_O\"");
    // a given step the lesson does not give, or gives in part only
    l["input_decimals"] = {{"given.blocks.0.attn.hook_q", 2}};
    CHECK(attntrace::test::lesson_refusal(l.dump(), "nb.json") ==
          "nb.json: input_decimals.given.blocks.0.attn.hook_q: expected \"inputs.NAME\", \"weights.NAME\" or \"given.STEP\" of an "
          "input, a weight or a whole given step the lesson gives, found \"given.blocks.0.attn.hook_q\"");
    l["input_decimals"] = {{"weights.W_Q", 9}};
    CHECK(attntrace::test::lesson_refusal(l.dump(), "nb.json").find("input_decimals.weights.W_Q: expected an integer") !=
          std::string::npos);
}

}  // namespace test_printed_inputs

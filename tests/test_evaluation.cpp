// An Evaluation and the reports in it own what they refer to: copied, moved,
// or kept after the lesson they were checked from, they still read their
// claims. (With a pointer into the lesson, these read freed memory: the
// sanitizer build reports it.)
#include <catch2/catch.hpp>

#include <sstream>
#include <string>
#include <vector>

#include "evaluate/evaluate.hpp"
#include "cost/cost_lesson.hpp"
#include "export/trace_export.hpp"
#include "render/text.hpp"
#include "support.hpp"

using namespace attntrace;

namespace test_evaluation {

namespace {

std::string check_text(const Evaluation& e) {
    std::ostringstream out;
    render_check(out, e.lesson, e.exact, e.report);
    return out.str();
}

std::string export_text(const Evaluation& e) { return trace_to_json(e.lesson, e.exact, &e.report).dump(); }

}  // namespace

TEST_CASE("an evaluation copied and moved reads its claims after the original is gone", "[check]") {
    auto original = evaluate(read_lesson(test::lessons_dir() + "/003-3.1-ring-fell.json"));
    const CheckReport& first = original->report;
    REQUIRE(first.results.size() > 1);
    std::vector<std::string> ids;
    for (const ClaimResult& r : first.results) ids.push_back(r.claim.id);
    const bool all_as_expected = first.all_as_expected();
    const std::string check_before = check_text(*original), export_before = export_text(*original);

    Evaluation copy = *original;
    Evaluation moved = std::move(*original);
    original.reset();  // the lesson the report was checked from is gone
    for (const Evaluation* e : {&copy, &moved}) {
        REQUIRE(e->report.results.size() == ids.size());
        for (std::size_t i = 0; i < ids.size(); ++i) CHECK(e->report.results[i].claim.id == ids[i]);
        CHECK(e->report.all_as_expected() == all_as_expected);
        CHECK(check_text(*e) == check_before);
        CHECK(export_text(*e) == export_before);
    }
}

TEST_CASE("a check report kept alone outlives its evaluation", "[check]") {
    const CheckReport kept = evaluate(read_lesson(test::lessons_dir() + "/003-3.1-ring-fell.json"))->report;
    REQUIRE(!kept.results.empty());
    for (const ClaimResult& r : kept.results) {
        CHECK(!r.claim.id.empty());
        CHECK(!r.claim.step.empty());
        CHECK(r.as_expected());  // the lesson's verdicts are all as its author expects
    }
}

TEST_CASE("a cost report outlives the cost lesson it was checked from", "[cost]") {
    const CostCheckReport kept =
        check_cost_lesson(read_cost_lesson(test::lessons_dir() + "/cost/002-attention-scores.json"));
    REQUIRE(!kept.results.empty());
    for (const CostClaimResult& r : kept.results) {
        CHECK(!r.claim.id.empty());
        CHECK(r.as_expected());
    }
}

}  // namespace test_evaluation

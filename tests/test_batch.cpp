// Batches (src/batch/, docs/lesson-format.md "Batches"): a batch of one is the
// plain lesson bit for bit; each sequence's slice of a batch is that sequence
// run alone, padded, with its padding mask; pad keys get weight exactly 0 and
// every row sums to 1; the CLI runs, checks, exports and explains a batch.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstring>
#include <string>

#include "batch/batch.hpp"
#include "evaluate/evaluate.hpp"
#include "core/error.hpp"
#include "support.hpp"

using namespace attntrace;

namespace test_batch {
using json = nlohmann::json;

namespace {

// float32 sums of a few weights in [0, 1]: a row sums to 1 within a few ulp.
constexpr double kRowSumTol = 1e-6;
constexpr std::size_t kC = 4;

// Deterministic X rows (len, C), different for each seed.
json x_rows(std::size_t len, int seed) {
    json x = json::array();
    for (std::size_t i = 0; i < len; ++i) {
        json row = json::array();
        for (std::size_t c = 0; c < kC; ++c) row.push_back(std::sin(0.7 * double(seed * 13 + i * kC + c)) * 1.5);
        x.push_back(row);
    }
    return x;
}

json tokens_of(std::size_t len, const std::string& stem) {
    json t = json::array();
    for (std::size_t i = 0; i < len; ++i) t.push_back(stem + std::to_string(i));
    return t;
}

json base_doc(const json& mask, const json& positions) {
    return {{"format", "attntrace-lesson"},
            {"version", 1},
            {"id", "batch-test"},
            {"title", "batch test"},
            {"source", {{"document", "tests"}}},
            {"config", {{"d_model", kC}, {"heads", 2}, {"d_ff", 8}, {"mask", mask}, {"positions", positions}}},
            {"weights_seed", 5}};
}

// A batch of sequences of these lengths (X from x_rows(len, b)).
json batch_doc(const std::vector<std::size_t>& lengths, const json& mask, const json& positions = "none") {
    json doc = base_doc(mask, positions);
    json seqs = json::array();
    for (std::size_t b = 0; b < lengths.size(); ++b)
        seqs.push_back({{"tokens", tokens_of(lengths[b], "s" + std::to_string(b) + "t")},
                        {"X", x_rows(lengths[b], static_cast<int>(b))}});
    doc["batch"] = {{"pad_token", "<pad>"}, {"sequences", seqs}};
    return doc;
}

// Sequence b alone: its tokens padded with <pad> to T, zero X rows there, and
// the padding mask (causal too when `causal`).
json alone_doc(std::size_t len, std::size_t T, std::size_t b, bool causal, const json& positions = "none") {
    json pad = json::array();
    for (std::size_t p = len; p < T; ++p) pad.push_back(p);
    json doc = base_doc({{"kind", "padding"}, {"pad", pad}, {"causal", causal}}, positions);
    json tokens = tokens_of(len, "s" + std::to_string(b) + "t"), x = x_rows(len, static_cast<int>(b));
    for (std::size_t p = len; p < T; ++p) {
        tokens.push_back("<pad>");
        x.push_back(json::array({0, 0, 0, 0}));
    }
    doc["tokens"] = tokens;
    doc["inputs"] = {{"X", x}};
    return doc;
}

// The exact trace with its derived steps as buffers (a batch's are: its sequences' masks differ).
std::unique_ptr<Evaluation> eval_doc(const json& doc) {
    auto e = evaluate(parse_lesson(doc.dump(), "batch-test.json"));
    materialise(e->exact);
    return e;
}

// Step `s` of a stacked trace at sequence b holds exactly `alone`'s values.
void require_slice_equals(const Step& stacked, std::size_t b, const Step& alone) {
    INFO(alone.name << " sequence b" << b);
    REQUIRE(stacked.axes.front() == "batch");
    REQUIRE(Shape(stacked.shape.begin() + 1, stacked.shape.end()) == alone.shape);
    REQUIRE(stacked.source == alone.source);
    const std::size_t n = alone.held().size();
    REQUIRE(stacked.held().size() == n * stacked.shape.front());
    if (n) CHECK(std::memcmp(stacked.held().data.data() + b * n, alone.held().data.data(), n * sizeof(float)) == 0);
}

}  // namespace

TEST_CASE("a batch of one sequence equals the plain lesson bit for bit", "[batch]") {
    for (const char* mask : {"none", "causal"}) {
        INFO("mask " << mask);
        json plain = base_doc(mask, "none");
        plain["tokens"] = tokens_of(5, "s0t");
        plain["inputs"] = {{"X", x_rows(5, 0)}};
        auto a = eval_doc(plain);
        auto b = eval_doc(batch_doc({5}, mask));
        REQUIRE(b->exact.steps.size() == a->exact.steps.size());
        for (std::size_t k = 0; k < a->exact.steps.size(); ++k) {
            REQUIRE(b->exact.steps[k].name == a->exact.steps[k].name);
            require_slice_equals(b->exact.steps[k], 0, a->exact.steps[k]);
        }
    }
}

TEST_CASE("each sequence of a batch is that sequence run alone with its padding mask", "[batch]") {
    const std::vector<std::size_t> lengths = {4, 2, 3};
    const std::size_t T = 4;
    for (bool causal : {false, true})
        for (const json& positions : {json("none"), json{{"kind", "rope"}, {"layout", "half"}}}) {
            INFO("causal " << causal << " positions " << positions.dump());
            auto batch = eval_doc(batch_doc(lengths, causal ? "causal" : "none", positions));
            REQUIRE(batch->exact.sequence_tokens.size() == lengths.size());
            for (std::size_t b = 0; b < lengths.size(); ++b) {
                auto alone = eval_doc(alone_doc(lengths[b], T, b, causal, positions));
                REQUIRE(batch->exact.steps.size() == alone->exact.steps.size());
                for (std::size_t k = 0; k < alone->exact.steps.size(); ++k)
                    require_slice_equals(batch->exact.steps[k], b, alone->exact.steps[k]);
                // unstack_trace gives the same sequence back, labelled with its tokens
                const Trace one = unstack_trace(batch->exact, b);
                const Step* q = one.find("blocks.0.attn.hook_q");
                REQUIRE(q);
                CHECK(q->labels[0] == alone->exact.find("blocks.0.attn.hook_q")->labels[0]);
            }
        }
}

TEST_CASE("pad keys get weight exactly 0 and every row of a batch sums to 1", "[batch]") {
    const std::vector<std::size_t> lengths = {1, 5, 3};
    auto e = eval_doc(batch_doc(lengths, "causal"));
    const Step* A = e->exact.find("blocks.0.attn.hook_pattern");
    REQUIRE(A);
    REQUIRE(A->shape == Shape{3, 2, 5, 5});
    const std::size_t NH = 2, T = 5;
    for (std::size_t b = 0; b < lengths.size(); ++b)
        for (std::size_t h = 0; h < NH; ++h)
            for (std::size_t i = 0; i < T; ++i) {
                double sum = 0;
                for (std::size_t j = 0; j < T; ++j) {
                    const float w = A->held().data[((b * NH + h) * T + i) * T + j];
                    REQUIRE(std::isfinite(w));
                    if (j >= lengths[b] || j > i) CHECK(w == 0.0f);  // a pad key, or a future one (causal)
                    sum += w;
                }
                CHECK(std::fabs(sum - 1.0) <= kRowSumTol);  // pad queries too: they still compute
            }
}

TEST_CASE("a batched lesson is refused where it cannot be run as one", "[batch]") {
    json doc = batch_doc({2, 3}, "none");
    doc["config"]["mask"] = {{"kind", "window"}, {"window", 3}};
    CHECK_THROWS_WITH(parse_lesson(doc.dump(), "b.json"), Catch::Contains("config.mask") && Catch::Contains("batched"));
    doc = batch_doc({2, 3}, "none");
    doc["batch"]["sequences"][1]["X"] = x_rows(2, 1);
    CHECK_THROWS_WITH(parse_lesson(doc.dump(), "b.json"),
                      Catch::Contains("batch.sequences[1].X") && Catch::Contains("3x4"));
}

TEST_CASE("the CLI runs, checks, exports and explains a batched lesson", "[batch][cli]") {
    attntrace::test::TempDir dir;
    auto check = attntrace::test::run_cli({"check", "001-batch-padding"});
    INFO(check.err);
    CHECK(check.status == 0);
    CHECK(check.out.find("12 agree") != std::string::npos);

    auto run = attntrace::test::run_cli({"run", "001-batch-padding", "--json"});
    REQUIRE(run.status == 0);
    const json trace = json::parse(run.out);
    REQUIRE(trace.contains("batch"));
    CHECK(trace["batch"]["sequences"][1] == json::array({"hi", "there", "<pad>", "<pad>"}));
    for (const auto& s : trace["steps"]) {
        INFO(s["name"]);
        CHECK(s["axes"][0] == "batch");
        CHECK(s["shape"][0] == 2);
    }

    auto text = attntrace::test::run_cli({"run", "001-batch-padding", "--steps", "hook_pattern"});
    REQUIRE(text.status == 0);
    CHECK(text.out.find("sequence b1:") != std::string::npos);

    // the export reads back: diff of a trace against itself
    REQUIRE(attntrace::test::run_cli({"export", "001-batch-padding", "-o", dir.file("t.json")}).status == 0);
    auto diff = attntrace::test::run_cli({"diff", dir.file("t.json"), dir.file("t.json")});
    CHECK(diff.status == 0);

    // "hi" in head 0 reads "there" with e^0/(e^(1/√2) + e^0) = 0.3302, within its own sequence
    auto ex = attntrace::test::run_cli({"explain", "001-batch-padding", "hook_pattern[1,0,0,1]"});
    INFO(ex.err);
    REQUIRE(ex.status == 0);
    CHECK(ex.out.find("sequence b1") != std::string::npos);
    CHECK(ex.out.find("0.3302") != std::string::npos);

    auto cmp = attntrace::test::run_cli({"compare", "001-batch-padding", "--set", "heads=1"});
    CHECK(cmp.status == 2);
    CHECK(cmp.err.find("batch") != std::string::npos);
}

}  // namespace test_batch

// Claims on one cell's terms (issue 14 item 11, docs/lesson-format.md#terms):
// `of: "terms"` states a dot product's products and their sum as `explain`
// writes them. The numbers here are worked in the test from the trace's
// recorded inputs, in the _ref kernels' order (float, k ascending).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/decimal.hpp"
#include "core/error.hpp"
#include "evaluate/evaluate.hpp"
#include "pipeline/cell.hpp"
#include "support.hpp"

using namespace attntrace;
using nlohmann::json;

namespace test_claim_terms {

namespace {

constexpr std::size_t kT = 3, kC = 4, kHeads = 2, kHs = kC / kHeads, kFF = 3;
constexpr int kDecimals = 4;  // the claims print every term at 4 decimals

// A (rows, cols) matrix of small distinct numbers, each a multiple of 1/16 (exact in float32).
json matrix(std::size_t rows, std::size_t cols, int seed) {
    json m = json::array();
    for (std::size_t i = 0; i < rows; ++i) {
        json row = json::array();
        for (std::size_t j = 0; j < cols; ++j) row.push_back(((int(i * 7 + j * 3) + seed) % 11 - 5) / 16.0);
        m.push_back(row);
    }
    return m;
}

// 3 tokens, d_model 4, two heads (hs 2), an FFN of 3 with b_2: the block from Q, K, V on.
json lesson_doc() {
    return {{"format", "attntrace-lesson"}, {"version", 1}, {"id", "claim-terms"}, {"title", "terms"},
            {"tokens", {"a", "b", "c"}}, {"config", {{"d_model", kC}, {"heads", kHeads}, {"d_ff", kFF}}},
            {"run", {{"from", "qkv"}, {"to", "norm2"}}},
            {"weights", {{"W_Q", matrix(kC, kC, 1)}, {"W_K", matrix(kC, kC, 2)}, {"W_V", matrix(kC, kC, 3)},
                         {"W_O", matrix(kC, kC, 4)}, {"W_1", matrix(kC, kFF, 5)}, {"W_2", matrix(kFF, kC, 6)},
                         {"b_2", matrix(1, kC, 7)[0]}, {"ln1_gamma", {1, 1, 1, 1}}, {"ln1_beta", {0, 0, 0, 0}},
                         {"ln2_gamma", {1, 1, 1, 1}}, {"ln2_beta", {0, 0, 0, 0}}}},
            {"given", {{"blocks.0.hook_resid_pre", matrix(kT, kC, 8)}}},
            {"claims", json::array()}};
}

float at(const Trace& t, const std::string& step, std::initializer_list<std::size_t> idx) {
    const Step* s = t.find(step);
    REQUIRE(s);
    return get(*s, idx);
}

// Terms then their sum, summed in float k ascending (write_dot's order).
std::vector<float> with_sum(std::vector<float> terms) {
    float acc = 0.0f;
    for (float x : terms) acc += x;
    terms.push_back(acc);
    return terms;
}

// S[h1, b, c]: Q[b, h1, e] · K[c, h1, e], e < hs.
std::vector<float> score_terms(const Trace& t) {
    std::vector<float> p;
    for (std::size_t e = 0; e < kHs; ++e)
        p.push_back(at(t, "blocks.0.attn.hook_q", {1, 1, e}) * at(t, "blocks.0.attn.hook_k", {2, 1, e}));
    return with_sum(p);
}

// Z[c, h0, d1]: A[h0, c, j] · V[j, h0, d1], j < T.
std::vector<float> mix_terms(const Trace& t) {
    std::vector<float> p;
    for (std::size_t j = 0; j < kT; ++j)
        p.push_back(at(t, "blocks.0.attn.hook_pattern", {0, 2, j}) * at(t, "blocks.0.attn.hook_v", {j, 0, 1}));
    return with_sum(p);
}

// FFN[b, d2]: act(H)[b, f] · W_2[f, 2], f < d_ff, then b_2[2] as one more term.
std::vector<float> ffn_terms(const Trace& t, const Lesson& l) {
    std::vector<float> p;
    const Tensor& W2 = *l.weight("W_2");
    for (std::size_t f = 0; f < kFF; ++f) p.push_back(at(t, "blocks.0.mlp.hook_post", {1, f}) * W2.data[f * kC + 2]);
    p.push_back(l.weight("b_2")->data[2]);
    return with_sum(p);
}

json printed(const std::vector<float>& v) {
    json a = json::array();
    for (float x : v) a.push_back(round_decimals(x, kDecimals));
    return a;
}

json terms_claim(const std::string& id, const std::string& step, json at, const std::vector<float>& values,
                 const std::string& expect = "agrees") {
    return {{"id", id}, {"step", step}, {"at", std::move(at)}, {"of", "terms"}, {"decimals", kDecimals},
            {"values", printed(values)}, {"expect", expect}};
}

struct Expected {
    std::vector<float> score, mix, ffn;
};

Expected expected_terms() {
    auto e = evaluate(parse_lesson(lesson_doc().dump(), "claim-terms.json"));
    return {score_terms(e->exact), mix_terms(e->exact), ffn_terms(e->exact, e->lesson)};
}

json claims_doc(const Expected& x) {
    json doc = lesson_doc();
    doc["claims"] = {terms_claim("score", "hook_scores_raw", {{"head", 1}, {"query", "b"}, {"key", "c"}}, x.score),
                     terms_claim("mix", "hook_z", {{"query", "c"}, {"head", "h0"}, {"d_head", 1}}, x.mix),
                     terms_claim("ffn", "hook_mlp_out", {{"pos", "b"}, {"d_model", 2}}, x.ffn)};
    return doc;
}

std::vector<float> data(const Tensor& t) { return {t.data.begin(), t.data.end()}; }

std::string error_of(const json& doc) {
    try {
        parse_lesson(doc.dump(), "claim-terms.json");
    } catch (const InputError& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("the terms of a score, a mix cell and an FFN cell agree with the products worked here", "[terms]") {
    const Expected x = expected_terms();
    REQUIRE(x.score.size() == kHs + 1);
    REQUIRE(x.mix.size() == kT + 1);
    REQUIRE(x.ffn.size() == kFF + 2);  // the products, b_2, the sum
    auto e = evaluate(parse_lesson(claims_doc(x).dump(), "claim-terms.json"));
    REQUIRE(e->report.results.size() == 3);
    const std::vector<std::vector<float>> want = {x.score, x.mix, x.ffn};
    for (std::size_t i = 0; i < 3; ++i) {
        const ClaimResult& r = e->report.results[i];
        INFO(r.claim.id << ": " << r.reason);
        CHECK(r.verdict == Verdict::agrees);
        CHECK(r.basis == Basis::formula);
        CHECK(data(r.computed) == want[i]);  // bit for bit: the explanation's own terms
    }
    // the sum is the trace's value at the cell
    CHECK(x.score.back() == at(e->exact, "blocks.0.attn.hook_scores_raw", {1, 1, 2}));
    CHECK(x.ffn.back() == at(e->exact, "blocks.0.hook_mlp_out", {1, 2}));
}

TEST_CASE("a wrong term disagrees, and the check shows the right terms as a sum", "[terms]") {
    const Expected x = expected_terms();
    json doc = claims_doc(x);
    doc["claims"][0]["values"][0] = doc["claims"][0]["values"][0].get<double>() + 0.01;
    doc["claims"][0]["expect"] = "disagrees";
    auto e = evaluate(parse_lesson(doc.dump(), "claim-terms.json"));
    const ClaimResult& r = e->report.results[0];
    CHECK(r.verdict == Verdict::disagrees);
    CHECK(r.cells_off == 1);
    CHECK(data(r.computed) == x.score);

    attntrace::test::TempDir dir;
    attntrace::test::write_text(dir.file("wrong.json"), doc.dump());
    const auto out = attntrace::test::run_cli({"--color", "never", "check", dir.file("wrong.json")});
    INFO(out.out << out.err);
    CHECK(out.status == 0);  // as the lesson expects
    const json p = printed(x.score);
    const std::string right = fmt::format("right   {:.4f} + {:.4f} = {:.4f}", p[0].get<double>(), p[1].get<double>(),
                                          p[2].get<double>());
    CHECK(out.out.find(right) != std::string::npos);
}

TEST_CASE("terms in document arithmetic: recomputed from the rounded run's inputs", "[terms]") {
    // The weights rounded to 1 decimal before the mix: Z's terms from the rounded A agree only when rounded.
    const Expected x = expected_terms();
    json doc = claims_doc(x);
    doc["document_rounding"] = {{"blocks.0.attn.hook_pattern", 1}};
    auto base = evaluate(parse_lesson(lesson_doc().dump(), "claim-terms.json"));
    std::vector<float> rounded;
    for (std::size_t j = 0; j < kT; ++j)
        rounded.push_back(round_decimals(at(base->exact, "blocks.0.attn.hook_pattern", {0, 2, j}), 1) *
                          at(base->exact, "blocks.0.attn.hook_v", {j, 0, 1}));
    rounded = with_sum(rounded);
    REQUIRE(printed(rounded) != printed(x.mix));
    doc["claims"][1]["values"] = printed(rounded);
    doc["claims"][1]["expect"] = "agrees-when-rounded";
    auto e = evaluate(parse_lesson(doc.dump(), "claim-terms.json"));
    const ClaimResult& r = e->report.results[1];
    CHECK(r.verdict == Verdict::agrees_when_rounded);
    CHECK(data(r.computed) == x.mix);
    CHECK(data(r.document) == rounded);
}

TEST_CASE("a terms claim is refused in one line when it is not one cell, not a step with terms, or not the count",
          "[terms]") {
    json doc = claims_doc(expected_terms());
    json one = doc;
    one["claims"][0]["at"].erase("key");
    std::string err = error_of(one);
    CHECK(err.find("claims[0].at: expected every axis of blocks.0.attn.hook_scores_raw fixed") != std::string::npos);
    CHECK(err.find("found key left free") != std::string::npos);

    json list = doc;
    list["claims"][0]["at"]["key"] = {0, 2};
    CHECK(error_of(list).find("claims[0].at.key: expected an index or a label (a terms claim is on one cell)") !=
          std::string::npos);

    json pattern = doc;
    pattern["claims"][0]["step"] = "hook_pattern";
    err = error_of(pattern);
    CHECK(err.find("claims[0].step: expected a step whose explanation writes a dot product's terms") != std::string::npos);
    CHECK(err.find("found blocks.0.attn.hook_pattern") != std::string::npos);

    // the count is the explanation's (a bias adds a term): held by the check, exit 2
    json count = doc;
    count["claims"][2]["values"].erase(0);
    attntrace::test::TempDir dir;
    attntrace::test::write_text(dir.file("count.json"), count.dump());
    const auto r = attntrace::test::run_cli({"check", dir.file("count.json")});
    CHECK(r.status == 2);
    CHECK(r.err.find("claims[2].values: expected 5 numbers: the 4 terms of this cell of blocks.0.hook_mlp_out, then "
                     "their sum, found 4 numbers") != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
}

TEST_CASE("Z's row with d_head free: the weighted value vectors A[i, j]·V[j], a row per key, with or without their sum",
          "[terms]") {
    const Expected x = expected_terms();
    auto e = evaluate(parse_lesson(lesson_doc().dump(), "claim-terms.json"));
    // Z[c, h0, :]: key j's vector A[h0, c, j]·V[j, h0, :], worked here; the last row their sum, Z's row
    std::vector<std::vector<float>> vectors(kT + 1, std::vector<float>(kHs, 0.0f));
    for (std::size_t d = 0; d < kHs; ++d) {
        float acc = 0.0f;
        for (std::size_t j = 0; j < kT; ++j) {
            vectors[j][d] = at(e->exact, "blocks.0.attn.hook_pattern", {0, 2, j}) * at(e->exact, "blocks.0.attn.hook_v", {j, 0, d});
            acc += vectors[j][d];
        }
        vectors[kT][d] = acc;
    }
    CHECK(vectors[0][1] == x.mix[0]);  // column 1's terms are the cell claim's
    auto rows = [&](std::size_t n) {
        json m = json::array();
        for (std::size_t j = 0; j < n; ++j) m.push_back(printed(vectors[j]));
        return m;
    };
    json doc = lesson_doc();
    const json at_row = {{"query", "c"}, {"head", "h0"}};
    doc["claims"] = {{{"id", "vectors"}, {"step", "hook_z"}, {"at", at_row}, {"of", "terms"}, {"decimals", kDecimals},
                      {"values", rows(kT)}, {"expect", "agrees"}},
                     {{"id", "with-sum"}, {"step", "hook_z"}, {"at", at_row}, {"of", "terms"}, {"decimals", kDecimals},
                      {"values", rows(kT + 1)}, {"expect", "agrees"}},
                     {{"id", "wrong"}, {"step", "hook_z"}, {"at", at_row}, {"of", "terms"}, {"decimals", kDecimals},
                      {"values", rows(kT)}, {"expect", "disagrees"}}};
    doc["claims"][2]["values"][1][0] = doc["claims"][2]["values"][1][0].get<double>() + 0.01;
    auto checked = evaluate(parse_lesson(doc.dump(), "claim-terms.json"));
    REQUIRE(checked->report.results.size() == 3);
    CHECK(checked->report.results[0].verdict == Verdict::agrees);
    CHECK(checked->report.results[0].computed.shape == Shape{kT, kHs});
    CHECK(checked->report.results[1].verdict == Verdict::agrees);
    CHECK(checked->report.results[1].computed.shape == Shape{kT + 1, kHs});
    CHECK(checked->report.results[2].verdict == Verdict::disagrees);

    // rows that are neither the keys nor the keys and their sum: refused by the check, one line, exit 2
    json count = doc;
    count["claims"][0]["values"].erase(0);
    count["claims"][0]["values"].erase(0);
    attntrace::test::TempDir dir;
    attntrace::test::write_text(dir.file("count.json"), count.dump());
    const auto r = attntrace::test::run_cli({"check", dir.file("count.json")});
    CHECK(r.status == 2);
    INFO(r.err);
    CHECK(r.err.find("claims[0].values: expected 3 rows of 2 (the weighted value vectors of 3 keys), or 4 with their sum "
                     "last, found a 1x2 array") != std::string::npos);
    // a free axis other than d_head, or a free d_head on another step, is refused when the lesson is read
    json two = doc;
    two["claims"][0]["at"].erase("query");
    CHECK(error_of(two).find("or all but d_head (the weighted value vectors of one row), found query, d_head left free") !=
          std::string::npos);
    json q = doc;
    q["claims"][0]["step"] = "hook_q";
    q["claims"][0]["at"] = {{"query", "c"}, {"head", "h0"}};
    INFO(error_of(q));
    CHECK(error_of(q).find("claims[0].at: expected every axis of blocks.0.attn.hook_q fixed (terms are of one cell), "
                           "found d_head left free") != std::string::npos);
}

TEST_CASE("a terms claim on a one-head lesson needs no head: an axis of one is fixed by itself", "[terms]") {
    json doc = lesson_doc();
    doc["config"]["heads"] = 1;
    auto e = evaluate(parse_lesson(doc.dump(), "one-head.json"));
    std::vector<float> p;
    for (std::size_t j = 0; j < kT; ++j)
        p.push_back(at(e->exact, "blocks.0.attn.hook_pattern", {0, 1, j}) * at(e->exact, "blocks.0.attn.hook_v", {j, 0, 3}));
    doc["claims"] = json::array({terms_claim("no-head", "hook_z", {{"query", "b"}, {"d_head", 3}}, with_sum(p))});
    auto checked = evaluate(parse_lesson(doc.dump(), "one-head.json"));
    REQUIRE(checked->report.results.size() == 1);
    CHECK(checked->report.results[0].verdict == Verdict::agrees);
}

TEST_CASE("the export writes a terms claim with of terms, its printed and computed terms", "[terms]") {
    const Expected x = expected_terms();
    attntrace::test::TempDir dir;
    attntrace::test::write_text(dir.file("terms.json"), claims_doc(x).dump());
    const auto r = attntrace::test::run_cli({"export", dir.file("terms.json"), "-o", "-"});
    REQUIRE(r.status == 0);
    const json claim = json::parse(r.out)["claims"][0];
    CHECK(claim["of"] == "terms");
    CHECK(claim["at"] == json({{"head", 1}, {"query", 1}, {"key", 2}}));
    CHECK(claim["printed"].size() == kHs + 1);
    CHECK(claim["computed"].get<std::vector<float>>() == x.score);
    CHECK(claim["verdict"] == "agrees");
}

TEST_CASE("the steps that take terms claims are those whose explanation writes terms", "[terms]") {
    // writes_terms (trace/steps.hpp) against each operation's explanation of a cell of every step it computes
    json doc = lesson_doc();
    auto e = evaluate(parse_lesson(doc.dump(), "claim-terms.json"));
    const ExplainOptions opt;
    std::size_t with_terms = 0;
    for (const Step& s : e->exact.steps) {
        if (!s.def || s.source != StepSource::computed || values_of(e->exact, s)->size() == 0) continue;
        const std::vector<std::size_t> cell(s.shape.size(), 0);
        Cell c{e->lesson, e->exact, opt, s, cell, {}, {}};
        recompute(c);
        INFO(s.name);
        CHECK(c.terms.has_value() == writes_terms(s.def->leaf));
        with_terms += c.terms.has_value();
    }
    CHECK(with_terms == 8);  // Q, K, V, the raw scores, Z, attn_out, mlp.hook_pre, hook_mlp_out
}

TEST_CASE("a terms claim on a batched trace is one sequence's cell, its terms from that sequence", "[terms]") {
    // 001-batch-padding: sequence b1's scores, query 0 against key 1, recomputed from its own Q and K
    json doc = json::parse(attntrace::test::read_text(attntrace::test::source_dir() + "/lessons/001-batch-padding.json"));
    auto plain = evaluate(parse_lesson(doc.dump(), "batch.json"));
    const Step* Q = plain->exact.find("blocks.0.attn.hook_q");
    const Step* K = plain->exact.find("blocks.0.attn.hook_k");
    REQUIRE((Q && K));
    const std::size_t hs = Q->shape.back();
    std::vector<float> p;
    for (std::size_t e = 0; e < hs; ++e) p.push_back(get(*Q, {1, 0, 0, e}) * get(*K, {1, 1, 0, e}));  // (batch, pos, head, d_head)
    const std::vector<float> want = with_sum(p);
    // json::array: a braced list of one json is a copy of it with clang, an array of one with GCC.
    doc["claims"] = json::array({terms_claim("b1", "hook_scores_raw", {{"batch", 1}, {"head", 0}, {"query", 0}, {"key", 1}}, want)});
    auto e = evaluate(parse_lesson(doc.dump(), "batch.json"));
    const ClaimResult& r = e->report.results.at(0);
    INFO(r.reason);
    CHECK(r.verdict == Verdict::agrees);
    CHECK(data(r.computed) == want);
    CHECK(want.back() == get(*e->exact.find("blocks.0.attn.hook_scores_raw"), {1, 0, 0, 1}));
    // a batched step's `at` must fix the batch too
    doc["claims"][0]["at"].erase("batch");
    CHECK(error_of(doc).find("claims[0].at: expected every axis of blocks.0.attn.hook_scores_raw fixed") !=
          std::string::npos);
}

TEST_CASE("a terms claim on a given step with no formula is not checkable, saying why", "[terms]") {
    // the raw scores given, the run from the scaling on: nothing to recompute them from
    json doc = {{"format", "attntrace-lesson"}, {"version", 1}, {"id", "given-scores"}, {"title", "given scores"},
                {"tokens", {"a", "b"}}, {"config", {{"d_model", 2}, {"heads", 1}}},
                {"run", {{"from", "scale"}, {"to", "softmax"}}},
                {"given", {{"blocks.0.attn.hook_scores_raw", {{1, 2}, {3, 4}}}}},
                {"claims", {terms_claim("s", "hook_scores_raw", {{"head", 0}, {"query", 0}, {"key", 1}}, {1, 1, 2},
                                        "not-checkable")}}};
    auto e = evaluate(parse_lesson(doc.dump(), "given.json"));
    const ClaimResult& r = e->report.results.at(0);
    CHECK(r.verdict == Verdict::not_checkable);
    CHECK(r.reason == "the lesson gives blocks.0.attn.hook_scores_raw and its formula could not be computed: it has no terms");
}

}  // namespace test_claim_terms

namespace test_claim_terms {

TEST_CASE("terms an article adds as it prints them, rounded, agree when rounded, and a sum mis-added still disagrees",
          "[claims][terms]") {
    // Q[0, 0] = 0.34·1 + 0.34·1 + 0.34·1 = 1.02 (1.0 at one decimal); printed at one decimal each
    // term is 0.3, and an article adding its printed terms writes 0.9.
    auto verdict_of = [](double printed_sum) {
        const json l = {{"format", "attntrace-lesson"}, {"version", 1}, {"id", "terms-rounded"}, {"title", "terms"},
                        {"tokens", {"a"}}, {"config", {{"d_model", 3}, {"heads", 1}}},
                        {"run", {{"from", "embed"}, {"to", "qkv"}}},
                        {"inputs", {{"X", {{0.34, 0.34, 0.34}}}}},
                        {"weights", {{"W_Q", {{1, 0, 0}, {1, 0, 0}, {1, 0, 0}}}, {"W_K", {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}},
                                     {"W_V", {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}}}},
                        {"claims", json::array({{{"id", "q"}, {"step", "hook_q"}, {"at", {{"query", 0}, {"d_head", 0}}},
                                                 {"of", "terms"}, {"decimals", 1},
                                                 {"values", {0.3, 0.3, 0.3, printed_sum}}, {"expect", "agrees"}}})}};
        auto e = evaluate(parse_lesson(l.dump(), "terms.json"));
        REQUIRE(e->report.results.size() == 1);
        return e->report.results[0];
    };
    CHECK(verdict_of(1.0).verdict == Verdict::agrees);  // the exact sum, rounded once
    const ClaimResult as_printed = verdict_of(0.9);
    CHECK(as_printed.verdict == Verdict::agrees_when_rounded);
    REQUIRE(as_printed.document.size() == 4);
    CHECK(as_printed.document.data[3] == Approx(0.9).margin(1e-6));  // 0.3 + 0.3 + 0.3, the rounded terms' sum
    CHECK(verdict_of(0.8).verdict == Verdict::disagrees);  // no rounding of the terms gives it
}

}  // namespace test_claim_terms

// A printed array placed on the step and selection whose values it prints
// (draft/place.hpp), and how far the seed articles' drafts get toward their
// hand-written lessons.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>

#include <nlohmann/json.hpp>

#include "draft/article.hpp"
#include "draft/draft.hpp"
#include "draft/place.hpp"
#include "draft/start.hpp"
#include "evaluate/evaluate.hpp"
#include "lesson/lesson.hpp"
#include "support.hpp"

using namespace attntrace;

namespace test_draft_place {

namespace {

PrintedArray printed(std::vector<std::vector<double>> rows, int decimals, std::string name = "") {
    PrintedArray a;
    a.form = PrintedForm::latex;
    a.name = std::move(name);
    for (const auto& r : rows) {
        a.rows.emplace_back();
        for (double x : r) a.rows.back().push_back({x, decimals});
    }
    a.shape = {rows.size(), rows[0].size()};
    return a;
}

void flatten(const nlohmann::json& v, std::vector<double>& out) {
    if (v.is_array()) {
        for (const auto& x : v) flatten(x, out);
    } else if (v.is_number()) {
        out.push_back(v.get<double>());
    } else if (v.is_string() && (v == "-inf" || v == "inf")) {
        out.push_back(v == "-inf" ? -HUGE_VAL : HUGE_VAL);
    } else {
        out.push_back(std::nan(""));  // no printed number equals it
    }
}

// The team's seed articles beside the repository, or "" after saying they are not there (a failure where
// ATTNTRACE_REQUIRE_SEEDS is set, as CI sets it).
std::string seeds_dir() {
    const std::string seeds = test::source_dir() + "/../shared/seeds";
    if (std::filesystem::is_directory(seeds)) return seeds;
    if (std::getenv("ATTNTRACE_REQUIRE_SEEDS")) FAIL("the seed articles are not at " << seeds);
    WARN("no seed articles beside the repository (" << seeds << "): not measured");
    return "";
}

}  // namespace

TEST_CASE("a printed array is placed where its numbers agree at their decimals: a step, a head, a row, a cell", "[draft]") {
    const auto e = evaluate(read_lesson(test::lessons_dir() + "/003-3.1-ring-fell.json"));
    const Trace& t = e->exact;
    // the weights as the article prints them, 2 decimals: hook_pattern, whole
    Placement p = place_array(printed({{0.45, 0.27, 0.27}, {0.19, 0.31, 0.51}, {0.23, 0.38, 0.38}}, 2, "A"), t);
    CHECK(p.step == "blocks.0.attn.hook_pattern");
    CHECK(p.at == nlohmann::json::object());
    CHECK(p.whole());
    CHECK(p.total == 9);
    // the article's Z, from weights rounded to 2 decimals: placed on hook_z, where only 0.45, 0.19 and
    // 0.23 agree with the exact weights' Z (1.27 0.45 0.55 1.37 / 1.71 0.19 0.61 2.13 / 1.38 0.23 0.77 1.92)
    p = place_array(printed({{1.26, 0.45, 0.54, 1.35}, {1.72, 0.19, 0.62, 2.15}, {1.37, 0.23, 0.76, 1.90}}, 2, "Z"), t);
    CHECK(p.step == "blocks.0.attn.hook_z");
    CHECK_FALSE(p.whole());
    CHECK(p.agree == 3);
    CHECK(p.max_error < 0.03);
    // one row, equal in Q's row 1 and K's row 2: the name breaks the tie
    p = place_array(printed({{0, 1, 1, 0}}, 0, "K"), t);
    CHECK(p.step == "blocks.0.attn.hook_k");
    CHECK(p.at == nlohmann::json{{"key", 2}});
    p = place_array(printed({{0, 1, 1, 0}}, 0, "Q"), t);
    CHECK(p.step == "blocks.0.attn.hook_q");
    CHECK(p.at == nlohmann::json{{"query", 1}});
    // one number: a cell, 0.51 the weight of ring on fell
    p = place_array(printed({{0.51}}, 2), t);
    CHECK(p.step == "blocks.0.attn.hook_pattern");
    CHECK(p.at == nlohmann::json{{"query", 1}, {"key", 2}});
    // an elided array, or a shape no step has, is placed on nothing
    PrintedArray elided = printed({{0.45, 0.27}}, 2);
    elided.elided = true;
    CHECK(place_array(elided, t).step.empty());
    CHECK(place_array(printed({{1, 2, 3, 4, 5, 6, 7}}, 0), t).step.empty());
}

TEST_CASE("the seed articles read and placed against their hand-written lessons: a floor that only rises", "[draft][seeds]") {
    // Of the hand lessons' claims on plain values, how many the article's reading finds as one printed
    // array with the same numbers, and how many of those place_array puts on the claim's step and cells
    // (issue 31 aims at 90% of both, with the drafted conventions; this is the reading and placing alone,
    // on the hand lesson's run). The floors are what the code reaches: raise them as it reaches more.
    constexpr std::size_t kReadFloor = 41, kPlacedFloor = 16;
    const std::string seeds = seeds_dir();
    if (seeds.empty()) return;
    std::size_t claims = 0, read = 0, placed = 0;
    for (const std::string& file : test::lesson_files()) {
        const auto doc = nlohmann::json::parse(test::read_text(file));
        if (!doc.contains("source") || !doc["source"].contains("document") || !doc.contains("claims")) continue;
        const std::string article_path = seeds + "/" + doc["source"]["document"].get<std::string>();
        if (!std::filesystem::exists(article_path)) continue;
        const Article article = read_article(article_path);
        const auto e = evaluate(read_lesson(file));
        for (const auto& c : doc["claims"]) {
            if (!c.contains("values") || c.contains("terms") || c.contains("reduce")) continue;
            std::vector<double> want;
            flatten(c["values"], want);
            ++claims;
            const PrintedArray* hit = nullptr;
            for (const auto& a : article.arrays) {
                std::vector<double> got;
                for (const auto& r : a.rows)
                    for (const auto& n : r) got.push_back(n.value);
                if (got.size() != want.size()) continue;
                bool same = true;
                for (std::size_t i = 0; i < got.size() && same; ++i) same = got[i] == want[i] || std::fabs(got[i] - want[i]) < 1e-9;
                if (same) {
                    hit = &a;
                    break;
                }
            }
            if (!hit) continue;
            ++read;
            const Placement p = place_array(*hit, e->exact);
            const auto at = c.contains("at") ? c["at"] : nlohmann::json::object();
            if (p.step == c["step"].get<std::string>() && p.at == at) ++placed;
        }
    }
    WARN("seed claims: " << claims << ", read as one printed array " << read << ", placed on the claim's step and cells "
                         << placed);
    CHECK(claims >= 90);
    CHECK(read >= kReadFloor);
    CHECK(placed >= kPlacedFloor);
}

namespace {

// A claim's `at` with labels read as indices (the hand lessons may write {"query": "ring"}), so that the
// same cells compare equal however they are written.
nlohmann::json at_of(const nlohmann::json& claim, const nlohmann::json& lesson) {
    const nlohmann::json tokens = lesson.contains("tokens") ? lesson["tokens"] : nlohmann::json::array();
    nlohmann::json at = claim.contains("at") ? claim["at"] : nlohmann::json::object();
    // the same cells however written: an axis of one position fixed at 0 or left free ({"pos": 0} on a
    // lesson of one token is its whole step)
    const std::size_t queries = lesson.contains("query_tokens") ? lesson["query_tokens"].size() : tokens.size();
    for (const char* axis : {"pos", "query"})
        if (queries == 1 && at.contains(axis) && (at[axis] == 0 || at[axis].is_string())) at.erase(axis);
    if (tokens.size() == 1 && at.contains("key") && (at["key"] == 0 || at["key"].is_string())) at.erase("key");
    if (at.contains("kv_head")) {  // K's and V's heads, which a lesson may call head when every query head has its own
        at["head"] = at["kv_head"];
        at.erase("kv_head");
    }
    for (auto& [axis, v] : at.items())
        if (v.is_string())
            for (std::size_t i = 0; i < tokens.size(); ++i)
                if (tokens[i] == v) {
                    v = i;
                    break;
                }
    return at;
}

}  // namespace

TEST_CASE("seed drafts measured against the hand lessons: claims reproduced, arrays placed", "[draft][seeds]") {
    // Issue 31's measure: of the hand lessons' claims, the share a draft of the same article reproduces (a
    // claim of one of its lessons on the same step, the same cells and the same reduction, with the same
    // verdict); of the article's printed arrays (tables and matrices, not prose), the share a draft reads
    // as an input or claims. The aim is 90% of both; the floors are what the code reaches.
    constexpr std::size_t kReproducedFloor = 81, kPlacedArraysFloor = 49;
    const std::string seeds = seeds_dir();
    if (seeds.empty()) return;
    std::map<std::string, std::vector<Draft>> drafts;  // by article
    std::size_t hand = 0, reproduced = 0;
    std::string misses;
    for (const std::string& file : test::lesson_files()) {
        const auto doc = nlohmann::json::parse(test::read_text(file));
        if (!doc.contains("source") || !doc["source"].contains("document") || !doc.contains("claims")) continue;
        const std::string name = doc["source"]["document"].get<std::string>(), path = seeds + "/" + name;
        if (!std::filesystem::exists(path)) continue;
        if (!drafts.count(name)) {
            try {
                drafts[name] = draft_lessons(read_article(path));
            } catch (const InputError& e) {
                drafts[name] = {};
                misses += std::string("  ") + name + ": not drafted: " + e.what() + "\n";
            }
        }
        for (const auto& c : doc["claims"]) {
            ++hand;
            bool found = false;
            for (const Draft& d : drafts[name]) {
                const auto lesson = nlohmann::json::parse(d.lesson.dump());
                if (!lesson.contains("claims")) continue;
                for (const auto& m : lesson["claims"])
                    found = found || (m["step"] == c["step"] && at_of(m, lesson) == at_of(c, doc) &&
                                      m.value("of", "") == c.value("of", "") && m["expect"] == c["expect"]);
            }
            if (found) ++reproduced;
            else misses += "  " + std::filesystem::path(file).stem().string() + " " + c["id"].get<std::string>() + "\n";
        }
    }
    // Every draft is a lesson that checks: its ids unique, every claim's verdict the one it expects.
    for (const auto& [name, ds] : drafts)
        for (const Draft& d : ds) {
            const std::string id = d.lesson.contains("id") ? d.lesson["id"].dump() : name;
            INFO(name << " " << id);
            std::unique_ptr<Evaluation> e;
            REQUIRE_NOTHROW(e = evaluate(parse_lesson(d.lesson.dump(), name)));
            if (!d.lesson.contains("claims")) continue;
            REQUIRE(e->report.results.size() == d.lesson["claims"].size());
            for (std::size_t k = 0; k < e->report.results.size(); ++k)
                CHECK(std::string(verdict_name(e->report.results[k].verdict)) == d.lesson["claims"][k]["expect"].get<std::string>());
        }
    std::size_t arrays = 0, placed = 0;
    for (const auto& [name, ds] : drafts) {
        const Article article = read_article(seeds + "/" + name);
        std::size_t unplaced = 0;
        for (const Draft& d : ds) unplaced += d.unplaced.size();
        std::size_t printed = 0, tables = 0;  // an elided array, a product's factor: printed, never placed
        for (const auto& a : article.arrays)  // (an array the code generates is not printed)
            if (!a.generated) printed += a.form != PrintedForm::prose, tables += is_table(a);
        arrays += printed;
        placed += ds.empty() ? 0 : tables - std::min(tables, unplaced);
    }
    WARN("hand claims " << hand << ", reproduced by the drafts " << reproduced << "; printed arrays " << arrays << ", placed "
                        << placed << "\nmisses:\n" << misses);
    CHECK(reproduced >= kReproducedFloor);
    CHECK(placed >= kPlacedArraysFloor);
}

TEST_CASE("a name in words says what an array is: weights of a role, inputs, keys, scores, attention weights", "[draft]") {
    CHECK(word_role("Weights for query") == "W_Q");
    CHECK(word_role("key weights") == "W_K");
    CHECK(word_role("W_value") == "W_V");
    CHECK(word_role("value projection") == "W_V");
    CHECK(word_role("Input") == "X");
    CHECK(word_role("embeddings") == "X");
    CHECK(word_role("Key for Input") == "K");
    CHECK(word_role("Query for Input") == "Q");
    CHECK(word_role("raw scores") == "S");
    CHECK(word_role("scaled scores") == "tildeS");
    CHECK(word_role("attention weights") == "A");
    CHECK(word_role("attention scores") == "S");
    CHECK(word_role("Output for Input") == "Z");
    // a quantity about an array, and the letters' own names, say nothing here
    CHECK(word_role("weighted values") == "");
    CHECK(word_role("Q") == "");
    CHECK(word_role("x_ring") == "");
    CHECK(word_role("sum of weights") == "");
    CHECK(step_hint("Key for Input") == "hook_k");
    CHECK(step_hint("attention weights") == "hook_pattern");
}

TEST_CASE("an array's name points to a step: by its letter, a head's number or a token's subscript taken off", "[draft]") {
    CHECK(step_hint("Q") == "hook_q");
    CHECK(step_hint("\\tilde{S}") == "hook_scores_scaled");
    CHECK(step_hint("Z_2") == "hook_z");
    CHECK(step_hint("Z_{ring}") == "hook_z");
    CHECK(step_hint("v_{\\text{ring}}") == "hook_v");
    CHECK(step_hint("x_{ring,mid}").empty());
    CHECK(step_hint("Embedding").empty());
}

}  // namespace test_draft_place

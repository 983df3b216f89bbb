// Every exported trace validates against the published JSON Schema (docs/trace.schema.json).
#include <catch2/catch.hpp>
#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validator.hpp>

#include "core/json_field.hpp"
#include "evaluate/model_end.hpp"
#include "support.hpp"

namespace test_trace_schema {

namespace {

using nlohmann::json;

valijson::Schema& trace_schema() {
    static valijson::Schema schema;
    static bool loaded = false;
    if (!loaded) {
        json doc = json::parse(attntrace::test::read_text(attntrace::test::source_dir() + "/docs/trace.schema.json"));
        valijson::SchemaParser parser;
        valijson::adapters::NlohmannJsonAdapter adapter(doc);
        parser.populateSchema(adapter, schema);
        loaded = true;
    }
    return schema;
}

// Empty when `doc` validates; otherwise the first errors, one per line.
std::string schema_errors(const json& doc) {
    valijson::Validator validator;
    valijson::ValidationResults results;
    valijson::adapters::NlohmannJsonAdapter adapter(doc);
    if (validator.validate(trace_schema(), adapter, &results)) return "";
    std::string out;
    valijson::ValidationResults::Error e;
    for (int n = 0; n < 5 && results.popError(e); ++n) {
        std::string where;
        for (const auto& c : e.context) where += c;
        out += where + ": " + e.description + "\n";
    }
    return out;
}

}  // namespace

TEST_CASE("every lesson's exported trace validates against docs/trace.schema.json", "[trace][schema]") {
    for (const auto& lesson : attntrace::test::lesson_files()) {
        attntrace::test::TempDir dir;
        auto r = attntrace::test::run_cli({"export", lesson, "-o", dir.file("trace.json")});
        REQUIRE(r.status == 0);
        json doc = json::parse(attntrace::test::read_text(dir.file("trace.json")));
        INFO(lesson);
        CHECK(schema_errors(doc) == "");
    }
}

TEST_CASE("traces under the summary, none and subset policies validate too, and say what they kept",
          "[trace][schema][policy]") {
    for (const char* policy : {"summary", "none", "hook_pattern,hook_z"}) {
        attntrace::test::TempDir dir;
        auto r = attntrace::test::run_cli({"export", "004-causal-mask-example", "--trace", policy, "-o",
                                           dir.file("trace.json")});
        REQUIRE(r.status == 0);
        json doc = json::parse(attntrace::test::read_text(dir.file("trace.json")));
        INFO(policy);
        CHECK(schema_errors(doc) == "");
        const std::string kind = std::string(policy).find(',') != std::string::npos ? "subset" : policy;
        CHECK(doc["trace"]["policy"] == kind);
        if (kind == "summary") {
            CHECK(doc["steps"][0]["recorded"] == "summary");
            CHECK(doc["steps"][0].contains("summary"));
            CHECK_FALSE(doc["steps"][0].contains("values"));
            json both = doc;  // a summarized step may not carry values as well
            both["steps"][0]["values"] = json::array({1.0});
            CHECK(schema_errors(both) != "");
        }
    }
}

TEST_CASE("every lesson's trace under the summary policy validates, a step not computable with values null",
          "[trace][schema][policy]") {
    bool not_computable = false;
    for (const auto& lesson : attntrace::test::lesson_files()) {
        attntrace::test::TempDir dir;
        auto r = attntrace::test::run_cli({"export", lesson, "--trace", "summary", "-o", dir.file("trace.json")});
        REQUIRE(r.status == 0);
        json doc = json::parse(attntrace::test::read_text(dir.file("trace.json")));
        INFO(lesson);
        CHECK(schema_errors(doc) == "");
        for (const auto& s : doc["steps"])
            if (s["source"] == "not-computable") {
                not_computable = true;
                CHECK(s["values"].is_null());
                CHECK_FALSE(s.contains("summary"));
            }
    }
    CHECK(not_computable);  // some lesson has such a step (002-cat-sat-down: no W_Q)
}

TEST_CASE("the schema rejects a trace with a step missing its values or a bad verdict", "[trace][schema]") {
    attntrace::test::TempDir dir;
    auto r = attntrace::test::run_cli({"export", "003-3.1-ring-fell", "-o", dir.file("trace.json")});
    REQUIRE(r.status == 0);
    json doc = json::parse(attntrace::test::read_text(dir.file("trace.json")));
    REQUIRE(schema_errors(doc) == "");

    json no_values = doc;
    no_values["steps"][0].erase("values");
    CHECK(schema_errors(no_values) != "");

    json bad_verdict = doc;
    bad_verdict["claims"][0]["verdict"] = "maybe";
    CHECK(schema_errors(bad_verdict) != "");

    json deep = doc;
    // rank 4 is a batched trace's (the batch axis first); rank 5 is nothing attntrace writes
    deep["steps"][0]["values"] = json::parse("[[[[[1.0]]]]]");
    CHECK(schema_errors(deep) != "");
}

TEST_CASE("a checkpoint's exported trace (export --model) validates too", "[trace][schema]") {
    // GPT-2's, and Phi's (one norm per block, a bias on the logits)
    for (const char* folder : {"tiny-gpt2", "tiny-phi"}) {
        INFO(folder);
        attntrace::test::TempDir dir;
        auto r = attntrace::test::run_cli({"export", "--model", attntrace::test::source_dir() + "/tests/models/" + folder,
                                           "--text", "the ring fell", "-o", dir.file("trace.json")});
        REQUIRE(r.status == 0);
        const json doc = json::parse(attntrace::test::read_text(dir.file("trace.json")));
        CHECK(schema_errors(doc) == "");
        CHECK(doc["model"]["next_tokens"].size() == attntrace::kNextTokensShown);  // a head: its next tokens
    }
}

TEST_CASE("an intervened run's export (its \"interventions\" field) validates, a -inf change included", "[trace][schema]") {
    attntrace::test::TempDir dir;
    const std::string tiny = attntrace::test::source_dir() + "/tests/models/tiny-gpt2";
    auto r = attntrace::test::run_cli({"export", "--model", tiny, "--text", "the ring fell", "--ablate", "blocks.0.attn.h1:mean",
                                       "--set", "blocks.1.attn.hook_attn_scores[h0, 2, 0]=-inf", "-o", dir.file("trace.json")});
    INFO(r.err);
    REQUIRE(r.status == 0);
    const json doc = json::parse(attntrace::test::read_text(dir.file("trace.json")));
    CHECK(schema_errors(doc) == "");
    REQUIRE(doc.contains("interventions"));
    CHECK(doc["interventions"]["changes"].size() == 2);
    CHECK(doc["interventions"]["next_tokens_after"]["next_tokens"].size() == attntrace::kNextTokensShown);
}

}  // namespace test_trace_schema

// The config field table (src/lesson/config_fields.cpp) against docs/lesson-format.md's
// config table, and the table's spellings against the reader and the names it gives.
#include <catch2/catch.hpp>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "lesson/config_fields.hpp"
#include "support.hpp"

using namespace attntrace;

namespace test_config_fields {

namespace {

// docs/lesson-format.md's "## config" table: field -> {default, the whole row}.
struct DocRow {
    std::string default_value;
    std::string row;
};
std::map<std::string, DocRow> documented_fields(const std::string& doc) {
    std::map<std::string, DocRow> out;
    const auto start = doc.find("\n## config\n");
    REQUIRE(start != std::string::npos);
    std::istringstream in(doc.substr(start + 1));
    static const std::regex row(R"(^\| `(\w+)` \| ([^|]*) \|)");
    std::string line;
    std::getline(in, line);  // the heading
    bool in_table = false;
    while (std::getline(in, line)) {
        if (line.empty() && in_table) break;  // the table ends at the first blank line after it
        std::smatch m;
        if (!std::regex_search(line, m, row)) continue;
        in_table = true;
        std::string d = m[2].str();
        std::erase(d, '`');
        while (!d.empty() && d.back() == ' ') d.pop_back();
        out[m[1].str()] = {d, line};
    }
    return out;
}

}  // namespace

TEST_CASE("docs config table documents every field of the config table with its default", "[config_fields]") {
    const std::string doc = attntrace::test::read_text(attntrace::test::source_dir() + "/docs/lesson-format.md");
    const auto rows = documented_fields(doc);
    REQUIRE(rows.size() >= 10);  // the table was found, not one stray line
    for (const ConfigField& f : config_fields()) {
        INFO("config." << f.name);
        const auto it = rows.find(std::string(f.name));
        CHECK(it != rows.end());
        if (it == rows.end()) continue;
        CHECK(it->second.default_value == f.default_value);
        // each spelling written as JSON: in the field's own row, or for a kind that
        // takes an object (mask, positions) in the section that shows its object
        for (const Spelling& s : f.spellings) {
            INFO("spelling " << s.name);
            const std::string quoted = "\"" + std::string(s.name) + "\"";
            CHECK((it->second.row.find(quoted) != std::string::npos || doc.find(quoted) != std::string::npos));
            if (f.type == "a spelling") CHECK(it->second.row.find(quoted) != std::string::npos);
        }
    }
    std::set<std::string> table;
    for (const ConfigField& f : config_fields()) table.emplace(f.name);
    for (const auto& [name, row] : rows) {
        INFO("documented config." << name);
        CHECK(table.count(name) == 1);
    }
}

TEST_CASE("config table names each field once and each recorded step under one field", "[config_fields]") {
    std::set<std::string> names;
    std::map<Leaf, std::string> owner;
    for (const ConfigField& f : config_fields()) {
        INFO("config." << f.name);
        CHECK(names.emplace(f.name).second);
        CHECK_FALSE(f.doc.empty());
        CHECK_FALSE(f.default_value.empty());
        for (const ConfigStep& s : f.steps) {
            CHECK(owner.emplace(s.leaf, std::string(f.name)).second);
            CHECK(config_records_when(s.leaf) == s.when);
        }
        std::set<std::string> spelled;
        for (const Spelling& s : f.spellings) {
            INFO("spelling " << s.name);
            CHECK(spelled.emplace(s.name).second);
            CHECK_FALSE(s.meaning.empty());
            CHECK(spelling_value(f.spellings, s.name) == s.value);
            CHECK(spelling_name(f.spellings, s.value) == s.name);
        }
    }
    CHECK(config_field_names().size() == names.size());
}

TEST_CASE("config reader accepts each spelling of the table and refuses others listing them", "[config_fields]") {
    const std::string head = R"({"format": "attntrace-lesson", "version": 1, "id": "x", "title": "x",
        "source": {"document": "x"}, "tokens": ["a", "b"], "config": {"d_model": 2, )";
    const std::string tail = R"(}, "inputs": {"X": [[1, 0], [0, 1]]}})";
    for (const char* field : {"activation", "norm", "weight_layout", "normalizer", "variance", "mask_at", "norm_steps"}) {
        const ConfigField& f = config_field(field);
        for (const Spelling& s : f.spellings) {
            INFO("config." << field << " " << s.name);
            CHECK(attntrace::test::lesson_refusal(head + "\"" + field + "\": \"" + std::string(s.name) + "\"" + tail) ==
                  "(accepted)");
        }
        INFO("config." << field << " misspelled");
        const std::string refusal = attntrace::test::lesson_refusal(head + "\"" + field + "\": \"nonesuch\"" + tail);
        CHECK(refusal.find("config." + std::string(field) + ": expected " + spellings_expected(f.spellings)) !=
              std::string::npos);
    }
}

}  // namespace test_config_fields

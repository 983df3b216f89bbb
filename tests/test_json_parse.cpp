// core/json_parse: our JSON reader held to nlohmann's parser (an independent
// implementation of RFC 8259) on valid and invalid texts, hand-picked and
// mutated from every shipped lesson; then what it does on purpose that
// nlohmann does not (repeated keys, depth, bounds) and its error offsets.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/json_parse.hpp"
#include "support.hpp"

using attntrace::InputError;
using attntrace::json;
using attntrace::parse_json_document;

namespace test_json_parse {

namespace {

// Ours, or the error it refused with.
struct Outcome {
    bool ok = false;
    json doc;
    std::string error;
    std::size_t byte = 0;
};

Outcome ours(const std::string& text) {
    Outcome o;
    try {
        o.doc = parse_json_document(text, "t.json", {});
        o.ok = true;
    } catch (const InputError& e) {
        o.error = e.what();
        o.byte = e.fields().byte.value_or(std::numeric_limits<std::size_t>::max());
    }
    return o;
}

// nlohmann's verdict: a document, or none (syntax error, out of range).
bool theirs(const std::string& text, json& doc) {
    try {
        doc = json::parse(text);
        return true;
    } catch (const json::exception&) {
        return false;
    }
}

// Equal documents, number kinds included (1 stays an integer, 1.0 a double),
// doubles bit for bit.
bool same(const json& a, const json& b) {
    if (a.type() != b.type()) return false;
    if (a.is_number_float()) {
        const double x = a.get<double>(), y = b.get<double>();
        return std::memcmp(&x, &y, sizeof x) == 0;
    }
    if (a.is_array()) {
        if (a.size() != b.size()) return false;
        for (std::size_t i = 0; i < a.size(); ++i)
            if (!same(a[i], b[i])) return false;
        return true;
    }
    if (a.is_object()) {
        if (a.size() != b.size()) return false;
        for (auto it = a.begin(); it != a.end(); ++it)
            if (!b.contains(it.key()) || !same(it.value(), b.at(it.key()))) return false;
        return true;
    }
    return a == b;
}

// Ours agrees with nlohmann's on `text`: both read the same document, or both
// refuse. Texts with a repeated key or nesting past 64 are not given here.
void agrees(const std::string& text) {
    INFO("text: " << text.substr(0, 200));
    json want;
    const bool ok = theirs(text, want);
    const Outcome got = ours(text);
    INFO("ours: " << got.error);
    REQUIRE(got.ok == ok);
    if (ok) CHECK(same(got.doc, want));
}

}  // namespace

TEST_CASE("the JSON reader reads what nlohmann reads, the same values bit for bit, and refuses what it refuses",
          "[json]") {
    const std::vector<std::string> texts = {
        // scalars and containers
        "0", "-0", "1", "-1", "true", "false", "null", "\"\"", "[]", "{}", " [ ] ", "\t{\n}\r\n", "[1,2,3]",
        R"({"a":{"b":[{},[],[[]],{"c":null}]}})",
        // integers at and past the 64-bit edges, which become doubles past them
        "9223372036854775807", "-9223372036854775808", "-9223372036854775809", "18446744073709551615",
        "18446744073709551616", "123456789012345678901234567890",
        // doubles: rounding, exponents, denormals, underflow to 0
        "0.1", "-0.0", "1e0", "1E+2", "1e-2", "2.5e-3", "0.30000000000000004", "1.7976931348623157e308",
        "4.9e-324", "2.2250738585072014e-308", "1e-400", "-1e-400", "3.4028234663852886e38", "0.000001",
        "123.456e-7", "1.000000000000000000000000001",
        // strings: escapes, surrogate pairs, UTF-8 of every length
        R"("a\"b\\c\/d\b\f\n\r\t")", R"("\u0000\u001f\u00e9\u20ac")", R"("\ud83d\ude00")", "\"é€😀\"",
        "\"\xF0\x9F\x98\x80 \xE2\x82\xAC \xC3\xA9\"", "\"\xEF\xBF\xBF\"",
        // refused by both: syntax
        "", " ", "[", "]", "{", "}", "[1,]", "[,1]", "{\"a\":1,}", "{\"a\"}", "{\"a\" 1}", "{1:2}", "[1 2]",
        "01", "-", "-a", "1.", ".5", "1e", "1e+", "+1", "0x10", "NaN", "Infinity", "-Infinity", "tru", "nul",
        "falsey", "'a'", "\"a", "\"\\x\"", "\"\\u12\"", "\"\\u12G4\"", "[1]x", "1 2", "\"a\"\"b\"",
        // refused by both: control characters and bad UTF-8 in strings, lone surrogates
        "\"a\nb\"", "\"\x01\"", "\"\x80\"", "\"\xC0\xAF\"", "\"\xC2\"", "\"\xE0\x80\x80\"", "\"\xED\xA0\x80\"",
        "\"\xF4\x90\x80\x80\"", "\"\xF5\x80\x80\x80\"", "\"\xFF\"", R"("\ud800")", R"("\udc00")",
        R"("\ud800\u0041")", R"("\ud800x")",
        // out of range
        "1e999", "-1e999", "[1e309]",
    };
    for (const std::string& t : texts) agrees(t);
}

TEST_CASE("the JSON reader agrees with nlohmann's on every shipped lesson and on thousands of mutations of them",
          "[json]") {
    std::mt19937 rng(20261124);
    const char alphabet[] = "{}[]\",:0123456789.-+eE \\u\"tfn\x80\xC3\xE2";
    std::size_t mutated = 0;
    for (const std::string& file : attntrace::test::lesson_files()) {
        const std::string text = attntrace::test::read_text(file);
        agrees(text);
        for (int k = 0; k < 60; ++k) {
            std::string m = text;
            const int edits = 1 + static_cast<int>(rng() % 3);
            for (int e = 0; e < edits && !m.empty(); ++e) {
                const std::size_t at = rng() % m.size();
                switch (rng() % 3) {
                    case 0: m[at] = alphabet[rng() % (sizeof alphabet - 1)]; break;  // replace
                    case 1: m.erase(at, 1 + rng() % 4); break;                        // delete
                    default: m.insert(at, 1, alphabet[rng() % (sizeof alphabet - 1)]); // insert
                }
            }
            json probe;
            // a mutation may repeat a key (nlohmann keeps the last, we refuse): checked below, not here
            if (theirs(m, probe)) {
                const Outcome got = ours(m);
                if (!got.ok) {
                    INFO(got.error);
                    CHECK(got.error.find("a second time") != std::string::npos);
                    continue;
                }
            }
            agrees(m);
            ++mutated;
        }
    }
    CHECK(mutated > 1000);
}

TEST_CASE("the JSON reader refuses what it must on purpose: a repeated key, nesting past 64, a bound crossed",
          "[json]") {
    Outcome o = ours(R"({"a": [{"b": 1}, {"c": {"d": 1, "d": 2}}]})");
    REQUIRE_FALSE(o.ok);
    CHECK(o.error.find("a[1].c.d") != std::string::npos);
    CHECK(o.error.find("\"d\" a second time") != std::string::npos);

    const std::string deep64 = std::string(64, '[') + std::string(64, ']');
    CHECK(ours(deep64).ok);
    o = ours(std::string(65, '[') + std::string(65, ']'));
    REQUIRE_FALSE(o.ok);
    CHECK(o.byte == 64);  // the bracket that goes one too deep
    CHECK(o.error.find("nested at most 64 deep") != std::string::npos);
    // a million '[' is refused at the 65th, with no recursion
    o = ours(std::string(1000000, '['));
    CHECK(o.byte == 64);

    try {
        parse_json_document(R"({"tokens": ["a", "b", "c"], "n": {"x": 1, "y": 2, "z": 3}})", "t.json",
                            {{"tokens", 2}, {"n", 3}});
        FAIL("no error");
    } catch (const InputError& e) {
        CHECK(e.path() == "tokens");
        CHECK(std::string(e.what()).find("at most 2 elements") != std::string::npos);
    }
    try {
        parse_json_document(R"({"n": {"x": 1, "y": 2, "z": 3}})", "t.json", {{"n", 2}});
        FAIL("no error");
    } catch (const InputError& e) {
        CHECK(e.path() == "n");
        CHECK(std::string(e.what()).find("at most 2 members") != std::string::npos);
    }
    // at the bound is fine; only a top-level member is held to it
    CHECK(parse_json_document(R"({"n": {"x": 1, "y": 2}, "m": {"n": [1, 2, 3]}})", "t.json", {{"n", 2}}).size() == 2);
}

TEST_CASE("the JSON reader's errors name the byte where the text goes wrong, and what was expected there", "[json]") {
    struct Case {
        std::string text;
        std::size_t byte;
        const char* expected;
    };
    const Case cases[] = {
        {"[1,]", 3, "a value"},
        {"{\"a\":1,}", 7, "a member's name in double quotes"},
        {"{\"a\" 1}", 5, "':' after a member's name"},
        {"[1 2]", 3, "',' or ']' after an array's element"},
        {"{\"a\":1 \"b\":2}", 7, "',' or '}' after an object's member"},
        {"[tru]", 1, "the literal true"},
        {"[1.]", 3, "a digit after the decimal point"},
        {"[\"ab", 1, "a '\"' closing the string begun here"},
        {"[\"a\x01\"]", 3, "a control character written as an escape"},
        {"[\"a\xC3(\"]", 4, "a continuation byte"},
        {"[\"\\q\"]", 2, "an escape"},
        {"[1] [2]", 4, "the end of the text after the document's value"},
        {"[1e999]", 1, "a finite number"},
    };
    for (const Case& c : cases) {
        INFO(c.text);
        const Outcome o = ours(c.text);
        REQUIRE_FALSE(o.ok);
        CHECK(o.byte == c.byte);
        CHECK(o.error.find(c.expected) != std::string::npos);
        CHECK(o.error.find('\n') == std::string::npos);
    }
    // a byte-order mark is skipped, as nlohmann does
    CHECK(same(ours("\xEF\xBB\xBF{\"a\": 1}").doc, json::parse("{\"a\": 1}")));
}

}  // namespace test_json_parse

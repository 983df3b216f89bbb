// Errors are values: an InputError carries its file, field path, byte offset,
// what was expected and what was found as fields, and its one line is made
// from them. These tests hold the readers to the fields (the corpora hold
// them to the lines), and compare to reading the fields only.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "compare/lesson_override.hpp"
#include "core/error.hpp"
#include "core/json_field.hpp"
#include "cost/cost.hpp"
#include "cost/cost_lesson.hpp"
#include "export/npy_export.hpp"
#include "io/npy.hpp"
#include "lesson/lesson.hpp"
#include "support.hpp"

using namespace attntrace;
using attntrace::test::read_text;
using attntrace::test::TempDir;
using attntrace::test::write_text;

namespace test_errors {

namespace {

const std::string kTests = ATTNTRACE_TESTS_DIR;

// The InputError `f` throws; fails the test when it throws none.
template <class F>
InputError error_of(F f) {
    try {
        f();
    } catch (const InputError& e) {
        return e;
    }
    FAIL("no InputError thrown");
    throw std::logic_error("unreachable");
}

}  // namespace

TEST_CASE("an input error's line is made from its fields", "[errors]") {
    const InputError field(ErrorFields{.file = "a.json", .path = "weights.W_Q[2]", .expected = "4 numbers", .found = "3"});
    CHECK(std::string(field.what()) == "a.json: weights.W_Q[2]: expected 4 numbers, found 3");
    CHECK(field.after_file() == "weights.W_Q[2]: expected 4 numbers, found 3");

    const InputError at(ErrorFields{.file = "w.npy", .byte = 20, .expected = "dtype '<f4'", .found = "'<f2'"});
    CHECK(std::string(at.what()) == "w.npy: byte 20: expected dtype '<f4', found '<f2'");
    const InputError nested = at.within("lesson.json", "weights.W_Q");
    CHECK(std::string(nested.what()) == "lesson.json: weights.W_Q: w.npy: byte 20: expected dtype '<f4', found '<f2'");
    CHECK(nested.after_file() == "weights.W_Q: w.npy: byte 20: expected dtype '<f4', found '<f2'");
    CHECK(nested.fields().within == std::vector<ErrorPlace>{{"lesson.json", "weights.W_Q"}});
    CHECK(nested.file() == "w.npy");
    CHECK(nested.fields().byte == 20u);

    // A control character in a key stays on one line; the field keeps it as it was.
    const InputError key(ErrorFields{.file = "a.json", .path = "x\ny", .expected = "e", .found = "f"});
    CHECK(std::string(key.what()) == "a.json: x\\ny: expected e, found f");
    CHECK(key.path() == "x\ny");

    const InputError text("explain: index 9 is out of range: expected 0..0");
    CHECK(std::string(text.what()) == "explain: index 9 is out of range: expected 0..0");
    CHECK(text.file().empty());
    CHECK(text.expected().empty());
}

TEST_CASE("the lesson reader's refusals carry file, path, expected, found and kind", "[errors]") {
    const std::string unknown = kTests + "/bad-input/unknown-config-d-modle.json";
    InputError e = error_of([&] { read_lesson(unknown); });
    CHECK(e.file() == unknown);
    CHECK(e.path() == "config.d_modle");
    CHECK(e.kind() == ErrorKind::unknown_field);
    CHECK(e.expected().rfind("one of the known fields (d_model, heads", 0) == 0);
    CHECK(e.found() == "an unknown field (closest: d_model)");  // the typo's correction, as a step name's

    e = error_of([&] { read_lesson(kTests + "/bad-input/missing-d-model.json"); });
    CHECK(e.path() == "config.d_model");
    CHECK(e.kind() == ErrorKind::missing_field);
    CHECK(e.expected() == "a value");

    e = error_of([&] { read_lesson(kTests + "/bad-input/number-abc-in-matrix.json"); });
    CHECK(e.path() == "weights.W_K[1][2]");
    CHECK(e.kind() == ErrorKind::invalid);
    CHECK(e.expected() == "a number");
    CHECK(e.found() == "string \"abc\"");

    // A step name that is no step, under given.
    nlohmann::json doc = nlohmann::json::parse(read_text(attntrace::test::lessons_dir() + "/003-3.1-ring-fell.json"));
    doc["given"]["blocks.0.attn.hook_nope"] = 1;
    e = error_of([&] { parse_lesson(doc.dump(), "ring.json"); });
    CHECK(e.file() == "ring.json");
    CHECK(e.path() == "given.blocks.0.attn.hook_nope");
    CHECK(e.kind() == ErrorKind::unknown_step);
    CHECK(e.found() == "an unknown step");
}

TEST_CASE("JSON reading names the byte offset or the field path as fields", "[errors]") {
    InputError e = error_of([] { parse_json_text("{\"a\": tru}", "x.json"); });
    CHECK(e.file() == "x.json");
    CHECK(e.path().empty());
    CHECK(e.fields().byte == 6u);  // where the literal begins
    CHECK(e.expected() == "valid JSON: the literal true");
    CHECK(e.found() == "tru");

    e = error_of([] { parse_json_text("", "x.json"); });
    CHECK(e.fields().byte == 0u);
    CHECK(e.found() == "an empty file");

    e = error_of([] { parse_json_text("{\"a\": {\"b\": 1, \"b\": 2}}", "x.json"); });
    CHECK(e.path() == "a.b");
    CHECK(!e.fields().byte);
    CHECK(e.expected() == "each key once in an object");
    CHECK(e.found() == "\"b\" a second time");

    const Fields f("y.json");
    e = error_of([&] { f.integer(nlohmann::json(70000), "config.d_model", 1, 65536); });
    CHECK(e.file() == "y.json");
    CHECK(e.path() == "config.d_model");
    CHECK(e.expected() == "an integer from 1 to 65536");
    CHECK(e.found() == "70000");
    e = error_of([&] { f.object(nlohmann::json(1), ""); });
    CHECK(e.path() == "(top level)");

    e = error_of([] { load_json_file(kTests + "/no-such-file.json"); });
    CHECK(e.path().empty());
    CHECK(e.expected() == "a readable file");
    CHECK(e.found() == "no such file");
}

TEST_CASE("the .npy reader's refusals carry the file, the byte offset or cell, expected and found", "[errors][npy]") {
    const std::string f16 = kTests + "/npy/bad/dtype-float16.npy";
    InputError e = error_of([&] { read_npy(f16); });
    CHECK(e.file() == f16);
    CHECK(e.fields().byte == 20u);
    CHECK(e.expected() == "dtype '<f4' or '<f8' (float32 or float64)");
    CHECK(e.found() == "'<f2'");

    const std::string nan = kTests + "/npy/numpy/nan.npy";
    e = error_of([&] { read_npy(nan); });
    CHECK(e.file() == nan);
    CHECK(e.path() == "[1,2]");
    CHECK(!e.fields().byte);
    CHECK(e.expected() == "a finite number");
    CHECK(e.found() == "NaN");

    // Read for a lesson: the lesson's field is the outer place, the .npy's error kept whole.
    const std::string lesson = kTests + "/bad-input/npy-fortran-input.json";
    e = error_of([&] { read_lesson(lesson); });
    CHECK(e.fields().within == std::vector<ErrorPlace>{{lesson, "inputs.X"}});
    CHECK(e.file() == kTests + "/bad-input/../npy/numpy/fortran.npy");
    CHECK(e.fields().byte == 44u);
    CHECK(e.expected() == "'fortran_order': False (C order)");

    // Read for an npy export's index: the step's file field is the outer place.
    TempDir dir;
    write_text(dir.file("index.json"),
               R"({"format": "attntrace-npy", "version": 1, "steps": [{"name": "x", "shape": [2], "file": "x.npy"}]})");
    write_text(dir.file("x.npy"), read_text(f16));
    e = error_of([&] { read_npy_export(dir.path()); });
    CHECK(e.fields().within == std::vector<ErrorPlace>{{dir.file("index.json"), "steps[0].file"}});
    CHECK(e.file() == dir.path() + "/x.npy");
    CHECK(e.fields().byte == 20u);

    // The index's own refusal, from inside the read (a shape the index does not
    // give), names the index alone: it is not wrapped as the .npy file's.
    write_npy(dir.file("x.npy"), Tensor(Shape{3}));
    e = error_of([&] { read_npy_export(dir.path()); });
    CHECK(e.fields().within.empty());
    CHECK(e.file() == dir.file("index.json"));
    CHECK(e.path() == "steps[0].shape");
    CHECK(e.found() == "2");
}

TEST_CASE("a cost lesson's inconsistent spec quotes the cost model's expected and found", "[errors][cost]") {
    InputError e = error_of([] {
        CostSpec s;
        s.tokens = 8, s.d_model = 64, s.heads = 5;
        estimate_cost(s, "attntrace cost");
    });
    CHECK(e.file() == "attntrace cost");
    CHECK(e.expected() == "heads dividing d_model");
    CHECK(e.found() == "5 heads for d_model 64");

    const std::string file = kTests + "/bad-input/cost/claim-over-heads.json";
    e = error_of([&] { read_cost_lesson(file); });
    CHECK(e.file() == file);
    CHECK(e.path() == "claims[1].over");
    CHECK(e.expected() == "a consistent spec: heads dividing d_model");
    CHECK(e.found() == "5 heads for d_model 64");
}

TEST_CASE("compare maps the reader's refusals by their fields, whatever their wording", "[errors][compare]") {
    RefusalContext c;
    c.file = "ring.json";
    c.b_label = "ring.json (with --set config.nope=1)";
    c.created = {{"config.nope", "config.nope=1"}, {"nope", "nope=1"}};
    // Reworded on purpose: nothing below may depend on "found an unknown field".
    auto reader = [](ErrorKind kind, const std::string& path, const std::string& expected, const std::string& found) {
        return InputError(ErrorFields{.kind = kind, .file = "ring.json", .path = path, .expected = expected, .found = found});
    };
    c.bare_misses.emplace("nope", reader(ErrorKind::unknown_field, "config.nope", "CONFIG FIELDS", "NO SUCH"));

    SECTION("a key a --set added that the format lacks is that --set's error") {
        const InputError m = map_refusal(reader(ErrorKind::unknown_field, "config.nope", "a field", "zzz"), c);
        CHECK(m.fields().within == std::vector<ErrorPlace>{{"--set", "config.nope=1"}});
        CHECK(m.file().empty());
        CHECK(m.path() == "config.nope");
        CHECK(m.kind() == ErrorKind::unknown_field);
        CHECK(std::string(m.what()) == "--set: config.nope=1: config.nope: expected a field, found zzz");
    }
    SECTION("an unknown step is mapped the same way") {
        c.created.emplace("given.hook_nope", "given.hook_nope=1");
        const InputError m = map_refusal(reader(ErrorKind::unknown_step, "given.hook_nope", "a step", "?"), c);
        CHECK(std::string(m.what()) == "--set: given.hook_nope=1: given.hook_nope: expected a step, found ?");
    }
    SECTION("a bare key neither in config nor at the top level quotes both refusals") {
        const InputError m = map_refusal(reader(ErrorKind::unknown_field, "nope", "TOP FIELDS", "NOT ONE"), c);
        CHECK(m.file() == "--set");
        CHECK(m.path() == "nope=1");
        CHECK(std::string(m.what()) ==
              "--set: nope=1: expected a field of config or of the lesson's top level, found neither (config.nope: "
              "expected CONFIG FIELDS, found NO SUCH; nope: expected TOP FIELDS, found NOT ONE)");
    }
    SECTION("the wording of an unknown field does not make one: the kind does") {
        const InputError m = map_refusal(reader(ErrorKind::invalid, "config.nope", "x", "an unknown field"), c);
        CHECK(m.file() == c.b_label);
        CHECK(std::string(m.what()) == "ring.json (with --set config.nope=1): config.nope: expected x, found an unknown field");
    }
    SECTION("any other refusal is B's, under B's label, its fields kept") {
        const InputError m = map_refusal(reader(ErrorKind::invalid, "config.heads", "a divisor", "3"), c);
        CHECK(m.file() == c.b_label);
        CHECK(m.path() == "config.heads");
        CHECK(m.expected() == "a divisor");
        const InputError npy = map_refusal(
            InputError(ErrorFields{.file = "w.npy", .byte = 8, .expected = "e", .found = "f"}).within("ring.json", "weights.W_Q"), c);
        CHECK(npy.fields().within == std::vector<ErrorPlace>{{c.b_label, "weights.W_Q"}});
        CHECK(npy.file() == "w.npy");
    }
}

TEST_CASE("read_lesson_pair reports a refusal through the fields end to end", "[errors][compare]") {
    const std::string ring = attntrace::test::lessons_dir() + "/003-3.1-ring-fell.json";
    InputError e = error_of([&] { read_lesson_pair(ring, {parse_setting("config.nope=1")}); });
    CHECK(e.fields().within == std::vector<ErrorPlace>{{"--set", "config.nope=1"}});
    CHECK(e.path() == "config.nope");
    CHECK(e.kind() == ErrorKind::unknown_field);

    e = error_of([&] { read_lesson_pair(ring, {parse_setting("config.heads=3")}); });
    CHECK(e.file() == ring + " (with --set config.heads=3)");
    CHECK(e.path() == "config.heads");
    CHECK(e.found() == "3");

    e = error_of([&] { read_lesson_pair(ring, {parse_setting("tokens[9]=x")}); });
    CHECK(e.file() == "--set");
    CHECK(e.path() == "tokens[9]=x");
    CHECK(e.found() == "9");
}

}  // namespace test_errors

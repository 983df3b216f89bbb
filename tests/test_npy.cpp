// .npy files (src/io/npy.hpp): our writer read back, files numpy wrote
// (tests/npy/numpy/), a corpus of malformed ones (tests/npy/bad/), each
// refused through a lesson with one line; lessons loading tensors from .npy.
// The fixtures and their cases.json come from tests/npy/make_fixtures.py.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "io/npy.hpp"
#include "support.hpp"

using attntrace::Shape;
using attntrace::Tensor;
using attntrace::test::read_text;
using attntrace::test::run_cli;
using attntrace::test::TempDir;
using attntrace::test::write_text;
using nlohmann::json;

namespace test_npy {

namespace {

namespace fs = std::filesystem;

const std::string kNpyDir = std::string(ATTNTRACE_TESTS_DIR) + "/npy";

json load_cases(const std::string& folder) { return json::parse(read_text(kNpyDir + "/" + folder + "/cases.json")); }

// Exit status 2 and one line "attntrace: error: ..." holding every needle.
void require_one_line_error(const attntrace::test::CliResult& r, const std::vector<std::string>& needles) {
    INFO("stderr: " << r.err);
    CHECK(r.status == 2);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(r.err.rfind("attntrace: error: ", 0) == 0);
    CHECK(r.out.empty());
    for (const auto& n : needles) {
        INFO("expected in the error line: " << n);
        CHECK(r.err.find(n) != std::string::npos);
    }
}

// A lesson of 3 tokens, d_model 4, running embed..qkv, with `weights` and `given` as given.
std::string small_lesson(const json& weights, const json& given = json::object(), const json& x = nullptr) {
    json doc = {{"format", "attntrace-lesson"}, {"version", 1}, {"id", "npy-test"}, {"title", "npy"},
                {"source", {{"document", "test"}}}, {"tokens", {"a", "b", "c"}},
                {"config", {{"d_model", 4}, {"heads", 2}}}, {"run", {{"from", "embed"}, {"to", "mix"}}},
                {"inputs", {{"X", x.is_null() ? json{{1, 0, 0, 2}, {0, 1, 0, 0}, {0, 0.5, 1, 0}} : x}}},
                {"weights", weights}};
    if (!given.empty()) doc["given"] = given;
    return doc.dump(1);
}

Tensor matrix(Shape shape, float start) {
    Tensor t(shape);
    for (std::size_t i = 0; i < t.size(); ++i) t.data[i] = start + 0.25f * static_cast<float>(i % 7) - 0.5f;
    return t;
}

}  // namespace

TEST_CASE("npy: what we write reads back bit for bit, at every rank, -inf included", "[npy]") {
    TempDir dir;
    for (const Shape& shape : {Shape{}, Shape{5}, Shape{3, 4}, Shape{2, 3, 5}}) {
        Tensor t = matrix(shape, 1.0f);
        if (t.size() > 1) t.data[1] = attntrace::kNegInf;
        const std::string path = dir.file("t.npy");
        attntrace::write_npy(path, t);
        const std::string bytes = read_text(path);
        const std::size_t header = 10 + (static_cast<unsigned char>(bytes[8]) | static_cast<unsigned char>(bytes[9]) << 8);
        CHECK(header % 64 == 0);  // numpy's alignment: the data starts at a multiple of 64
        CHECK(bytes.size() == header + 4 * t.size());
        CHECK(bytes.substr(0, 8) == std::string("\x93NUMPY\x01\x00", 8));
        Tensor back = attntrace::read_npy(path, {.allow_neg_inf = true});
        CHECK(back.shape == shape);
        CHECK(std::equal(back.data.begin(), back.data.end(), t.data.begin(), t.data.end()));
    }
    CHECK(dir.entries() == std::vector<std::string>{"t.npy"});  // no temporary file left
}

TEST_CASE("npy: files written by numpy are read (f4, f8, 0-d, version 2.0) or refused as cases.json says", "[npy]") {
    const json cases = load_cases("numpy");
    CHECK(cases.size() >= 10);
    for (auto it = cases.begin(); it != cases.end(); ++it) {
        const std::string path = kNpyDir + "/numpy/" + it.key();
        const json& c = it.value();
        DYNAMIC_SECTION(it.key()) {
            if (c.contains("values")) {
                Tensor t = attntrace::read_npy(path);
                CHECK(t.shape == c["shape"].get<Shape>());
                const auto want = c["values"].get<std::vector<double>>();
                REQUIRE(t.size() == want.size());
                for (std::size_t i = 0; i < want.size(); ++i) CHECK(t.data[i] == static_cast<float>(want[i]));
            }
            if (c.contains("neg_inf_at")) {  // accepted where -inf may stand (masks, scores)
                Tensor t = attntrace::read_npy(path, {.allow_neg_inf = true});
                CHECK(t.data[c["neg_inf_at"].get<std::size_t>()] == attntrace::kNegInf);
            }
            if (c.contains("error")) {
                try {
                    attntrace::read_npy(path);
                    FAIL("read without an error");
                } catch (const attntrace::InputError& e) {
                    const std::string what = e.what();
                    INFO(what);
                    CHECK(what.rfind(path + ": ", 0) == 0);
                    for (const auto& n : c["error"]) CHECK(what.find(n.get<std::string>()) != std::string::npos);
                }
            }
        }
    }
}

TEST_CASE("npy: every malformed file, as a lesson's weight, is refused with one line naming lesson, field, file and byte",
          "[npy]") {
    const json cases = load_cases("bad");
    CHECK(cases.size() >= 10);
    std::size_t files = 0;
    for (const auto& e : fs::directory_iterator(kNpyDir + "/bad"))
        if (e.path().extension() == ".npy") {
            ++files;
            INFO("without a case: " << e.path());
            CHECK(cases.contains(e.path().filename().string()));
        }
    CHECK(files == cases.size());
    auto refuse = [](const std::string& source, const std::string& name, std::vector<std::string> needles) {
        TempDir dir;
        fs::create_directory(dir.file("w"));
        fs::copy_file(source, dir.file("w/" + name));
        write_text(dir.file("lesson.json"), small_lesson({{"W_Q", {{"npy", "w/" + name}}}}));
        needles.insert(needles.end(), {dir.file("lesson.json") + ": weights.W_Q: ", dir.file("w/" + name) + ": "});
        require_one_line_error(run_cli({"run", dir.file("lesson.json")}), needles);
        auto r = run_cli({"export", dir.file("lesson.json"), "--npy", dir.file("out")});
        require_one_line_error(r, needles);
        CHECK(!fs::exists(dir.file("out")));
    };
    for (auto it = cases.begin(); it != cases.end(); ++it)
        DYNAMIC_SECTION(it.key()) { refuse(kNpyDir + "/bad/" + it.key(), it.key(), it.value()); }
    // and numpy's own files we refuse: fortran order, big-endian, NaN, ...
    const json numpy_cases = load_cases("numpy");
    for (auto it = numpy_cases.begin(); it != numpy_cases.end(); ++it)
        if (it.value().contains("error"))
            DYNAMIC_SECTION("numpy " << it.key()) {
                refuse(kNpyDir + "/numpy/" + it.key(), it.key(), it.value()["error"]);
            }
}

TEST_CASE("npy: a lesson's inputs, weights and given values from .npy files run as the same values inline", "[npy]") {
    TempDir dir;
    const Tensor wq = matrix({4, 4}, 0.5f), wk = matrix({4, 4}, -0.25f), wv = matrix({4, 4}, 1.0f);
    const Tensor x = matrix({3, 4}, 0.0f), q = matrix({3, 4}, 0.75f);  // Q given as the article's T x d_model
    auto inline_json = [](const Tensor& t) {
        json rows = json::array();
        for (std::size_t i = 0; i < t.shape[0]; ++i)
            rows.push_back(std::vector<float>(t.data.begin() + i * t.shape[1], t.data.begin() + (i + 1) * t.shape[1]));
        return rows;
    };
    fs::create_directory(dir.file("data"));
    const std::vector<std::pair<std::string, const Tensor*>> files = {
        {"W_Q", &wq}, {"W_K", &wk}, {"W_V", &wv}, {"X", &x}, {"Q", &q}};
    for (const auto& [name, t] : files) attntrace::write_npy(dir.file("data/" + name + ".npy"), *t);
    write_text(dir.file("inline.json"),
               small_lesson({{"W_Q", inline_json(wq)}, {"W_K", inline_json(wk)}, {"W_V", inline_json(wv)}},
                            {{"blocks.0.attn.hook_q", inline_json(q)}}, inline_json(x)));
    write_text(dir.file("npy.json"),
               small_lesson({{"W_Q", {{"npy", "data/W_Q.npy"}}}, {"W_K", {{"npy", "data/W_K.npy"}}},
                             {"W_V", {{"npy", "data/W_V.npy"}}}},
                            {{"blocks.0.attn.hook_q", {{"npy", "data/Q.npy"}}}}, {{"npy", "data/X.npy"}}));
    auto a = run_cli({"export", dir.file("inline.json"), "-o", dir.file("inline-trace.json")});
    auto b = run_cli({"export", dir.file("npy.json"), "-o", dir.file("npy-trace.json")});
    INFO(a.err << b.err);
    REQUIRE(a.status == 0);
    REQUIRE(b.status == 0);
    const json ta = json::parse(read_text(dir.file("inline-trace.json")));
    const json tb = json::parse(read_text(dir.file("npy-trace.json")));
    CHECK(ta["steps"] == tb["steps"]);
    for (const auto& step : tb["steps"])
        if (step["name"] == "blocks.0.attn.hook_q") CHECK(step["source"] == "given");  // from Q.npy

    SECTION("a file of the wrong shape: the shape expected and the file's") {
        attntrace::write_npy(dir.file("data/W_K.npy"), matrix({3, 4}, 0.0f));
        require_one_line_error(run_cli({"run", dir.file("npy.json")}),
                               {dir.file("npy.json") + ": weights.W_K: expected a 4x4 array (d_model x d_model), found "
                                                       "a 3x4 array in " + dir.file("data/W_K.npy")});
    }
    SECTION("a NaN names the file and its index") {
        Tensor bad = wq;
        bad.data[2 * 4 + 3] = std::nanf("");
        attntrace::write_npy(dir.file("data/W_Q.npy"), bad);
        require_one_line_error(run_cli({"run", dir.file("npy.json")}),
                               {dir.file("npy.json") + ": weights.W_Q: " + dir.file("data/W_Q.npy") +
                                ": [2,3]: expected a finite number, found NaN"});
    }
    SECTION("a missing file, an absolute path, an extra key") {
        fs::remove(dir.file("data/X.npy"));
        require_one_line_error(run_cli({"run", dir.file("npy.json")}),
                               {"inputs.X: " + dir.file("data/X.npy"), "no such file"});
        write_text(dir.file("abs.json"), small_lesson({{"W_Q", {{"npy", dir.file("data/W_Q.npy")}}}}));
        require_one_line_error(run_cli({"run", dir.file("abs.json")}), {"weights.W_Q.npy", "relative to the lesson"});
        write_text(dir.file("extra.json"), small_lesson({{"W_Q", {{"npy", "data/W_Q.npy"}, {"seed", 1}}}}));
        require_one_line_error(run_cli({"run", dir.file("extra.json")}), {"weights.W_Q.seed", "unknown field"});
    }
    SECTION("the memory budget counts a file's numbers before they are read, before its shape is checked") {
        attntrace::write_npy(dir.file("data/W_Q.npy"), Tensor(Shape{1000, 1000}));  // 3.8 MiB
        require_one_line_error(run_cli({"--max-memory", "1M", "run", dir.file("npy.json")}),
                               {dir.file("npy.json") + ": weights.W_Q: ", "--max-memory", dir.file("data/W_Q.npy")});
    }
}

TEST_CASE("a batch's X may come from .npy files, as inputs.X does: the same trace as inline", "[npy]") {
    TempDir dir;
    fs::create_directory(dir.file("data"));
    const json lesson = json::parse(read_text(attntrace::test::lessons_dir() + "/001-batch-padding.json"));
    json npy = lesson;
    for (std::size_t b = 0; b < lesson["batch"]["sequences"].size(); ++b) {
        const json& x = lesson["batch"]["sequences"][b]["X"];
        Tensor t(Shape{x.size(), x[0].size()});
        for (std::size_t i = 0; i < t.shape[0]; ++i)
            for (std::size_t j = 0; j < t.shape[1]; ++j) t.data[i * t.shape[1] + j] = x[i][j].get<float>();
        const std::string name = "data/X" + std::to_string(b) + ".npy";
        attntrace::write_npy(dir.file(name), t);
        npy["batch"]["sequences"][b]["X"] = {{"npy", name}};
    }
    write_text(dir.file("inline.json"), lesson.dump());
    write_text(dir.file("npy.json"), npy.dump());
    auto a = run_cli({"export", dir.file("inline.json"), "-o", dir.file("a.json")});
    auto b = run_cli({"export", dir.file("npy.json"), "-o", dir.file("b.json")});
    INFO(a.err << b.err);
    REQUIRE(a.status == 0);
    REQUIRE(b.status == 0);
    CHECK(json::parse(read_text(dir.file("a.json")))["steps"] == json::parse(read_text(dir.file("b.json")))["steps"]);
    // a file of the wrong shape: named with the sequence's field, the shape expected and the file's
    attntrace::write_npy(dir.file("data/X1.npy"), matrix({3, 4}, 0.0f));
    require_one_line_error(run_cli({"run", dir.file("npy.json")}),
                           {dir.file("npy.json") + ": batch.sequences[1].X: expected a 2x4 array (tokens x d_model), found "
                                                   "a 3x4 array in " + dir.file("data/X1.npy")});
}

}  // namespace test_npy

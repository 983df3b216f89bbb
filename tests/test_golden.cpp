// golden/: one expected trace per lesson, recomputed and compared value by value.
#include <catch2/catch.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "support.hpp"

using attntrace::test::run_cli;
using nlohmann::json;

namespace test_golden {
namespace fs = std::filesystem;

namespace {
std::string lesson_id(const std::string& file) { return fs::path(file).stem().string(); }
}  // namespace

TEST_CASE("every lesson has a golden trace and recomputes to it", "[golden]") {
    for (const auto& lesson : attntrace::test::lesson_files()) {
        INFO(lesson);
        std::string golden = attntrace::test::source_dir() + "/golden/" + lesson_id(lesson) + ".json";
        REQUIRE(fs::exists(golden));
        auto r = run_cli({"golden", lesson});
        INFO(r.out << r.err);
        CHECK(r.status == 0);
    }
}

TEST_CASE("a perturbed golden value fails with the step, the cell, both values and the command to regenerate",
          "[golden]") {
    attntrace::test::TempDir dir;
    const std::string id = "003-3.1-ring-fell";
    json doc = json::parse(attntrace::test::read_text(attntrace::test::source_dir() + "/golden/" + id + ".json"));
    // Move one attention weight (ring -> fell) by 0.01.
    json* pattern = nullptr;
    for (auto& s : doc["steps"])
        if (s["name"] == "blocks.0.attn.hook_pattern") pattern = &s;
    REQUIRE(pattern);
    float before = (*pattern)["values"][0][1][2].get<float>();
    (*pattern)["values"][0][1][2] = before + 0.01f;
    attntrace::test::write_text(dir.file(id + ".json"), doc.dump(2));

    auto r = run_cli({"golden", id}, {"ATTNTRACE_GOLDEN=" + dir.path()});
    CHECK(r.status == 1);
    const std::string out = attntrace::test::unwrapped(r.out);  // wrapped to 80 columns: read as one line
    CHECK(out.find("step blocks.0.attn.hook_pattern[0,1,2]") != std::string::npos);
    CHECK(out.find("attntrace golden --update " + id) != std::string::npos);
    CHECK(out.find("computed 0.50648") != std::string::npos);
    CHECK(out.find("golden value 0.51648") != std::string::npos);
    CHECK(out.find("MISMATCH") != std::string::npos);
}

TEST_CASE("golden --update writes goldens only where told, and refuses a lesson that fails to load", "[golden]") {
    attntrace::test::TempDir dir;
    auto r = run_cli({"golden", "--update", "003-3.1-ring-fell"}, {"ATTNTRACE_GOLDEN=" + dir.path()});
    REQUIRE(r.status == 0);
    CHECK(dir.entries() == std::vector<std::string>{"003-3.1-ring-fell.json"});
    // The freshly written golden compares clean.
    CHECK(run_cli({"golden", "003-3.1-ring-fell"}, {"ATTNTRACE_GOLDEN=" + dir.path()}).status == 0);

    attntrace::test::TempDir empty;
    attntrace::test::write_text(empty.file("broken.json"), "{\"format\": ");
    auto bad = run_cli({"golden", "--update", "003-3.1-ring-fell", empty.file("broken.json")},
                       {"ATTNTRACE_GOLDEN=" + empty.path()});
    CHECK(bad.status == 2);
    CHECK(empty.entries() == std::vector<std::string>{"broken.json"});  // nothing written
}

}  // namespace test_golden

// The documentation stays true to the code.
#include <catch2/catch.hpp>

#include "support.hpp"
#include "trace/steps.hpp"

TEST_CASE("docs/steps.md lists every step of the catalogue, in pipeline order", "[docs]") {
    std::string doc = attntrace::test::read_text(attntrace::test::source_dir() + "/docs/steps.md");
    std::size_t last = 0;
    for (const auto& step : attntrace::step_catalogue()) {
        INFO(step.name);
        std::size_t at = doc.find("| `" + std::string(step.name) + "` |");
        REQUIRE(at != std::string::npos);
        CHECK(at > last);
        last = at;
    }
}

TEST_CASE("docs/lesson-format.md names every stage", "[docs]") {
    std::string doc = attntrace::test::read_text(attntrace::test::source_dir() + "/docs/lesson-format.md");
    for (int s = 0; s < attntrace::kStageCount; ++s) {
        std::string name(attntrace::stage_name(static_cast<attntrace::Stage>(s)));
        INFO(name);
        CHECK(doc.find("| `" + name + "` |") != std::string::npos);
    }
}

TEST_CASE("the README's test command is the one .ci/run runs", "[docs]") {
    std::string readme = attntrace::test::read_text(attntrace::test::source_dir() + "/README.md");
    std::string ci = attntrace::test::read_text(attntrace::test::source_dir() + "/.ci/run");
    const std::string marker = "ctest --test-dir build";
    auto at = readme.find(marker);
    REQUIRE(at != std::string::npos);
    auto start = readme.rfind('\n', at) + 1;
    std::string line = readme.substr(start, readme.find('\n', at) - start);
    INFO(line);
    CHECK(ci.find(line) != std::string::npos);
}

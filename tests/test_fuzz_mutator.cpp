// The fuzzer's structure-aware mutator (fuzz/lesson_mutator.hpp) does what
// it is for: from a valid lesson, one mutation gives valid JSON that differs,
// often still a lesson that loads, and otherwise a refusal deep inside it (a
// field path several levels down), across many different fields, which a
// byte mutator rarely reaches.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "../fuzz/lesson_mutator.hpp"
#include "core/error.hpp"
#include "core/memory.hpp"
#include "lesson/lesson.hpp"
#include "support.hpp"

using attntrace::test::read_text;

namespace test_fuzz_mutator {

namespace {

// Mutants per lesson: enough for the fractions below to be stable (they
// moved by under 2 points between seeds ranges), few enough to run in ~1 s.
constexpr std::uint32_t kMutants = 1500;

// Bounds on what the mutator achieves, well below what it measured (1500
// mutants each of 003-stacked-blocks, 001-batch-padding, 001-cross-attention:
// 91-98% valid JSON that differs from the input (a number replaced by an
// equal one, a swap of equal rows: the rest), 45-51% still loading as
// lessons, 158-266 distinct error paths, 64-91% of the refusals 3 or more
// levels deep), so that they fail when the mutator stops working, not on a
// seed's luck.
constexpr double kMinDiffering = 0.80;
constexpr double kMinLoading = 0.25;
constexpr std::size_t kMinDistinctPaths = 100;
constexpr double kMinDeepRefusals = 0.40;

// Levels in a field path: "claims[2].values[1]" is 4 (claims, [2], values, [1]).
std::size_t depth(const std::string& path) {
    std::size_t n = path.empty() ? 0 : 1;
    for (char c : path) n += c == '.' || c == '[';
    return n;
}

}  // namespace

TEST_CASE("the lesson mutator changes one field of a lesson and keeps it JSON, reaching deep fields", "[fuzz]") {
    attntrace::set_max_memory(std::size_t{64} << 20);  // as the fuzz target: a mutant may declare a big model
    for (const char* id : {"003-stacked-blocks", "001-batch-padding", "001-cross-attention"}) {
        INFO(id);
        const std::string text = read_text(attntrace::test::lessons_dir() + "/" + id + ".json");
        const nlohmann::json original = nlohmann::json::parse(text);
        std::size_t differing = 0, loading = 0, refused = 0, deep = 0;
        std::set<std::string> paths;
        for (std::uint32_t seed = 0; seed < kMutants; ++seed) {
            const auto mutant = attntrace::fuzz::mutate_lesson(text, seed);
            REQUIRE(mutant);
            const nlohmann::json doc = nlohmann::json::parse(*mutant);  // throws if it is no JSON
            differing += doc != original;
            try {
                attntrace::parse_lesson(*mutant, "mutant.json");
                ++loading;
            } catch (const attntrace::InputError& e) {
                ++refused;
                paths.insert(e.path());
                deep += depth(e.path()) >= 3;
            }
        }
        INFO("differing " << differing << ", loading " << loading << ", refused " << refused << " (" << deep
                          << " 3+ levels deep), distinct paths " << paths.size());
        CHECK(differing >= kMinDiffering * kMutants);
        CHECK(loading >= kMinLoading * kMutants);
        CHECK(paths.size() >= kMinDistinctPaths);
        CHECK(deep >= kMinDeepRefusals * refused);
    }
    attntrace::set_max_memory(0);
}

TEST_CASE("the lesson mutator is deterministic, leaves non-JSON to the byte mutator and respects the size", "[fuzz]") {
    const std::string text = read_text(attntrace::test::lessons_dir() + "/003-3.1-ring-fell.json");
    CHECK(attntrace::fuzz::mutate_lesson(text, 7) == attntrace::fuzz::mutate_lesson(text, 7));
    CHECK_FALSE(attntrace::fuzz::mutate_lesson("{\"a\": tru", 1));
    CHECK_FALSE(attntrace::fuzz::mutate_lesson("", 1));
    for (std::uint32_t seed = 0; seed < 200; ++seed) {
        const auto m = attntrace::fuzz::mutate_lesson(text, seed, text.size());
        if (m) CHECK(m->size() <= text.size());
    }
}

}  // namespace test_fuzz_mutator

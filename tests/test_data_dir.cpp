// Where lessons and goldens are found (src/io/data_dir.hpp): the environment,
// then share/attntrace beside the executable, then the source tree.
#include <catch2/catch.hpp>

#include <stdlib.h>

#include <filesystem>

#include "io/data_dir.hpp"
#include "support.hpp"

namespace test_data_dir {

namespace fs = std::filesystem;
using attntrace::data_dir;

TEST_CASE("a data folder comes from its environment variable first, else the compiled-in source folder",
          "[data_dir]") {
    const char* var = "ATTNTRACE_TEST_DATA_DIR";
    unsetenv(var);
    // The test binary is in the build tree: no share/attntrace/<name> beside it.
    CHECK(data_dir(var, "no-such-folder", "/compiled/in") == "/compiled/in");
    setenv(var, "/from/env", 1);
    CHECK(data_dir(var, "no-such-folder", "/compiled/in") == "/from/env");
    setenv(var, "", 1);  // empty is unset
    CHECK(data_dir(var, "no-such-folder", "/compiled/in") == "/compiled/in");
    unsetenv(var);
}

TEST_CASE("an installed share/attntrace folder beside the executable comes before the compiled-in one",
          "[data_dir]") {
    const std::string bin = attntrace::executable_dir();
    REQUIRE(!bin.empty());
    // <build>/tests/../share/attntrace/<name>, as <prefix>/bin/../share/attntrace/lessons is for an install.
    const fs::path share = fs::path(bin).parent_path() / "share";
    const bool had_share = fs::exists(share);
    const fs::path folder = share / "attntrace" / "test-data-dir-lookup";
    fs::create_directories(folder);
    const std::string found = data_dir("ATTNTRACE_TEST_DATA_DIR", "test-data-dir-lookup", "/compiled/in");
    std::error_code ec;
    if (had_share) fs::remove(folder, ec);
    else fs::remove_all(share, ec);
    CHECK(found == folder.lexically_normal().string());
}

TEST_CASE("list names the folder its lessons come from", "[data_dir][cli]") {
    auto r = attntrace::test::run_cli({"list"});
    REQUIRE(r.status == 0);
    CHECK(r.out.find(std::to_string(attntrace::test::lesson_files().size()) + " lessons in " +
                     attntrace::test::lessons_dir() + "\n") != std::string::npos);

    attntrace::test::TempDir dir;
    attntrace::test::write_text(dir.file("x.json"), attntrace::test::read_text(attntrace::test::lessons_dir() +
                                                                              "/003-3.1-ring-fell.json"));
    auto env = attntrace::test::run_cli({"list"}, {"ATTNTRACE_LESSONS=" + dir.path()});
    REQUIRE(env.status == 0);
    CHECK(env.out.find("1 lesson in " + dir.path() + "\n") != std::string::npos);
}

}  // namespace test_data_dir

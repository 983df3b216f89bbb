// Bad input, end to end: every file in tests/bad-input/ is a lesson wrong in one
// way (see cases.json and make_cases.py there). Each must be refused by `run`,
// `check` and `export` with exit status 2 and ONE line on stderr naming the file
// and the field path (or the byte offset), printing nothing and writing nothing.
// The same for usage errors, missing files and unwritable output paths.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support.hpp"

using attntrace::test::CliResult;
using attntrace::test::read_text;
using attntrace::test::run_cli;
using attntrace::test::TempDir;
using attntrace::test::write_text;

namespace test_bad_input {

namespace {

namespace fs = std::filesystem;

const std::string kBadDir = std::string(ATTNTRACE_TESTS_DIR) + "/bad-input";
const std::string kPrefix = "attntrace: error: ";

std::string valid_lesson() { return attntrace::test::lessons_dir() + "/003-3.1-ring-fell.json"; }

// file name -> substrings its error line must contain
std::map<std::string, std::vector<std::string>> load_cases() {
    auto doc = nlohmann::json::parse(read_text(kBadDir + "/cases.json"));
    std::map<std::string, std::vector<std::string>> out;
    for (auto it = doc.begin(); it != doc.end(); ++it) out[it.key()] = it.value().get<std::vector<std::string>>();
    return out;
}

// Exit status 2, exactly one line on stderr, "attntrace: error: ...", containing every `needle`.
void require_one_line_error(const CliResult& r, const std::vector<std::string>& needles) {
    INFO("stderr: " << r.err);
    INFO("stdout: " << r.out.substr(0, 400));
    CHECK(r.status == 2);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(!r.err.empty());
    CHECK(r.err.back() == '\n');
    CHECK(r.err.rfind(kPrefix, 0) == 0);
    for (const auto& n : needles) {
        INFO("expected in the error line: " << n);
        CHECK(r.err.find(n) != std::string::npos);
    }
    // never a numeric accident or an abort in the message
    for (const char* bad : {" nan", " -nan", " inf", " -inf", "terminate", "what()"}) {
        INFO("not expected in the error line: " << bad);
        CHECK(r.err.find(bad) == std::string::npos);
    }
}

// Whether this process can be refused a write by permissions (not when root).
bool permissions_enforced(const std::string& readonly_dir) { return access(readonly_dir.c_str(), W_OK) != 0; }

}  // namespace

TEST_CASE("the bad-input corpus: every .json has its expected error, and there are enough of them", "[bad-input]") {
    auto cases = load_cases();
    std::vector<std::string> files;
    for (const auto& e : fs::directory_iterator(kBadDir))
        if (e.path().extension() == ".json" && e.path().filename() != "cases.json")
            files.push_back(e.path().filename().string());
    CHECK(files.size() >= 30);
    for (const auto& f : files) {
        INFO("file without an entry in cases.json: " << f);
        CHECK(cases.count(f) == 1);
    }
    for (const auto& [name, needles] : cases) {
        INFO("cases.json names a missing file: " << name);
        CHECK(fs::exists(kBadDir + "/" + name));
        CHECK(!needles.empty());
    }
}

TEST_CASE("every bad lesson is refused by run, check and export with one line naming the file and field",
          "[bad-input]") {
    auto cases = load_cases();
    for (const auto& [name, needles] : cases) {
        const std::string path = kBadDir + "/" + name;
        std::vector<std::string> want = needles;
        want.push_back(path);
        DYNAMIC_SECTION(name) {
            SECTION("run") {
                auto r = run_cli({"run", path});
                require_one_line_error(r, want);
                CHECK(r.out.empty());
            }
            SECTION("run --json") {
                auto r = run_cli({"run", path, "--json"});
                require_one_line_error(r, want);
                CHECK(r.out.empty());
            }
            SECTION("check") {
                auto r = run_cli({"check", path});
                require_one_line_error(r, want);
                CHECK(r.out.empty());
            }
            SECTION("check after a good lesson prints nothing either") {
                auto r = run_cli({"check", valid_lesson(), path});
                require_one_line_error(r, want);
                CHECK(r.out.empty());
            }
            SECTION("export leaves no file behind") {
                TempDir dir;
                auto r = run_cli({"export", path, "-o", dir.file("out.json")});
                require_one_line_error(r, want);
                CHECK(r.out.empty());
                CHECK(dir.entries().empty());
            }
            SECTION("export over an existing file leaves it intact") {
                TempDir dir;
                write_text(dir.file("out.json"), "previous contents\n");
                auto r = run_cli({"export", path, "-o", dir.file("out.json")});
                require_one_line_error(r, want);
                CHECK(read_text(dir.file("out.json")) == "previous contents\n");
                CHECK(dir.entries() == std::vector<std::string>{"out.json"});
            }
        }
    }
}

TEST_CASE("the good lesson exports, so the no-file checks above mean something", "[bad-input]") {
    TempDir dir;
    auto r = run_cli({"export", valid_lesson(), "-o", dir.file("out.json")});
    INFO(r.err);
    REQUIRE(r.status == 0);
    CHECK(r.err.empty());
    CHECK(dir.entries() == std::vector<std::string>{"out.json"});
    CHECK(!read_text(dir.file("out.json")).empty());
}

TEST_CASE("usage errors: exit 2 with one line", "[bad-input]") {
    const std::string good = valid_lesson();
    struct Usage {
        std::vector<std::string> args;
        std::string needle;
    };
    const std::vector<Usage> usages = {
        {{"frobnicate"}, "frobnicate"},
        {{"--bogus"}, "--bogus"},
        {{"run", good, "--bogus"}, "--bogus"},
        {{"run", good, "--precision", "abc"}, "--precision"},
        {{"run", good, "--precision", "-1"}, "--precision"},
        {{"run", good, "--precision", "99"}, "--precision"},
        {{"run"}, "lesson"},
        {{"check"}, "lessons"},
        {{"check", good, "--format", "xml"}, "--format"},
        {{"export", good}, "--output"},
        {{"export"}, "lesson"},
        {{"export", good, "-o"}, "-o"},
        {{"run", good, "extra-argument"}, "extra-argument"},
    };
    for (const auto& u : usages) {
        std::string label;
        for (const auto& a : u.args) label += (label.empty() ? "" : " ") + a;
        DYNAMIC_SECTION("attntrace " << label) {
            auto r = run_cli(u.args);
            require_one_line_error(r, {u.needle});
            CHECK(r.out.empty());
        }
    }
}

TEST_CASE("a text where the lesson goes beside --model is told to go after --text", "[bad-input][model]") {
    const std::string model = attntrace::test::source_dir() + "/tests/models/tiny-gpt2";
    TempDir dir;
    for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
             {"run", "--model", model, "the ring fell"},
             {"decode", "--model", model, "the ring fell"},
             {"export", "--model", model, "the ring fell", "-o", dir.file("t.json")}}) {
        INFO(args[0]);
        auto r = run_cli(args);
        require_one_line_error(r, {args[0] + ": expected a lesson or --model DIR, found both, \"the ring fell\" and --model DIR",
                                   "pass it with --text"});
        CHECK(r.out.empty());
    }
    CHECK(dir.entries().empty());
    // With --text given, a lesson beside --model is the mistake: nothing says to pass --text.
    auto both = run_cli({"run", "003-3.1-ring-fell", "--model", model, "--text", "the ring fell"});
    require_one_line_error(both, {"run: expected a lesson or --model DIR, found both"});
    CHECK(both.err.find("pass it with --text") == std::string::npos);
    // And as the error says, the text after --text runs.
    CHECK(run_cli({"run", "--model", model, "--text", "the ring fell"}).status == 0);
}

TEST_CASE("a lesson that is not there, or not a file", "[bad-input]") {
    TempDir dir;
    SECTION("a missing file") {
        const std::string missing = dir.file("no-such-lesson.json");
        for (const char* cmd : {"run", "check"}) {
            auto r = run_cli({cmd, missing});
            require_one_line_error(r, {missing});
            CHECK(r.out.empty());
        }
        auto r = run_cli({"export", missing, "-o", dir.file("out.json")});
        require_one_line_error(r, {missing});
        CHECK(dir.entries().empty());
    }
    SECTION("an unknown lesson id") {
        auto r = run_cli({"run", "no-such-lesson-id"});
        require_one_line_error(r, {"no-such-lesson-id: expected a lesson id"});
        CHECK(r.out.empty());
        CHECK(r.err.find("closest") == std::string::npos);  // near no id: nothing suggested
    }
    SECTION("a mistyped lesson id gets the nearest ids, as a mistyped step name does") {
        // The id's last parts, without the article's number and section; a typo in the whole id.
        for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
                 {"run", "ring-fell"}, {"check", "003-3.1-ring-fel"}, {"compare", "ring-fel", "--set", "scale=false"}}) {
            INFO(args[0] << " " << args[1]);
            auto r = run_cli(args);
            require_one_line_error(r, {args[1] + ": expected a lesson id", "(closest: 003-3.1-ring-fell"});
            CHECK(r.out.empty());
        }
        // A cost lesson's id (lessons/cost/) is a lesson id too.
        require_one_line_error(run_cli({"check", "memory-tabel"}), {"(closest: 000-memory-table"});
    }
    SECTION("a directory given as the lesson") {
        fs::create_directory(dir.file("lesson.json"));
        for (const std::string& d : {kBadDir, dir.file("lesson.json")}) {
            auto r = run_cli({"run", d});
            require_one_line_error(r, {d, "directory"});
            CHECK(r.out.empty());
            r = run_cli({"check", d});
            require_one_line_error(r, {d, "directory"});
        }
    }
    SECTION("an unreadable file") {
        const std::string locked = dir.file("locked.json");
        write_text(locked, read_text(valid_lesson()));
        chmod(locked.c_str(), 0);
        if (access(locked.c_str(), R_OK) == 0) {
            WARN("running with permission to read a mode-000 file (root?): unreadable-file check skipped");
        } else {
            auto r = run_cli({"run", locked});
            require_one_line_error(r, {locked});
            CHECK(r.out.empty());
        }
    }
}

TEST_CASE("an output path that cannot be written: exit 2, one line, nothing left, old file intact",
          "[bad-input]") {
    const std::string good = valid_lesson();
    SECTION("a folder that does not exist") {
        auto r = run_cli({"export", good, "-o", "/nonexistent-dir/x.json"});
        require_one_line_error(r, {"/nonexistent-dir/x.json"});
        CHECK(r.out.empty());
        CHECK(!fs::exists("/nonexistent-dir"));
    }
    SECTION("a path through a regular file") {
        TempDir dir;
        write_text(dir.file("plain"), "keep me\n");
        const std::string out = dir.file("plain") + "/x.json";
        auto r = run_cli({"export", good, "-o", out});
        require_one_line_error(r, {out});
        CHECK(read_text(dir.file("plain")) == "keep me\n");
        CHECK(dir.entries() == std::vector<std::string>{"plain"});
    }
    SECTION("an existing directory as the output") {
        TempDir dir;
        fs::create_directory(dir.file("out.json"));
        auto r = run_cli({"export", good, "-o", dir.file("out.json")});
        require_one_line_error(r, {dir.file("out.json"), "directory"});
        CHECK(fs::is_directory(dir.file("out.json")));
        CHECK(dir.entries() == std::vector<std::string>{"out.json"});
    }
    SECTION("a read-only folder, with an earlier export in it") {
        TempDir dir;
        const std::string out = dir.file("out.json");
        write_text(out, "previous export\n");
        chmod(dir.path().c_str(), 0555);
        if (!permissions_enforced(dir.path())) {
            WARN("running with permission to write a read-only folder (root?): read-only check skipped");
        } else {
            auto r = run_cli({"export", good, "-o", out});
            require_one_line_error(r, {out});
            CHECK(r.out.empty());
            CHECK(read_text(out) == "previous export\n");
            CHECK(dir.entries() == std::vector<std::string>{"out.json"});
        }
        chmod(dir.path().c_str(), 0755);
    }
}

TEST_CASE("a file whose parsed JSON could exceed --max-memory is refused before it is read", "[bad-input]") {
    // The flagship lesson padded with 1 MB of spaces: valid, but at the worst
    // case of kJsonBytesPerTextByte it could need ~36 MB once parsed.
    TempDir dir;
    const std::string lesson = dir.file("padded.json");
    write_text(lesson, read_text(valid_lesson()) + std::string(1 << 20, ' '));
    auto refused = run_cli({"--max-memory", "16M", "run", lesson});
    require_one_line_error(refused, {lesson, "--max-memory", "16.0 MiB"});
    CHECK(refused.out.empty());
    auto trace = run_cli({"--max-memory", "16M", "diff", lesson, lesson});
    require_one_line_error(trace, {lesson, "--max-memory"});
    // With room for the worst case, the same file runs.
    auto ok = run_cli({"--max-memory", "64M", "run", lesson});
    INFO(ok.err);
    CHECK(ok.status == 0);
}

}  // namespace test_bad_input

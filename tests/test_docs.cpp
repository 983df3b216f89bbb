// The documentation stays true to the code.
#include <catch2/catch.hpp>
#include <filesystem>
#include <map>
#include <set>
#include <regex>

#include <sstream>
#include <string>
#include <vector>

#include "shell_words.hpp"
#include "support.hpp"

using attntrace::test::shell_words;
#include "trace/steps.hpp"

namespace test_docs {

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

TEST_CASE("docs/ARCHITECTURE.md's folder table lists every source folder and every file in it, and no other", "[docs]") {
    // The map matches the house: each row `| `src/x/` | what | a, b, c |` names the folder's files by stem
    // (.cpp/.hpp, and the report's assets and the fuzzer's dictionary by name), and every folder of
    // src/ (and fuzz/, python/) with source files has a row.
    namespace fs = std::filesystem;
    const std::string root = attntrace::test::source_dir();
    const std::string doc = attntrace::test::read_text(root + "/docs/ARCHITECTURE.md");
    std::map<std::string, std::set<std::string>> listed;
    const std::regex row(R"re(^\| `((?:src/[a-z_/]+|fuzz|python)/)` \|.*\| ([^|]*) \|$)re");
    std::istringstream lines(doc);
    for (std::string line; std::getline(lines, line);) {
        std::smatch m;
        if (!std::regex_match(line, m, row)) continue;
        std::set<std::string>& names = listed[m[1].str()];
        std::istringstream items(m[2].str());
        for (std::string item; std::getline(items, item, ',');) {
            item.erase(0, item.find_first_not_of(' '));
            item.erase(item.find_last_not_of(' ') + 1);
            if (!item.empty()) names.insert(item);
        }
    }
    std::set<std::string> folders;
    for (const auto& e : fs::recursive_directory_iterator(root + "/src")) {
        if (!e.is_regular_file()) continue;
        const std::string ext = e.path().extension().string();
        if (ext != ".cpp" && ext != ".hpp" && ext != ".js" && ext != ".css") continue;
        folders.insert(fs::relative(e.path().parent_path(), root).string() + "/");
    }
    folders.insert("fuzz/");
    folders.insert("python/");  // the Python package's C++ (its .py files are not listed)
    for (const std::string& folder : folders) {
        INFO(folder);
        REQUIRE(listed.count(folder));
        std::set<std::string> want;
        const bool assets = folder == "src/render/report_assets/";
        for (const auto& e : fs::directory_iterator(root + "/" + folder)) {
            if (!e.is_regular_file()) continue;
            const std::string ext = e.path().extension().string();
            if (assets) want.insert(e.path().filename().string());
            else if (ext == ".cpp" || ext == ".hpp" || ext == ".dict") want.insert(e.path().stem().string());
        }
        CHECK(listed[folder] == want);
    }
    CHECK(listed.size() == folders.size());
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

TEST_CASE("the README's quick start builds only the command-line tool, then runs it", "[docs]") {
    std::string readme = attntrace::test::read_text(attntrace::test::source_dir() + "/README.md");
    const auto at = readme.find("```sh\n");
    REQUIRE(at != std::string::npos);
    const std::string first = readme.substr(at + 6, readme.find('\n', at + 6) - at - 6);
    INFO(first);
    // The tests' target is not built: only attntrace (the binary and the layers it links), then it runs,
    // from the PATH the examples after it need (test_readme runs them so).
    CHECK(first.find("cmake --build build -j2 --target attntrace && export PATH=\"$PWD/build:$PATH\" && attntrace") !=
          std::string::npos);
    CHECK(first.find("ctest") == std::string::npos);
}

TEST_CASE("the README's table of lessons gives each lesson's real verdict counts", "[docs]") {
    std::string readme = attntrace::test::read_text(attntrace::test::source_dir() + "/README.md");
    std::vector<std::string> files = attntrace::test::lesson_files();
    for (const auto& e : std::filesystem::directory_iterator(attntrace::test::lessons_dir() + "/cost"))
        if (e.path().extension() == ".json") files.push_back(e.path().string());  // cost lessons (docs/cost.md)
    for (const auto& file : files) {
        std::string id = file.substr(file.rfind('/') + 1);
        id = id.substr(0, id.size() - 5);
        INFO(id);
        auto at = readme.find("| `" + id + "` |");
        REQUIRE(at != std::string::npos);
        std::string row = readme.substr(at, readme.find('\n', at) - at);
        // The last five cells: agrees, agrees-from-given, agrees-when-rounded, disagrees, not-checkable.
        std::vector<int> cells;
        std::size_t p = row.size();
        for (int k = 0; k < 5; ++k) {
            std::size_t bar = row.rfind('|', p - 1);
            std::size_t prev = row.rfind('|', bar - 1);
            cells.insert(cells.begin(), std::stoi(row.substr(prev + 1, bar - prev - 1)));
            p = prev + 1;
        }
        auto r = attntrace::test::run_cli({"check", file});
        REQUIRE(r.status == 0);
        const std::string out = attntrace::test::unwrapped(r.out);  // the summary wrapped to 80 columns
        const std::string& summary = out;  // "1 lesson: 3 agree, ..." at its end
        std::string expected = std::to_string(cells[0]) + " agree, " + std::to_string(cells[1]) +
                               " agree only from the article's given values, " + std::to_string(cells[2]) +
                               " agree when rounded as printed, " + std::to_string(cells[3]) + " disagree, " +
                               std::to_string(cells[4]) + " not checkable";
        CHECK(summary.find(expected) != std::string::npos);
    }
}

TEST_CASE("every test name reaches Catch through ctest intact: no semicolon, no leading dash", "[docs]") {
    // catch_discover_tests hands each name to ctest, which splits it at ';'
    // (a CMake list) and passes the pieces to Catch as arguments: a name with
    // ';' then matches no test, and ctest reports it passed without running
    // it. A name starting with '-' is read as an option.
    const std::regex test_case(R"re(TEST_CASE\(\s*"([^"]*)")re");
    std::size_t names = 0;
    for (const auto& entry : std::filesystem::directory_iterator(std::string(ATTNTRACE_TESTS_DIR))) {
        const std::string file = entry.path().filename().string();
        if (file.rfind("test_", 0) != 0 || entry.path().extension() != ".cpp") continue;
        const std::string text = attntrace::test::read_text(entry.path().string());
        for (auto it = std::sregex_iterator(text.begin(), text.end(), test_case); it != std::sregex_iterator(); ++it) {
            const std::string name = (*it)[1];
            INFO(file << ": \"" << name << "\"");
            CHECK(name.find(';') == std::string::npos);
            CHECK(name.rfind("-", 0) != 0);
            ++names;
        }
    }
    CHECK(names > 100);
}

TEST_CASE("the README's consumer CMakeLists is the one the consumer test builds", "[docs]") {
    std::string readme = attntrace::test::read_text(attntrace::test::source_dir() + "/README.md");
    std::string consumer = attntrace::test::read_text(attntrace::test::source_dir() + "/tests/consumer/CMakeLists.txt");
    auto at = readme.find("## Install and use as a library");
    REQUIRE(at != std::string::npos);
    auto start = readme.find("```cmake\n", at);
    REQUIRE(start != std::string::npos);
    start += 9;
    auto end = readme.find("```", start);
    std::istringstream snippet(readme.substr(start, end - start));
    int lines = 0;
    for (std::string line; std::getline(snippet, line);) {
        if (line.empty()) continue;
        INFO(line);
        CHECK(consumer.find(line + "\n") != std::string::npos);
        ++lines;
    }
    CHECK(lines >= 5);
}

namespace {

// The current directory set for a scope, and put back after.
class InDirectory {
public:
    explicit InDirectory(const std::string& dir) : saved_(std::filesystem::current_path()) {
        std::filesystem::current_path(dir);
    }
    ~InDirectory() { std::filesystem::current_path(saved_); }
    InDirectory(const InDirectory&) = delete;
    InDirectory& operator=(const InDirectory&) = delete;

private:
    std::filesystem::path saved_;
};

struct ShownCommand {
    std::string line;                 // "attntrace check lessons/x.json"
    std::vector<std::string> output;  // the lines shown under it
    int status = 0;                   // from a following "$ echo $?", else 0
};

// Every "$ attntrace ..." line of the code blocks of a Markdown text, with
// the output shown under it and the exit status shown after it.
std::vector<ShownCommand> shown_commands(const std::string& doc) {
    std::vector<ShownCommand> out;
    std::istringstream in(doc);
    bool in_block = false;
    ShownCommand* current = nullptr;
    bool status_next = false;
    for (std::string line; std::getline(in, line);) {
        if (line.rfind("```", 0) == 0) {
            in_block = !in_block;
            current = nullptr;
            continue;
        }
        if (!in_block) continue;
        if (status_next) {
            REQUIRE(current);
            current->status = std::stoi(line);
            status_next = false;
            current = nullptr;
        } else if (line.rfind("$ attntrace ", 0) == 0) {
            out.push_back({line.substr(2), {}, 0});
            current = &out.back();
        } else if (line == "$ echo $?") {
            status_next = true;
        } else if (line.rfind("$ ", 0) == 0) {
            current = nullptr;
        } else if (current) {
            current->output.push_back(line);
        }
    }
    return out;
}

}  // namespace

TEST_CASE("the commands in docs/writing-lessons.md run from the repository root as shown", "[docs]") {
    const std::string src = attntrace::test::source_dir();
    const std::string doc = attntrace::test::read_text(src + "/docs/writing-lessons.md");
    const auto commands = shown_commands(doc);
    CHECK(commands.size() >= 15);
    attntrace::test::TempDir golden;  // golden --update writes here, not into golden/
    InDirectory root(src);
    for (const auto& shown : commands) {
        INFO(shown.line);
        auto words = shell_words(shown.line);
        REQUIRE(words.size() >= 2);
        words.erase(words.begin());  // "attntrace"
        auto r = attntrace::test::run_cli(words, {"ATTNTRACE_GOLDEN=" + golden.path()});
        INFO(r.out << r.err);
        CHECK(r.status == shown.status);
        // Each line shown under the command is a line of what it prints ("..." marks lines left out).
        const std::string printed = "\n" + r.out + r.err;
        for (const auto& line : shown.output) {
            if (line.empty() || line == "...") continue;
            INFO(line);
            CHECK(printed.find("\n" + line + "\n") != std::string::npos);
        }
    }
}

TEST_CASE("docs/writing-lessons.md shows its worked example lesson whole", "[docs]") {
    const std::string src = attntrace::test::source_dir();
    const std::string doc = attntrace::test::read_text(src + "/docs/writing-lessons.md");
    const std::string lesson = attntrace::test::read_text(src + "/lessons/conv-guide-worked-example.json");
    CHECK(doc.find("```json\n" + lesson + "```\n") != std::string::npos);
}

}  // namespace test_docs

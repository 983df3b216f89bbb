// The README stays true: every `attntrace` command in its ```sh blocks runs
// (exit 0, or 1 where a check or diff finds a difference, never 2), and its
// captured output is what the program prints.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <sstream>

#include "shell_words.hpp"
#include "support.hpp"

using attntrace::test::shell_words;

using attntrace::test::read_text;
using attntrace::test::run_cli;

namespace {

namespace fs = std::filesystem;

// The blocks opening with ```LANG (LANG "" for a bare fence), each as its lines.
std::vector<std::vector<std::string>> fenced_blocks(const std::string& text, const std::string& lang) {
    std::vector<std::vector<std::string>> blocks;
    std::istringstream in(text);
    bool inside = false, wanted = false;
    for (std::string line; std::getline(in, line);) {
        if (line.rfind("```", 0) == 0) {
            if (!inside) {
                wanted = line.substr(3) == lang;
                if (wanted) blocks.emplace_back();
            }
            inside = !inside;
            continue;
        }
        if (inside && wanted) blocks.back().push_back(line);
    }
    return blocks;
}

}  // namespace

TEST_CASE("every attntrace command in the README's sh blocks runs, in order, from a fresh folder", "[docs][readme]") {
    const std::string readme = read_text(attntrace::test::source_dir() + "/README.md");
    std::size_t commands = 0;
    for (const auto& block : fenced_blocks(readme, "sh")) {
        // Each block runs in its own folder, which sees the repository's
        // folders (the commands name lessons/, docs/...) and keeps its outputs.
        attntrace::test::TempDir dir;
        for (const char* sub : {"lessons", "docs", "golden", "tests"})
            fs::create_directory_symlink(attntrace::test::source_dir() + "/" + sub, dir.file(sub));
        const std::string cwd = fs::current_path().string();
        fs::current_path(dir.path());
        for (const auto& line : block) {
            if (line.rfind("attntrace", 0) != 0) continue;
            auto words = shell_words(line.substr(0, line.find(" #")));
            words.erase(words.begin());
            INFO("README: " << line);
            auto r = run_cli(words);
            INFO(r.err);
            CHECK((r.status == 0 || r.status == 1));
            CHECK(r.err.find("error") == std::string::npos);
            ++commands;
        }
        fs::current_path(cwd);
    }
    CHECK(commands >= 3);
}

TEST_CASE("the README's capture of the flagship run is what attntrace prints", "[docs][readme]") {
    const std::string readme = read_text(attntrace::test::source_dir() + "/README.md");
    auto blocks = fenced_blocks(readme, "");
    REQUIRE(!blocks.empty());
    const auto& capture = blocks.front();  // the first bare block is the capture under "What you see"
    REQUIRE(capture.size() > 10);
    auto r = run_cli({});
    REQUIRE(r.status == 0);
    std::string text;
    for (const auto& l : capture) text += l + "\n";
    CHECK(r.out.find(text) != std::string::npos);
}

TEST_CASE("the README's trace excerpt is a step of the real export, as written", "[docs][readme]") {
    const std::string readme = read_text(attntrace::test::source_dir() + "/README.md");
    auto blocks = fenced_blocks(readme, "json");
    REQUIRE(!blocks.empty());
    std::string text;
    for (const auto& l : blocks.front()) text += l + "\n";
    REQUIRE(text.find("\"name\": \"blocks.0.attn.hook_pattern\"") != std::string::npos);
    auto r = run_cli({"export", "003-3.1-ring-fell", "-o", "-"});
    REQUIRE(r.status == 0);
    CHECK(r.out.find(text) != std::string::npos);
}

TEST_CASE("the README's drafted example is what draft and check print", "[docs][readme][draft]") {
    const std::string readme = read_text(attntrace::test::source_dir() + "/README.md");
    std::string drafted, checked;
    for (const auto& block : fenced_blocks(readme, "")) {
        std::string text;
        for (const auto& l : block) text += l + "\n";
        if (text.rfind("Drafted tiny.json from", 0) == 0) drafted = text;
        if (text.rfind("tiny-attention  (", 0) == 0) checked = text;
    }
    REQUIRE(!drafted.empty());
    REQUIRE(!checked.empty());
    attntrace::test::TempDir dir;
    fs::create_directory_symlink(attntrace::test::source_dir() + "/docs", dir.file("docs"));
    const std::string cwd = fs::current_path().string();
    fs::current_path(dir.path());
    const auto d = run_cli({"draft", "docs/examples/draft/tiny-attention.md", "-o", "tiny.json"});
    const auto c = run_cli({"check", "tiny.json"});
    fs::current_path(cwd);
    REQUIRE(d.status == 0);
    CHECK(d.out == drafted);
    CHECK(c.status == 0);
    CHECK(c.out == checked);
}

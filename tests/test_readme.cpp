// The README stays true: every `attntrace` command in its ```sh blocks runs
// as a new user types it, after the quick start (exit 0, or the status the
// README gives it, writing what it says it writes), and its captured output
// is what the program prints.
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string_view>

#include "shell_words.hpp"
#include "support.hpp"

using attntrace::test::shell_words;

using attntrace::test::read_text;
using attntrace::test::run_cli;
using attntrace::test::run_shell;

namespace test_readme {

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

// The system's folders, without any other a shell's PATH may hold (an
// installed attntrace in ~/.local/bin, the build folder itself): the README's
// own line puts the build folder before them.
constexpr std::string_view kSystemPath = "/usr/bin:/bin";

// Commands of the README a test cannot run, each with why. A line that is
// neither one of these, nor the PATH's export, nor an attntrace command
// fails the test: none is skipped silently.
struct Skipped {
    std::string_view prefix;
    std::string_view why;
};
constexpr Skipped kNotRun[] = {
    {"bash scripts/install-deps.sh", "installs Debian's packages: needs root and a network"},
    {"cmake ", "configures, builds or installs attntrace: the binary under test is this build's (a build from a "
               "test would take minutes); the install is ctest -R consumer's"},
    {"ctest ", "the test suite, of which this test is a part"},
};

const Skipped* skipped_because(const std::string& command) {
    for (const Skipped& s : kNotRun)
        if (command.rfind(s.prefix, 0) == 0) return &s;
    return nullptr;
}

// A line's commands: split at " && ", without a trailing "# comment".
std::vector<std::string> commands_of(const std::string& line) {
    const std::string text = line.substr(0, line.find(" #"));
    std::vector<std::string> out;
    for (std::size_t at = 0; at <= text.size();) {
        std::size_t end = text.find(" && ", at);
        if (end == std::string::npos) end = text.size();
        std::string command = text.substr(at, end - at);
        while (!command.empty() && command.back() == ' ') command.pop_back();
        if (!command.empty()) out.push_back(command);
        at = end + 4;
    }
    return out;
}

// The status the README gives a command: diff exits 1 when a step diverges
// ("Exit 0 when every compared step matches, 1 otherwise"), as the numpy
// example's trace, with its bug on purpose, does from the scaled scores on
// ("first divergence: blocks.0.attn.hook_scores_scaled"; its --step hook_q
// --step hook_scores_raw compares two steps that match); every other example 0.
int documented_status(const std::string& command) {
    return command == "attntrace diff ours.json docs/examples/mine.json" ? 1 : 0;
}

// What the command says it writes is there: -o FILE (a JSON document, or
// a whole HTML page), --npy DIR (its index and .npy files); without -o,
// its output on standard output (JSON for --json).
void check_outputs(const std::string& command, const std::string& out, const attntrace::test::TempDir& dir) {
    const auto words = shell_words(command);
    bool to_stdout = true;
    for (std::size_t i = 0; i + 1 < words.size(); ++i) {
        const std::string& flag = words[i];
        const std::string& arg = words[i + 1];
        if ((flag == "-o" || flag == "--out") && arg != "-") {
            to_stdout = false;
            INFO("written by -o: " << arg);
            REQUIRE(fs::is_regular_file(dir.file(arg)));
            const std::string text = read_text(dir.file(arg));
            if (arg.ends_with(".json")) CHECK_NOTHROW(nlohmann::json::parse(text));
            if (arg.ends_with(".html")) CHECK(text.find("</html>") != std::string::npos);
        }
        if (flag == "--npy") {
            INFO("written by --npy: " << arg);
            CHECK_NOTHROW(nlohmann::json::parse(read_text(dir.file(arg + "/index.json"))));
            std::size_t npy = 0;
            for (const auto& e : fs::directory_iterator(dir.file(arg))) npy += e.path().extension() == ".npy";
            CHECK(npy > 0);
            if (std::find(words.begin(), words.end(), "-o") == words.end()) to_stdout = false;
        }
    }
    if (!to_stdout) return;
    CHECK(!out.empty());
    if (std::find(words.begin(), words.end(), "--json") != words.end()) CHECK_NOTHROW(nlohmann::json::parse(out));
}

}  // namespace

TEST_CASE("the README sh blocks run as a new user runs them, with build on the PATH as its quick start puts it", "[docs][readme]") {
    // Each block runs in a scratch folder standing in for the repository's:
    // links to the folders the commands read (lessons/, docs/, tests/models/...)
    // and `build`, a link to the folder of the binary under test. Every line
    // runs through /bin/sh with a PATH of the system's folders only, after the
    // quick start's own `export PATH=...` line as written: an example that
    // types `attntrace` runs only if the README put it within reach.
    const std::string readme = read_text(attntrace::test::source_dir() + "/README.md");
    const std::string build = fs::path(attntrace::test::binary_path()).parent_path().string();
    REQUIRE(fs::path(attntrace::test::binary_path()).filename() == "attntrace");  // what `$PWD/build` must hold
    const std::vector<std::string> env{"PATH=" + std::string(kSystemPath)};
    std::string path_line;  // the README's `export PATH=...`, once met
    std::size_t ran = 0, skipped = 0;
    for (const auto& block : fenced_blocks(readme, "sh")) {
        attntrace::test::TempDir dir;
        for (const char* sub : {"lessons", "docs", "tests"})
            fs::create_directory_symlink(attntrace::test::source_dir() + "/" + sub, dir.file(sub));
        fs::create_directory_symlink(build, dir.file("build"));
        for (const auto& line : block) {
            for (const std::string& command : commands_of(line)) {
                INFO("README: " << command);
                if (command.rfind("export PATH=", 0) == 0) {
                    path_line = command;
                    // It is the build folder that it puts first: `attntrace` is the binary under test.
                    const auto r = run_shell("cd '" + dir.path() + "' && " + path_line + " && command -v attntrace", env);
                    CHECK(r.status == 0);
                    CHECK(r.out == dir.file("build/attntrace") + "\n");
                    continue;
                }
                if (skipped_because(command)) {  // kNotRun says why
                    ++skipped;
                    continue;
                }
                // Anything else is an example to run: an attntrace command, run as typed.
                REQUIRE(command.rfind("attntrace", 0) == 0);
                REQUIRE_FALSE(path_line.empty());  // the README says how to reach it before using it
                const auto r = run_shell("cd '" + dir.path() + "' && " + path_line + " && " + command, env);
                INFO("stderr: " << r.err);
                INFO("stdout: " << r.out.substr(0, 2000));
                CHECK(r.status == documented_status(command));
                CHECK(r.err.empty());
                check_outputs(command, r.out, dir);
                ++ran;
            }
        }
    }
    CHECK(ran >= 20);  // the README's examples: not lost to a parse that finds none
    CHECK(skipped >= 3);  // the quick start's install and builds, the tests, the install
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

TEST_CASE("the README's patching heatmap is what attntrace patch prints", "[docs][readme]") {
    const std::string readme = read_text(attntrace::test::source_dir() + "/README.md");
    const std::string command = "attntrace patch --model tests/models/tiny-gpt2 --clean";
    const auto at = readme.find(command);
    REQUIRE(at != std::string::npos);
    const std::string line = readme.substr(at, readme.find('\n', at) - at);
    std::vector<std::string> words = shell_words(line);
    words.erase(words.begin());  // "attntrace"
    for (auto& w : words)
        if (w == "tests/models/tiny-gpt2") w = attntrace::test::source_dir() + "/" + w;
    std::string capture;
    for (const auto& block : fenced_blocks(readme, ""))
        if (!block.empty() && block.front().find("activation patching") != std::string::npos)
            for (const auto& l : block) capture += l + "\n";
    REQUIRE(!capture.empty());
    const auto r = run_cli(words);
    REQUIRE(r.status == 0);
    CHECK(r.out == capture);
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

}  // namespace test_readme

// attntrace export --npy DIR end to end: index.json and one file per step
// equal to the JSON export; the folder written through a temporary sibling
// and swapped in (a previous export replaced, anything else refused and left
// as it was); diff reading such folders; PyTorch's TransformerEncoderLayer
// against our run of its weights (docs/pytorch.md), with the docs' commands.
#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <csignal>
#include <thread>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <tuple>

#include <sys/stat.h>

#include "io/npy.hpp"
#include "support.hpp"

using attntrace::Tensor;
using attntrace::test::read_text;
using attntrace::test::run_cli;
using attntrace::test::TempDir;
using attntrace::test::write_text;
using nlohmann::json;

namespace test_npy_export {

namespace {

namespace fs = std::filesystem;

const std::string kFlagship = attntrace::test::lessons_dir() + "/003-3.1-ring-fell.json";
const std::string kMultiHead = attntrace::test::lessons_dir() + "/003-3.3-multi-head.json";
const std::string kAddNorm = attntrace::test::lessons_dir() + "/003-3.4-add-norm.json";
const std::string kBadLesson = std::string(ATTNTRACE_TESTS_DIR) + "/bad-input/heads-zero.json";

// torch and attntrace both compute in float32, summing in different orders
// (torch's fused kernels, our SIMD or scalar kernels): on this layer's O(1)
// values they differ in the last bits (measured with diff: 1.2e-7 on the
// output, 6e-8 on the attention weights, 3e-8 on self_attn's output); 1e-5
// leaves room for other BLAS and instruction sets while a W_Q left
// untransposed moves the weights by 0.2 and the output by 0.37.
constexpr float kTorchTol = 1e-5f;

float max_abs_diff(const Tensor& a, const Tensor& b) {
    REQUIRE(a.shape == b.shape);
    float m = 0;
    for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(a.data[i] - b.data[i]));
    return m;
}

// A step's values from a JSON trace, -inf as "-inf", flattened row-major.
std::vector<float> flat(const json& v) {
    std::vector<float> out;
    if (v.is_array()) {
        for (const auto& e : v) {
            auto part = flat(e);
            out.insert(out.end(), part.begin(), part.end());
        }
    } else {
        out.push_back(v.is_string() ? -INFINITY : v.get<float>());
    }
    return out;
}

std::vector<std::string> siblings(const std::string& dir) {  // what the parent folder holds
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(fs::path(dir).parent_path())) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
}

void require_exit_2(const attntrace::test::CliResult& r, const std::string& needle) {
    INFO(r.err);
    CHECK(r.status == 2);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(r.err.find(needle) != std::string::npos);
}

}  // namespace

TEST_CASE("export --npy: index.json describes every step and each file holds the JSON export's values", "[npy]") {
    TempDir dir;
    auto r = run_cli({"export", kMultiHead, "-o", dir.file("trace.json"), "--npy", dir.file("npy")});
    INFO(r.err);
    REQUIRE(r.status == 0);
    const json trace = json::parse(read_text(dir.file("trace.json")));
    const json index = json::parse(read_text(dir.file("npy/index.json")));
    CHECK(index["format"] == "attntrace-npy");
    CHECK(index["version"] == 1);
    CHECK(index["lesson"]["id"] == trace["lesson"]["id"]);
    CHECK(index["tokens"] == trace["tokens"]);
    REQUIRE(index["steps"].size() == trace["steps"].size());
    std::size_t files = 0;
    for (std::size_t i = 0; i < trace["steps"].size(); ++i) {
        const json &s = trace["steps"][i], &n = index["steps"][i];
        INFO(s["name"]);
        CHECK(n["name"] == s["name"]);
        for (const char* key : {"shape", "axes", "labels", "source", "recorded"}) CHECK(n[key] == s[key]);
        if (s["values"].is_null()) {
            CHECK(n["file"].is_null());
            continue;
        }
        CHECK(n["file"] == s["name"].get<std::string>() + ".npy");  // the step's name, dots and all
        Tensor t = attntrace::read_npy(dir.file("npy/" + n["file"].get<std::string>()), {.allow_neg_inf = true});
        CHECK(t.shape == s["shape"].get<attntrace::Shape>());
        CHECK(std::vector<float>(t.data.begin(), t.data.end()) == flat(s["values"]));
        if (n.contains("formula_file"))
            CHECK(attntrace::read_npy(dir.file("npy/" + n["formula_file"].get<std::string>())).size() == t.size());
        ++files;
    }
    CHECK(files > 10);
    CHECK(siblings(dir.file("npy")) == std::vector<std::string>{"npy", "trace.json"});  // no temporary folder left
}

TEST_CASE("export --npy writes through a temporary folder: a previous export is replaced, anything else refused",
          "[npy]") {
    TempDir dir;
    const std::string out = dir.file("out");
    SECTION("a previous export is replaced whole, files of steps no longer there included") {
        REQUIRE(run_cli({"export", kAddNorm, "--npy", out}).status == 0);
        std::vector<std::string> old_files;
        for (const auto& e : fs::directory_iterator(out)) old_files.push_back(e.path().filename().string());
        auto r = run_cli({"export", kFlagship, "--npy", out});
        INFO(r.err);
        REQUIRE(r.status == 0);
        const json index = json::parse(read_text(out + "/index.json"));
        CHECK(index["lesson"]["id"] == "003-3.1-ring-fell");
        std::vector<std::string> listed{"index.json"};
        for (const auto& s : index["steps"])
            for (const char* key : {"file", "formula_file"})
                if (s.contains(key) && s[key].is_string()) listed.push_back(s[key]);
        std::size_t stale = 0;  // files of the first export that the second does not have
        for (const auto& f : old_files) stale += std::find(listed.begin(), listed.end(), f) == listed.end();
        CHECK(stale > 0);
        for (const auto& e : fs::directory_iterator(out)) {
            INFO(e.path());
            CHECK(std::find(listed.begin(), listed.end(), e.path().filename().string()) != listed.end());
        }
        CHECK(siblings(out) == std::vector<std::string>{"out"});
    }
    SECTION("a bad lesson leaves the previous export as it was, and no temporary folder") {
        REQUIRE(run_cli({"export", kFlagship, "--npy", out}).status == 0);
        const std::string before = read_text(out + "/index.json");
        require_exit_2(run_cli({"export", kBadLesson, "--npy", out}), kBadLesson);
        CHECK(read_text(out + "/index.json") == before);
        CHECK(siblings(out) == std::vector<std::string>{"out"});
    }
    SECTION("a folder holding other files is refused, untouched") {
        fs::create_directory(out);
        write_text(out + "/notes.txt", "mine\n");
        require_exit_2(run_cli({"export", kFlagship, "--npy", out}), "left as it is");
        CHECK(read_text(out + "/notes.txt") == "mine\n");
        CHECK(dir.entries() == std::vector<std::string>{"out"});
        SECTION("even beside a real export's files") {
            REQUIRE(run_cli({"export", kFlagship, "--npy", dir.file("other")}).status == 0);
            fs::copy(dir.file("other"), out);
            require_exit_2(run_cli({"export", kFlagship, "--npy", out}), "holding other files");
            CHECK(fs::exists(out + "/notes.txt"));
        }
    }
    SECTION("a file is refused, untouched; -o given too writes nothing") {
        write_text(out, "a file\n");
        require_exit_2(run_cli({"export", kFlagship, "-o", dir.file("t.json"), "--npy", out}), "found a file");
        CHECK(read_text(out) == "a file\n");
        CHECK(dir.entries() == std::vector<std::string>{"out"});
    }
    SECTION("an empty folder is filled; a missing parent is refused") {
        fs::create_directory(out);
        REQUIRE(run_cli({"export", kFlagship, "--npy", out}).status == 0);
        CHECK(fs::exists(out + "/index.json"));
        require_exit_2(run_cli({"export", kFlagship, "--npy", dir.file("no/such/dir")}), "writable location");
    }
    SECTION("neither -o nor --npy is a usage error") {
        require_exit_2(run_cli({"export", kFlagship}), "--output");
    }
}

TEST_CASE("export --npy's folder has the mode an ordinary mkdir gives under the umask, its files too", "[npy]") {
    // The process's umask, restored when the test ends whatever it checks.
    struct UmaskScope {
        mode_t saved;
        explicit UmaskScope(mode_t m) : saved(::umask(m)) {}
        ~UmaskScope() { ::umask(saved); }
    };
    auto mode_of = [](const std::string& p) { return fs::status(p).permissions() & fs::perms::all; };
    for (const auto& [mask, folder, file] : {std::tuple{mode_t{022}, fs::perms{0755}, fs::perms{0644}},
                                             std::tuple{mode_t{077}, fs::perms{0700}, fs::perms{0600}},
                                             std::tuple{mode_t{002}, fs::perms{0775}, fs::perms{0664}}}) {
        INFO("umask " << std::oct << mask);
        TempDir dir;
        const std::string out = dir.file("out");
        UmaskScope scope(mask);
        REQUIRE(run_cli({"export", kFlagship, "--npy", out}).status == 0);
        CHECK(mode_of(out) == folder);
        CHECK(mode_of(out + "/index.json") == file);
        REQUIRE(run_cli({"export", kAddNorm, "--npy", out}).status == 0);  // a previous export replaced
        CHECK(mode_of(out) == folder);
    }
}

TEST_CASE("a run killed while it writes its npy folder leaves the previous export intact", "[npy]") {
    TempDir work, out_dir;
    const std::string lesson = work.file("big.json"), out = out_dir.file("out");
    REQUIRE(run_cli({"random", "--tokens", "512", "--d-model", "64", "--heads", "8", "--d-ff", "64", "-o", lesson})
                .status == 0);
    REQUIRE(run_cli({"export", kFlagship, "--npy", out}).status == 0);
    const std::string before = read_text(out + "/index.json");
    for (int sig : {SIGKILL, SIGTERM}) {
        DYNAMIC_SECTION("signal " << sig) {
            int pid = attntrace::test::start_cli({"export", lesson, "--npy", out}, work.file("stdout"), work.file("stderr"));
            // Signal once the temporary folder holds a file: midway through writing it.
            bool signalled = false;
            const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
            while (!signalled && std::chrono::steady_clock::now() < deadline) {
                for (const auto& e : fs::directory_iterator(out_dir.path())) {
                    std::error_code ec;
                    if (e.path().filename().string().rfind(".out.tmp-", 0) == 0 && !fs::is_empty(e.path(), ec)) {
                        kill(pid, sig);
                        signalled = true;
                        break;
                    }
                }
                if (!signalled) std::this_thread::sleep_for(std::chrono::microseconds(200));
            }
            const int status = attntrace::test::wait_cli(pid);
            REQUIRE(signalled);
            CHECK(status == 128 + sig);
            CHECK(read_text(out + "/index.json") == before);  // the previous export, whole
            // The temporary folder may remain (documented); never a partial "out".
            // The next export removes it: its writer is gone.
            REQUIRE(run_cli({"export", kFlagship, "--npy", out}).status == 0);
            CHECK(out_dir.entries() == std::vector<std::string>{"out"});
        }
    }
}

TEST_CASE("diff reads an npy export as a trace: against the JSON export of the same run, all match", "[npy][diff]") {
    TempDir dir;
    REQUIRE(run_cli({"export", kMultiHead, "-o", dir.file("t.json"), "--npy", dir.file("npy")}).status == 0);
    auto r = run_cli({"diff", dir.file("t.json"), dir.file("npy"), "--atol", "0", "--rtol", "0"});
    INFO(r.out << r.err);
    CHECK(r.status == 0);
    CHECK(r.out.find("compared steps match") != std::string::npos);
    CHECK(run_cli({"diff", dir.file("npy"), dir.file("t.json")}).status == 0);

    SECTION("a broken index or file is refused with one line") {
        json index = json::parse(read_text(dir.file("npy/index.json")));
        index["steps"][1]["file"] = "../t.json";
        write_text(dir.file("npy/index.json"), index.dump());
        require_exit_2(run_cli({"diff", dir.file("t.json"), dir.file("npy")}), "index.json: steps[1].file: expected a file name");
        index["steps"][1]["file"] = index["steps"][3]["file"];  // scores (2x3x3) for K (3x2x2)
        write_text(dir.file("npy/index.json"), index.dump());
        require_exit_2(run_cli({"diff", dir.file("t.json"), dir.file("npy")}), "steps[1].shape: expected the shape of");
        fs::remove(dir.file("npy/index.json"));
        require_exit_2(run_cli({"diff", dir.file("t.json"), dir.file("npy")}), "without index.json");
    }
    SECTION("a NaN in a step's file (JSON cannot hold one, .npy can) names the file and the cell") {
        const std::string f = dir.file("npy/blocks.0.attn.hook_pattern.npy");
        Tensor t = attntrace::read_npy(f);
        t.data[5] = std::nanf("");
        attntrace::write_npy(f, t);
        require_exit_2(run_cli({"diff", dir.file("t.json"), dir.file("npy")}),
                       f + ": " + (t.rank() == 3 ? "[0,1,2]" : "?") + ": expected a finite number or negative infinity, found NaN");
    }
    SECTION("a truncated .npy names the index, the step's field, the file and the byte") {
        const std::string f = dir.file("npy/blocks.0.attn.hook_pattern.npy");
        fs::resize_file(f, fs::file_size(f) - 4);
        require_exit_2(run_cli({"diff", dir.file("t.json"), dir.file("npy")}), ".file: " + f + ": byte 128: expected");
    }
}

// ---- PyTorch (docs/pytorch.md) ---------------------------------------------------------------

const std::string kTorchDir = attntrace::test::source_dir() + "/docs/examples/torch";

TEST_CASE("PyTorch's TransformerEncoderLayer: our run of its weights gives its output and attention weights",
          "[npy][torch]") {
    TempDir dir;
    auto r = run_cli({"export", kTorchDir + "/lesson.json", "--npy", dir.file("ours")});
    INFO(r.err);
    REQUIRE(r.status == 0);
    const std::vector<std::pair<std::string, std::string>> pairs = {
        {"blocks.0.ln2.hook_normalized", "the layer's output"},
        {"blocks.0.attn.hook_pattern", "self_attn's weights, per head"},
        {"blocks.0.hook_attn_out", "self_attn's output"},
    };
    for (const auto& [step, what] : pairs) {
        INFO(step << ": " << what);
        Tensor ours = attntrace::read_npy(dir.file("ours/" + step + ".npy"));
        Tensor theirs = attntrace::read_npy(kTorchDir + "/torch-trace/" + step + ".npy");
        CHECK(max_abs_diff(ours, theirs) <= kTorchTol);
    }
}

TEST_CASE("the commands of docs/pytorch.md and the README's numpy section run as shown", "[npy][torch][docs]") {
    const std::string src = attntrace::test::source_dir();
    const std::vector<std::pair<std::string, int>> commands = {
        {"attntrace export docs/examples/torch/lesson.json --npy ours-npy", 0},
        {"attntrace diff ours-npy docs/examples/torch/torch-trace --atol 1e-5 --rtol 1e-5", 0},
        {"attntrace export 003-3.1-ring-fell -o ring-fell.json --npy ring-fell-npy", 0},
        {"attntrace diff ring-fell.json ring-fell-npy", 0},
    };
    const std::string readme = read_text(src + "/README.md"), doc = read_text(src + "/docs/pytorch.md");
    TempDir dir;
    for (const auto& [command, status] : commands) {
        INFO(command);
        CHECK(readme.find("\n" + command + "\n") != std::string::npos);
        auto r = attntrace::test::run_shown(command, dir);
        INFO(r.out << r.err);
        CHECK(r.status == status);
    }
    for (std::size_t i = 0; i < 2; ++i) CHECK(doc.find("\n" + commands[i].first + "\n") != std::string::npos);
    CHECK(doc.find(read_text(src + "/docs/examples/torch_to_lesson.py")) != std::string::npos);
}

}  // namespace test_npy_export

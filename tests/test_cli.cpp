// The CLI end to end on every lesson, as a user runs it.
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <sstream>
#include <nlohmann/json.hpp>

#include "render/matrix.hpp"
#include "support.hpp"

using attntrace::test::run_cli;
using attntrace::test::run_process;
using nlohmann::json;

namespace test_cli {

TEST_CASE("run, check and export succeed on every lesson", "[cli]") {
    for (const auto& lesson : attntrace::test::lesson_files()) {
        INFO(lesson);
        auto run = run_cli({"run", lesson});
        CHECK(run.status == 0);
        CHECK(run.err.empty());
        CHECK(run.out.find("claims: ") != std::string::npos);

        auto check = run_cli({"check", lesson});
        CHECK(check.status == 0);
        CHECK(check.out.find("every verdict as its lesson expects") != std::string::npos);

        attntrace::test::TempDir dir;
        auto exp = run_cli({"export", lesson, "-o", dir.file("t.json")});
        CHECK(exp.status == 0);
        json t = json::parse(attntrace::test::read_text(dir.file("t.json")));
        CHECK(t["format"] == "attntrace-trace");
        CHECK(!t["steps"].empty());
        CHECK(dir.entries() == std::vector<std::string>{"t.json"});  // no temporary left behind
    }
}

TEST_CASE("check of all lessons at once exits 0 and counts every verdict", "[cli]") {
    std::vector<std::string> args{"check"};
    for (const auto& l : attntrace::test::lesson_files()) args.push_back(l);
    auto r = run_cli(args);
    CHECK(r.status == 0);
    CHECK(r.out.find("disagree") != std::string::npos);
}

TEST_CASE("check exits 1 when a verdict differs from the lesson's expectation", "[cli]") {
    attntrace::test::TempDir dir;
    std::string text = attntrace::test::read_text(attntrace::test::lessons_dir() + "/003-3.1-ring-fell.json");
    // Claim S (raw scores) agrees from the article's given Q; expecting a disagreement must fail the check.
    auto pos = text.find("\"values\": [[1, 0, 0], [0, 1, 2], [0, 1, 1]], \"expect\": \"agrees-from-given\"");
    REQUIRE(pos != std::string::npos);
    text.replace(text.find("\"agrees-from-given\"", pos), 19, "\"disagrees\"");
    attntrace::test::write_text(dir.file("lesson.json"), text);
    auto r = run_cli({"check", dir.file("lesson.json")});
    CHECK(r.status == 1);
    CHECK(attntrace::test::unwrapped(r.out).find("UNEXPECTED (lesson expects disagrees)") != std::string::npos);
}

TEST_CASE("check --format json gives a verdict, the printed and the computed values per claim", "[cli]") {
    auto r = run_cli({"check", "003-3.1-ring-fell", "--format", "json"});
    REQUIRE(r.status == 0);
    json j = json::parse(r.out);
    const json& claims = j["lessons"][0]["claims"];
    bool found = false;
    for (const auto& c : claims)
        if (c["id"] == "Z") {
            found = true;
            CHECK(c["verdict"] == "agrees-when-rounded");
            CHECK(c["computed"][0][0][0].get<double>() == Approx(1.2741).margin(1e-4));
            CHECK(c["document_arithmetic"][0][0][0].get<double>() == Approx(1.26).margin(1e-6));
        }
    CHECK(found);
}

TEST_CASE("run --steps selects steps by glob or short name, and --precision sets the decimals", "[cli]") {
    auto r = run_cli({"run", "003-3.1-ring-fell", "--steps", "hook_pattern", "--precision", "2"});
    REQUIRE(r.status == 0);
    CHECK(r.out.find("blocks.0.attn.hook_pattern") != std::string::npos);
    CHECK(r.out.find("blocks.0.attn.hook_q ") == std::string::npos);
    CHECK(r.out.find("ring  0.19  0.31  0.51") != std::string::npos);

    auto g = run_cli({"run", "003-3.1-ring-fell", "--steps", "blocks.0.attn.softmax.*", "--json"});
    REQUIRE(g.status == 0);
    json j = json::parse(g.out);
    // the softmax stage's four internal steps, then its output, hook_pattern, which the glob's name alone leaves out
    REQUIRE(j["steps"].size() == 5);
    for (std::size_t k = 0; k < 4; ++k)
        CHECK(j["steps"][k]["name"].get<std::string>().rfind("blocks.0.attn.softmax.", 0) == 0);
    CHECK(j["steps"][4]["name"] == "blocks.0.attn.hook_pattern");
}

TEST_CASE("list shows every lesson with its source", "[cli]") {
    auto r = run_cli({"list"});
    REQUIRE(r.status == 0);
    for (const auto& l : attntrace::test::lesson_files()) {
        std::string id = std::filesystem::path(l).stem().string();
        CHECK(r.out.find(id) != std::string::npos);
    }
    // titles and sources wrapped under their column at 80 columns
    CHECK(attntrace::test::unwrapped(r.out).find("003_1ea6acd0c34a2194.txt §3.1 Attention Step by Step") != std::string::npos);
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);) {
        INFO(line);
        CHECK((attntrace::display_width(line) <= 80 || line.find(' ', 29) == std::string::npos));  // a lone long word may not
    }
}

TEST_CASE("every subcommand that attntrace --help lists has --help with an example", "[cli]") {
    auto top = run_cli({"--help"});
    REQUIRE(top.status == 0);
    // CLI11 lists them after "Subcommands:", one per line: two spaces, the name, its description.
    auto at = top.out.find("\nSubcommands:\n");
    REQUIRE(at != std::string::npos);
    std::vector<std::string> commands;
    std::istringstream lines(top.out.substr(at + 14));
    for (std::string line; std::getline(lines, line) && !line.empty();)
        if (line.size() > 2 && line.compare(0, 2, "  ") == 0 && line[2] != ' ')
            commands.push_back(line.substr(2, line.find(' ', 2) - 2));
    // At least these (more join as they are added; each is held to the checks below).
    for (const char* c : {"run", "list", "check", "export", "golden", "random", "bench", "diff", "cost", "report", "explain", "compare", "decode"})
        CHECK(std::find(commands.begin(), commands.end(), c) != commands.end());
    CHECK(top.out.find("Example") != std::string::npos);
    for (const auto& cmd : commands) {
        auto r = run_cli({cmd, "--help"});
        INFO(cmd);
        CHECK(r.status == 0);
        CHECK(r.err.empty());
        CHECK(r.out.find("\nExample") != std::string::npos);
        CHECK(r.out.find("\n  attntrace") != std::string::npos);  // an example command line under the heading
    }
}

TEST_CASE("scores that overflow to -inf are refused, not taken for masked cells", "[cli]") {
    attntrace::test::TempDir dir;
    attntrace::test::write_text(dir.file("l.json"), R"({"format": "attntrace-lesson", "version": 1, "id": "l",
      "title": "t", "source": {"document": "x"}, "tokens": ["a", "b"], "config": {"d_model": 1},
      "run": {"from": "scores", "to": "softmax"},
      "given": {"blocks.0.attn.hook_q": [[3e38], [1]], "blocks.0.attn.hook_k": [[-3e38], [-3e38]]}})");
    auto r = run_cli({"check", dir.file("l.json")});
    CHECK(r.status == 2);
    CHECK(r.err.find("blocks.0.attn.hook_scores_raw[0,0,0]: expected finite values, found -inf") != std::string::npos);
}

TEST_CASE("run --arithmetic document shows the rounded steps, and a lesson that rounds nothing refuses it", "[cli]") {
    auto r = run_cli({"run", "003-3.1-ring-fell", "--arithmetic", "document", "--steps", "hook_pattern", "hook_z"});
    REQUIRE(r.status == 0);
    CHECK(r.out.find("(rounded to 2 decimals, as the article did)") != std::string::npos);
    CHECK(r.out.find("ring  1.7200  0.1900  0.6200  2.1500") != std::string::npos);  // the article's Z row
    auto none = run_cli({"run", "003-3.3-multi-head", "--arithmetic", "document"});
    CHECK(none.status == 2);
    CHECK(none.err.find("--arithmetic document") != std::string::npos);
}

TEST_CASE("a --steps pattern that matches no step is an error, not an empty listing", "[cli]") {
    auto r = run_cli({"run", "003-3.1-ring-fell", "--steps", "hook_patern"});
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(r.err.find("--steps: expected a step's number, a name, a glob, a stage, a last part of a name or a word of a "
                     "step's title, matching a step of this lesson") != std::string::npos);
    CHECK(r.err.find("found \"hook_patern\" (closest: blocks.0.attn.hook_pattern)") != std::string::npos);
}

TEST_CASE("golden refuses a lesson whose id is not its file name (it would overwrite another's golden)", "[cli]") {
    attntrace::test::TempDir dir;
    std::string text = attntrace::test::read_text(attntrace::test::lessons_dir() + "/003-3.1-ring-fell.json");
    attntrace::test::write_text(dir.file("impostor.json"), text);
    auto r = run_cli({"golden", "--update", dir.file("impostor.json")}, {"ATTNTRACE_GOLDEN=" + dir.path()});
    CHECK(r.status == 2);
    CHECK(r.err.find("impostor.json: id: expected the file's name without .json") != std::string::npos);
    CHECK(dir.entries() == std::vector<std::string>{"impostor.json"});
}

TEST_CASE("a failed write to standard output exits 2", "[cli][process]") {
    // The real binary: its standard output is the device, not a string stream.
    if (!std::filesystem::exists("/dev/full")) return;
    auto r = run_process({"export", "003-3.1-ring-fell", "-o", "-"}, {}, "/dev/full");
    CHECK(r.status == 2);
    CHECK(r.err.find("standard output") != std::string::npos);
}

// bench runs as its own process: it sets the allocator's thresholds (mallopt)
// for good, which an in-process call would leave to every later test.
TEST_CASE("bench --json reports every stage that runs, the block, and the products' FLOPs", "[cli][process]") {
    // Structure only: timings belong in benchmarks, never in assertions.
    auto r = run_process({"--threads", "1", "bench", "--tokens", "16", "--d-model", "16", "--heads", "2", "--d-ff", "32",
                      "--repeat", "2", "--json"});
    REQUIRE(r.status == 0);
    json j = json::parse(r.out);
    CHECK(j["format"] == "attntrace-bench");
    CHECK(j["threads"] == 1);
    const auto& stages = j["stages"];
    REQUIRE(stages.size() == 14);  // the 13 stages this block runs (not rope, not unembed) and the block
    CHECK(stages[13]["stage"] == "block");
    // qkv: 3 products of 16 x 16 · 16 x 16 = 3 · 2 · 16³ FLOPs; ffn: 2 · 2 · 16 · 16 · 32
    CHECK(stages[1]["stage"] == "qkv");
    CHECK(stages[1]["flops"].get<double>() == 3 * 2 * 16.0 * 16 * 16);
    CHECK(stages[10]["flops"].get<double>() == 2 * 2 * 16.0 * 16 * 32);
    CHECK(stages[13]["flops"].get<double>() > stages[10]["flops"].get<double>());
    // The micro-kernel was measured with the SIMD kernels; the scalar ones (a build without SIMD, or
    // ATTNTRACE_KERNELS=ref) have no register tile.
    if (j["kernels"] == "ref")
        CHECK(j["micro_kernel_gflops"] == 0.0);
    else
        CHECK(j["micro_kernel_gflops"].get<double>() > 0.0);
    auto ref = run_process({"--threads", "1", "bench", "--tokens", "16", "--d-model", "16", "--heads", "2", "--d-ff", "32",
                            "--repeat", "1", "--json"}, {"ATTNTRACE_KERNELS=ref"});
    REQUIRE(ref.status == 0);
    CHECK(json::parse(ref.out)["micro_kernel_gflops"] == 0.0);
    // A stack of 3 pre-norm blocks: every stage's FLOPs over the three blocks, the model named.
    auto s = run_process({"--threads", "1", "bench", "--tokens", "16", "--d-model", "16", "--heads", "2", "--d-ff", "32",
                      "--repeat", "1", "--blocks", "3", "--norm-first", "--json"});
    REQUIRE(s.status == 0);
    json k = json::parse(s.out);
    CHECK(k["blocks"] == 3);
    CHECK(k["norm_first"] == true);
    CHECK(k["stages"][1]["flops"].get<double>() == 3 * 3 * 2 * 16.0 * 16 * 16);
}

TEST_CASE("ATTNTRACE_KERNELS forces the scalar kernels, with the same printed numbers, and a bad value exits 2", "[cli][process]") {
    // Real processes: the kernels are chosen once per process, at the first kernel call.
    auto simd = run_process({"run", "003-3.1-ring-fell"});
    auto ref = run_process({"run", "003-3.1-ring-fell"}, {"ATTNTRACE_KERNELS=ref"});
    REQUIRE(ref.status == 0);
    CHECK(ref.out == simd.out);  // 4 decimals: every kernel agrees with its _ref twin far below that
    auto bad = run_process({"run", "003-3.1-ring-fell"}, {"ATTNTRACE_KERNELS=avx9000"});
    CHECK(bad.status == 2);
    CHECK(bad.err == "attntrace: error: ATTNTRACE_KERNELS: expected ref, sse4.2, avx2 or avx512, found \"avx9000\"\n");
}

TEST_CASE("bench --threads after the command, two trace policies interleaved, none streaming attention", "[cli][process]") {
    auto r = run_process({"bench", "--threads", "1", "--tokens", "40", "--d-model", "16", "--heads", "2", "--d-ff", "32",
                      "--repeat", "1", "--trace", "full", "--trace", "none", "--json"});
    REQUIRE(r.status == 0);
    json j = json::parse(r.out);
    CHECK(j["version"] == 2);
    CHECK(j["threads"] == 1);
    const auto& runs = j["runs"];
    REQUIRE(runs.size() == 2);
    CHECK(runs[0]["trace"] == "full");
    CHECK(runs[0]["streamed_attention"] == false);
    CHECK(runs[1]["trace"] == "none");
    CHECK(runs[1]["streamed_attention"] == true);
    // Streamed, the scores stages never run: their products count in mix.
    CHECK(runs[1]["stages"][2]["stage"] == "scores");
    CHECK(runs[1]["stages"][2]["median_s"] == 0.0);
    CHECK(runs[1]["stages"][6]["flops"].get<double>() == 2 * 2 * 40.0 * 40 * 16);
    CHECK(runs[0]["estimated_peak_bytes"].get<double>() > runs[1]["estimated_peak_bytes"].get<double>());
}

TEST_CASE("bench --model times a checkpoint's stack stage by stage, says what it benched, and refuses a random block's options", "[cli][process]") {
    // Structure only: which stages ran, their FLOPs over the blocks, what was benched; never timings.
    const std::string bert = attntrace::test::source_dir() + "/tests/models/tiny-bert";
    const std::string llama = attntrace::test::source_dir() + "/tests/models/tiny-llama";
    auto r = run_process({"--threads", "1", "bench", "--model", bert, "--ids", "2,40,41,42,3", "--repeat", "1",
                          "--trace", "full", "--trace", "none", "--json"});
    REQUIRE(r.status == 0);
    json j = json::parse(r.out);
    CHECK(j["model"]["type"] == "bert");
    CHECK(j["model"]["dir"] == bert);
    CHECK(j["blocks"] == 2);
    CHECK(j["tokens"] == 5);
    CHECK(j["d_model"] == 32);
    CHECK(j["d_ff"] == 64);
    CHECK(j["mask"] == "none");
    CHECK(j["norm_first"] == false);
    // every stage of the post-norm stack ran, the embeddings (and their norm) among them
    std::vector<std::string> names;
    for (const auto& s : j["runs"][0]["stages"]) {
        names.push_back(s["stage"]);
        CHECK(s["median_s"].get<double>() > 0);  // ran (a stage that does not run reports exactly 0)
    }
    CHECK(names == std::vector<std::string>{"embed", "qkv", "scores", "scale", "mask", "softmax", "mix", "out", "add1",
                                            "norm1", "ffn", "add2", "norm2", "block"});
    // FLOPs over both blocks: qkv 3 products of (5 x 32)·(32 x 32), ffn (5 x 32)·(32 x 64) and back
    CHECK(j["stages"][1]["flops"].get<double>() == 2 * 3 * 2 * 5.0 * 32 * 32);
    CHECK(j["stages"][10]["flops"].get<double>() == 2 * 2 * 2 * 5.0 * 32 * 64);
    CHECK(j["runs"][1]["streamed_attention"] == true);
    // as text: the model, its blocks and tokens; a Llama's stack has its rope stage and SwiGLU's third product
    r = run_process({"--threads", "1", "bench", "--model", llama, "--ids", "1,262,265", "--repeat", "1"},
                    {"COLUMNS=99999"});  // its first line unwrapped (80 columns: test_text_width)
    REQUIRE(r.status == 0);
    CHECK(r.out.rfind("attntrace bench --model " + llama + ": model llama, 2 blocks, 3 tokens, d_model=48 heads=4 kv_heads=2 "
                      "d_ff=96 mask causal swiglu pre-norm |", 0) == 0);
    for (const char* stage : {"\nembed ", "\nnorm1 ", "\nqkv ", "\nrope ", "\nsoftmax ", "\nffn ", "\nblock "}) {
        INFO(stage);
        CHECK(r.out.find(stage) != std::string::npos);
    }
    r = run_process({"bench", "--model", llama, "--ids", "1,262,265", "--repeat", "1", "--json"});
    REQUIRE(r.status == 0);
    j = json::parse(r.out);
    CHECK(j["model"]["type"] == "llama");
    CHECK(j["stages"][11]["stage"] == "ffn");
    CHECK(j["stages"][11]["flops"].get<double>() == 2 * 3 * 2 * 3.0 * 48 * 96);
    // a random block's shape beside --model: refused, naming them
    r = run_process({"bench", "--model", bert, "--ids", "2,3", "--d-model", "64", "--heads", "4"});
    CHECK(r.status == 2);
    CHECK(r.err == "attntrace: error: --model: expected none of a random block's options beside it (config.json and --text "
                   "or --ids give the stack's shape), found --d-model, --heads\n");
    r = run_process({"bench", "--text", "the ring fell"});
    CHECK(r.status == 2);
    CHECK(r.err.find("--text: expected --model DIR beside it") != std::string::npos);
}

TEST_CASE("bench --model --generate times each window of decode --generate and refuses what it cannot time", "[cli][process]") {
    // Structure only: how many windows, which tokens they were; never timings.
    const std::string gpt2 = attntrace::test::source_dir() + "/tests/models/tiny-gpt2";
    auto r = run_process({"--threads", "1", "bench", "--model", gpt2, "--ids", "287,262,267", "--generate", "4", "--json"});
    REQUIRE(r.status == 0);
    json j = json::parse(r.out);
    CHECK(j["format"] == "attntrace-bench-generate");
    CHECK(j["model_type"] == "gpt2");
    CHECK(j["threads"] == 1);
    CHECK(j["prompt_tokens"] == 3);
    CHECK(j["generated_tokens"] == 4);
    REQUIRE(j["window_s"].size() == 7);  // the prompt's three windows, then one per generated token
    for (const auto& s : j["window_s"]) CHECK(s.get<double>() > 0);
    CHECK(j["generated_min_s"].get<double>() <= j["generated_median_s"].get<double>());
    CHECK(j["generated_median_s"].get<double>() <= j["generated_max_s"].get<double>());
    r = run_process({"bench", "--model", gpt2, "--ids", "287,262,267", "--generate", "2"});
    REQUIRE(r.status == 0);
    CHECK(r.out.find("3 prompt tokens, 2 generated") != std::string::npos);
    CHECK(r.out.find("generated tokens") != std::string::npos);
    // refused: no model, a model with no next token, a count past the model's positions, a trace policy beside it
    r = run_process({"bench", "--generate", "2"});
    CHECK(r.status == 2);
    CHECK(r.err == "attntrace: error: --generate: expected --model DIR beside it (a random block has no next token), found no --model\n");
    r = run_process({"bench", "--model", attntrace::test::source_dir() + "/tests/models/tiny-bert", "--ids", "2,40,3", "--generate", "2"});
    CHECK(r.status == 2);
    CHECK(r.err.find("--generate: expected a causal model with a next-token head") != std::string::npos);
    r = run_process({"bench", "--model", gpt2, "--ids", "287,262", "--generate", "1000"});
    CHECK(r.status == 2);
    CHECK(r.err.find("--generate: expected the prompt plus the generated tokens within") != std::string::npos);
    r = run_process({"bench", "--model", gpt2, "--ids", "287,262", "--generate", "2", "--trace", "none"});
    CHECK(r.status == 2);
    CHECK(r.err == "attntrace: error: --generate: expected no --trace or --repeat beside it (each window is timed once), found --trace\n");
}

TEST_CASE("a negative count or seed is refused as written, never wrapped to 2^64 - 1 or to 1", "[cli]") {
    const std::string gpt2 = attntrace::test::source_dir() + "/tests/models/tiny-gpt2";
    // Each unsigned flag with the arguments it runs with; CLI11 reads unsigned values with strtoull,
    // which takes "-1" as 18446744073709551615 and "-18446744073709551615" as 1.
    const std::vector<std::pair<std::vector<std::string>, std::string>> flags{
        {{"decode", "--model", gpt2, "--text", "the ring", "--generate"}, "--generate"},
        {{"run", "--model", gpt2, "--text", "the ring", "--top-k"}, "--top-k"},
        {{"decode", "--model", gpt2, "--text", "the ring", "--generate", "1", "--top-k"}, "--top-k"},
        {{"random", "-o", "-", "--tokens"}, "--tokens"},
        {{"random", "-o", "-", "--d-model"}, "--d-model"},
        {{"random", "-o", "-", "--heads"}, "--heads"},
        {{"random", "-o", "-", "--kv-heads"}, "--kv-heads"},
        {{"random", "-o", "-", "--d-ff"}, "--d-ff"},
        {{"random", "-o", "-", "--seed"}, "--seed"},
        {{"random", "-o", "-", "--blocks"}, "--blocks"},
        {{"bench", "--repeat", "1", "--tokens", "4", "--d-model", "8", "--heads", "2", "--d-ff", "8", "--seed"}, "--seed"},
        {{"cost", "--d-model"}, "--d-model"},
        {{"cost", "--heads"}, "--heads"},
        {{"cost", "--kv-heads"}, "--kv-heads"},
        {{"cost", "--d-ff"}, "--d-ff"},
        {{"cost", "--layers"}, "--layers"},
        {{"cost", "--batch"}, "--batch"},
        {{"cost", "--attention", "window", "--window"}, "--window"},
        {{"cost", "--tokens"}, "--tokens"},
    };
    for (const auto& [args, flag] : flags) {
        for (const std::string value : {"-1", "-18446744073709551615", " -3"}) {
            std::vector<std::string> a = args;
            a.push_back(value);
            INFO(a.front() << " " << flag << " " << value);
            const auto r = run_cli(a);
            INFO(r.err);
            CHECK(r.status == 2);
            CHECK(r.out.empty());
            CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
            CHECK(r.err.find(flag) != std::string::npos);
            // the value as written, never what wrapping made of it
            CHECK(r.err.find(value.substr(value.find('-'))) != std::string::npos);
            CHECK(r.err.find(" 18446744073709551615") == std::string::npos);
            CHECK(r.err.find("found 1\n") == std::string::npos);
        }
    }
    // past 2^64 - 1: refused as written too, not read as 2^64 - 1
    const auto r = run_cli({"random", "-o", "-", "--seed", "99999999999999999999"});
    CHECK(r.status == 2);
    CHECK(r.err.find("--seed: expected a whole number below 2^64, found 99999999999999999999") != std::string::npos);
    // the decode flag's own bounds still name it: 0 is no count
    const auto zero = run_cli({"decode", "--model", gpt2, "--text", "the ring", "--generate", "0"});
    CHECK(zero.err == "attntrace: error: --generate: expected a count from 1 to 1024, found 0\n");
}

TEST_CASE("run tallies the claims only when there are claims: none for a checkpoint or a random lesson", "[cli]") {
    const std::string gpt2 = attntrace::test::source_dir() + "/tests/models/tiny-gpt2";
    const auto model = run_cli({"run", "--model", gpt2, "--text", "the ring fell"});
    REQUIRE(model.status == 0);
    CHECK(model.out.find("unembed") != std::string::npos);  // the run went to its end
    CHECK(model.out.find("claims:") == std::string::npos);
    attntrace::test::TempDir dir;
    REQUIRE(run_cli({"random", "--tokens", "3", "--d-model", "4", "--heads", "1", "--d-ff", "8", "--seed", "1", "-o",
                     dir.file("r.json")}).status == 0);
    const auto random = run_cli({"run", dir.file("r.json")});
    REQUIRE(random.status == 0);
    CHECK(random.out.find("hook_pattern") != std::string::npos);
    CHECK(random.out.find("claims:") == std::string::npos);
    // A lesson on the same checkpoint that claims something is tallied.
    const auto claimed = run_cli({"run", attntrace::test::source_dir() + "/docs/examples/model-lesson.json"});
    REQUIRE(claimed.status == 0);
    CHECK(claimed.out.find("\nclaims: 3 agree,") != std::string::npos);
}

namespace {

// The lines of `text` from the one containing `start` up to, not including, the next line starting with
// `next_start` (or to the end); "" when no line contains `start`.
std::string lines_from(const std::string& text, const std::string& start, const std::string& next_start) {
    const auto at = text.find(start);
    if (at == std::string::npos) return "";
    const auto from = text.rfind('\n', at) + 1;
    const auto end = text.find("\n" + next_start, at);
    return text.substr(from, end == std::string::npos ? std::string::npos : end + 1 - from);
}

}  // namespace

TEST_CASE("a next-token claim on the wrong token says so first, and no equal numbers as its discrepancy", "[cli]") {
    // docs/examples/model-lesson.json: next-10 claims that ␣10 comes next at p = 0.04. Its p is 0.04 (the
    // number agrees); S is the top token, so the claim disagrees for the token alone.
    const std::string example = attntrace::test::source_dir() + "/docs/examples/model-lesson.json";
    const auto check = run_cli({"check", example});
    REQUIRE(check.status == 0);
    const std::string next10 = lines_from(check.out, "✗ next-10", "  ✓ ");
    INFO(check.out);
    REQUIRE(!next10.empty());
    // the verdict (its lines wrapped to the width) up to the reason
    const std::string flat = attntrace::test::unwrapped(next10);
    const std::string verdict = flat.substr(0, flat.find("the top next token"));
    CHECK(verdict.find("not the top token: 'S' comes next") != std::string::npos);
    CHECK(verdict.find("max |Δ|") == std::string::npos);
    // what differs, then the probability said to agree, not shown as "printed 0.04 / right 0.04"
    const auto token = flat.find("the top next token is 'S'");
    const auto probability = flat.find("its probability agrees: printed 0.04, computed 0.0392");
    CHECK(token != std::string::npos);
    CHECK(probability != std::string::npos);
    CHECK(token < probability);
    CHECK(next10.find("right") == std::string::npos);
    // A claim whose number is off still shows the printed and the right numbers.
    CHECK(lines_from(check.out, "✗ head2-fell-misprint", "  ✓ ").find("printed 0.95\n      right   1.00") != std::string::npos);

    SECTION("the wrong token with a wrong probability: both, the token first") {
        attntrace::test::TempDir dir;
        json doc = json::parse(attntrace::test::read_text(example));
        doc["model"]["dir"] = attntrace::test::source_dir() + "/tests/models/tiny-gpt2";
        doc["claims"][4]["values"] = 0.5;
        attntrace::test::write_text(dir.file("lesson.json"), doc.dump());
        const auto r = run_cli({"check", dir.file("lesson.json")});
        REQUIRE(r.status == 0);  // still the expected disagreement
        const std::string both = lines_from(r.out, "✗ next-10", "  ✓ ");
        CHECK(attntrace::test::unwrapped(both).find("not the top token: 'S' comes next; max |Δ| 0.46") != std::string::npos);
        const auto token = both.find("the top next token is 'S'");
        const auto numbers = both.find("printed 0.50\n      right   0.04");
        CHECK(token != std::string::npos);
        CHECK(numbers != std::string::npos);
        CHECK(token < numbers);
        CHECK(both.find("its probability agrees") == std::string::npos);
    }
    SECTION("run shows the claim the same way: the token first, no deviation for an agreeing number") {
        const auto run = run_cli({"run", example, "--steps", "unembed"});
        REQUIRE(run.status == 0);
        const std::string claim = lines_from(run.out, "claim next-10", "      article:");  // its header, wrapped
        INFO(run.out);
        CHECK(attntrace::test::unwrapped(claim).find("disagrees, not the top token: 'S' comes next") != std::string::npos);
        const std::string details = lines_from(run.out, "claim next-10", "\n");  // up to the blank line after it
        const auto token = details.find("the top next token is 'S'");
        const auto printed = details.find("printed (2 dp): 0.04");
        CHECK(token != std::string::npos);
        CHECK(printed != std::string::npos);
        CHECK(token < printed);
        CHECK(details.find("(its probability agrees; the token is what differs)") != std::string::npos);
        CHECK(details.find("largest deviation") == std::string::npos);
    }
}

}  // namespace test_cli

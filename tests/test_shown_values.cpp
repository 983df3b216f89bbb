// Every number shown is the number computed. Each reader that shows or writes
// a step's values (the library's values_of, run's text and --json, export's
// JSON and .npy, the report's page (whole), compare, diff, decode), under every trace
// policy that keeps a derived step with or without the steps it is derived
// from (single names, globs, a later block's names, summary, full, seeded
// random lists), gives the full trace's values bit for bit, or refuses with
// one line. The lessons cover a causal stack, a decoder, a scale object (its
// factor a source of the scaled scores), the softmax variants that run
// without derived steps, a batch, and a checkpoint.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/json_field.hpp"
#include "evaluate/evaluate.hpp"
#include "export/npy_export.hpp"
#include "held_trace.hpp"
#include "lesson/lesson.hpp"
#include "model/model_lesson.hpp"
#include "support.hpp"
#include "trace/derived.hpp"
#include "trace/policy.hpp"
#include "trace/trace_json.hpp"

using namespace attntrace;
using namespace attntrace::test;

namespace test_shown_values {
using json = nlohmann::json;

namespace {

// Policies that keep a derived step alone, with some or all of its sources,
// by its last name (every block), by a later block's full name, by globs, and
// whole (full, summary); plus `random_lists` seeded lists of the lesson's names.
std::vector<std::string> policies(const std::vector<std::string>& names, std::size_t random_lists) {
    std::vector<std::string> out{"full",
                                 "summary",
                                 "hook_scores_scaled",
                                 "hook_attn_scores",
                                 "hook_shifted",
                                 "hook_exp",
                                 "hook_scores_scaled,hook_scores_raw",
                                 "hook_attn_scores,hook_scores_raw,hook_mask",
                                 "hook_exp,hook_row_max",
                                 "hook_exp,hook_scores_raw,hook_mask,hook_row_max",
                                 "*scores*",
                                 "*.softmax.*",
                                 "hook_pattern,hook_attn_scores"};
    for (const std::string& n : names)
        if (n.rfind("blocks.1.attn.", 0) == 0 && (n.find("hook_scores_scaled") != std::string::npos ||
                                                  n.find("hook_exp") != std::string::npos))
            out.push_back(n);  // a later block's step by its whole name
    if (std::find(names.begin(), names.end(), "blocks.1.hook_resid_post") != names.end()) out.push_back("blocks.1.*");
    std::mt19937 gen(19);
    for (std::size_t k = 0; k < random_lists; ++k) {
        std::string list;
        std::bernoulli_distribution pick(0.15);
        for (const std::string& n : names)
            if (pick(gen)) list += (list.empty() ? "" : ",") + n;
        if (!list.empty()) out.push_back(list);
    }
    return out;
}

// The full trace's values of every step that has values, read once.
std::map<std::string, Tensor> full_values(const Trace& t) {
    std::map<std::string, Tensor> out;
    for (const Step& s : t.steps)
        if (s.recorded == Record::full && s.source != StepSource::not_computable) out[s.name] = values_of(t, s).take();
    return out;
}

// A JSON array of numbers, nested as a tensor's axes, in row-major order (written to round-trip a float).
void flatten(const json& j, std::vector<float>& out) {
    if (j.is_array())
        for (const json& x : j) flatten(x, out);
    else out.push_back(j.is_number() ? j.get<float>() : -std::numeric_limits<float>::infinity());
}

// Every step of `got` that holds values (full, computable) equals the full
// run's bit for bit; returns how many were compared.
std::size_t require_same(const std::map<std::string, Tensor>& full, const TraceData& got, const std::string& reader) {
    std::size_t n = 0;
    for (const TraceStepData& s : got.steps) {
        if (s.recorded != "full" || s.source == "not-computable") continue;
        INFO(reader << ": " << s.name);
        const auto it = full.find(s.name);
        REQUIRE(it != full.end());
        REQUIRE(same_bits(s.values, it->second));
        ++n;
    }
    return n;
}

// The readers of a lesson file (or `model` args in place of the file) under one policy.
void check_policy(const std::map<std::string, Tensor>& full, const std::vector<std::string>& lesson_args,
                  const std::string& policy, const TempDir& dir) {
    INFO("--trace " << policy);
    auto with = [&](std::vector<std::string> cmd, std::vector<std::string> more) {
        cmd.insert(cmd.end(), lesson_args.begin(), lesson_args.end());
        cmd.insert(cmd.end(), more.begin(), more.end());
        return run_cli(cmd);
    };
    // export: JSON and .npy
    const std::string out = dir.file("t.json"), npy = dir.file("npy");
    std::filesystem::remove_all(npy);
    const CliResult ex = with({"export"}, {"--trace", policy, "-o", out, "--npy", npy});
    INFO(ex.err);
    REQUIRE(ex.status == 0);
    const std::size_t n = require_same(full, read_trace_or_npy(out), "export -o");
    CHECK(require_same(full, read_trace_or_npy(npy), "export --npy") == n);
    // run --json
    const CliResult rj = with({"run"}, {"--trace", policy, "--json"});
    REQUIRE(rj.status == 0);
    CHECK(require_same(full, parse_trace(json::parse(rj.out), "(run --json)", TraceRequire::minimal), "run --json") == n);
    // the report's page (it has no --trace: it always holds the whole trace): the trace it embeds
    if (policy == "full") {
        const std::string page = dir.file("page.html");
        REQUIRE(with({"report"}, {"-o", page}).status == 0);
        const std::string html = read_text(page), open = "<script type=\"application/json\" id=\"trace\">";
        const auto at = html.find(open) + open.size();
        const json embedded = json::parse(html.substr(at, html.find("</script>", at) - at));
        CHECK(require_same(full, parse_trace(embedded, "(report)", TraceRequire::minimal), "report") == n);
    }
    // diff of this export against the full one: every step both hold is equal at zero tolerance (refused
    // in one line when they hold none in common, as a summary may)
    const CliResult d = run_cli({"diff", dir.file("full.json"), out, "--atol", "0", "--rtol", "0"});
    INFO(d.out << d.err);
    if (n > 0) CHECK(d.status == 0);
    else CHECK((d.status == 2 && std::count(d.err.begin(), d.err.end(), '\n') == 1));
}

// run's text view of each kept step under the policy prints what the full trace's view prints.
void check_text(const std::vector<std::string>& lesson_args, const std::string& policy, const std::string& step) {
    auto view = [&](const std::string& trace) {
        std::vector<std::string> cmd{"run"};
        cmd.insert(cmd.end(), lesson_args.begin(), lesson_args.end());
        for (const char* a : {"--steps", step.c_str(), "--precision", "8", "--full", "--trace", trace.c_str()})
            cmd.emplace_back(a);
        const CliResult r = run_cli(cmd);
        REQUIRE(r.status == 0);
        // from the first step's section on (the header above names the policy), without the steps'
        // numbers ("── 7/61"), which count the steps the policy kept
        // and up to the claims' tally (a claim on a step the policy did not keep is not checkable)
        const auto from = r.out.find("── ");
        const std::string steps = r.out.substr(from, r.out.find("\nclaims: ", from) - from);
        return std::regex_replace(steps, std::regex("── [0-9]+/[0-9]+ "), "── ");
    };
    INFO("run --steps " << step << " --trace " << policy);
    CHECK(view(policy) == view("full"));
}

struct Subject {
    std::string name;
    std::vector<std::string> args;  // the lesson file, or --model DIR --text ...
};

void check_subject(const Subject& subject, const TempDir& dir, std::size_t random_lists) {
    INFO(subject.name);
    std::vector<std::string> full_cmd{"export"};
    full_cmd.insert(full_cmd.end(), subject.args.begin(), subject.args.end());
    full_cmd.insert(full_cmd.end(), {"-o", dir.file("full.json")});
    REQUIRE(run_cli(full_cmd).status == 0);
    const TraceData whole = read_trace_or_npy(dir.file("full.json"));
    std::map<std::string, Tensor> full;
    std::vector<std::string> names;
    for (const TraceStepData& s : whole.steps) {
        names.push_back(s.name);
        if (s.recorded == "full" && s.source != "not-computable") full[s.name] = s.values;
    }
    // (a name of a step this lesson does not record, a softmax variant's row max, keeps nothing of it)
    for (const std::string& p : policies(names, random_lists)) check_policy(full, subject.args, p, dir);
    for (const char* step : {"hook_scores_scaled", "hook_attn_scores", "hook_shifted", "hook_exp"})
        if (std::any_of(names.begin(), names.end(), [&](const std::string& n) { return step_matches(n, {step}); }))
            check_text(subject.args, step, step);
}

std::string random_lesson(const TempDir& dir, const std::string& file, std::vector<std::string> args) {
    args.insert(args.begin(), "random");
    args.insert(args.end(), {"-o", dir.file(file)});
    REQUIRE(run_cli(args).status == 0);
    return dir.file(file);
}

// A lesson file with `edit` applied to its JSON.
std::string edited(const TempDir& dir, const std::string& from, const std::string& file, const json& config) {
    json j = json::parse(read_text(from));
    j["config"].update(config);
    write_text(dir.file(file), j.dump());
    return dir.file(file);
}

}  // namespace

TEST_CASE("every reader shows the full trace's values under every policy that keeps a derived step",
          "[shown-values]") {
    TempDir dir;
    const std::string stack =
        random_lesson(dir, "stack.json", {"--tokens", "9", "--d-model", "16", "--heads", "2", "--d-ff", "24",
                                          "--blocks", "2", "--mask", "causal", "--seed", "3"});
    SECTION("a causal stack of two blocks") { check_subject({"stack", {stack}}, dir, 6); }
    SECTION("a decoder: causal self-attention and cross-attention") {
        const std::string dec = random_lesson(
            dir, "dec.json", {"--tokens", "7", "--d-model", "16", "--heads", "4", "--kv-heads", "2", "--d-ff", "24",
                              "--decoder", "--seed", "5"});
        check_subject({"decoder", {dec}}, dir, 4);
    }
    SECTION("a scale object: the factor is a source of the scaled scores") {
        check_subject({"scale object", {edited(dir, stack, "scale.json", {{"scale", {{"divide_by", 3}}}})}}, dir, 2);
    }
    SECTION("the softmax variants, which record their steps as buffers") {
        for (const json& c : {json{{"normalizer", "sum"}}, json{{"max_shift", false}}, json{{"mask_at", "raw"}},
                              json{{"mask_at", "weights"}}})
            check_subject({c.dump(), {edited(dir, stack, "variant.json", c)}}, dir, 1);
    }
    SECTION("a batch") { check_subject(Subject{"batch", {attntrace::test::lessons_dir() + "/001-batch-padding.json"}}, dir, 2); }
    SECTION("a checkpoint") {
        check_subject({"tiny-gpt2", {"--model", source_dir() + "/tests/models/tiny-gpt2", "--text", "the ring fell"}},
                      dir, 2);
    }
}

TEST_CASE("the library's values_of under a policy equals the full trace's, and decode and compare read them",
          "[shown-values]") {
    TempDir dir;
    const std::string file =
        random_lesson(dir, "l.json", {"--tokens", "70", "--d-model", "48", "--heads", "4", "--d-ff", "96", "--mask",
                                      "causal", "--blocks", "2", "--seed", "7"});
    const Lesson lesson = read_any_lesson(file);
    const auto e = evaluate(Lesson(lesson));
    const std::map<std::string, Tensor> full = full_values(e->exact);
    std::vector<std::string> names;
    for (const Step& s : e->exact.steps) names.push_back(s.name);
    for (const std::string& p : policies(names, 8)) {
        INFO("--trace " << p);
        const auto got = evaluate(Lesson(lesson), parse_trace_policy(p, "--trace"));
        for (const Step& s : got->exact.steps) {
            if (s.recorded != Record::full || s.source == StepSource::not_computable) continue;
            INFO(s.name);
            CHECK(same_bits(*values_of(got->exact, s), full.at(s.name)));
        }
    }
    // decode holds every row of every step, the derived ones included, to the full run's
    const CliResult d = run_cli({"decode", file});
    INFO(d.out << d.err);
    CHECK(d.status == 0);
    // compare shows a derived step's values, not an empty buffer
    const CliResult c = run_cli({"compare", file, "--set", "scale=false", "--step", "blocks.1.attn.hook_scores_scaled", "--json"});
    REQUIRE(c.status == 0);
    const json shown = json::parse(c.out)["shown"];
    std::vector<float> a;
    flatten(shown["a"], a);
    const Tensor& want = full.at("blocks.1.attn.hook_scores_scaled");
    REQUIRE(a.size() == want.size());
    CHECK(std::memcmp(a.data(), want.ptr(), a.size() * sizeof(float)) == 0);
}

TEST_CASE("trace policies name a later block's steps, globs and a model's head, and a name of no step is refused",
          "[shown-values]") {
    TempDir dir;
    const std::string stack = random_lesson(dir, "stack.json", {"--tokens", "5", "--d-model", "8", "--heads", "2",
                                                                "--d-ff", "8", "--blocks", "2", "--seed", "1"});
    for (const char* ok : {"blocks.1.attn.hook_pattern", "blocks.1.*"})
        CHECK(run_cli({"export", stack, "--trace", ok, "-o", dir.file("o.json")}).status == 0);
    const std::string model = source_dir() + "/tests/models/tiny-gpt2";
    for (const char* ok : {"unembed", "ln_final.hook_normalized"})
        CHECK(run_cli({"run", "--model", model, "--text", "the ring", "--trace", ok, "--steps", ok}).status == 0);
    const CliResult bad = run_cli({"run", stack, "--trace", "blocks.2.attn.hook_pattern"});
    CHECK(bad.status == 2);
    CHECK(bad.err.find("--trace") != std::string::npos);
    CHECK(bad.err.find("closest: ") != std::string::npos);
    CHECK(bad.err.find("blocks.1.attn.hook_pattern") != std::string::npos);
    CHECK(std::count(bad.err.begin(), bad.err.end(), '\n') == 1);
}

TEST_CASE("random --decoder writes a causal lesson unless --mask says otherwise", "[shown-values]") {
    TempDir dir;
    const json dec = json::parse(read_text(random_lesson(dir, "d.json", {"--decoder", "--tokens", "4"})));
    CHECK(dec["config"]["mask"] == "causal");
    const json open = json::parse(read_text(random_lesson(dir, "o.json", {"--decoder", "--mask", "none"})));
    CHECK(open["config"]["mask"] == "none");
    const json enc = json::parse(read_text(random_lesson(dir, "e.json", {"--tokens", "4"})));
    CHECK(enc["config"]["mask"] == "none");
}

}  // namespace test_shown_values

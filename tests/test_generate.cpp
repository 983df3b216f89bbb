// decode --generate: greedy generation with the KV cache on the tiny
// checkpoints, held to a loop independent of the cache: the whole `run
// --model` rerun on prompt + generated-so-far, its last row's argmax taken
// each time; and the refusals.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "decode/generate.hpp"
#include "evaluate/evaluate.hpp"
#include "core/memory.hpp"
#include "model/hf_model.hpp"
#include "pipeline/plan.hpp"
#include "support.hpp"

using namespace attntrace;
using namespace attntrace::test;

namespace test_generate {

namespace {

std::string model(const std::string& name) { return source_dir() + "/tests/models/" + name; }

ModelInput ids_input(const std::vector<std::int64_t>& ids) {
    ModelInput in;
    in.ids = ids;
    return in;
}

// The whole run over `ids` (no cache): its last row's logits (V).
std::vector<float> full_run_last_logits(const std::string& dir, const std::vector<std::int64_t>& ids) {
    HfModel m = load_hf_model(dir, ids_input(ids));
    auto e = evaluate(std::move(m.lesson));
    const Step* logits = e->exact.find("unembed");  // (T, V)
    REQUIRE(logits);
    const std::size_t V = logits->shape.at(1);
    return std::vector<float>(logits->held().ptr() + logits->held().size() - V, logits->held().ptr() + logits->held().size());
}

// The greedy choice: the largest logit, the lower id on a tie (as next_tokens orders).
std::int64_t argmax(const std::vector<float>& l) { return std::max_element(l.begin(), l.end()) - l.begin(); }

void check_against_full_runs(const std::string& name, const std::vector<std::int64_t>& prompt, std::size_t n) {
    INFO(name);
    HfModel m = load_hf_model(model(name), ids_input(prompt));
    const Generation g = generate(m, n, 3);
    REQUIRE(g.tokens.size() == n);
    CHECK(g.prompt == prompt);
    std::vector<std::int64_t> ids = prompt;
    double worst = 0;
    for (const GeneratedToken& t : g.tokens) {
        INFO("t = " << t.t);
        CHECK(t.t == ids.size());
        const std::vector<float> want = full_run_last_logits(model(name), ids);
        REQUIRE(t.logits.size() == want.size());
        for (std::size_t v = 0; v < want.size(); ++v) worst = std::max(worst, std::fabs(double(t.logits[v]) - want[v]));
        CHECK(t.chosen.id == argmax(want));
        CHECK(t.top.front().id == t.chosen.id);
        // its window: block 0's weights from its query over the cache (t + 1 keys), each row a distribution
        REQUIRE(t.window.pattern.shape.size() == 2);
        CHECK(t.window.pattern.shape[1] == t.t + 1);
        for (std::size_t h = 0; h < t.window.pattern.shape[0]; ++h) {
            double sum = 0;
            for (std::size_t j = 0; j <= t.t; ++j) sum += t.window.pattern.data[h * (t.t + 1) + j];
            CHECK(std::fabs(sum - 1) < 1e-5);
        }
        ids.push_back(argmax(want));  // the independent loop goes on with its own choice
    }
    INFO("max |Δ logit| " << worst);
    CHECK(worst <= kGenerateLogitTol);
    // Each window's block-0 weights are row t of the whole run's pattern over prompt + generated (keys <= t).
    HfModel whole = load_hf_model(model(name), ids_input(ids));
    auto e = evaluate(std::move(whole.lesson));
    const Tensor& P = e->exact.find("blocks.0.attn.hook_pattern")->held();  // (NH, T, T)
    const std::size_t NH = P.shape[0], T = P.shape[1];
    REQUIRE(T == prompt.size() + n);
    for (const GeneratedToken& t : g.tokens)
        for (std::size_t h = 0; h < NH; ++h)
            for (std::size_t j = 0; j <= t.t; ++j)
                CHECK(std::fabs(double(t.window.pattern.data[h * (t.t + 1) + j]) - P.data[(h * T + t.t) * T + j]) <= kDecodeTol);
}

std::string refusal(const std::string& dir, const std::vector<std::int64_t>& prompt, std::size_t n) {
    HfModel m = load_hf_model(dir, ids_input(prompt));
    try {
        generate(m, n, 3);
    } catch (const InputError& e) {
        return e.what();
    }
    return "(accepted)";
}

}  // namespace

TEST_CASE("decode --generate on tiny GPT-2 equals the greedy loop over whole runs, logits within kGenerateLogitTol") {
    check_against_full_runs("tiny-gpt2", {287, 262, 267}, 8);
}

TEST_CASE("decode --generate on tiny Llama equals the greedy loop over whole runs, logits within kGenerateLogitTol") {
    check_against_full_runs("tiny-llama", {1, 262, 265, 276}, 8);
}

TEST_CASE("decode --generate converts each weight once when --max-memory holds them all (W_E transposed too), else a "
          "block at a time per token; the same tokens and logits either way") {
    const std::vector<std::int64_t> prompt{287, 262, 267};
    constexpr std::size_t kNew = 4, kWindows = 3 + kNew;  // the prompt's windows, then one per generated token
    HfModel held = load_hf_model(model("tiny-gpt2"), ids_input(prompt));
    const Generation a = generate(held, kNew, 3);
    const WeightSource& hw = *held.lesson.weight_source;
    CHECK(hw.held_bytes() == 0);  // released at the end
    // every weight, and the tied unembedding's W_E transposed beside them
    REQUIRE(held.lesson.config.unembed_tied);
    CHECK(hw.peak_held_bytes() == hw.total_bytes() + held.lesson.inputs.at("embedding").size() * sizeof(float));
    // room for one block's weights beside the plan, not for all of them
    HfModel tight = load_hf_model(model("tiny-gpt2"), ids_input(prompt));
    const WeightSource& tw = *tight.lesson.weight_source;
    const std::size_t peak = make_plan(tight.lesson, TracePolicy{}, Arithmetic::exact, 1).peak_bytes;
    REQUIRE(tw.total_bytes() > tw.largest_group_bytes());
    set_max_memory(peak + (tw.total_bytes() - tw.largest_group_bytes()) / 2);
    const Generation b = generate(tight, kNew, 3);
    set_max_memory(0);
    CHECK(tw.peak_held_bytes() <= tw.largest_group_bytes());
    // each window converted every weight again: kWindows times the held decode's conversions
    CHECK(tw.loads() == kWindows * hw.loads());
    REQUIRE(a.tokens.size() == b.tokens.size());
    for (std::size_t i = 0; i < kNew; ++i) {
        CHECK(a.tokens[i].chosen.id == b.tokens[i].chosen.id);
        CHECK(a.tokens[i].logits == b.tokens[i].logits);  // the same sums, bit for bit (x·W_Eᵀ held, or W_E read by rows)
    }
}

TEST_CASE("decode --generate reads a f32 GPT-2's matrices in place (c_attn's three runs as one product per token): "
          "the same tokens and logits, bit for bit, as with every weight converted") {
    const std::vector<std::int64_t> prompt{287, 262, 267};
    constexpr std::size_t kNew = 4;
    HfModel in_place = load_hf_model(model("tiny-gpt2"), ids_input(prompt));
    HfModel converted = load_hf_model(model("tiny-gpt2"), ids_input(prompt));
    converted.lesson.weight_source->read_in_place(false);
    const Generation a = generate(in_place, kNew, 3);
    const Generation b = generate(converted, kNew, 3);
    CHECK(in_place.lesson.weight_source->loads() < converted.lesson.weight_source->loads());
    REQUIRE(a.tokens.size() == kNew);
    REQUIRE(b.tokens.size() == kNew);
    for (std::size_t i = 0; i < kNew; ++i) {
        CHECK(a.tokens[i].chosen.id == b.tokens[i].chosen.id);
        CHECK(a.tokens[i].logits == b.tokens[i].logits);
        // block 0's query, key and value of the new token: the fused product's columns, with their biases
        for (const auto& [x, y] : {std::pair{&a.tokens[i].window.q, &b.tokens[i].window.q},
                                   std::pair{&a.tokens[i].window.k, &b.tokens[i].window.k},
                                   std::pair{&a.tokens[i].window.v, &b.tokens[i].window.v}}) {
            REQUIRE(x->size() == y->size());
            REQUIRE(x->size() > 0);
            CHECK(std::memcmp(x->ptr(), y->ptr(), x->size() * sizeof(float)) == 0);
        }
    }
}

TEST_CASE("decode --generate's first token is PyTorch's argmax of the prompt's last logits (reference.json)") {
    for (const char* name : {"tiny-gpt2", "tiny-llama"}) {
        const auto ref = nlohmann::json::parse(read_text(model(name) + "/reference.json"));
        for (const auto& text : ref["texts"]) {
            const auto ids = text["ids"].get<std::vector<std::int64_t>>();
            const auto want = text["last_logits"].get<std::vector<double>>();
            HfModel m = load_hf_model(model(name), ids_input(ids));
            const Generation g = generate(m, 1, 1);
            CHECK(g.tokens.at(0).chosen.id == std::max_element(want.begin(), want.end()) - want.begin());
        }
    }
}

TEST_CASE("decode --generate decodes the prompt and what it generated to text with the folder's tokenizer") {
    for (const char* name : {"tiny-gpt2", "tiny-llama"}) {
        INFO(name);
        ModelInput in;
        in.text = "the ring fell";
        HfModel m = load_hf_model(model(name), in);
        const Generation g = generate(m, 4, 1);
        REQUIRE(m.tokenizer);
        std::vector<std::int64_t> all = g.prompt, generated;
        for (const GeneratedToken& t : g.tokens) generated.push_back(t.chosen.id);
        all.insert(all.end(), generated.begin(), generated.end());
        CHECK(g.decoded == m.tokenizer->decode(all));
        CHECK(g.continuation == m.tokenizer->decode(generated));
        // the prompt's own text comes back first (both tokenizers give its ids back as written)
        CHECK(g.decoded.rfind("the ring fell", 0) == 0);
        const CliResult r = run_cli({"decode", "--model", model(name), "--text", "the ring fell", "--generate", "4", "--top-k", "1"});
        REQUIRE(r.status == 0);
        CHECK_THAT(r.out, Catch::Contains("\ndecoded: the ring fell"));
    }
}

TEST_CASE("decode --generate refuses a model with no next token, a count out of range, and too many positions") {
    CHECK_THAT(refusal(model("tiny-bert"), {2, 10, 3}, 2), Catch::Contains("not causal"));
    CHECK_THAT(refusal(model("tiny-gpt2"), {287}, 0), Catch::Contains("from 1 to 1024"));
    CHECK_THAT(refusal(model("tiny-gpt2"), {287}, kMaxGenerate + 1), Catch::Contains("from 1 to 1024"));
    HfModel m = load_hf_model(model("tiny-gpt2"), ids_input({287}));
    CHECK_THAT(refusal(model("tiny-gpt2"), {287}, m.max_positions), Catch::Contains("n_positions"));
    HfModel l = load_hf_model(model("tiny-llama"), ids_input({1}));
    CHECK_THAT(refusal(model("tiny-llama"), {1}, l.max_positions), Catch::Contains("max_position_embeddings"));
}

TEST_CASE("attntrace decode --generate: the table, the JSON, and its refusals in one line, exit 2") {
    const std::string gpt2 = model("tiny-gpt2");
    const CliResult text = run_cli({"decode", "--model", gpt2, "--ids", "287,262,267", "--generate", "2", "--top-k", "2"});
    REQUIRE(text.status == 0);
    CHECK_THAT(text.out, Catch::Contains("rank  token"));
    CHECK_THAT(text.out, Catch::Contains("text: "));
    const CliResult js = run_cli({"decode", "--model", gpt2, "--ids", "287,262,267", "--generate", "2", "--json"});
    REQUIRE(js.status == 0);
    const auto j = nlohmann::json::parse(js.out);
    CHECK(j["format"] == "attntrace-generate");
    REQUIRE(j["generated"].size() == 2);
    // the JSON's ids are the library's (and those are held to the whole runs above)
    HfModel m = load_hf_model(gpt2, ids_input({287, 262, 267}));
    const Generation g = generate(m, 2, 10);
    for (std::size_t i = 0; i < 2; ++i) {
        CHECK(j["generated"][i]["id"] == g.tokens[i].chosen.id);
        CHECK(j["generated"][i]["top"].size() == 10);
    }
    CHECK(j["decoded"] == g.decoded);
    CHECK(j["continuation"] == g.continuation);
    auto refused = [](const std::vector<std::string>& args, const std::string& what) {
        const CliResult r = run_cli(args);
        INFO(r.err);
        CHECK(r.status == 2);
        CHECK_THAT(r.err, Catch::Contains(what));
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    };
    refused({"decode", "002-causal-decode", "--generate", "3"}, "--model");
    refused({"decode", "--model", model("tiny-bert"), "--text", "the ring fell", "--generate", "3"}, "not causal");
    refused({"decode", "--model", gpt2, "--ids", "287", "--generate", "64"}, "n_positions");
    refused({"decode", "--model", gpt2, "--ids", "287", "--generate", "0"}, "from 1 to 1024");
}

}  // namespace test_generate

// KV-cache decoding (decode/decode.hpp): a causal lesson run one token at a
// time over a growing cache equals the causal run row by row, and the
// comparison catches a run that does not (a changed weight, a weight on a
// later token). The CLI end to end: decode, and check's decode line.
#include <catch2/catch.hpp>
#include <cmath>
#include <nlohmann/json.hpp>

#include "evaluate/evaluate.hpp"
#include "decode/decode.hpp"
#include "support.hpp"

using namespace attntrace;
using attntrace::test::run_cli;

namespace test_decode {

namespace {

std::unique_ptr<Evaluation> lesson_eval(const std::string& id) {
    return evaluate(read_lesson(attntrace::test::lessons_dir() + "/" + id + ".json"));
}

// A causal lesson of T tokens with generated X and weights.
std::unique_ptr<Evaluation> random_causal(std::size_t T, std::size_t C, std::size_t NH) {
    nlohmann::json tokens = nlohmann::json::array();
    for (std::size_t i = 0; i < T; ++i) tokens.push_back("t" + std::to_string(i));
    nlohmann::json doc = {{"format", "attntrace-lesson"}, {"version", 1}, {"id", "decode-random"},
                          {"title", "random"}, {"source", {{"document", "test"}}}, {"tokens", tokens},
                          {"config", {{"d_model", C}, {"heads", NH}, {"mask", "causal"}}},
                          {"run", {{"from", "embed"}, {"to", "mix"}}},
                          {"inputs", {{"X", {{"generate", "normal"}, {"seed", 11}}}}},
                          {"weights_seed", 12}};
    return evaluate(parse_lesson(doc.dump(), "random.json"));
}

}  // namespace

TEST_CASE("decoding 002's causal lesson with a KV cache gives each row of the causal run", "[decode]") {
    auto e = lesson_eval("002-causal-decode");
    DecodeReport r = decode_lesson(e->lesson, e->exact);
    REQUIRE(r.applicable);
    REQUIRE(r.steps.size() == 4);
    for (const auto& s : r.steps) {
        INFO("t = " << s.t);
        CHECK(s.pattern.shape == Shape{2, s.t + 1});  // the cache holds t + 1 tokens: nothing to mask
        CHECK(s.z.shape == Shape{2, 2});
        for (std::size_t h = 0; h < 2; ++h) {
            double sum = 0;
            for (std::size_t j = 0; j <= s.t; ++j) sum += s.pattern.data[h * (s.t + 1) + j];
            CHECK(sum == Approx(1.0).epsilon(1e-6));
        }
        CHECK(s.future_weight == 0.0);
    }
    // The first token has only itself: weight 1, z = v.
    CHECK(r.steps[0].pattern.data[0] == 1.0f);
    CHECK(r.steps[0].z.data[0] == r.steps[0].v.data[0]);
    CHECK(r.cache_floats == 2 * 4 * 2 * 2);
    CHECK(r.max_dev <= kDecodeTol);
    CHECK(r.matches());
}

TEST_CASE("decoding a 48-token random causal lesson matches the causal run within the tolerance", "[decode]") {
    auto e = random_causal(48, 64, 4);
    DecodeReport r = decode_lesson(e->lesson, e->exact);
    REQUIRE(r.applicable);
    CHECK(r.steps.size() == 48);
    INFO("max deviation " << r.max_dev);
    CHECK(r.max_dev <= kDecodeTol);
    CHECK(r.matches());
}

TEST_CASE("the decode comparison catches a causal run that differs", "[decode]") {
    auto e = lesson_eval("002-causal-decode");
    Step* A = e->exact.find("blocks.0.attn.hook_pattern");
    REQUIRE(A);
    SECTION("a weight changed by 1e-3") {
        A->buffer().data[1 * 4 + 0] += 1e-3f;  // head 0, query "cat", key "the"
        DecodeReport r = decode_lesson(e->lesson, e->exact);
        CHECK(r.steps[1].dev_pattern == Approx(1e-3).margin(1e-6));
        CHECK(!r.matches());
    }
    SECTION("a weight on a later token") {
        A->buffer().data[0 * 4 + 2] = 0.25f;  // head 0, query "the", key "sat"
        DecodeReport r = decode_lesson(e->lesson, e->exact);
        CHECK(r.steps[0].future_weight == 0.25);
        CHECK(!r.matches());
    }
}

TEST_CASE("decoding does not apply to lessons without causal self-attention, and says why", "[decode]") {
    auto full = lesson_eval("003-3.1-ring-fell");
    DecodeReport r = decode_lesson(full->lesson, full->exact);
    CHECK(!r.applicable);
    CHECK(r.why_not.find("not causal") != std::string::npos);
    CHECK(!r.matches());
    auto part = lesson_eval("004-causal-mask-example");  // causal, but only mask .. softmax from the article's scores
    DecodeReport g = decode_lesson(part->lesson, part->exact);
    CHECK(!g.applicable);
    CHECK(g.why_not.find("from qkv") != std::string::npos);
}

TEST_CASE("attntrace decode prints each step and its JSON holds the cache's growth", "[decode][cli]") {
    auto text = run_cli({"decode", "002-causal-decode"});
    INFO(text.err);
    REQUIRE(text.status == 0);
    CHECK(text.out.find("t = 3 \"down\"  cache: 4 tokens") != std::string::npos);
    CHECK(text.out.find("matches: 4 steps") != std::string::npos);
    auto js = run_cli({"decode", "002-causal-decode", "--json"});
    REQUIRE(js.status == 0);
    auto doc = nlohmann::json::parse(js.out);
    CHECK(doc["format"] == "attntrace-decode");
    CHECK(doc["matches"] == true);
    REQUIRE(doc["steps"].size() == 4);
    for (std::size_t t = 0; t < 4; ++t) {
        CHECK(doc["steps"][t]["pattern"][0].size() == t + 1);
        CHECK(doc["steps"][t]["k"].size() == 2);
    }
}

TEST_CASE("attntrace decode refuses a lesson it cannot decode in one line, and check reports the decode", "[decode][cli]") {
    auto r = run_cli({"decode", "003-3.1-ring-fell"});
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(r.err.find("003-3.1-ring-fell.json") != std::string::npos);
    CHECK(r.err.find("not causal") != std::string::npos);
    auto c = run_cli({"check", "002-causal-decode"});
    CHECK(c.status == 0);
    CHECK(c.out.find("kv-cache decode    matches") != std::string::npos);
    auto j = run_cli({"check", "002-causal-decode", "--format", "json"});
    REQUIRE(j.status == 0);
    auto doc = nlohmann::json::parse(j.out);
    CHECK(doc["lessons"][0]["decode"]["matches"] == true);
}

TEST_CASE("decoding with RoPE, ALiBi and grouped-query heads matches the causal run too", "[decode]") {
    // The shipped RoPE and GQA lessons made causal: the cache holds rotated keys
    // (RoPE) and KVH heads (GQA); ALiBi's lesson is causal already.
    for (const char* id : {"001-positions-rope", "000-rope-relative-positions", "002-gqa-groups", "001-positions-alibi"}) {
        INFO(id);
        auto doc = nlohmann::json::parse(attntrace::test::read_text(attntrace::test::lessons_dir() + "/" + id + ".json"));
        doc["config"]["mask"] = "causal";
        doc.erase("claims");  // claims about the unmasked run
        auto e = evaluate(parse_lesson(doc.dump(), std::string(id) + ".json"));
        DecodeReport r = decode_lesson(e->lesson, e->exact);
        REQUIRE(r.applicable);
        CHECK(r.steps.size() == e->lesson.tokens.size());
        CHECK(r.max_dev <= kDecodeTol);
        CHECK(r.matches());
        const std::size_t kvh = e->exact.find("blocks.0.attn.hook_k")->shape[1];
        CHECK(r.steps.back().k.shape[0] == kvh);
    }
}

namespace {

// A random model lesson (RandomSpec as `attntrace random` makes it).
std::unique_ptr<Evaluation> random_model(const nlohmann::json& config, bool decoder) {
    nlohmann::json tokens = nlohmann::json::array(), memory = nlohmann::json::array();
    for (int i = 0; i < 9; ++i) tokens.push_back("t" + std::to_string(i));
    for (int i = 0; i < 5; ++i) memory.push_back("m" + std::to_string(i));
    nlohmann::json doc = {{"format", "attntrace-lesson"}, {"version", 1}, {"id", "decode-model"}, {"title", "model"},
                          {"source", {{"document", "test"}}}, {"tokens", tokens}, {"config", config},
                          {"inputs", {{"X", {{"generate", "normal"}, {"seed", 21}}}}}, {"weights_seed", 22}};
    if (decoder) {
        doc["memory_tokens"] = memory;
        doc["inputs"]["memory"] = {{"generate", "normal"}, {"seed", 23}};
    }
    return evaluate(parse_lesson(doc.dump(), "model.json"));
}

}  // namespace

TEST_CASE("decoding heads of their own widths (d_k, d_v) with GQA and RoPE matches the causal run", "[decode][widths]") {
    // 3 query heads of width 4 on d_model 10, sharing one K/V head; values 6 wide
    auto e = random_model({{"d_model", 10}, {"heads", 3}, {"kv_heads", 1}, {"d_k", 4}, {"d_v", 6}, {"d_ff", 12},
                           {"mask", "causal"}, {"blocks", 2}, {"norm_first", true},
                           {"positions", {{"kind", "rope"}, {"layout", "half"}}}},
                          false);
    DecodeReport r = decode_lesson(e->lesson, e->exact);
    REQUIRE(r.applicable);
    CHECK(r.max_dev <= kDecodeTol);
    CHECK(r.matches());
    CHECK(r.steps.back().k.shape == Shape{1, 4});
    CHECK(r.steps.back().v.shape == Shape{1, 6});
    CHECK(r.steps.back().z.shape == Shape{3, 6});
}

TEST_CASE("stacks, pre-norm and decoder blocks decode with a cache per attention, every row held to the run's", "[decode]") {
    SECTION("a causal pre-norm stack of 3 (a decoder-only LLM), RoPE and GQA") {
        auto e = random_model({{"d_model", 16}, {"heads", 4}, {"kv_heads", 2}, {"d_ff", 24}, {"mask", "causal"},
                               {"blocks", 3}, {"norm_first", true}, {"activation", "gelu"},
                               {"positions", {{"kind", "rope"}, {"layout", "half"}}}},
                              false);
        DecodeReport r = decode_lesson(e->lesson, e->exact);
        REQUIRE(r.applicable);
        CHECK(r.matches());
        CHECK(r.attentions == 3);
        CHECK(r.through == "blocks.2.hook_resid_post");  // the model's output: every pass decoded
        CHECK(r.cache_floats == 3 * 2 * 9 * 2 * 4);      // per block: K and V, T x KVH x hs
        for (const DecodeStep& s : r.steps) CHECK(s.dev_rows <= kDecodeTol);
    }
    SECTION("post-norm decoder blocks: cross-attention over the memory, projected once") {
        auto e = random_model({{"d_model", 16}, {"heads", 2}, {"d_ff", 24}, {"block", "decoder"}, {"blocks", 2},
                               {"activation", "swiglu"}, {"norm", "rmsnorm"}},
                              true);
        DecodeReport r = decode_lesson(e->lesson, e->exact);
        REQUIRE(r.applicable);
        CHECK(r.matches());
        CHECK(r.attentions == 4);
        CHECK(r.through == "blocks.1.ln3.hook_normalized");
        CHECK(r.cache_floats == 2 * (2 * 9 * 16) + 2 * (2 * 5 * 16));  // 2 self caches of T rows, 2 cross of S rows
    }
}

TEST_CASE("the model decode catches a later block's row that differs", "[decode]") {
    auto e = random_model({{"d_model", 16}, {"heads", 2}, {"d_ff", 24}, {"mask", "causal"}, {"blocks", 2}}, false);
    SECTION("block 1's FFN output") {
        Tensor& out = e->exact.find("blocks.1.hook_mlp_out")->buffer();
        out.data[3 * 16 + 5] += 1e-3f;  // token t3, d5
        double scale = 1;  // the compared row's scale, max(1, max |x|): deviations are in its units (kDecodeTol)
        for (std::size_t d = 0; d < 16; ++d) scale = std::max(scale, double(std::fabs(out.data[3 * 16 + d])));
        DecodeReport r = decode_lesson(e->lesson, e->exact);
        CHECK(r.steps[3].dev_rows == Approx(1e-3 / scale).margin(1e-5));
        CHECK(r.steps[2].dev_rows <= kDecodeTol);
        CHECK(!r.matches());
    }
    SECTION("block 1's attention weights") {
        e->exact.find("blocks.1.attn.hook_pattern")->buffer().data[(1 * 9 + 4) * 9 + 2] += 1e-3f;  // h1, query t4, key t2
        DecodeReport r = decode_lesson(e->lesson, e->exact);
        CHECK(r.steps[4].dev_pattern == Approx(1e-3).margin(1e-5));
        CHECK(!r.matches());
    }
}

TEST_CASE("decode's tolerance scales with the values: a pre-norm stack on inputs x100 matches", "[decode]") {
    // X ~ N(0, 100²): LayerNorm's variances near 10^4, where one float32 ulp is ~1e-3. The decode's
    // norm statistics of one row and the full run's rows summed side by side may differ by an ulp:
    // within kDecodeTol of the step's scale, beyond 1e-5 absolute.
    attntrace::test::TempDir dir;
    REQUIRE(run_cli({"random", "--tokens", "24", "--d-model", "64", "--heads", "4", "--d-ff", "96", "--blocks", "2",
                     "--norm-first", "--mask", "causal", "--seed", "9", "-o", dir.file("l.json")})
                .status == 0);
    nlohmann::json j = nlohmann::json::parse(attntrace::test::read_text(dir.file("l.json")));
    j["inputs"]["X"]["std"] = 100.0;
    attntrace::test::write_text(dir.file("x100.json"), j.dump());
    const auto e = evaluate(read_lesson(dir.file("x100.json")));
    const DecodeReport r = decode_lesson(e->lesson, e->exact);
    REQUIRE(r.applicable);
    INFO("max deviation in units of each step's scale " << r.max_dev);
    CHECK(r.matches());
    // the variances are that large: an absolute 1e-5 would be a fraction of one of their ulps
    double var = 0;
    for (float v : e->exact.find("blocks.0.ln1.hook_var")->held().data) var = std::max(var, double(v));
    CHECK(var > 1e3);
    // a deviation of 1e-4 of a step's scale is still refused
    e->exact.find("blocks.1.ln1.hook_var")->buffer().data[5] *= 1.0f + 1e-4f;
    CHECK_FALSE(decode_lesson(e->lesson, e->exact).matches());
}

}  // namespace test_decode

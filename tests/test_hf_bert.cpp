// BERT checkpoints: the mapping (embeddings and their LayerNorm, post-norm
// blocks, nn.Linear weights transposed), the WordPiece tokenizer and
// `run --model`, held to the float64 forward of PyTorch that
// tests/models/make_tiny_models.py --bert saved beside tiny-bert
// (reference.json) and to the ids Hugging Face's JavaScript tokenizer gave
// (tokenizer-cases.json); the refusals of broken folders; and a lesson that
// uses the embeddings' norm and token type table without a checkpoint.
#include <catch2/catch.hpp>
#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validator.hpp>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "model_reference.hpp"
#include "evaluate/evaluate.hpp"
#include "model/hf_model.hpp"
#include "model/wordpiece.hpp"
#include "pipeline/plan.hpp"
#include "support.hpp"

using namespace attntrace;
using namespace attntrace::test;

namespace test_hf_bert {
namespace fs = std::filesystem;

namespace {

// float32 against the float64 forward, values of unit scale (every one is a
// LayerNorm's output, or a softmax weight): LayerNorm divides by σ of 32
// values summed in float32, a few ulps of 1 each; two blocks of sums over
// 32..64 products carry ~1e-6 relative each. Measured worst (docs/models.md):
// 4.1e-7, 1.5e-6 and 2.9e-6; each bound is ~10x that, room for another
// summation order (the scalar build, another SIMD width), not for a wrong term.
constexpr double kEmbedLnTol = 5e-6;  // one LayerNorm of a sum of three table rows
constexpr double kPatternTol = 1.5e-5;  // softmax of scores up to ~10: exp keeps ~7 digits
constexpr double kBlockTol = 3e-5;    // a block's output, after 4 matrix products and 2 LayerNorms each

std::string tiny_bert() { return source_dir() + "/tests/models/tiny-bert"; }

const nlohmann::json& reference() {
    static const nlohmann::json r = nlohmann::json::parse(read_text(tiny_bert() + "/reference.json"));
    return r;
}

std::vector<std::int64_t> ids_of(const nlohmann::json& ids) {
    std::vector<std::int64_t> out;
    for (const auto& i : ids) out.push_back(i.get<std::int64_t>());
    return out;
}


// Whether `doc` validates against docs/trace.schema.json.
bool valid_trace(const nlohmann::json& doc) {
    static valijson::Schema schema;
    static bool loaded = false;
    if (!loaded) {
        const auto s = nlohmann::json::parse(read_text(source_dir() + "/docs/trace.schema.json"));
        valijson::SchemaParser parser;
        valijson::adapters::NlohmannJsonAdapter adapter(s);
        parser.populateSchema(adapter, schema);
        loaded = true;
    }
    valijson::Validator validator;
    valijson::adapters::NlohmannJsonAdapter adapter(doc);
    return validator.validate(schema, adapter, nullptr);
}

std::string refusal(const std::vector<std::string>& args) {
    const auto r = run_cli(args);
    CHECK(r.status == 2);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);  // one line
    return r.err;
}

}  // namespace

TEST_CASE("a tiny BERT checkpoint computes PyTorch's float64 forward: the embeddings' LayerNorm, the patterns, each block's output") {
    for (const auto& text : reference()["texts"]) {
        INFO(text["text"].get<std::string>());
        ModelInput in;
        in.text = text["text"].get<std::string>();
        HfModel m = load_hf_model(tiny_bert(), in);
        // the ids of our WordPiece are those of the script's own (BERT's tokenization.py, in Python)
        REQUIRE(m.lesson.token_ids == ids_of(text["ids"]));
        CHECK(m.lesson.config.arch.embed_norm);
        CHECK_FALSE(m.lesson.config.arch.norm_first);
        auto e = evaluate(std::move(m.lesson));
        CHECK(max_abs_diff(e->exact.find("embed.ln.hook_normalized")->held(), flat(text["embed.ln.hook_normalized"])) < kEmbedLnTol);
        for (const char* step : {"blocks.0.attn.hook_pattern", "blocks.1.attn.hook_pattern"}) {
            INFO(step);
            CHECK(max_abs_diff(e->exact.find(step)->held(), flat(text[step])) < kPatternTol);
        }
        for (const char* step : {"blocks.0.ln1.hook_normalized", "blocks.0.ln2.hook_normalized", "blocks.1.ln2.hook_normalized"}) {
            INFO(step);
            CHECK(max_abs_diff(e->exact.find(step)->held(), flat(text[step])) < kBlockTol);
        }
        // the model's output is the last block's
        const Catalogue& cat = e->lesson.catalogue();
        CHECK(cat.at(cat.passes().back().out).name == "blocks.1.ln2.hook_normalized");
        CHECK(!e->exact.find("unembed"));
    }
}

TEST_CASE("WordPiece gives the ids Hugging Face's JavaScript tokenizer gave for hard strings, from tokenizer.json and from vocab.txt") {
    // tokenizer-cases.json: made once by tests/models/tokenizer_ids_bert.mjs with @huggingface/transformers
    const auto cases = nlohmann::json::parse(read_text(tiny_bert() + "/tokenizer-cases.json"));
    const auto tj = WordPiece::open(tiny_bert());
    REQUIRE(tj);
    TempDir d;
    fs::copy_file(tiny_bert() + "/vocab.txt", d.file("vocab.txt"));
    fs::copy_file(tiny_bert() + "/tokenizer_config.json", d.file("tokenizer_config.json"));
    const auto vt = WordPiece::open(d.path());
    REQUIRE(vt);
    REQUIRE(cases["cases"].size() >= 15);
    for (const auto& c : cases["cases"]) {
        INFO(c["text"].get<std::string>());
        const auto want = ids_of(c["ids"]);
        CHECK(tj->encode(c["text"], "--text") == want);
        CHECK(vt->encode(c["text"], "--text") == want);
    }
    // pieces as the vocabulary spells them: the continuation's ## shown
    const auto ids = tj->encode("Playing", "--text");
    REQUIRE(ids.size() == 3);
    CHECK(tj->piece(ids[0]) == "[CLS]");
    CHECK(tj->piece(ids[1]) == "playing");
    CHECK(tj->piece(tj->encode("ringer", "--text")[2]) == "##er");
    // do_lower_case false: upper case is kept, and this vocabulary has no "T": [UNK]
    write_text(d.file("tokenizer_config.json"), R"({"do_lower_case": false})");
    const auto cased = WordPiece::open(d.path());
    REQUIRE(cased);
    CHECK(cased->encode("The", "--text") == std::vector<std::int64_t>{2, 1, 3});
}

TEST_CASE("run --model on a BERT folder: pieces as tokens, the embeddings' norm a step, the last block's output as the model's") {
    const auto& text = reference()["texts"][1];
    auto r = run_cli({"run", "--model", tiny_bert(), "--text", text["text"], "--json"});
    REQUIRE(r.status == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["tokens"] == nlohmann::json({"[CLS]", "the", "king", "'", "s", "rings", "fell", ",", "and", "fell", "again", "!", "[SEP]"}));
    CHECK(j["model"]["output"].get<std::string>().find("blocks.1.ln2.hook_normalized") != std::string::npos);
    bool found = false;
    for (const auto& s : j["steps"])
        if (s["name"] == "blocks.1.ln2.hook_normalized") {
            const std::vector<double> got = flat(s["values"]), want = flat(text["blocks.1.ln2.hook_normalized"]);
            REQUIRE(got.size() == want.size());
            for (std::size_t i = 0; i < got.size(); ++i) CHECK(std::abs(got[i] - want[i]) < kBlockTol);
            found = true;
        }
    CHECK(found);
    r = run_cli({"run", "--model", tiny_bert(), "--text", "the ring fell", "--steps", "hook_token_type_embed"});
    REQUIRE(r.status == 0);
    CHECK(r.out.find("── the output: blocks.1.ln2.hook_normalized") != std::string::npos);
    CHECK(r.out.find("Not causal: no next-token table") != std::string::npos);
    CHECK(r.out.find("next token") == std::string::npos);
    // explain recomputes the embeddings' sum, the norm of it, and block 0's queries read from it
    r = run_cli({"explain", "--model", tiny_bert(), "--text", "the ring fell", "blocks.0.hook_resid_pre[ring,d3]",
                 "embed.ln.hook_normalized[ring,d3]", "hook_token_type_embed[fell,d0]"});
    REQUIRE(r.status == 0);
    CHECK(r.out.find("X = (E + TT) + PE") != std::string::npos);
    CHECK(r.out.find("✓ (the same)") != std::string::npos);
    CHECK(r.out.find("✗") == std::string::npos);
    // the exported trace, with its embed.ln.* and hook_token_type_embed steps, is a valid trace
    TempDir d;
    REQUIRE(run_cli({"export", "--model", tiny_bert(), "--text", "the ring fell", "-o", d.file("t.json")}).status == 0);
    CHECK(valid_trace(nlohmann::json::parse(read_text(d.file("t.json")))));
}

TEST_CASE("a BERT checkpoint's block weights are converted when their block runs and released after it: one block held at a time") {
    HfModel m = load_hf_model(tiny_bert(), ids_input(reference()["texts"][0]["ids"]));
    const std::shared_ptr<WeightSource> src = m.lesson.weight_source;
    REQUIRE(src);
    // held throughout: the embeddings' LayerNorm (and the three tables, inputs); no block's weight
    CHECK(m.lesson.weights.size() == 2);
    CHECK(m.lesson.weights.count("embed_ln_gamma") == 1);
    CHECK(m.lesson.weights.count("blocks.0.W_Q") == 0);
    CHECK(src->provides("blocks.1.W_2"));
    CHECK(src->loads() == 0);  // nothing of the blocks converted while the folder was read
    // one block's float32 values (C 32, F 64): query, key, value and output 32x32 with their biases,
    // intermediate 64x32 and its bias, output 32x64 and its bias, two LayerNorms' γ and β
    const std::size_t block = (4 * 32 * 32 + 4 * 32 + 64 * 32 + 64 + 32 * 64 + 32 + 4 * 32) * sizeof(float);
    CHECK(src->largest_group_bytes() == block);
    // the plan counts one block among what the run holds, not the two
    const Plan with = make_plan(m.lesson, TracePolicy{}, Arithmetic::exact, 1);
    Lesson without_source = m.lesson;
    without_source.weight_source.reset();
    CHECK(with.lesson_bytes == make_plan(without_source, TracePolicy{}, Arithmetic::exact, 1).lesson_bytes + block);
    // transposed as they are converted: the lesson's d_in x d_out
    CHECK(m.lesson.weight("blocks.1.W_1")->shape == Shape{32, 64});
    CHECK(m.lesson.weight("blocks.1.W_2")->shape == Shape{64, 32});
    CHECK(src->loads() == 2);
    src->release_all();
    const std::size_t before = src->loads();
    auto e = evaluate(std::move(m.lesson));
    CHECK(src->peak_held_bytes() == block);     // never two blocks at once
    CHECK(src->held_bytes() == 0);              // all released at the run's end
    // each of the 2 blocks' 10 vectors converted once; its 6 float32 matrices read in place from the mapped file
    CHECK(src->loads() - before == 2 * 10);
    // and the run is still PyTorch's
    const auto& text = reference()["texts"][0];
    CHECK(max_abs_diff(e->exact.find("blocks.1.ln2.hook_normalized")->held(), flat(text["blocks.1.ln2.hook_normalized"])) < kBlockTol);
}

TEST_CASE("a BERT folder under --blocks: the chosen block traced, the other run untraced, the output PyTorch's") {
    const auto& text = reference()["texts"][2];
    TempDir d;
    auto r = run_cli({"export", "--model", tiny_bert(), "--text", text["text"], "--blocks", "0", "-o", d.file("t.json")});
    REQUIRE(r.status == 0);
    const auto j = nlohmann::json::parse(read_text(d.file("t.json")));
    std::size_t block0 = 0, block1 = 0;
    std::vector<double> out, pattern0;
    for (const auto& s : j["steps"]) {
        const std::string name = s["name"];
        block0 += name.rfind("blocks.0.", 0) == 0;
        block1 += name.rfind("blocks.1.", 0) == 0;
        if (name == "blocks.0.attn.hook_pattern") pattern0 = flat(s["values"]);
        if (name == "blocks.1.ln2.hook_normalized") out = flat(s["values"]);
    }
    CHECK(block0 > 20);
    CHECK(block1 == 1);  // only the run's output, kept whatever the policy
    const std::vector<double> want_pattern = flat(text["blocks.0.attn.hook_pattern"]), want_out = flat(text["blocks.1.ln2.hook_normalized"]);
    REQUIRE(pattern0.size() == want_pattern.size());
    for (std::size_t i = 0; i < want_pattern.size(); ++i) CHECK(std::abs(pattern0[i] - want_pattern[i]) < kPatternTol);
    REQUIRE(out.size() == want_out.size());
    for (std::size_t i = 0; i < want_out.size(); ++i) CHECK(std::abs(out[i] - want_out[i]) < kBlockTol);
    // under --trace summary with block 1 chosen: nothing of block 0, and the embeddings' norm is no block's
    r = run_cli({"run", "--model", tiny_bert(), "--text", text["text"], "--blocks", "1", "--trace", "summary", "--json"});
    REQUIRE(r.status == 0);
    const auto run = nlohmann::json::parse(r.out);
    bool block1_pattern = false;
    for (const auto& s : run["steps"]) {
        const std::string name = s["name"];
        CHECK(name.rfind("blocks.0.", 0) != 0);
        block1_pattern = block1_pattern || name == "blocks.1.attn.hook_pattern";
    }
    CHECK(block1_pattern);
    CHECK(refusal({"run", "--model", tiny_bert(), "--ids", "2,3", "--blocks", "2"})
              .rfind("attntrace: error: --blocks: expected block numbers from 0 to 1 (the model has 2 blocks)", 0) == 0);
}

TEST_CASE("a lesson uses the embeddings' LayerNorm and a token type table (config.embed_norm, inputs.token_types)") {
    nlohmann::json doc = {{"format", "attntrace-lesson"}, {"version", 1}, {"id", "embed-norm"}, {"title", "embed norm"},
                          {"source", {{"document", "test"}}}, {"tokens", {"a", "b", "c"}}, {"token_ids", {0, 2, 1}},
                          {"config", {{"d_model", 4}, {"heads", 2}, {"embed_norm", true}, {"positions", "learned"}}},
                          {"inputs", {{"embedding", {{"generate", "normal"}, {"seed", 1}}},
                                      {"positions", {{"generate", "normal"}, {"seed", 2}}},
                                      {"token_types", {{"generate", "normal"}, {"seed", 3}}}}},
                          {"weights_seed", 4},
                          {"weights", {{"embed_ln_gamma", {1.5, 0.5, 2, 1}}, {"embed_ln_beta", {0.1, -0.2, 0.3, 0}}}}};
    auto e = evaluate(parse_lesson(doc.dump(), "embed-norm.json"));
    const Lesson& l = e->lesson;
    const Tensor& W_E = l.inputs.at("embedding");
    const Tensor& P = l.inputs.at("positions");
    const Tensor& TT = l.inputs.at("token_types");
    const Tensor& out = e->exact.find("embed.ln.hook_normalized")->held();
    const double gamma[] = {1.5, 0.5, 2, 1}, beta[] = {0.1, -0.2, 0.3, 0};
    // LN(E + TT[0] + PE) in double, per token: the reference for the float32 pipeline
    for (std::size_t t = 0; t < 3; ++t) {
        double x[4], mean = 0, var = 0;
        for (std::size_t c = 0; c < 4; ++c) {
            x[c] = double(W_E.data[std::size_t(l.token_ids[t]) * 4 + c]) + TT.data[c] + P.data[t * 4 + c];
            mean += x[c] / 4;
        }
        for (double v : x) var += (v - mean) * (v - mean) / 4;
        for (std::size_t c = 0; c < 4; ++c)
            CHECK(out.data[t * 4 + c] == Approx((x[c] - mean) / std::sqrt(var + 1e-5) * gamma[c] + beta[c]).margin(kEmbedLnTol));
    }
    // block 0's queries read the norm's output, not the sum
    CHECK(l.catalogue().at(l.catalogue().passes()[2].x).name == "embed.ln.hook_normalized");
    // without positions: X = E + TT, still computed (and normalised)
    doc["config"].erase("positions");
    doc["inputs"].erase("positions");
    auto np = evaluate(parse_lesson(doc.dump(), "embed-norm.json"));
    const Tensor& X = np->exact.find("blocks.0.hook_resid_pre")->held();
    REQUIRE(X.size() == 12);
    for (std::size_t t = 0; t < 3; ++t)
        for (std::size_t c = 0; c < 4; ++c)
            CHECK(X.data[t * 4 + c] == W_E.data[std::size_t(l.token_ids[t]) * 4 + c] + TT.data[c]);
    CHECK(np->exact.find("embed.ln.hook_normalized")->held().size() == 12);
    // the norm's weights only with config.embed_norm
    doc["config"].erase("embed_norm");
    CHECK_THROWS_WITH(parse_lesson(doc.dump(), "embed-norm.json"),
                      Catch::Contains("weights.embed_ln_gamma: expected a weight this config uses"));
}

TEST_CASE("broken BERT folders are refused with exit 2, one line naming the file and the tensor, field or line") {
    {  // a missing tensor: the checkpoint of a one-block model under a two-block config
        TempDir d;
        copy_model(tiny_bert(), d);
        auto cfg = nlohmann::json::parse(read_text(d.file("config.json")));
        cfg["num_hidden_layers"] = 3;
        write_text(d.file("config.json"), cfg.dump());
        CHECK(refusal({"run", "--model", d.path(), "--ids", "2,3"}).find(
                  "model.safetensors: bert.encoder.layer.2.attention.self.query.weight: expected a tensor") != std::string::npos);
    }
    {  // a tensor of the wrong shape for the config
        TempDir d;
        copy_model(tiny_bert(), d);
        auto cfg = nlohmann::json::parse(read_text(d.file("config.json")));
        cfg["intermediate_size"] = 128;
        write_text(d.file("config.json"), cfg.dump());
        CHECK(refusal({"run", "--model", d.path(), "--ids", "2,3"}).find(
                  "bert.encoder.layer.0.intermediate.dense.weight: expected a 128x32 tensor") != std::string::npos);
    }
    {  // an activation this mapping does not compute, named
        TempDir d;
        copy_model(tiny_bert(), d);
        auto cfg = nlohmann::json::parse(read_text(d.file("config.json")));
        cfg["hidden_act"] = "gelu_new";
        write_text(d.file("config.json"), cfg.dump());
        CHECK(refusal({"run", "--model", d.path(), "--ids", "2,3"}).find(
                  "config.json: hidden_act: expected \"gelu\" (GELU with erf, the activation BERT is published with), found string \"gelu_new\"") != std::string::npos);
    }
    {  // vocab.txt: an empty line, a piece twice, no [UNK]
        TempDir d;
        for (const char* f : {"config.json", "model.safetensors", "tokenizer_config.json"}) fs::copy_file(tiny_bert() + "/" + f, d.file(f));
        const std::string vocab = read_text(tiny_bert() + "/vocab.txt");
        write_text(d.file("vocab.txt"), "[PAD]\n\n" + vocab.substr(vocab.find('\n') + 1));
        CHECK(refusal({"run", "--model", d.path(), "--text", "the"}).find("vocab.txt: line 2: expected one piece a line (its id is the line's number from 0), found an empty line") != std::string::npos);
        write_text(d.file("vocab.txt"), vocab + "the\n");
        CHECK(refusal({"run", "--model", d.path(), "--text", "the"}).find("vocab.txt: line 265: expected each piece once, found \"the\" again") != std::string::npos);
        std::string no_unk = vocab;
        no_unk.replace(no_unk.find("[UNK]"), 5, "[UNKNOWN]");
        write_text(d.file("vocab.txt"), no_unk);
        CHECK(refusal({"run", "--model", d.path(), "--text", "the"}).find("vocab.txt: expected the unknown token [UNK] in the vocabulary") != std::string::npos);
    }
    {  // tokenizer.json: an unk_token missing from the vocabulary, a normalizer we do not compute
        TempDir d;
        copy_model(tiny_bert(), d);
        auto tok = nlohmann::json::parse(read_text(d.file("tokenizer.json")));
        tok["model"]["unk_token"] = "<unk>";
        write_text(d.file("tokenizer.json"), tok.dump());
        CHECK(refusal({"run", "--model", d.path(), "--ids", "2,3"}).find("tokenizer.json: model.unk_token: expected a token of model.vocab, found \"<unk>\", not in it") != std::string::npos);
        tok["model"]["unk_token"] = "[UNK]";
        tok["normalizer"] = {{"type", "NFKC"}};
        write_text(d.file("tokenizer.json"), tok.dump());
        CHECK(refusal({"run", "--model", d.path(), "--ids", "2,3"}).find("tokenizer.json: normalizer.type: expected \"BertNormalizer\" or a null normalizer, found string \"NFKC\"") != std::string::npos);
    }
    {  // an eps float32 cannot hold: config.json's field, before any step
        TempDir d;
        copy_model(tiny_bert(), d);
        auto cfg = nlohmann::json::parse(read_text(d.file("config.json")));
        cfg["layer_norm_eps"] = 1e308;
        write_text(d.file("config.json"), cfg.dump());
        CHECK(refusal({"run", "--model", d.path(), "--ids", "2,3"}).find(
                  "config.json: layer_norm_eps: expected a number from 1e-30 to 1 (the norm's eps, added in float32), found 1e+308") != std::string::npos);
    }
    {  // tokenizer.json: two pieces of one id (vocab.txt cannot: a piece's id is its line)
        TempDir d;
        copy_model(tiny_bert(), d);
        auto tok = nlohmann::json::parse(read_text(d.file("tokenizer.json")));
        tok["model"]["vocab"]["zzz"] = tok["model"]["vocab"]["a"];  // read after "a": keys in order
        write_text(d.file("tokenizer.json"), tok.dump());
        CHECK(refusal({"run", "--model", d.path(), "--ids", "2,3"}).find(
                  "tokenizer.json: model.vocab.zzz: expected an id no other piece of the vocabulary has, found 5, the id of \"a\" too") != std::string::npos);
    }
    // text that is not UTF-8: the byte offset
    CHECK(refusal({"run", "--model", tiny_bert(), "--text", "the \xc3 ring"}) ==
          "attntrace: error: --text: byte 4: expected UTF-8 text, found the byte 0xc3\n");
    // more tokens than max_position_embeddings, ids past the vocabulary
    CHECK(refusal({"run", "--model", tiny_bert(), "--text", std::string(70, '!')}).find("expected at most 64 tokens (config.json's max_position_embeddings)") != std::string::npos);
    CHECK(refusal({"run", "--model", tiny_bert(), "--ids", "2,264"}).find("--ids: [1]: expected a token id below the vocabulary's 264") != std::string::npos);
}

}  // namespace test_hf_bert

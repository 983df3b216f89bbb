// The Llama family (llama, qwen2): the mapping held to the float64 forward of
// PyTorch that tests/models/make_tiny_llama.py saved beside the tiny models
// (tiny-llama/reference.json), SentencePiece ids held to the ones Hugging
// Face's JavaScript tokenizer gave (tokenizer-cases.json), and the refusals
// of broken Llama folders.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "model_reference.hpp"
#include "evaluate/evaluate.hpp"
#include "io/safetensors.hpp"
#include "model/hf_model.hpp"
#include "model/tokenizer.hpp"
#include "pipeline/plan.hpp"
#include "support.hpp"

using namespace attntrace;
using namespace attntrace::test;

namespace test_hf_llama {
namespace fs = std::filesystem;

namespace {

// float32 arithmetic against the float64 forward. RoPE's rotated queries
// (~10) are two products of float32 cos/sin (rounded from double) with
// values of 48-term sums: a few units of 1e-6 relative.
constexpr double kRotTol = 1e-4;
// A softmax weight is a ratio of exponentials of scores of magnitude ~10;
// float32 keeps ~7 digits of them.
constexpr double kPatternTol = 2e-5;
// The residual stream (values up to ~40) after two blocks of sums over 48..96
// terms in float32, through SiLU and the gate's product: 1e-6 relative times the terms.
constexpr double kResidTol = 5e-4;
// The final RMSNorm's output (~unit scale, up to ~4) and the logits (48-term sums, up to ~10).
constexpr double kNormTol = 1e-4;
constexpr double kLogitTol = 5e-4;
// bf16 weights: the reference rounded the same weights to bf16 and ran in
// float64, so the gap is still float32's, over larger sums.
constexpr double kBf16LogitTol = 1e-3;

std::string models_dir() { return source_dir() + "/tests/models"; }
std::string tiny() { return models_dir() + "/tiny-llama"; }

const nlohmann::json& reference() {
    static const nlohmann::json r = nlohmann::json::parse(read_text(tiny() + "/reference.json"));
    return r;
}



// Rewrites a safetensors file's header (renaming or reshaping a tensor), the data kept.
void edit_header(const std::string& file, const std::function<void(nlohmann::json&)>& edit) {
    const std::string bytes = read_text(file);
    std::uint64_t n = 0;
    for (int i = 0; i < 8; ++i) n |= std::uint64_t(static_cast<unsigned char>(bytes[i])) << (8 * i);
    auto header = nlohmann::json::parse(bytes.substr(8, n));
    edit(header);
    const std::string text = header.dump();
    std::string out(8, '\0');
    for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((text.size() >> (8 * i)) & 0xff);
    write_text(file, out + text + bytes.substr(8 + n));
}

}  // namespace

TEST_CASE("a tiny Llama checkpoint computes PyTorch's float64 forward: RoPE's queries, block 0's pattern, block 1's output, the final RMSNorm, lm_head's logits") {
    for (const auto& text : reference()["texts"]) {
        INFO(text["text"].get<std::string>());
        ModelInput in;
        in.text = text["text"].get<std::string>();
        HfModel m = load_hf_model(tiny(), in);
        // the text tokenized by tokenizer.model as sentencepiece did, <s> first
        CHECK(m.lesson.token_ids == text["ids"].get<std::vector<std::int64_t>>());
        REQUIRE(m.lesson.config.arch.blocks == 2);
        CHECK(m.lesson.config.positions.layout == RopeLayout::half);
        auto e = evaluate(std::move(m.lesson));
        CHECK(max_abs_diff(e->exact.find("blocks.0.attn.hook_rot_q")->held(), flat(text["blocks.0.attn.hook_rot_q"])) < kRotTol);
        CHECK(max_abs_diff(e->exact.find("blocks.0.attn.hook_pattern")->held(), flat(text["blocks.0.attn.hook_pattern"])) < kPatternTol);
        const Tensor& resid = e->exact.find("blocks.1.hook_resid_post")->held();
        CHECK(max_abs_diff(resid, flat(text["blocks.1.hook_resid_post"])) < kResidTol);
        // the final RMSNorm and lm_head's logits: the trace's last steps
        CHECK(max_abs_diff(e->exact.find("ln_final.hook_normalized")->held(), flat(text["ln_final.hook_normalized"])) < kNormTol);
        const std::vector<double> want = flat(text["last_logits"]);
        const Tensor last = last_row_of(e->exact, "unembed");
        CHECK(max_abs_diff(last, want) < kLogitTol);
        const auto arg = std::max_element(want.begin(), want.end()) - want.begin();
        CHECK(next_tokens(last.ptr(), last.size(), 3)[0].id == arg);
    }
}

TEST_CASE("grouped-query attention: 4 query heads share 2 K/V heads in contiguous groups, as repeat_kv") {
    HfModel m = load_hf_model(tiny(), ids_input(reference()["texts"][0]["ids"]));
    CHECK(m.lesson.config.heads == 4);
    CHECK(m.lesson.config.kv_heads == 2);
    // W_K is d_model x kv_heads·head_dim: k_proj's 24 x 48 transposed
    CHECK(m.lesson.weight("blocks.0.W_K")->shape == Shape{48, 24});
    CHECK(m.lesson.weight("blocks.0.W_Q")->shape == Shape{48, 48});
    auto e = evaluate(std::move(m.lesson));
    CHECK(e->exact.find("blocks.0.attn.hook_k")->held().shape == Shape{4, 2, 12});
    const Tensor& g = e->exact.find("blocks.0.attn.hook_kv_head")->held();
    CHECK(std::vector<float>(g.data.begin(), g.data.end()) == std::vector<float>{0, 0, 1, 1});
}

TEST_CASE("a bf16 Llama checkpoint gives its rounded weights' logits") {
    const auto& r = reference()["bf16"];
    HfModel m = load_hf_model(models_dir() + "/tiny-llama-bf16", ids_input(r["ids"]));
    auto e = evaluate(std::move(m.lesson));
    CHECK(max_abs_diff(last_row_of(e->exact, "unembed"), flat(r["last_logits"])) < kBf16LogitTol);
}

// Every step a trace holds, by name, and whether two traces hold the same bits in each.
std::size_t same_bits_in_every_step(const Trace& a, const Trace& b) {
    std::size_t compared = 0;
    for (const Step& s : a.steps) {
        if (!s.holds_values()) continue;
        const Step* t = b.find(s.name);
        REQUIRE(t != nullptr);
        REQUIRE(t->holds_values());
        INFO(s.name);
        REQUIRE(s.held().shape == t->held().shape);
        REQUIRE(std::memcmp(s.held().ptr(), t->held().ptr(), s.held().size() * sizeof(float)) == 0);
        ++compared;
    }
    return compared;
}

TEST_CASE("a bf16 checkpoint's products read its weights in place, widened as packed: every step as when converted first") {
    // hold_all makes the source convert every weight to float32 (as decode's HeldWeights): the products then read
    // float32 copies; without it they read the mapped bf16 (nn.Linear's layout, transposed) through linear_stored.
    const auto& r = reference()["bf16"];
    HfModel in_place = load_hf_model(models_dir() + "/tiny-llama-bf16", ids_input(r["ids"]));
    HfModel converted = load_hf_model(models_dir() + "/tiny-llama-bf16", ids_input(r["ids"]));
    REQUIRE(in_place.lesson.weight_source->stored("blocks.0.W_Q") != nullptr);
    in_place.lesson.weight_source->release_all();
    converted.lesson.weight_source->hold_all(true);
    REQUIRE(converted.lesson.weight_source->stored("blocks.0.W_Q") == nullptr);
    auto a = evaluate(std::move(in_place.lesson));
    auto b = evaluate(std::move(converted.lesson));
    CHECK(same_bits_in_every_step(a->exact, b->exact) > 20);
}

// The refusal (what()) a run of `m` ends in, or "" when it runs.
std::string refusal_of_run(HfModel m) {
    try {
        evaluate(std::move(m.lesson));
    } catch (const InputError& e) {
        return e.what();
    }
    return "";
}

TEST_CASE("a bf16 weight read in place with a NaN or an infinity is refused naming the value, as its conversion refuses it") {
    // The product checks each value as it packs it; the refusal then names the first, as converting did.
    const auto& r = reference()["bf16"];
    for (const auto& [tensor, bits] : std::vector<std::pair<std::string, std::uint16_t>>{
             {"model.layers.1.mlp.down_proj.weight", 0x7fc0}, {"model.layers.0.self_attn.k_proj.weight", 0xff80}}) {
        INFO(tensor);
        TempDir d;
        for (const auto& e : fs::directory_iterator(models_dir() + "/tiny-llama-bf16"))
            fs::copy_file(e.path(), d.file(e.path().filename().string()));
        std::size_t at = 0;
        {
            SafetensorsFile f(d.file("model.safetensors"));
            const StTensor* t = f.header().find(tensor);
            REQUIRE(t != nullptr);
            at = f.header().data_offset + t->begin + 2 * 7;  // its value [7]
        }
        std::string bytes = read_text(d.file("model.safetensors"));
        bytes[at] = static_cast<char>(bits & 0xff);
        bytes[at + 1] = static_cast<char>(bits >> 8);
        write_text(d.file("model.safetensors"), bytes);
        HfModel in_place = load_hf_model(d.path(), ids_input(r["ids"]));
        HfModel converted = load_hf_model(d.path(), ids_input(r["ids"]));
        converted.lesson.weight_source->hold_all(true);
        const std::string refusal = refusal_of_run(std::move(in_place));
        CHECK(refusal.find(tensor + "[7]: expected a finite number, found " + (bits == 0x7fc0 ? "nan" : "-inf")) !=
              std::string::npos);
        CHECK(refusal == refusal_of_run(std::move(converted)));
    }
}

TEST_CASE("a f16 GPT-2 checkpoint's fused c_attn read in place, in runs of columns: every step as when converted first") {
    const std::string dir = models_dir() + "/tiny-gpt2-f16";
    ModelInput input;
    input.ids = {287, 262, 267, 11};
    HfModel in_place = load_hf_model(dir, input);
    HfModel converted = load_hf_model(dir, input);
    REQUIRE(in_place.lesson.weight_source->stored("blocks.0.W_K") != nullptr);
    in_place.lesson.weight_source->release_all();
    converted.lesson.weight_source->hold_all(true);
    auto a = evaluate(std::move(in_place.lesson));
    auto b = evaluate(std::move(converted.lesson));
    CHECK(same_bits_in_every_step(a->exact, b->exact) > 20);
}

// Two loads of checkpoint `dir`: one reading its matrices in place (the default), one converting each
// (WeightSource::read_in_place off); every step of their runs compared bit for bit.
std::size_t in_place_against_converted(const std::string& dir, const ModelInput& input, const std::string& weight) {
    HfModel in_place = load_hf_model(dir, input);
    HfModel converted = load_hf_model(dir, input);
    const StoredMatrix* m = in_place.lesson.weight_source->stored(weight);
    REQUIRE(m != nullptr);
    CHECK(m->type == StoredType::f32);
    in_place.lesson.weight_source->release_all();
    converted.lesson.weight_source->read_in_place(false);
    REQUIRE(converted.lesson.weight_source->stored(weight) == nullptr);
    auto a = evaluate(std::move(in_place.lesson));
    auto b = evaluate(std::move(converted.lesson));
    return same_bits_in_every_step(a->exact, b->exact);
}

TEST_CASE("a f32 checkpoint's matrices read in place from the mapped file, GPT-2's c_attn in runs of columns and Llama's "
          "nn.Linear layout transposed: every step as when converted first") {
    ModelInput gpt2;
    gpt2.ids = {287, 262, 267, 11};
    CHECK(in_place_against_converted(models_dir() + "/tiny-gpt2", gpt2, "blocks.0.W_K") > 20);
    CHECK(in_place_against_converted(tiny(), ids_input(reference()["texts"][0]["ids"]), "blocks.1.W_2") > 20);
    CHECK(in_place_against_converted(tiny(), ids_input(reference()["texts"][0]["ids"]), "W_U") > 20);
}

TEST_CASE("a f32 checkpoint whose data starts at an odd address is converted, not read in place: every step the same") {
    // The mapping is page-aligned, the data follows the JSON header: one more byte of header puts every
    // float32 at an address not a multiple of 4, which the products must not read as floats.
    TempDir d;
    for (const auto& e : fs::directory_iterator(tiny())) fs::copy_file(e.path(), d.file(e.path().filename().string()));
    write_text(d.file("model.safetensors"), with_header_padding(read_text(tiny() + "/model.safetensors"), 1));
    const ModelInput input = ids_input(reference()["texts"][0]["ids"]);
    HfModel odd = load_hf_model(d.path(), input);
    HfModel aligned = load_hf_model(tiny(), input);
    CHECK(odd.lesson.weight_source->stored("blocks.0.W_Q") == nullptr);
    REQUIRE(aligned.lesson.weight_source->stored("blocks.0.W_Q") != nullptr);
    aligned.lesson.weight_source->release_all();
    auto a = evaluate(std::move(odd.lesson));
    auto b = evaluate(std::move(aligned.lesson));
    CHECK(same_bits_in_every_step(a->exact, b->exact) > 20);
}

TEST_CASE("a f32 weight read in place with a NaN or an infinity is refused naming the value, as its conversion refuses it") {
    // Its product's output then holds a value not finite (inf·0 and NaN·x are NaN); the weight is checked then.
    const ModelInput input = ids_input(reference()["texts"][0]["ids"]);
    for (const auto& [tensor, bits] : std::vector<std::pair<std::string, std::uint32_t>>{
             {"model.layers.1.mlp.down_proj.weight", 0x7fc00000u}, {"model.layers.0.self_attn.k_proj.weight", 0xff800000u},
             {"lm_head.weight", 0x7f800000u}}) {
        INFO(tensor);
        TempDir d;
        for (const auto& e : fs::directory_iterator(tiny())) fs::copy_file(e.path(), d.file(e.path().filename().string()));
        std::size_t at = 0;
        {
            SafetensorsFile f(d.file("model.safetensors"));
            const StTensor* t = f.header().find(tensor);
            REQUIRE(t != nullptr);
            at = f.header().data_offset + t->begin + 4 * 7;  // its value [7]
        }
        std::string bytes = read_text(d.file("model.safetensors"));
        for (std::size_t i = 0; i < 4; ++i) bytes[at + i] = static_cast<char>((bits >> (8 * i)) & 0xff);
        write_text(d.file("model.safetensors"), bytes);
        HfModel in_place = load_hf_model(d.path(), input);
        HfModel converted = load_hf_model(d.path(), input);
        converted.lesson.weight_source->read_in_place(false);
        const std::string refusal = refusal_of_run(std::move(in_place));
        const std::string found = bits == 0x7fc00000u ? "nan" : bits == 0x7f800000u ? "inf" : "-inf";
        CHECK(refusal.find(tensor + "[7]: expected a finite number, found " + found) != std::string::npos);
        CHECK(refusal == refusal_of_run(std::move(converted)));
    }
}

TEST_CASE("the --max-memory estimate counts a f32 checkpoint's matrices read in place in their stored bytes, none read whole again") {
    // tiny Llama: its embedding (inputs), final γ and lm_head, and one block's 2 γ and 7 matrices: 225.6 KiB
    TempDir bare;
    for (const char* f : {"config.json", "model.safetensors"}) fs::copy_file(tiny() + "/" + f, bare.file(f));
    const CliResult r = run_cli({"--max-memory", "150K", "run", "--model", bare.path(), "--ids", "1"});
    CHECK(r.status == 2);
    CHECK(r.err.find("model.safetensors: expected weights that fit in 150.0 KiB (--max-memory) as the run holds them: the "
                     "model's own tensors, one block's weights (its matrices as stored, read in place), found 225.6 KiB of "
                     "them") != std::string::npos);
}

TEST_CASE("a tiny Qwen2 checkpoint (Q/K/V biases, one K/V head, tied embeddings, rope_theta 1e6) computes PyTorch's forward") {
    const auto& r = reference()["qwen2"];
    HfModel m = load_hf_model(models_dir() + "/tiny-qwen2", ids_input(r["ids"]));
    CHECK(m.model_type == "qwen2");
    CHECK(m.lesson.weight("blocks.1.b_K") != nullptr);
    CHECK(m.lesson.config.kv_heads == 1);
    CHECK(m.lesson.config.positions.base == 1e6);
    CHECK(m.lesson.config.unembed_tied);  // the logits read the embedding
    CHECK(!m.lesson.weight("W_U"));
    auto e = evaluate(std::move(m.lesson));
    CHECK(max_abs_diff(e->exact.find("blocks.0.attn.hook_pattern")->held(), flat(r["blocks.0.attn.hook_pattern"])) < kPatternTol);
    const Tensor& resid = e->exact.find("blocks.1.hook_resid_post")->held();
    CHECK(max_abs_diff(resid, flat(r["blocks.1.hook_resid_post"])) < kResidTol);
    CHECK(max_abs_diff(last_row_of(e->exact, "unembed"), flat(r["last_logits"])) < kLogitTol);
}

TEST_CASE("tokenizer.model gives the ids Hugging Face's JavaScript LlamaTokenizer gave for hard strings (accents, CJK, emoji, digits, white space)") {
    const auto cases = nlohmann::json::parse(read_text(tiny() + "/tokenizer-cases.json"));
    const auto t = Tokenizer::open(tiny());
    REQUIRE(t);
    CHECK(t->file().find("tokenizer.model") != std::string::npos);
    REQUIRE(cases["cases"].size() >= 10);
    for (const auto& c : cases["cases"]) {
        INFO(c["text"].get<std::string>());
        CHECK(t->encode(c["text"], "--text") == c["ids"].get<std::vector<std::int64_t>>());
    }
    // pieces shown with ␣ for ▁, byte pieces for newline as ↵
    const auto ids = t->encode("the ring\n", "--text");
    REQUIRE(ids.size() == 4);
    CHECK(t->shown(ids[0]) == "<s>");
    CHECK(t->shown(ids[1]) == "␣the");
    CHECK(t->shown(ids[2]) == "␣ring");
    CHECK(t->shown(ids[3]) == "↵");
}

TEST_CASE("add_bos_token false in tokenizer_config.json leaves <s> out") {
    TempDir d;
    copy_model(tiny(), d);
    auto cfg = nlohmann::json::parse(read_text(d.file("tokenizer_config.json")));
    cfg["add_bos_token"] = false;
    write_text(d.file("tokenizer_config.json"), cfg.dump());
    const auto t = Tokenizer::open(d.path());
    auto want = reference()["texts"][0]["ids"].get<std::vector<std::int64_t>>();
    want.erase(want.begin());
    CHECK(t->encode(reference()["texts"][0]["text"], "--text") == want);
}

TEST_CASE("run --model on a Llama folder: pieces, the blocks traced, lm_head's logits, the next tokens") {
    const auto& text = reference()["texts"][1];
    const std::vector<double> want = flat(text["last_logits"]);
    const auto arg = std::max_element(want.begin(), want.end()) - want.begin();
    auto r = run_cli({"run", "--model", tiny(), "--text", text["text"], "--json", "--top-k", "3", "--trace", "summary"});
    REQUIRE(r.status == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["tokens"][0] == "<s>");
    CHECK(j["tokens"][1] == "␣The");
    CHECK(j["model"]["next_tokens"][0]["id"] == arg);
    r = run_cli({"run", "--model", tiny(), "--text", text["text"], "--trace", "none"});
    REQUIRE(r.status == 0);
    CHECK(r.out.find("logits = LN_f·W_U") != std::string::npos);  // lm_head, untied
    // explain recomputes a cell of RoPE's rotated query in the half layout
    r = run_cli({"explain", "--model", tiny(), "--ids", "1,262,265", "blocks.0.attn.hook_rot_q[2,h1,d3]"});
    CHECK(r.status == 0);
    CHECK(r.out.find("✓ (the same)") != std::string::npos);
}

TEST_CASE("a Llama checkpoint's norm steps are titled RMSNorm and its root mean square, none LayerNorm or std σ") {
    const auto r = run_cli({"run", "--model", tiny(), "--ids", "1,262,265", "--json", "--trace", "summary"});
    REQUIRE(r.status == 0);
    std::map<std::string, std::string> title;
    const auto j = nlohmann::json::parse(r.out);
    REQUIRE(j["steps"].size() > 20);
    for (const auto& s : j["steps"]) {
        const std::string t = s["title"], f = s["formula"];
        INFO(s["name"].get<std::string>() << ": " << t << " / " << f);
        CHECK(t.find("LayerNorm") == std::string::npos);
        CHECK(t.find("std σ") == std::string::npos);
        CHECK(f.find("(RMSNorm:") == std::string::npos);
        title[s["name"].get<std::string>()] = t;
    }
    CHECK(title["blocks.0.ln1.hook_scale"] == "RMSNorm 1: root mean square (block 0)");
    CHECK(title["blocks.1.ln2.hook_normalized"] == "RMSNorm 2: output (block 1)");
    CHECK(title["ln_final.hook_scale"] == "Final RMSNorm: root mean square");
    CHECK(title["ln_final.hook_mean_square"] == "Final RMSNorm: mean square");
    // --steps picks by a word of these titles, as of any step's
    const auto picked = run_cli({"run", "--model", tiny(), "--ids", "1,262,265", "--steps", "root", "--json"});
    REQUIRE(picked.status == 0);
    const auto p = nlohmann::json::parse(picked.out);
    REQUIRE(p["steps"].size() == 5);  // each block's two norms' σ, and the final norm's
    for (const auto& s : p["steps"]) CHECK(s["name"].get<std::string>().find("hook_scale") != std::string::npos);
}

TEST_CASE("broken Llama folders are refused with exit 2 naming the file and the tensor or field") {
    auto refusal = [](const std::vector<std::string>& args) {
        const auto r = run_cli(args);
        CHECK(r.status == 2);
        return r.err;
    };
    auto with_config = [&](const std::function<void(nlohmann::json&)>& edit) {
        TempDir d;
        copy_model(tiny(), d);
        auto cfg = nlohmann::json::parse(read_text(d.file("config.json")));
        edit(cfg);
        write_text(d.file("config.json"), cfg.dump());
        return refusal({"run", "--model", d.path(), "--ids", "1,5"});
    };
    {  // a missing tensor
        TempDir d;
        copy_model(tiny(), d);
        edit_header(d.file("model.safetensors"), [](nlohmann::json& h) {
            h["model.layers.1.mlp.up_proX.weight"] = h["model.layers.1.mlp.up_proj.weight"];
            h.erase("model.layers.1.mlp.up_proj.weight");
        });
        CHECK(refusal({"run", "--model", d.path(), "--ids", "1"}).find(
                  "model.safetensors: model.layers.1.mlp.up_proj.weight: expected a tensor \"model.layers.1.mlp.up_proj.weight\" "
                  "(block 1's W_3, the linear branch (nn.Linear: intermediate_size x hidden_size)), found none") != std::string::npos);
    }
    // a tensor of another shape than the config's
    CHECK(with_config([](nlohmann::json& c) { c["intermediate_size"] = 100; })
              .find("model.layers.0.mlp.gate_proj.weight: expected a 100x48 tensor (block 0's W_1, the gate (nn.Linear: intermediate_size x hidden_size)), found a 96x48 tensor") != std::string::npos);
    // a scaled RoPE we do not compute, by name
    CHECK(with_config([](nlohmann::json& c) { c["rope_scaling"] = {{"rope_type", "llama3"}, {"factor", 8.0}}; })
              .find("config.json: rope_scaling.rope_type: expected \"default\" or rope_scaling null (scaled RoPE is not computed), found string \"llama3\"") != std::string::npos);
    CHECK(with_config([](nlohmann::json& c) { c["rope_scaling"] = {{"type", "linear"}, {"factor", 2.0}}; })
              .find("rope_scaling.type: expected \"default\"") != std::string::npos);
    CHECK(with_config([](nlohmann::json& c) { c["num_key_value_heads"] = 3; })
              .find("num_key_value_heads: expected a divisor of num_attention_heads (4), found 3") != std::string::npos);
    CHECK(with_config([](nlohmann::json& c) { c["hidden_act"] = "gelu"; }).find("hidden_act: expected \"silu\"") != std::string::npos);
    CHECK(with_config([](nlohmann::json& c) { c["mlp_bias"] = true; }).find("mlp_bias: expected false") != std::string::npos);
    // an eps float32 cannot hold (1e308 is infinite there), or none a norm has: config.json's field, before any step
    for (const double eps : {1e308, 0.0, -1e-6, 1e-40, 2.0})
        CHECK(with_config([&](nlohmann::json& c) { c["rms_norm_eps"] = eps; })
                  .find("config.json: rms_norm_eps: expected a number from 1e-30 to 1 (the norm's eps, added in float32), found ") != std::string::npos);
    CHECK(with_config([](nlohmann::json& c) { c.erase("hidden_size"); }).find("config.json: hidden_size") != std::string::npos);
    // more tokens than max_position_embeddings
    CHECK(refusal({"run", "--model", tiny(), "--text", std::string(200, '!')}).find("expected at most 128 tokens (config.json's max_position_embeddings)") != std::string::npos);
    {  // a truncated tokenizer.model
        TempDir d;
        copy_model(tiny(), d);
        write_text(d.file("tokenizer.model"), read_text(d.file("tokenizer.model")).substr(0, 100));
        CHECK(refusal({"run", "--model", d.path(), "--text", "the ring"}).find(
                  "tokenizer.model: expected a SentencePiece model (a serialized ModelProto, as spm_train writes), found 100 bytes the library refuses") != std::string::npos);
    }
    {  // without tokenizer.model, a tokenizer.json of a type this reader does not know
        TempDir d;
        copy_model(tiny(), d);
        fs::remove(d.file("tokenizer.model"));
        auto tok = nlohmann::json::parse(read_text(d.file("tokenizer.json")));
        tok["normalizer"] = nullptr;
        tok["model"]["type"] = "Unigram";
        write_text(d.file("tokenizer.json"), tok.dump());
        CHECK(refusal({"run", "--model", d.path(), "--ids", "1"}).find("tokenizer.json: model.type: expected \"BPE\"") != std::string::npos);
    }
    // text that is not UTF-8 is refused before SentencePiece sees it
    CHECK(refusal({"run", "--model", tiny(), "--text", "the \xff ring"}) == "attntrace: error: --text: byte 4: expected UTF-8 text, found the byte 0xff\n");
}

TEST_CASE("a Llama checkpoint's block weights are converted when their block runs and released after it: one block held at a time") {
    HfModel m = load_hf_model(tiny(), ids_input(reference()["texts"][0]["ids"]));
    const std::shared_ptr<WeightSource> src = m.lesson.weight_source;
    REQUIRE(src);
    // the model's own: the final RMSNorm's γ held; lm_head (W_U) converted when the logits are computed
    CHECK(m.lesson.weights.size() == 1);
    CHECK(m.lesson.weights.count("ln_final_gamma") == 1);
    CHECK(src->provides("W_U"));
    CHECK(src->loads() == 0);  // nothing of the blocks converted while the folder was read
    // one block's float32 values: two RMSNorm γ (48 each), q_proj 48x48, k_proj and v_proj 24x48,
    // o_proj 48x48, gate_proj, up_proj and down_proj 96x48
    const std::size_t block = (2 * 48 + 2 * 48 * 48 + 2 * 24 * 48 + 3 * 96 * 48) * sizeof(float);
    const std::size_t w_u = m.lesson.dims().V * 48 * sizeof(float);
    // the estimate holds W_U beside a block (conservative: the blocks are released before it)
    CHECK(src->largest_group_bytes() == block + w_u);
    // the plan counts it among what the run holds
    const Plan with = make_plan(m.lesson, TracePolicy{}, Arithmetic::exact, 1);
    Lesson without_source = m.lesson;
    without_source.weight_source.reset();
    CHECK(with.lesson_bytes == make_plan(without_source, TracePolicy{}, Arithmetic::exact, 1).lesson_bytes + block + w_u);
    auto e = evaluate(std::move(m.lesson));
    CHECK(src->peak_held_bytes() == std::max(block, w_u));  // never two blocks at once, nor a block beside W_U
    CHECK(src->held_bytes() == 0);                         // all released at the run's end
    // each of the 2 blocks' two γ converted once; its 7 float32 matrices and W_U read in place from the mapped file
    CHECK(src->loads() == 2 * 2);
}

TEST_CASE("the --blocks option traces the chosen blocks under the policy and runs the others untraced, and refuses bad lists") {
    const auto& text = reference()["texts"][0];
    TempDir d;
    auto r = run_cli({"export", "--model", tiny(), "--text", text["text"], "--blocks", "1", "-o", d.file("t.json")});
    REQUIRE(r.status == 0);
    const auto j = nlohmann::json::parse(read_text(d.file("t.json")));
    std::size_t block0 = 0, block1 = 0;
    for (const auto& s : j["steps"]) {
        const std::string name = s["name"];
        block0 += name.rfind("blocks.0.", 0) == 0;
        block1 += name.rfind("blocks.1.", 0) == 0;
        if (name == "blocks.1.hook_resid_post") CHECK(max_abs_diff([&] {
                                                          Tensor t({flat(s["values"]).size()});
                                                          const auto v = flat(s["values"]);
                                                          std::copy(v.begin(), v.end(), t.ptr());
                                                          return t;
                                                      }(), flat(text["blocks.1.hook_resid_post"])) < kResidTol);
    }
    CHECK(block0 == 0);
    CHECK(block1 > 20);
    // under --trace summary, block 0 untraced, and the head still computed from the run's output
    r = run_cli({"run", "--model", tiny(), "--text", text["text"], "--blocks", "1", "--trace", "summary", "--json"});
    REQUIRE(r.status == 0);
    const auto run = nlohmann::json::parse(r.out);
    for (const auto& s : run["steps"]) CHECK(s["name"].get<std::string>().rfind("blocks.0.", 0) != 0);
    CHECK(run["model"]["next_tokens"].size() == 10);
    // "0-1" is every block: the same steps as without --blocks
    CHECK(run_cli({"run", "--model", tiny(), "--ids", "1,5", "--blocks", "0-1", "--json"}).out ==
          run_cli({"run", "--model", tiny(), "--ids", "1,5", "--json"}).out);
    CHECK(run_cli({"report", "--model", tiny(), "--ids", "1,5", "--blocks", "0", "-o", d.file("r.html")}).status == 0);
    for (const char* bad : {"2", "1-0", "x", "0,,1", "0-", ""}) {
        INFO(bad);
        r = run_cli({"run", "--model", tiny(), "--ids", "1,5", "--blocks", bad});
        CHECK(r.status == 2);
        CHECK(r.err.rfind("attntrace: error: --blocks: expected block numbers from 0 to 1 (the model has 2 blocks)", 0) == 0);
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    }
}

TEST_CASE("a tokenizer.json in Llama 3's form (Split pattern, ByteLevel, ignore_merges, <|begin_of_text|>) gives the JavaScript port's ids") {
    const std::string dir = models_dir() + "/tiny-llama3-tokenizer";
    const auto cases = nlohmann::json::parse(read_text(dir + "/tokenizer-cases.json"));
    const auto t = Tokenizer::open(dir);
    REQUIRE(t);
    REQUIRE(cases["cases"].size() >= 12);
    for (const auto& c : cases["cases"]) {
        INFO(c["text"].get<std::string>());
        CHECK(t->encode(c["text"], "--text") == c["ids"].get<std::vector<std::int64_t>>());
    }
    CHECK(t->shown(t->encode("the ring", "--text")[2]) == "␣ring");
    // its refusals name the field: a pattern PCRE2 does not compile, a ByteLevel that would split again
    auto doc = nlohmann::json::parse(read_text(dir + "/tokenizer.json"));
    doc["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = "(\\p{L}+";
    CHECK_THROWS_WITH(Tokenizer::from_tokenizer_json(doc.dump(), "tokenizer.json"),
                      Catch::Contains("tokenizer.json: pre_tokenizer.pretokenizers[0].pattern.Regex: expected a pattern PCRE2 compiles"));
    doc = nlohmann::json::parse(read_text(dir + "/tokenizer.json"));
    doc["pre_tokenizer"]["pretokenizers"][1]["use_regex"] = true;
    CHECK_THROWS_WITH(Tokenizer::from_tokenizer_json(doc.dump(), "tokenizer.json"),
                      Catch::Contains("pre_tokenizer.pretokenizers[1].use_regex: expected false (the Split before it splits the text), found true"));
    doc = nlohmann::json::parse(read_text(dir + "/tokenizer.json"));
    doc["pre_tokenizer"]["pretokenizers"][0]["behavior"] = "Removed";
    CHECK_THROWS_WITH(Tokenizer::from_tokenizer_json(doc.dump(), "tokenizer.json"), Catch::Contains("behavior: expected \"Isolated\""));
}

TEST_CASE("a Split pattern that backtracks without end is refused at PCRE2's match limit, naming the pattern") {
    auto doc = nlohmann::json::parse(read_text(models_dir() + "/tiny-llama3-tokenizer/tokenizer.json"));
    doc["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = "(a|aa)+$|.";
    const Tokenizer t = Tokenizer::from_tokenizer_json(doc.dump(), "tokenizer.json");
    CHECK_THROWS_WITH(t.encode(std::string(60, 'a') + "b", "--text"),
                      Catch::Contains("tokenizer.json: pre_tokenizer.pretokenizers[0].pattern.Regex: expected a pattern that splits --text within PCRE2's limits, found match limit exceeded"));
}

TEST_CASE("a TemplateProcessing special token whose id names no piece is refused, naming it (a fuzzing find)") {
    auto doc = nlohmann::json::parse(read_text(models_dir() + "/tiny-llama3-tokenizer/tokenizer.json"));
    REQUIRE(doc["post_processor"]["type"] == "TemplateProcessing");
    doc.erase("added_tokens");  // <|begin_of_text|> is then no piece, though the post-processor puts its id first
    CHECK_THROWS_WITH(Tokenizer::from_tokenizer_json(doc.dump(), "tokenizer.json"),
                      Catch::Contains("tokenizer.json: post_processor.special_tokens.") &&
                          Catch::Contains("expected the id of a piece of model.vocab or added_tokens, found ") &&
                          Catch::Contains("which names none"));
}

}  // namespace test_hf_llama

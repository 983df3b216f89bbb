// Hugging Face checkpoints: the safetensors reader, the GPT-2 mapping, the
// byte-level BPE tokenizer and `run --model`, held to the float64 forward of
// PyTorch that tests/models/make_tiny_models.py saved beside the tiny models
// (reference.json), and the refusals of broken checkpoints.
#include <catch2/catch.hpp>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/error.hpp"
#include "model_reference.hpp"
#include "evaluate/evaluate.hpp"
#include "io/safetensors.hpp"
#include "model/hf_model.hpp"
#include "model/tokenizer.hpp"
#include "support.hpp"

using namespace attntrace;
using namespace attntrace::test;

namespace test_hf_models {
namespace fs = std::filesystem;

namespace {

// float32 arithmetic against the float64 forward: a softmax weight is a ratio
// of exponentials of scores of magnitude ~10, float32 keeps ~7 digits of them.
constexpr double kPatternTol = 2e-5;
// The residual stream (values up to ~10) after two blocks of sums over 32..128
// terms in float32: a few units of its last place, 1e-6 relative, times the terms.
constexpr double kResidTol = 2e-4;
// LN_f's output (~unit scale) and the logits (sums of 32 products, up to ~20).
constexpr double kNormTol = 1e-4;
constexpr double kLogitTol = 5e-4;

std::string models_dir() { return source_dir() + "/tests/models"; }
std::string tiny() { return models_dir() + "/tiny-gpt2"; }

const nlohmann::json& reference() {
    static const nlohmann::json r = nlohmann::json::parse(read_text(tiny() + "/reference.json"));
    return r;
}

std::vector<double> last_logits(const std::string& dir, const nlohmann::json& ids) {
    HfModel m = load_hf_model(dir, ids_input(ids));
    auto e = evaluate(std::move(m.lesson));
    const Tensor last = last_row_of(e->exact, "unembed");
    return std::vector<double>(last.data.begin(), last.data.end());
}

// A safetensors file from its header's JSON text and `data` bytes of data.
std::string st_bytes(const std::string& header, std::size_t data, std::uint64_t claimed = 0) {
    std::string s(8, '\0');
    const std::uint64_t n = claimed ? claimed : header.size();
    for (int i = 0; i < 8; ++i) s[i] = static_cast<char>((n >> (8 * i)) & 0xff);
    return s + header + std::string(data, '\0');
}

std::string refusal_of_file(const std::string& bytes) {
    TempDir d;
    write_text(d.file("model.safetensors"), bytes);
    try {
        SafetensorsFile f(d.file("model.safetensors"));
    } catch (const InputError& e) {
        std::string w = e.what();
        return w.substr(w.find("model.safetensors"));
    }
    return "(accepted)";
}

// A copy of the tiny model's folder, for a test to break one file of.

// A refusal comes at once; a FIFO opened for reading instead waits for a
// writer. Past this, the guard below opens the FIFO itself so that such a
// regression fails the test instead of hanging it (a refusal takes milliseconds).
constexpr auto kFifoGuard = std::chrono::seconds(10);

// What `args` gives while the guard watches `fifo`: the CLI's result and
// whether the guard had to open the FIFO to let the run go on.
std::pair<CliResult, bool> run_watching_fifo(const std::vector<std::string>& args, const std::string& fifo) {
    std::atomic<bool> done{false}, fired{false};
    std::thread guard([&] {
        const auto deadline = std::chrono::steady_clock::now() + kFifoGuard;
        while (!done && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(10));
        if (done) return;
        fired = true;
        const int fd = ::open(fifo.c_str(), O_RDWR | O_NONBLOCK);  // a writer: a blocked open returns
        if (fd >= 0) ::close(fd);
    });
    CliResult r = run_cli(args);
    done = true;
    guard.join();
    return {r, fired.load()};
}

// `run --model` on a copy of `model` (without the files `drop`) whose file
// `name` is a FIFO: refused at once, one line naming the file and what it is.
void require_fifo_refused(const std::string& model, const std::string& name, const std::vector<std::string>& drop = {}) {
    INFO(model << ": " << name << " as a FIFO");
    TempDir d;
    copy_model(model, d);
    for (const auto& f : drop) fs::remove(d.file(f));
    fs::remove(d.file(name));
    REQUIRE(::mkfifo(d.file(name).c_str(), 0600) == 0);
    const auto [r, fired] = run_watching_fifo({"run", "--model", d.path(), "--ids", "1"}, d.file(name));
    CHECK(!fired);
    CHECK(r.status == 2);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(r.err.find(d.file(name) + ": expected ") != std::string::npos);
    CHECK(r.err.find("a FIFO (named pipe)") != std::string::npos);
}

}  // namespace

TEST_CASE("a FIFO in place of any file of a checkpoint folder is refused at once, naming it, never waited on") {
    require_fifo_refused(tiny(), "model.safetensors");
    require_fifo_refused(tiny(), "config.json");
    require_fifo_refused(tiny(), "tokenizer.json");
    require_fifo_refused(tiny(), "vocab.json", {"tokenizer.json"});
    require_fifo_refused(tiny(), "merges.txt", {"tokenizer.json"});
    require_fifo_refused(models_dir() + "/tiny-gpt2-bf16-sharded", "model.safetensors.index.json");
    require_fifo_refused(models_dir() + "/tiny-gpt2-bf16-sharded", "model-00002-of-00002.safetensors");
    require_fifo_refused(models_dir() + "/tiny-bert", "tokenizer.json");
    require_fifo_refused(models_dir() + "/tiny-bert", "vocab.txt", {"tokenizer.json"});
    require_fifo_refused(models_dir() + "/tiny-bert", "tokenizer_config.json", {"tokenizer.json"});
    require_fifo_refused(models_dir() + "/tiny-llama", "tokenizer.model");
    require_fifo_refused(models_dir() + "/tiny-llama", "tokenizer_config.json");
}

TEST_CASE("a tiny GPT-2 checkpoint computes PyTorch's float64 forward: block 0's pattern, block 1's output, LN_f, the logits") {
    for (const auto& text : reference()["texts"]) {
        INFO(text["text"].get<std::string>());
        HfModel m = load_hf_model(tiny(), ids_input(text["ids"]));
        REQUIRE(m.lesson.config.arch.blocks == 2);
        auto e = evaluate(std::move(m.lesson));
        CHECK(max_abs_diff(e->exact.find("blocks.0.attn.hook_pattern")->held(), flat(text["blocks.0.attn.hook_pattern"])) < kPatternTol);
        const Tensor& resid = e->exact.find("blocks.1.hook_resid_post")->held();
        CHECK(max_abs_diff(resid, flat(text["blocks.1.hook_resid_post"])) < kResidTol);
        // the final LayerNorm and the logits are the trace's last steps, as TransformerLens names them
        CHECK(max_abs_diff(e->exact.find("ln_final.hook_normalized")->held(), flat(text["ln_final.hook_normalized"])) < kNormTol);
        const std::vector<double> want = flat(text["last_logits"]);
        const Tensor last = last_row_of(e->exact, "unembed");
        REQUIRE(last.size() == want.size());
        CHECK(max_abs_diff(last, want) < kLogitTol);
        // the top token is the reference's argmax, its probability the reference's softmax
        const std::vector<NextToken> top = next_tokens(last.ptr(), last.size(), 3);
        const auto arg = std::max_element(want.begin(), want.end()) - want.begin();
        CHECK(top[0].id == arg);
        double sum = 0;
        for (double v : want) sum += std::exp(v - want[arg]);
        CHECK(top[0].probability == Approx(1.0 / sum).margin(1e-5));
    }
}

TEST_CASE("f16 and bf16 checkpoints (the latter sharded, the former under \"transformer.\") give their rounded weights' logits") {
    for (const char* variant : {"f16", "bf16"}) {
        INFO(variant);
        const auto& r = reference()[variant];
        const std::string dir = models_dir() + (std::string(variant) == "f16" ? "/tiny-gpt2-f16" : "/tiny-gpt2-bf16-sharded");
        const std::vector<double> got = last_logits(dir, r["ids"]), want = flat(r["last_logits"]);
        REQUIRE(got.size() == want.size());
        double worst = 0;
        for (std::size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::abs(got[i] - want[i]));
        CHECK(worst < kLogitTol);
    }
    // and they differ from the f32 model's by the rounding: the conversion is no copy of the f32 file
    const auto& r = reference()["f16"];
    const std::vector<double> f32 = flat(reference()["texts"][0]["last_logits"]), f16 = flat(r["last_logits"]);
    double apart = 0;
    for (std::size_t i = 0; i < f32.size(); ++i) apart = std::max(apart, std::abs(f32[i] - f16[i]));
    CHECK(apart > 10 * kLogitTol);
}

TEST_CASE("the byte-level BPE gives the reference's ids from tokenizer.json and from vocab.json + merges.txt") {
    const auto tj = Tokenizer::open(tiny());
    REQUIRE(tj);
    TempDir d;
    fs::copy_file(tiny() + "/vocab.json", d.file("vocab.json"));
    fs::copy_file(tiny() + "/merges.txt", d.file("merges.txt"));
    const auto vm = Tokenizer::open(d.path());
    REQUIRE(vm);
    for (const auto& text : reference()["texts"]) {
        std::vector<std::int64_t> want;
        for (const auto& i : text["ids"]) want.push_back(i.get<std::int64_t>());
        CHECK(tj->encode(text["text"], "--text") == want);
        CHECK(vm->encode(text["text"], "--text") == want);
    }
    // the leading space shown as ␣, the added token whole
    const auto ids = tj->encode("the ring<|endoftext|>", "--text");
    CHECK(tj->shown(ids[1]) == "␣ring");
    CHECK(tj->shown(ids.back()) == "<|endoftext|>");
    CHECK(ids.back() == static_cast<std::int64_t>(tj->vocab_size()) - 1);
    // bytes of a character the vocabulary never merged: one byte token each, UTF-8 kept across them
    const auto e = tj->encode("é", "--text");
    CHECK(e.size() == 2);
}

TEST_CASE("the byte-level BPE gives the ids Hugging Face's JavaScript tokenizer gave for hard strings (accents, CJK, emoji, numbers, contractions, white space)") {
    // tokenizer-cases.json: made once by tests/models/tokenizer_ids.mjs with @huggingface/transformers
    const auto cases = nlohmann::json::parse(read_text(tiny() + "/tokenizer-cases.json"));
    const auto tj = Tokenizer::open(tiny());
    REQUIRE(tj);
    REQUIRE(cases["cases"].size() >= 10);
    for (const auto& c : cases["cases"]) {
        INFO(c["text"].get<std::string>());
        std::vector<std::int64_t> want;
        for (const auto& i : c["ids"]) want.push_back(i.get<std::int64_t>());
        CHECK(tj->encode(c["text"], "--text") == want);
    }
}

TEST_CASE("run --model: the text's tokens as pieces, the blocks traced, the next tokens after the last block") {
    const auto& text = reference()["texts"][0];
    const std::vector<double> want = flat(text["last_logits"]);
    const auto arg = std::max_element(want.begin(), want.end()) - want.begin();
    auto r = run_cli({"run", "--model", tiny(), "--text", text["text"], "--json", "--top-k", "3"});
    REQUIRE(r.status == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["model"]["next_tokens"].size() == 3);
    CHECK(j["model"]["next_tokens"][0]["id"] == arg);
    CHECK(j["tokens"] == nlohmann::json({"the", "␣ring", "␣fell"}));
    // the same by ids, as text, under --trace none (the output is kept, so the head is computed)
    r = run_cli({"run", "--model", tiny(), "--ids", "287,262,267", "--trace", "none"});
    REQUIRE(r.status == 0);
    // the logits are the trace's output, their formula the tied unembedding's
    CHECK(r.out.find("logits = LN_f·W_Eᵀ") != std::string::npos);
    CHECK(r.out.find("the next token after '␣fell'") != std::string::npos);
    const auto first = r.out.find("\n       1  ");
    REQUIRE(first != std::string::npos);
    CHECK(r.out.substr(first, r.out.find('\n', first + 1) - first).find(fmt::format(" {}  ", arg)) != std::string::npos);
    // summary keeps the run's output whole too
    r = run_cli({"run", "--model", tiny(), "--ids", "287,262,267", "--trace", "summary"});
    REQUIRE(r.status == 0);
    CHECK(r.out.find(fmt::format(" {}  ", arg)) != std::string::npos);
    // export and report take a model too: its trace as JSON and .npy (which diff finds equal), its page
    TempDir d;
    r = run_cli({"export", "--model", tiny(), "--text", text["text"], "-o", d.file("t.json"), "--npy", d.file("t-npy")});
    REQUIRE(r.status == 0);
    const auto exported = nlohmann::json::parse(read_text(d.file("t.json")));
    bool found = false;
    for (const auto& s : exported["steps"])
        if (s["name"] == "blocks.1.hook_resid_post") {
            const std::vector<double> got = flat(s["values"]), want_resid = flat(text["blocks.1.hook_resid_post"]);
            REQUIRE(got.size() == want_resid.size());
            for (std::size_t i = 0; i < got.size(); ++i) CHECK(std::abs(got[i] - want_resid[i]) < kResidTol);
            found = true;
        }
    CHECK(found);
    CHECK(run_cli({"diff", d.file("t.json"), d.file("t-npy")}).status == 0);
    CHECK(run_cli({"report", "--model", tiny(), "--ids", "287,262,267", "-o", d.file("r.html")}).status == 0);
    CHECK(read_text(d.file("r.html")).find("blocks.1.attn.hook_pattern") != std::string::npos);
    // explain recomputes a cell of a model's trace; decode runs it one token at a time with a KV cache
    r = run_cli({"explain", "--model", tiny(), "--text", text["text"], "blocks.1.attn.hook_pattern[h2,␣fell,the]"});
    REQUIRE(r.status == 0);
    CHECK(r.out.find("trace: 0.9499  ✓ (the same)") != std::string::npos);
    r = run_cli({"decode", "--model", tiny(), "--text", text["text"]});
    CHECK(r.status == 0);
    CHECK(r.out.find("matches: 3 steps through unembed") != std::string::npos);  // the logits too
    // --max-memory holds a model's weights (its largest block 110 KiB in float32) too, before any is converted
    // (105 KiB: the safetensors header, 2,280 bytes of JSON, is read within it at kJsonBytesPerTextByte)
    // (a copy without the tokenizer, whose parse alone would need more than that)
    TempDir bare;
    for (const char* f : {"config.json", "model.safetensors"}) fs::copy_file(tiny() + "/" + f, bare.file(f));
    // Its float32 matrices are read in place (98.0 KiB, none read whole for a split), within 105 KiB: the
    // run's plan refuses it then (tests/test_hf_llama.cpp holds a refusal of the weights themselves).
    r = run_cli({"--max-memory", "105K", "run", "--model", bare.path(), "--ids", "1"});
    CHECK(r.status == 2);
    CHECK(r.err.find("expected weights that fit") == std::string::npos);
    CHECK(r.err.find("expected a run that fits in 105.0 KiB") != std::string::npos);
    // a copy whose data starts 1 byte later (its header 1 byte longer): every float32 matrix at an odd
    // address, converted, and c_attn read whole once more to be split (12.0 KiB): 110.0 KiB
    TempDir odd;
    fs::copy_file(tiny() + "/config.json", odd.file("config.json"));
    write_text(odd.file("model.safetensors"), with_header_padding(read_text(bare.file("model.safetensors")), 1));
    r = run_cli({"--max-memory", "105K", "run", "--model", odd.path(), "--ids", "1"});
    CHECK(r.status == 2);
    CHECK(r.err.find("model.safetensors: expected weights that fit in 105.0 KiB (--max-memory) as the run holds them: the model's own tensors, one block's weights and one of them once more, read whole to be transposed or split, found 110.0 KiB of them") != std::string::npos);
}

TEST_CASE("steps --model lists a checkpoint's steps without a text, the token axes as T, and with --text its shapes") {
    auto r = run_cli({"steps", "--model", tiny()});
    REQUIRE(r.status == 0);
    CHECK(r.err.empty());
    CHECK(r.out.find("(T: the text's tokens)") != std::string::npos);
    CHECK(r.out.find("blocks.1.attn.hook_pattern") != std::string::npos);
    CHECK(r.out.find("4xTxT") != std::string::npos);  // (head, query, key): the config's 4 heads
    CHECK(r.out.find("Tx321") != std::string::npos);  // (pos, vocab): the logits
    // the same steps, in the same order, as with a text; there the shapes are the text's
    auto t = run_cli({"steps", "--model", tiny(), "--text", "the ring fell"});
    REQUIRE(t.status == 0);
    CHECK(t.out.find("4x3x3") != std::string::npos);
    CHECK(t.out.find("(T: the text's tokens)") == std::string::npos);
    auto names = [](const std::string& out) {
        std::vector<std::string> v;
        for (std::size_t at = out.find("blocks."); at != std::string::npos; at = out.find("blocks.", at + 1))
            if (at == 0 || out[at - 1] == ' ') v.push_back(out.substr(at, out.find(' ', at) - at));
        return v;
    };
    CHECK(!names(r.out).empty());
    CHECK(names(r.out) == names(t.out));
    // and as run records them: run's --json names the same steps
    const auto j = nlohmann::json::parse(run_cli({"run", "--model", tiny(), "--text", "the ring fell", "--json"}).out);
    for (const auto& s : j["steps"]) CHECK(r.out.find(s["name"].get<std::string>()) != std::string::npos);
    // other families too
    for (const char* dir : {"tiny-bert", "tiny-llama"}) {
        INFO(dir);
        CHECK(run_cli({"steps", "--model", models_dir() + "/" + dir}).status == 0);
    }
    // refusals: one line, exit 2
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"steps", "--model", models_dir() + "/none"},
          std::vector<std::string>{"steps", "003-3.1-ring-fell", "--model", tiny()},
          std::vector<std::string>{"steps", "--text", "the ring"},
          std::vector<std::string>{"steps"}}) {
        INFO(fmt::format("{}", fmt::join(args, " ")));
        const auto bad = run_cli(args);
        CHECK(bad.status == 2);
        CHECK(bad.out.empty());
        CHECK(std::count(bad.err.begin(), bad.err.end(), '\n') == 1);
    }
}

TEST_CASE("explain takes a token as typed: a label with or without its leading-space mark, and refuses an ambiguous one") {
    // "fell" and "ring" are the pieces ␣fell and ␣ring: the same cell as by number
    auto by_word = run_cli({"explain", "--model", tiny(), "--text", "the ring fell", "blocks.0.attn.hook_pattern[h0, fell, ring]"});
    REQUIRE(by_word.status == 0);
    const auto by_number = run_cli({"explain", "--model", tiny(), "--text", "the ring fell", "blocks.0.attn.hook_pattern[0,2,1]"});
    REQUIRE(by_number.status == 0);
    CHECK(by_word.out == by_number.out);
    // the mark as labels show it, as GPT-2 spells it, as SentencePiece spells it
    for (const char* typed : {"␣fell", "Ġfell", "▁fell"}) {
        INFO(typed);
        const auto r = run_cli({"explain", "--model", tiny(), "--text", "the ring fell",
                                fmt::format("blocks.0.attn.hook_pattern[h0,{},ring]", typed)});
        REQUIRE(r.status == 0);
        CHECK(r.out == by_number.out);
    }
    // "ring" twice: refused, the candidates listed with their positions, the number suggested
    auto r = run_cli({"explain", "--model", tiny(), "--text", "the ring and the ring", "blocks.0.attn.hook_pattern[h0,ring,0]"});
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(r.err.find("␣ring at 1, ␣ring at 4") != std::string::npos);
    CHECK(r.err.find("number (0..4") != std::string::npos);
    // a token recurring often: the first 8 listed, the line kept short
    r = run_cli({"explain", "--model", tiny(), "--text", "the the the the the the the the the the the",
                 "blocks.0.attn.hook_pattern[h0,␣the,0]"});
    CHECK(r.status == 2);
    CHECK(r.err.find("␣the at 8 and 2 more") != std::string::npos);
    // "the" is both "the" and "␣the": ambiguous; typed with its mark it is the one with the mark
    r = run_cli({"explain", "--model", tiny(), "--text", "the ring the", "blocks.0.attn.hook_pattern[h0,the,0]"});
    CHECK(r.status == 2);
    CHECK(r.err.find("the at 0, ␣the at 2") != std::string::npos);
    r = run_cli({"explain", "--model", tiny(), "--text", "the ring the", "blocks.0.attn.hook_pattern[h0,␣the,0]"});
    REQUIRE(r.status == 0);
    CHECK(r.out == run_cli({"explain", "--model", tiny(), "--text", "the ring the", "blocks.0.attn.hook_pattern[h0,2,0]"}).out);
    // a SentencePiece model's ▁: "ring" is ␣ring
    const std::string llama = models_dir() + "/tiny-llama";
    r = run_cli({"explain", "--model", llama, "--text", "the ring fell", "blocks.0.attn.hook_pattern[h0,fell,ring]"});
    REQUIRE(r.status == 0);
    CHECK(r.out == run_cli({"explain", "--model", llama, "--text", "the ring fell", "blocks.0.attn.hook_pattern[h0,3,2]"}).out);
    // BERT's ## marks a continuation, its own piece: "er" is not "##er"
    const std::string bert = models_dir() + "/tiny-bert";
    r = run_cli({"explain", "--model", bert, "--text", "ringer", "blocks.0.hook_resid_pre[er,d0]"});
    CHECK(r.status == 2);
    CHECK(r.err.find("expected a label of axis pos") != std::string::npos);
    CHECK(run_cli({"explain", "--model", bert, "--text", "ringer", "blocks.0.hook_resid_pre[##er,d0]"}).status == 0);
}

TEST_CASE("a piece of a control character is labelled visibly: \\x08 for backspace, never the raw byte") {
    // Byte-level BPE has a piece for every byte, the 32 C0 controls and DEL among them: drawn raw they are an
    // empty box in a browser and a command to a terminal. The labels keep ␣, ↵ and ⇥ and escape the others as
    // core/printable.hpp does.
    attntrace::ModelInput in;
    in.text = std::string("the\bring\tfell\r\n");
    const attntrace::HfModel m = attntrace::load_hf_model(tiny(), in);
    auto raw_control = [](const std::string& s) {
        return std::any_of(s.begin(), s.end(), [](char c) { return (c >= 0 && c < 0x20) || c == 0x7f; });
    };
    for (const auto& label : m.lesson.vocab) {
        INFO(label);
        CHECK_FALSE(raw_control(label));
        CHECK_FALSE(label.empty());
    }
    CHECK(m.lesson.vocab_label(196) == "\\x08");  // the backspace's piece (GPT-2 spells it U+0108)
    CHECK(m.tokenizer->piece(196) == "\xC4\x88");
    CHECK(m.lesson.tokens == std::vector<std::string>{"the", "\\x08", "r", "ing", "⇥", "f", "e", "ll", "\\r", "↵"});
    // the same labels in run's tokens line and in the report's data, whose script draws them as text
    const auto r = run_cli({"run", "--model", tiny(), "--text", *in.text, "--steps", "1"});
    REQUIRE(r.status == 0);
    CHECK(r.out.find("tokens: the \\x08 r ing ⇥ f e ll \\r ↵\n") != std::string::npos);
    TempDir d;
    REQUIRE(run_cli({"export", "--model", tiny(), "--text", *in.text, "-o", d.file("t.json")}).status == 0);
    CHECK(nlohmann::json::parse(read_text(d.file("t.json")))["tokens"][1] == "\\x08");
}

TEST_CASE("broken safetensors files are refused on their header, naming the file, the tensor and the field") {
    const std::string ok = R"({"a":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]}})";
    CHECK(refusal_of_file(st_bytes(ok, 16)) == "(accepted)");
    CHECK(refusal_of_file(std::string("\x05\0\0", 3)) == "model.safetensors: byte 0: expected 8 bytes of header length (a safetensors file), found a file of 3 bytes");
    // a header length past the file: truncated
    CHECK(refusal_of_file(st_bytes(ok, 16).substr(0, 30)).find("expected a header length within the file's 22 bytes") != std::string::npos);
    // a header claiming terabytes
    CHECK(refusal_of_file(st_bytes(ok, 16, std::uint64_t{1} << 40)).find("expected a header length of at most 16777216 bytes, found 1099511627776 bytes") != std::string::npos);
    // offsets past the end of the data
    CHECK(refusal_of_file(st_bytes(R"({"a":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]}})", 8)) ==
          "model.safetensors: a.data_offsets: expected a range within the 8 bytes of data, found [0, 16], past the end of the file");
    // a shape of terabytes over a small range
    CHECK(refusal_of_file(st_bytes(R"({"a":{"dtype":"F32","shape":[1000000,1000000,1000],"data_offsets":[0,16]}})", 16))
              .find("a.data_offsets: expected a range as long as shape 1000000x1000000x1000 of F32 needs") != std::string::npos);
    // shape x dtype != range
    CHECK(refusal_of_file(st_bytes(R"({"a":{"dtype":"F16","shape":[2,2],"data_offsets":[0,16]}})", 16)) ==
          "model.safetensors: a.data_offsets: expected a range of 8 bytes (2x2 values of F16, 2 bytes each), found [0, 16]: 16 bytes");
    // overlapping ranges
    CHECK(refusal_of_file(st_bytes(R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]},"b":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})", 16)) ==
          "model.safetensors: b.data_offsets: expected a range starting at byte 16, where a ends, found [8, 16], overlapping a");
    // a hole
    CHECK(refusal_of_file(st_bytes(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})", 16))
              .find("a.data_offsets: expected a range starting at byte 0, where the data starts, found [8, 16], leaving a hole of 8 bytes") != std::string::npos);
    // unknown dtype
    CHECK(refusal_of_file(st_bytes(R"({"a":{"dtype":"F17","shape":[2],"data_offsets":[0,8]}})", 8))
              .find("a.dtype: expected a safetensors dtype (F32, F16, BF16") != std::string::npos);
    // JSON errors at the file's byte offsets (the header starts at byte 8)
    CHECK(refusal_of_file(st_bytes(R"({"a":})", 0)).find("model.safetensors: byte 13") != std::string::npos);
    // a known dtype we do not convert: refused only when asked for
    TempDir d;
    write_text(d.file("m.safetensors"), st_bytes(R"({"a":{"dtype":"I64","shape":[1],"data_offsets":[0,8]}})", 8));
    SafetensorsFile f(d.file("m.safetensors"));
    CHECK_THROWS_WITH(f.load(f.header().tensors[0]), Catch::Contains("a.dtype: expected F32, F16 or BF16 (the dtypes converted to float32), found I64"));
}

TEST_CASE("broken checkpoint folders are refused with exit 2 naming the file and the tensor or field") {
    auto refusal = [](const std::vector<std::string>& args) {
        const auto r = run_cli(args);
        CHECK(r.status == 2);
        return r.err;
    };
    {  // a missing tensor
        TempDir d;
        copy_model(tiny(), d);
        write_text(d.file("model.safetensors"), st_bytes(R"({"wte.weight":{"dtype":"F32","shape":[321,32],"data_offsets":[0,41088]}})", 41088));
        CHECK(refusal({"run", "--model", d.path(), "--ids", "1"}).find(
                  "model.safetensors: wpe.weight: expected a tensor \"wpe.weight\" (learned positions, n_positions x n_embd), found none") != std::string::npos);
    }
    {  // a tensor of the wrong shape for the config
        TempDir d;
        copy_model(tiny(), d);
        auto cfg = nlohmann::json::parse(read_text(d.file("config.json")));
        cfg["n_positions"] = 32;
        write_text(d.file("config.json"), cfg.dump());
        CHECK(refusal({"run", "--model", d.path(), "--ids", "1"}).find(
                  "wpe.weight: expected a 32x32 tensor (learned positions, n_positions x n_embd), found a 64x32 tensor") != std::string::npos);
    }
    {  // an eps float32 cannot hold (1e308 is infinite there), or none a norm has: config.json's field, before any step
        TempDir d;
        copy_model(tiny(), d);
        auto cfg = nlohmann::json::parse(read_text(d.file("config.json")));
        for (const double eps : {1e308, 0.0, -1e-5, 1e-40, 2.0}) {
            cfg["layer_norm_epsilon"] = eps;
            write_text(d.file("config.json"), cfg.dump());
            const std::string err = refusal({"run", "--model", d.path(), "--ids", "1"});
            CHECK(err.find("config.json: layer_norm_epsilon: expected a number from 1e-30 to 1 (the norm's eps, added in "
                           "float32), found ") != std::string::npos);
            CHECK(std::count(err.begin(), err.end(), '\n') == 1);
        }
    }
    {  // an unknown model_type, the known ones listed
        TempDir d;
        copy_model(tiny(), d);
        auto cfg = nlohmann::json::parse(read_text(d.file("config.json")));
        cfg["model_type"] = "t5";
        write_text(d.file("config.json"), cfg.dump());
        CHECK(refusal({"run", "--model", d.path(), "--ids", "1"}).find(
                  "config.json: model_type: expected a model type this attntrace maps (" + known_model_types() + "), found string \"t5\"") != std::string::npos);
    }
    // text that is not UTF-8: the byte offset
    CHECK(refusal({"run", "--model", tiny(), "--text", "the \xff ring"}) ==
          "attntrace: error: --text: byte 4: expected UTF-8 text, found the byte 0xff\n");
    // ids past the vocabulary, more tokens than positions, both --text and --ids
    CHECK(refusal({"run", "--model", tiny(), "--ids", "1,100000"}).find("--ids: [1]: expected a token id below the vocabulary's") != std::string::npos);
    CHECK(refusal({"run", "--model", tiny(), "--ids", "1,x"}).find("--ids: [1]: expected a token id (an integer), found \"x\"") != std::string::npos);
    CHECK(refusal({"run", "--model", tiny(), "--text", std::string(70, 'a') + " " + std::string(200, '!')}).find("expected at most 64 tokens (config.json's n_positions)") != std::string::npos);
    CHECK(refusal({"run", "--model", tiny(), "--text", "a", "--ids", "1"}).find("--ids: expected either --text or --ids, found both") != std::string::npos);
    CHECK(refusal({"run", "--model", models_dir() + "/tiny-gpt2-f16", "--text", "a"}).find("expected a tokenizer") != std::string::npos);
    {  // a tokenizer of a type this reader does not know, and a malformed merge
        TempDir d;
        copy_model(tiny(), d);
        auto tok = nlohmann::json::parse(read_text(d.file("tokenizer.json")));
        tok["model"]["type"] = "WordPiece";
        write_text(d.file("tokenizer.json"), tok.dump());
        CHECK(refusal({"run", "--model", d.path(), "--ids", "1"}).find(
                  "tokenizer.json: model.type: expected \"BPE\" (byte-level BPE; WordPiece and Unigram are not read yet), found string \"WordPiece\"") != std::string::npos);
        tok["model"]["type"] = "BPE";
        tok["model"]["merges"][3] = "a b c";
        write_text(d.file("tokenizer.json"), tok.dump());
        CHECK(refusal({"run", "--model", d.path(), "--ids", "1"}).find(
                  "tokenizer.json: model.merges[3]: expected \"A B\": two pieces and one space, found string \"a b c\"") != std::string::npos);
    }
    {  // an index naming a shard outside the folder
        TempDir d;
        copy_model(models_dir() + "/tiny-gpt2-bf16-sharded", d);
        auto index = nlohmann::json::parse(read_text(d.file("model.safetensors.index.json")));
        index["weight_map"]["wte.weight"] = "../model.safetensors";
        write_text(d.file("model.safetensors.index.json"), index.dump());
        CHECK(refusal({"run", "--model", d.path(), "--ids", "1"}).find(
                  "model.safetensors.index.json: weight_map.wte.weight: expected the name of a shard file in the same folder, found string \"../model.safetensors\"") != std::string::npos);
    }
    {  // a shard name holding a NUL byte: opened, it would be cut to another name
        TempDir d;
        copy_model(models_dir() + "/tiny-gpt2-bf16-sharded", d);
        auto index = nlohmann::json::parse(read_text(d.file("model.safetensors.index.json")));
        index["weight_map"]["wpe.weight"] = std::string("model-00001-of-00002.safetensors\0x", 34);
        write_text(d.file("model.safetensors.index.json"), index.dump());
        const std::string err = refusal({"run", "--model", d.path(), "--ids", "1"});
        CHECK(err.find("model.safetensors.index.json: weight_map.wpe.weight: expected the name of a shard file "
                       "without a NUL byte") != std::string::npos);
        CHECK(std::count(err.begin(), err.end(), '\n') == 1);
    }
    {  // a shard the index names that is not there
        TempDir d;
        copy_model(models_dir() + "/tiny-gpt2-bf16-sharded", d);
        fs::remove(d.file("model-00002-of-00002.safetensors"));
        CHECK(refusal({"run", "--model", d.path(), "--ids", "1"}).find("model-00002-of-00002.safetensors: expected a safetensors file") != std::string::npos);
    }
}

TEST_CASE("a lesson on a checkpoint: its model and tokens from a folder and a text, its claims checked against them") {
    // docs/examples/model-lesson.json: figures about tiny-gpt2 ("the ring fell") taken from PyTorch's float64
    // forward (reference.json), a misprint and a wrong next token among them
    const std::string example = source_dir() + "/docs/examples/model-lesson.json";
    auto r = run_cli({"check", example});
    CHECK(r.status == 0);  // every verdict as the lesson expects
    CHECK(r.out.find("3 agree") != std::string::npos);
    CHECK(r.out.find("2 disagree") != std::string::npos);
    CHECK(r.out.find("the top next token is 'S' (#50, p = 0.1295), not '␣10'") != std::string::npos);
    // the model's steps, the tokens as pieces, the next tokens: as run --model shows them
    r = run_cli({"run", example, "--json", "--trace", "none", "--top-k", "1"});
    REQUIRE(r.status == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["tokens"] == nlohmann::json({"the", "␣ring", "␣fell"}));
    const std::vector<double> want = flat(reference()["texts"][0]["last_logits"]);
    CHECK(j["model"]["next_tokens"][0]["id"] == std::max_element(want.begin(), want.end()) - want.begin());
    CHECK(j["claims"].size() == 5);
    // a lesson of the same claims written in a folder elsewhere: model.dir is relative to the lesson file
    TempDir d;
    auto doc = nlohmann::json::parse(read_text(example));
    doc["model"]["dir"] = tiny();
    doc["model"].erase("text");
    doc["model"]["ids"] = reference()["texts"][0]["ids"];
    write_text(d.file("ids.json"), doc.dump());
    CHECK(run_cli({"check", d.file("ids.json")}).status == 0);  // the same ids, the same verdicts
    // the refusals, one line each, exit 2
    auto refusal = [&](const nlohmann::json& lesson) {
        write_text(d.file("bad.json"), lesson.dump());
        const auto rr = run_cli({"check", d.file("bad.json")});
        CHECK(rr.status == 2);
        CHECK(std::count(rr.err.begin(), rr.err.end(), '\n') == 1);
        return rr.err;
    };
    auto bad = doc;
    bad["model"]["text"] = "the ring";
    CHECK_THAT(refusal(bad), Catch::Contains("model: expected a text or ids (one of them), found both"));
    bad = doc;
    bad["model"]["dir"] = "no-such-folder";
    CHECK_THAT(refusal(bad), Catch::Contains("no-such-folder: expected a checkpoint folder"));
    bad = doc;
    bad["config"] = {{"d_model", 4}};  // the model's config is the checkpoint's
    CHECK_THAT(refusal(bad), Catch::Contains("config: expected one of"));
    bad = doc;
    bad["model"]["ids"] = {287, 262, 99999};
    CHECK_THAT(refusal(bad), Catch::Contains("bad.json: model.ids: [2]: expected a token id below the vocabulary's 321"));
    bad = doc;
    bad["claims"][3]["token"] = "no-such-piece";
    CHECK_THAT(refusal(bad), Catch::Contains("claims[3].token"));
    bad = doc;
    bad["claims"][3]["step"] = "blocks.1.hook_resid_post";
    CHECK_THAT(refusal(bad), Catch::Contains("claims[3].step: expected the logits (unembed)"));
    bad = doc;
    bad["claims"][3]["at"] = nlohmann::json::object();
    CHECK_THAT(refusal(bad), Catch::Contains("claims[3].at: expected one position fixed"));
    // compare reads lesson files alone, and says so
    const auto c = run_cli({"compare", example, "--set", "eps=0.1"});
    CHECK(c.status == 2);
    CHECK_THAT(c.err, Catch::Contains("model: expected a lesson of its own here"));
}

TEST_CASE("a tensor is converted with its file's pages dropped as it goes: the float32 copy and the file are not resident together") {
#ifdef ATTNTRACE_TEST_ASAN
    WARN("not measured under AddressSanitizer: its shadow memory is not what a user's run holds");
    return;
#endif
    // 128 MiB of F32: without the drops chunk by chunk, the peak is the copy and the file's 128 MiB of pages
    // (2x the tensor); with them, the copy and one chunk (kConvertChunkValues: 16 MiB).
    constexpr std::size_t kValues = std::size_t{32} << 20;
    TempDir d;
    {
        std::ofstream out(d.file("big.safetensors"), std::ios::binary);
        const std::string header = fmt::format(R"({{"w":{{"dtype":"F32","shape":[{}],"data_offsets":[0,{}]}}}})",
                                               kValues, kValues * 4);
        out << st_bytes(header, 0);
        const std::vector<float> row(std::size_t{1} << 20, 0.5f);
        for (std::size_t i = 0; i < kValues; i += row.size())
            out.write(reinterpret_cast<const char*>(row.data()), static_cast<std::streamsize>(row.size() * 4));
    }
    SafetensorsFile f(d.file("big.safetensors"));
    if (!reset_peak_rss()) {
        WARN("/proc/self/clear_refs not writable: not measured");
        return;
    }
    const std::size_t before = resident_bytes();
    const Tensor t = f.load(f.header().tensors[0]);
    const std::size_t peak = peak_resident_bytes();
    CHECK(t.data.back() == 0.5f);
    // The copy, one chunk of the file's pages, and room for the allocator's own pages.
    constexpr std::size_t kSlackBytes = std::size_t{8} << 20;
    const std::size_t allowed = before + kValues * 4 + kConvertChunkValues * 4 + kSlackBytes;
    INFO("resident before " << before << ", peak " << peak << ", allowed " << allowed);
    CHECK(peak <= allowed);
}

}  // namespace test_hf_models

// tokenizer.json normalizers (model/normalizer.hpp) on Qwen2's byte-level
// BPE: tiny-qwen2/tokenizer.json (make_tiny_llama.py: NFC, Qwen2's Split
// pattern, ByteLevel, its special tokens) and the same file with each other
// normalizer read, held to the ids the JavaScript port of Hugging Face's
// tokenizers gave (tokenizer-cases.json, tokenizer_ids_qwen2.mjs); and the
// refusals of the normalizer and BPE fields, one line each; and the guard in
// front of libsentencepiece (model/sentencepiece_guard.cpp).
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/error.hpp"
#include "model/sentencepiece.hpp"
#include "model/tokenizer.hpp"
#include "support.hpp"

using namespace attntrace;
using namespace attntrace::test;

namespace test_hf_tokenizers {

namespace {

std::string qwen2() { return source_dir() + "/tests/models/tiny-qwen2"; }

nlohmann::json qwen2_doc() { return nlohmann::json::parse(read_text(qwen2() + "/tokenizer.json")); }

// The refusal's message when the edited tokenizer.json is read.
std::string refusal(const nlohmann::json& doc) {
    try {
        Tokenizer::from_tokenizer_json(doc.dump(), "DIR/tokenizer.json");
    } catch (const InputError& e) {
        return e.what();
    }
    return "(read without a refusal)";
}

}  // namespace

TEST_CASE("Qwen2's tokenizer.json (NFC, its Split pattern, ByteLevel) and each other normalizer give the JavaScript port's ids") {
    const auto cases = nlohmann::json::parse(read_text(qwen2() + "/tokenizer-cases.json"));
    REQUIRE(cases["variants"].size() == 6);
    for (const auto& v : cases["variants"]) {
        auto doc = qwen2_doc();
        doc["normalizer"] = v["normalizer"];
        const Tokenizer t = Tokenizer::from_tokenizer_json(doc.dump(), "tokenizer.json");
        REQUIRE(v["cases"].size() >= 14);
        for (const auto& c : v["cases"]) {
            INFO(v["normalizer"].dump() << ": " << c["text"].get<std::string>());
            CHECK(t.encode(c["text"], "--text") == c["ids"].get<std::vector<std::int64_t>>());
        }
    }
}

TEST_CASE("NFC makes a decomposed accent the precomposed letter's piece, and the folder's tokenizer.json is read") {
    const auto t = Tokenizer::open(qwen2());
    REQUIRE(t);
    CHECK(t->vocab_size() == 320);  // tiny-qwen2's config.json vocab_size
    const auto composed = t->encode("caf\u00e9", "--text"), decomposed = t->encode("cafe\u0301", "--text");
    CHECK(composed == decomposed);
    CHECK(t->shown(composed.back()) == "\u00e9");
    // without the normalizer, the two spellings are other bytes, so other ids
    auto doc = qwen2_doc();
    doc["normalizer"] = nullptr;
    const Tokenizer raw = Tokenizer::from_tokenizer_json(doc.dump(), "tokenizer.json");
    CHECK(raw.encode("cafe\u0301", "--text") != composed);
    // special tokens are matched as written, the text between them normalized
    const auto ids = t->encode("<|im_start|>e\u0301<|im_end|>", "--text");
    REQUIRE(ids.size() == 3);
    CHECK(t->piece(ids[0]) == "<|im_start|>");
    CHECK(ids[1] == composed.back());
    CHECK(t->piece(ids[2]) == "<|im_end|>");
}

TEST_CASE("a run on tiny-qwen2 takes its text through the NFC tokenizer") {
    const auto r = run_cli({"run", "--model", qwen2(), "--text", "cafe\u0301 fell", "--trace", "none", "--json"});
    REQUIRE(r.status == 0);
    const auto j = nlohmann::json::parse(r.out);
    const auto t = Tokenizer::open(qwen2());
    REQUIRE(t);
    std::vector<std::string> shown;
    for (const auto id : t->encode("caf\u00e9 fell", "--text")) shown.push_back(t->shown(id));
    CHECK(j["tokens"].get<std::vector<std::string>>() == shown);  // as the composed spelling: c a f é ␣fell
    CHECK(shown.size() == 5);
    CHECK(shown[3] == "\u00e9");
}

TEST_CASE("normalizers and BPE options byte-level BPE does not compute are refused, naming the field") {
    auto doc = qwen2_doc();
    doc["normalizer"] = {{"type", "Prepend"}, {"prepend", "\u2581"}};
    CHECK(refusal(doc) == "DIR/tokenizer.json: normalizer.type: expected null or a normalizer byte-level BPE computes: "
                          "\"NFC\", \"NFD\", \"NFKC\", \"NFKD\", \"Lowercase\" or a \"Sequence\" of them, found string \"Prepend\"");
    doc["normalizer"] = {{"type", "Sequence"},
                         {"normalizers", {{{"type", "NFC"}}, {{"type", "Lowercase"}}, {{"type", "Replace"}}}}};
    CHECK(refusal(doc).rfind("DIR/tokenizer.json: normalizer.normalizers[2].type: expected null or a normalizer", 0) == 0);
    CHECK(refusal(doc).find("found string \"Replace\"") != std::string::npos);
    doc["normalizer"] = {{"type", "Sequence"}, {"normalizers", {{{"type", "Sequence"}, {"normalizers", nlohmann::json::array()}}}}};
    CHECK(refusal(doc).find("normalizer.normalizers[0].type: expected") != std::string::npos);
    CHECK(refusal(doc).find("a Sequence within a Sequence is not read") != std::string::npos);
    doc["normalizer"] = {{"type", "Sequence"}, {"normalizers", "NFC"}};
    CHECK(refusal(doc).rfind("DIR/tokenizer.json: normalizer.normalizers: expected an array of normalizers", 0) == 0);
    doc["normalizer"] = {{"type", "BertNormalizer"}};
    CHECK(refusal(doc).find("found string \"BertNormalizer\"") != std::string::npos);
    doc["normalizer"] = "NFC";
    CHECK(refusal(doc).rfind("DIR/tokenizer.json: normalizer: expected an object", 0) == 0);
    doc["normalizer"] = nlohmann::json::object();
    CHECK(refusal(doc).rfind("DIR/tokenizer.json: normalizer.type: expected", 0) == 0);

    doc = qwen2_doc();
    doc["model"]["byte_fallback"] = true;
    CHECK(refusal(doc).rfind("DIR/tokenizer.json: model.byte_fallback: expected false or null", 0) == 0);
    doc = qwen2_doc();
    doc["model"]["continuing_subword_prefix"] = "##";
    CHECK(refusal(doc) == "DIR/tokenizer.json: model.continuing_subword_prefix: expected \"\" or null (byte-level BPE "
                          "marks no word's inside or end), found string \"##\"");
    doc = qwen2_doc();
    doc["model"]["end_of_word_suffix"] = "</w>";
    CHECK(refusal(doc).rfind("DIR/tokenizer.json: model.end_of_word_suffix: expected", 0) == 0);
    doc = qwen2_doc();
    doc["model"]["dropout"] = 0.1;
    CHECK(refusal(doc).rfind("DIR/tokenizer.json: model.dropout: expected null or 0", 0) == 0);
    for (const auto& m : {refusal(doc)}) CHECK(std::count(m.begin(), m.end(), '\n') == 0);
}

TEST_CASE("BPE merges outside the vocabulary, malformed merges and two pieces of one id are refused, naming the merge or entry") {
    auto doc = qwen2_doc();  // merges in the two-element array form
    REQUIRE(doc["model"]["vocab"].contains("q"));
    REQUIRE(!doc["model"]["vocab"].contains("qqq"));
    REQUIRE(!doc["model"]["vocab"].contains("qq"));
    doc["model"]["merges"][3] = {"\u0120", "qqq"};
    CHECK(refusal(doc) == "DIR/tokenizer.json: model.merges[3]: expected a merge of two pieces of the vocabulary, "
                          "found \"qqq\", which is not in it");
    doc["model"]["merges"][3] = {"qqq", "q"};
    CHECK(refusal(doc).rfind("DIR/tokenizer.json: model.merges[3]: expected a merge of two pieces of the vocabulary", 0) == 0);
    // Hugging Face's tokenizers refuse a merge whose result has no id as well (MergeTokenOutOfVocabulary)
    doc["model"]["merges"][3] = {"q", "q"};
    CHECK(refusal(doc) == "DIR/tokenizer.json: model.merges[3]: expected a merge whose result is in the vocabulary, "
                          "found \"q\" + \"q\" = \"qq\", which is not in it");
    doc["model"]["merges"][3] = {"q", "q", "q"};
    CHECK(refusal(doc).rfind("DIR/tokenizer.json: model.merges[3]: expected \"A B\" or [\"A\", \"B\"], found an array of 3", 0) == 0);
    doc["model"]["merges"][3] = {"q", 7};
    CHECK(refusal(doc).rfind("DIR/tokenizer.json: model.merges[3][1]: expected a string", 0) == 0);
    doc["model"]["merges"][3] = "q  q";
    CHECK(refusal(doc).rfind("DIR/tokenizer.json: model.merges[3]: expected \"A B\": two pieces and one space", 0) == 0);
    doc["model"]["merges"][3] = "qq";
    CHECK(refusal(doc).rfind("DIR/tokenizer.json: model.merges[3]: expected \"A B\": two pieces and one space", 0) == 0);

    doc = qwen2_doc();
    doc["model"]["vocab"]["zzz"] = doc["model"]["vocab"]["q"];  // read after "q": keys in order
    CHECK(refusal(doc) == fmt::format("DIR/tokenizer.json: model.vocab.zzz: expected an id no other piece of the vocabulary "
                                      "has, found {}, the id of \"q\" too", doc["model"]["vocab"]["q"].get<int>()));
    doc = qwen2_doc();  // an added token may repeat a vocabulary entry, as GPT-2's <|endoftext|> does
    doc["added_tokens"].push_back({{"id", doc["model"]["vocab"]["q"]}, {"content", "q"}});
    CHECK(refusal(doc) == "(read without a refusal)");
}

TEST_CASE("merges.txt and vocab.json: a merge outside the vocabulary, a malformed line, two pieces of one id, refused by the CLI in one line") {
    namespace fs = std::filesystem;
    const std::string gpt2 = source_dir() + "/tests/models/tiny-gpt2";
    auto run_with = [&](const std::string& vocab, const std::string& merges) {
        TempDir d;
        for (const char* f : {"config.json", "model.safetensors"}) fs::copy_file(gpt2 + "/" + f, d.file(f));
        write_text(d.file("vocab.json"), vocab);
        write_text(d.file("merges.txt"), merges);
        const auto r = run_cli({"run", "--model", d.path(), "--text", "the ring"});
        CHECK(r.status == 2);
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
        const std::string prefix = "attntrace: error: " + d.file("");
        return r.err.rfind(prefix, 0) == 0 ? r.err.substr(prefix.size()) : r.err;
    };
    const std::string vocab = read_text(gpt2 + "/vocab.json");
    std::vector<std::string> lines;  // merges.txt's lines, "#version: 0.2" first
    {
        std::istringstream in(read_text(gpt2 + "/merges.txt"));
        for (std::string l; std::getline(in, l);) lines.push_back(l);
    }
    REQUIRE(lines.size() > 7);
    auto merges_with_line_7 = [&](const std::string& l) {
        std::string out;
        for (std::size_t i = 0; i < lines.size(); ++i) out += (i == 6 ? l : lines[i]) + "\n";
        return out;
    };
    CHECK(run_with(vocab, merges_with_line_7("h qqq")) ==
          "merges.txt: line 7: expected a merge of two pieces of the vocabulary, found \"qqq\", which is not in it\n");
    CHECK(run_with(vocab, merges_with_line_7("q q")) ==
          "merges.txt: line 7: expected a merge whose result is in the vocabulary, found \"q\" + \"q\" = \"qq\", which is not in it\n");
    CHECK(run_with(vocab, merges_with_line_7("h e r")) ==
          "merges.txt: line 7: expected \"A B\": two pieces and one space, found \"h e r\"\n");
    CHECK(run_with(vocab, merges_with_line_7("he")) ==
          "merges.txt: line 7: expected \"A B\": two pieces and one space, found \"he\"\n");
    auto v = nlohmann::json::parse(vocab);
    v["zzz"] = v["q"];
    CHECK(run_with(v.dump(), merges_with_line_7(lines[6])).rfind(
              "vocab.json: zzz: expected an id no other piece of the vocabulary has, found", 0) == 0);
}

TEST_CASE("a text that normalization would grow past the limit is refused before it is built") {
    auto doc = qwen2_doc();
    doc["normalizer"] = {{"type", "NFKD"}};
    const Tokenizer t = Tokenizer::from_tokenizer_json(doc.dump(), "tokenizer.json");
    std::string text;
    // U+FDFA (3 bytes) is 18 characters under NFKD: 18 x 3.8 M > 64 M characters
    for (int i = 0; i < 3800000; ++i) text += "\uFDFA";
    CHECK_THROWS_WITH(t.encode(text, "--text"), Catch::StartsWith("--text: expected a text of at most 67108864 characters once normalized, found 68400000 characters"));
}

TEST_CASE("a folder whose tokenizer.json asks for an unknown normalizer is refused by the CLI in one line, exit 2") {
    TempDir d;
    namespace fs = std::filesystem;
    for (const char* f : {"config.json", "model.safetensors"}) fs::copy_file(qwen2() + "/" + f, d.file(f));
    auto doc = qwen2_doc();
    doc["normalizer"] = {{"type", "Precompiled"}, {"precompiled_charsmap", "AAAA"}};
    {
        std::ofstream out(d.file("tokenizer.json"));
        out << doc.dump();
    }
    const auto r = run_cli({"run", "--model", d.path(), "--text", "the ring"});
    CHECK(r.status == 2);
    CHECK(r.err.rfind("attntrace: error: " + d.file("tokenizer.json") + ": normalizer.type: expected null or a normalizer", 0) == 0);
    CHECK(r.err.find("found string \"Precompiled\"") != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
}

TEST_CASE("a tokenizer.model whose character map the library would walk out of bounds is refused before the library reads it") {
    // Both were made from tiny-llama's model with a normalizer_spec appended
    // (protobuf merges it): a root offset of 2^30 units, on which
    // libsentencepiece 0.1.97 crashed with SIGSEGV; a leaf value past the strings.
    const std::string dir = source_dir() + "/tests/fuzz-regressions/sentencepiece/";
    CHECK_THROWS_WITH(SentencePiece::load(dir + "charsmap-root-offset-past-the-trie.model"),
                      Catch::EndsWith("charsmap-root-offset-past-the-trie.model: normalizer_spec.precompiled_charsmap: expected a trie "
                                      "whose nodes stay within its 4 units, found a node whose children are at units 1073741568 to 1073741823"));
    CHECK_THROWS_WITH(SentencePiece::load(dir + "charsmap-leaf-value-past-the-strings.model"),
                      Catch::EndsWith("normalizer_spec.precompiled_charsmap: expected leaf values that start a NUL-ended string within "
                                      "its 2 bytes of strings, found the value 100000 (unit 200)"));
    // a size word past the bytes after it
    std::string model = read_text(source_dir() + "/tests/models/tiny-llama/tokenizer.model");
    const std::string blob = std::string("\xff\x00\x00\x00", 4) + std::string(8, '\0');
    model += std::string("\x1a") + char(2 + blob.size()) + "\x12" + char(blob.size()) + blob;
    CHECK_THROWS_WITH(SentencePiece::from_bytes(model, "tokenizer.model"),
                      "tokenizer.model: normalizer_spec.precompiled_charsmap: expected a trie size from 4 to the 8 bytes after it, found 255");
    // through the CLI: one line, exit 2 (the library never runs on it)
    TempDir d;
    namespace fs = std::filesystem;
    for (const char* f : {"config.json", "model.safetensors"})
        fs::copy_file(source_dir() + "/tests/models/tiny-llama/" + f, d.file(f));
    fs::copy_file(dir + "charsmap-root-offset-past-the-trie.model", d.file("tokenizer.model"));
    const auto r = run_cli({"run", "--model", d.path(), "--text", "the ring"});
    CHECK(r.status == 2);
    CHECK(r.err.rfind("attntrace: error: " + d.file("tokenizer.model") + ": normalizer_spec.precompiled_charsmap: expected a trie", 0) == 0);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
}

TEST_CASE("a tokenizer.model with a NUL byte in a piece is refused before the library's tries throw on it") {
    // Found by fuzzing: libsentencepiece built its trie from the piece "\0\0\x80"
    // as a NUL-ended key, and Darts-clone threw out of LoadFromSerializedProto.
    const std::string dir = source_dir() + "/tests/fuzz-regressions/sentencepiece/";
    CHECK_THROWS_WITH(SentencePiece::load(dir + "piece-with-a-nul-found-by-fuzzing.model"),
                      Catch::EndsWith("piece-with-a-nul-found-by-fuzzing.model: pieces[5].piece: expected a piece without NUL "
                                      "bytes, found a NUL at byte 0 of its 3"));
    // tiny-llama's model with one more piece, "a\0b" (protobuf appends to a repeated field)
    const std::string path = source_dir() + "/tests/models/tiny-llama/tokenizer.model";
    const std::size_t n = SentencePiece::load(path).size();
    const std::string piece("\x0a\x03" "a\0b", 5);
    const std::string model = read_text(path) + "\x0a" + char(piece.size()) + piece;
    CHECK_THROWS_WITH(SentencePiece::from_bytes(model, "tokenizer.model"),
                      fmt::format("tokenizer.model: pieces[{}].piece: expected a piece without NUL bytes, found a NUL at byte 1 of its 3", n));
    // the same piece without its NUL is read
    std::string clean = piece;
    clean[3] = 'x';
    CHECK(SentencePiece::from_bytes(read_text(path) + "\x0a" + char(clean.size()) + clean, "tokenizer.model").size() == n + 1);
}

TEST_CASE("a tokenizer.model with the library's own NFKC character map passes the guard and is applied") {
    // spm_train (Debian's sentencepiece 0.1.97) --model_type=bpe --vocab_size=60
    // --normalization_rule_name=nmt_nfkc on a few hundred lines of "the ring fell ｆｕｌｌ ﬁne café ...":
    // its map is the 237 KB trie the library builds for NFKC.
    const SentencePiece sp = SentencePiece::load(source_dir() + "/tests/models/spm-nmt-nfkc/tokenizer.model");
    std::vector<std::string> pieces;
    for (const auto id : sp.encode("\uff46\uff55\uff4c\uff4c \ufb01ne", "--text")) pieces.push_back(sp.piece(id));
    CHECK(pieces == std::vector<std::string>{"\u2581full", "\u2581fine"});  // full-width letters and the ﬁ ligature folded
}

TEST_CASE("Llama 2's tokenizer.json form (Prepend and Replace, byte fallback) alone is refused naming its first unread field") {
    // tiny-llama/tokenizer.json is the SentencePiece model as Hugging Face's LlamaConverter writes it;
    // the folder's tokenizer.model is what a run reads (test_hf_llama.cpp).
    auto doc = nlohmann::json::parse(read_text(source_dir() + "/tests/models/tiny-llama/tokenizer.json"));
    CHECK(refusal(doc).rfind("DIR/tokenizer.json: normalizer.normalizers[0].type: expected null or a normalizer byte-level BPE computes", 0) == 0);
    CHECK(refusal(doc).find("found string \"Prepend\"") != std::string::npos);
    doc["normalizer"] = nullptr;
    CHECK(refusal(doc).rfind("DIR/tokenizer.json: model.byte_fallback: expected false or null", 0) == 0);
}

TEST_CASE("decode gives the text the JavaScript port decodes from the same ids, characters cut between tokens as U+FFFD") {
    for (const char* folder : {"tiny-gpt2", "tiny-llama3-tokenizer", "tiny-qwen2"}) {
        const std::string dir = source_dir() + "/tests/models/" + folder;
        // decode-cases.json: made once by tests/models/tokenizer_decoded.mjs with @huggingface/transformers
        const auto cases = nlohmann::json::parse(read_text(dir + "/decode-cases.json"));
        const auto t = Tokenizer::open(dir);
        REQUIRE(t);
        REQUIRE(cases["cases"].size() >= 20);
        for (const auto& c : cases["cases"]) {
            INFO(folder << ": " << c["ids"].dump());
            CHECK(t->decode(c["ids"].get<std::vector<std::int64_t>>()) == c["text"].get<std::string>());
        }
    }
    // GPT-2's byte-level BPE loses nothing: the ids of any valid text decode to it, byte for byte
    const auto gpt2 = Tokenizer::open(source_dir() + "/tests/models/tiny-gpt2");
    REQUIRE(gpt2);
    for (const std::string text : {"the ring fell", "  x\r\n\ty  ", "\xF0\x9F\x99\x82 caf\xC3\xA9", ""})
        CHECK(gpt2->decode(gpt2->encode(text, "--text")) == text);
    CHECK(gpt2->decode({static_cast<std::int64_t>(gpt2->vocab_size()) + 5}).empty());  // an id the vocabulary lacks spells nothing
}

TEST_CASE("bytes that are no UTF-8 become one U+FFFD per maximal ill-formed subpart, as Python's errors=\"replace\"") {
    const std::string R = "\xEF\xBF\xBD";
    // expected values: bytes.decode("utf-8", errors="replace") in Python 3.11
    CHECK(replace_invalid_utf8("\xE2\x82") == R);                    // a character cut at the end
    CHECK(replace_invalid_utf8("a\xF0\x9F\x99" "b") == "a" + R + "b");  // cut in the middle
    CHECK(replace_invalid_utf8("\xC0\xAF") == R + R);                // an overlong lead is never a lead
    CHECK(replace_invalid_utf8("\xED\xA0\x80") == R + R + R);        // a surrogate: ED then two stray bytes
    CHECK(replace_invalid_utf8("\xE0\x80\xAF") == R + R + R);        // overlong 3-byte form
    CHECK(replace_invalid_utf8("\xF4\x90\x80\x80") == R + R + R + R);  // past U+10FFFF
    CHECK(replace_invalid_utf8("\x80\x80") == R + R);
    CHECK(replace_invalid_utf8("\xF0\x9F\x99\x82 \xC3\xA9") == "\xF0\x9F\x99\x82 \xC3\xA9");  // valid text unchanged
}

TEST_CASE("SentencePiece's decode gives back the text of the JavaScript port's cases (<s> a control piece: no text)") {
    const std::string dir = source_dir() + "/tests/models/tiny-llama";
    const auto cases = nlohmann::json::parse(read_text(dir + "/tokenizer-cases.json"));
    const auto t = Tokenizer::open(dir);
    REQUIRE(t);
    REQUIRE(t->file().find("tokenizer.model") != std::string::npos);
    for (const auto& c : cases["cases"]) {
        const std::string text = c["text"];
        INFO(text);
        // Llama's SentencePiece model adds a leading ▁ and decoding takes it off again; leading white
        // space of the text itself is kept (one case starts with a space)
        CHECK(t->decode(c["ids"].get<std::vector<std::int64_t>>()) == text);
    }
}

}  // namespace test_hf_tokenizers

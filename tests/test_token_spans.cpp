// A checkpoint's tokens and where each came from in the text as typed
// (core/token_span.hpp): the three tokenizers' spans on the tiny checkpoints'
// hard strings (accents, CJK, emoji, white space, controls), the export's and
// `run --json`'s token_ids, text and token_spans (and the npy export's
// index.json), the trace readers reading them back, and the refusals of
// spans that do not fit the text.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "export/npy_export.hpp"
#include "model/sentencepiece.hpp"
#include "model/tokenizer.hpp"
#include "model/wordpiece.hpp"
#include "model_reference.hpp"
#include "support.hpp"
#include "trace/trace_json.hpp"

using namespace attntrace;
using namespace attntrace::test;

namespace test_token_spans {

namespace {

std::string model(const char* name) { return source_dir() + "/tests/models/" + name; }

std::vector<std::string> case_texts(const char* name) {
    const auto cases = nlohmann::json::parse(read_text(model(name) + "/tokenizer-cases.json"));
    std::vector<std::string> out;
    const auto& list = cases.contains("cases") ? cases["cases"] : cases["variants"][0]["cases"];
    for (const auto& c : list) out.push_back(c["text"].get<std::string>());
    // beside the hard strings the generators wrote: multi-byte UTF-8 of every length, a decomposed accent
    out.push_back("naïve — 日本 🙂 ring");
    out.push_back("cafe\u0301 fell");
    return out;
}

std::string cut(const std::string& text, const TokenSpan& s) { return text.substr(s.begin, s.end - s.begin); }

// What holds for every tokenizer: one span per id, within the text, begins never decreasing, and the
// ids the tokenizer's own encode gives.
void check_spans(const Encoding& e, const std::string& text, const std::vector<std::int64_t>& ids) {
    CHECK(e.ids == ids);
    REQUIRE(e.spans.size() == e.ids.size());
    std::size_t last = 0;
    for (std::size_t i = 0; i < e.spans.size(); ++i) {
        INFO("token " << i);
        CHECK(e.spans[i].begin <= e.spans[i].end);
        CHECK(e.spans[i].end <= text.size());
        CHECK(e.spans[i].begin >= last);
        last = e.spans[i].begin;
    }
}

std::string without_spaces(std::string s) {
    s.erase(std::remove(s.begin(), s.end(), ' '), s.end());
    return s;
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
    for (auto at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
    return s;
}

}  // namespace

TEST_CASE("byte-level BPE: each piece spans exactly its bytes, the pieces tile the text, an added token spans what was written") {
    const auto t = Tokenizer::open(model("tiny-gpt2"));
    REQUIRE(t);
    for (const std::string& text : case_texts("tiny-gpt2")) {
        INFO(text);
        const Encoding e = t->tokenize(text, "--text");
        check_spans(e, text, t->encode(text, "--text"));
        std::string joined;
        for (std::size_t i = 0; i < e.ids.size(); ++i) {
            const std::string piece = cut(text, e.spans[i]);
            CHECK(!piece.empty());
            CHECK(e.spans[i].begin == joined.size());  // no byte skipped or taken twice
            joined += piece;
            // a piece that is whole characters decodes to the bytes it spans (one of a character's bytes: U+FFFD)
            if (!first_invalid_utf8(piece)) CHECK(t->decode({e.ids[i]}) == piece);
        }
        CHECK(joined == text);
    }
    const std::string text = "the ring<|endoftext|>é";
    const Encoding e = t->tokenize(text, "--text");
    REQUIRE(e.ids.size() == 5);  // the, ␣ring, <|endoftext|>, and é's two bytes, a token each
    CHECK(cut(text, e.spans[2]) == "<|endoftext|>");
    CHECK(e.spans[3] == TokenSpan{21, 22});  // half of é
    CHECK(e.spans[4] == TokenSpan{22, 23});
}

TEST_CASE("byte-level BPE under NFC (Qwen2): a piece spans the characters it was normalized from") {
    const auto t = Tokenizer::open(model("tiny-qwen2"));
    REQUIRE(t);
    for (const std::string& text : case_texts("tiny-qwen2")) {
        INFO(text);
        check_spans(t->tokenize(text, "--text"), text, t->encode(text, "--text"));
    }
    // e + U+0301 composes to é: the piece holding é spans both characters as typed
    const std::string text = "cafe\u0301 fell";
    const Encoding e = t->tokenize(text, "--text");
    // the spans tile the text as typed, pieces of one character sharing its span (é's two bytes, if split)
    std::string joined;
    for (std::size_t i = 0; i < e.ids.size(); ++i)
        if (i == 0 || !(e.spans[i] == e.spans[i - 1])) joined += cut(text, e.spans[i]);
    CHECK(joined == text);
    bool accent = false;
    for (std::size_t i = 0; i < e.ids.size(); ++i)
        if (t->decode({e.ids[i]}).find("\u00e9") != std::string::npos) {
            accent = true;
            CHECK(cut(text, e.spans[i]).find("e\u0301") != std::string::npos);
        }
    CHECK(accent);
    // a composition across characters (Hangul's ᄀ + ᅡ = 가 under NFC) spans those two alone, not the text
    const std::string hangul = "\u1100\u1161 ring";
    const Encoding h = t->tokenize(hangul, "--text");
    REQUIRE(h.ids.size() >= 2);
    CHECK(cut(hangul, h.spans.back()) == " ring");
    for (std::size_t i = 0; i + 1 < h.ids.size(); ++i) CHECK(cut(hangul, h.spans[i]) == "\u1100\u1161");
}

TEST_CASE("WordPiece: a piece spans the characters it came from, without ##, and [CLS] and [SEP] span nothing") {
    const auto wp = WordPiece::open(model("tiny-bert"));
    REQUIRE(wp);
    for (const std::string& text : case_texts("tiny-bert")) {
        INFO(text);
        const Encoding e = wp->tokenize(text, "--text");
        check_spans(e, text, wp->encode(text, "--text"));
        REQUIRE(e.ids.size() >= 2);
        CHECK(wp->piece(e.ids.front()) == "[CLS]");
        CHECK(e.spans.front() == TokenSpan{0, 0});
        CHECK(wp->piece(e.ids.back()) == "[SEP]");
        CHECK(e.spans.back() == TokenSpan{text.size(), text.size()});
        for (std::size_t i = 1; i + 1 < e.ids.size(); ++i) {
            std::string piece = wp->piece(e.ids[i]);
            INFO(piece);
            CHECK(!e.spans[i].empty());
            if (piece == "[UNK]" || text.compare(e.spans[i].begin, piece.size(), piece) == 0) continue;  // [MASK] as typed
            if (piece.rfind("##", 0) == 0) piece.erase(0, 2);
            // the text it spans, normalized as BERT's normalizer does, is the piece
            CHECK(without_spaces(wp->normalizer().apply(cut(text, e.spans[i]), "span")) == piece);
        }
    }
    const std::string text = "The KING'S Ringer";
    const Encoding e = wp->tokenize(text, "--text");
    std::vector<std::string> spelled;
    for (const TokenSpan& s : e.spans) spelled.push_back(cut(text, s));
    std::vector<std::string> pieces;
    for (const auto id : e.ids) pieces.push_back(wp->piece(id));
    INFO(fmt::format("{} / {}", fmt::join(pieces, " "), fmt::join(spelled, "|")));
    REQUIRE(pieces.back() == "[SEP]");
    CHECK(pieces[pieces.size() - 2] == "##er");
    CHECK(spelled[pieces.size() - 2] == "er");
    CHECK(spelled[1] == "The");  // "the", from the upper-case letters as typed
}

TEST_CASE("SentencePiece: a piece spans its surface as the library reports it, ▁ the space it stands for, and <s> spans nothing") {
    const auto t = Tokenizer::open(model("tiny-llama"));
    REQUIRE(t);
    for (const std::string& text : case_texts("tiny-llama")) {
        INFO(text);
        const Encoding e = t->tokenize(text, "--text");
        check_spans(e, text, t->encode(text, "--text"));
        REQUIRE(!e.ids.empty());
        CHECK(t->piece(e.ids.front()) == "<s>");
        CHECK(e.spans.front() == TokenSpan{0, 0});
        for (std::size_t i = 1; i < e.ids.size(); ++i) {
            const std::string& p = t->piece(e.ids[i]);
            if (p.size() == 6 && p.rfind("<0x", 0) == 0) continue;  // a byte of a character the pieces lack
            const std::string piece = replace_all(p, "\u2581", " "), spanned = cut(text, e.spans[i]);
            INFO(p << " spans \"" << spanned << "\"");
            // the dummy prefix's ▁ stands for no byte of the text
            CHECK((spanned == piece || " " + spanned == piece));
        }
    }
    const std::string text = "the ring\n";
    const Encoding e = t->tokenize(text, "--text");
    REQUIRE(e.ids.size() == 4);  // <s>, ▁the, ▁ring, <0x0A>
    CHECK(e.spans[1] == TokenSpan{0, 3});
    CHECK(e.spans[2] == TokenSpan{3, 8});
    CHECK(e.spans[3] == TokenSpan{8, 9});
}

TEST_CASE("SentencePiece under NFKC: a folded piece spans the characters as typed (full-width letters, the ﬁ ligature)") {
    const SentencePiece sp = SentencePiece::load(model("spm-nmt-nfkc") + "/tokenizer.model");
    const std::string text = "\uff46\uff55\uff4c\uff4c \ufb01ne";
    const auto pieces = sp.tokenize(text, "--text");
    REQUIRE(pieces.size() == 2);  // ▁full, ▁fine
    CHECK(cut(text, pieces[0].second) == "\uff46\uff55\uff4c\uff4c");
    CHECK(cut(text, pieces[1].second) == " \ufb01ne");
    // and the ids are encode's
    CHECK(sp.encode(text, "--text") == std::vector<std::int64_t>{pieces[0].first, pieces[1].first});
}

TEST_CASE("export (JSON and npy) and run --json of a checkpoint write token_ids, the text and token_spans, and the trace readers read them back") {
    TempDir d;
    const std::string text = "the ring fell — naïve 🙂";
    for (const char* name : {"tiny-gpt2", "tiny-bert", "tiny-llama"}) {
        INFO(name);
        const std::string file = d.file(std::string(name) + ".json");
        const std::string npy = d.file(std::string(name) + "-npy");
        const auto r = run_cli({"export", "--model", model(name), "--text", text, "-o", file, "--npy", npy});
        REQUIRE(r.status == 0);
        const auto doc = nlohmann::json::parse(read_text(file));
        const auto ids = doc["token_ids"].get<std::vector<std::int64_t>>();
        CHECK(ids.size() == doc["tokens"].size());
        const Encoding want = std::string(name) == "tiny-bert" ? WordPiece::open(model(name))->tokenize(text, "t")
                                                                : Tokenizer::open(model(name))->tokenize(text, "t");
        CHECK(ids == want.ids);
        CHECK(doc["text"] == text);
        REQUIRE(doc["token_spans"].size() == ids.size());
        for (std::size_t i = 0; i < ids.size(); ++i) {
            CHECK(doc["token_spans"][i][0] == want.spans[i].begin);
            CHECK(doc["token_spans"][i][1] == want.spans[i].end);
        }
        // read back as a saved trace keeps them
        const TraceData back = read_trace_file(file);
        CHECK(back.token_ids == ids);
        REQUIRE(back.text);
        CHECK(*back.text == text);
        CHECK(back.token_spans == want.spans);
        // and so does an npy export's index.json
        const TraceData folder = read_trace_or_npy(npy);
        CHECK(folder.token_ids == ids);
        CHECK(folder.text == back.text);
        CHECK(folder.token_spans == want.spans);
        // run --json writes the same
        const auto run = run_cli({"run", "--model", model(name), "--text", text, "--json"});
        REQUIRE(run.status == 0);
        const auto rj = nlohmann::json::parse(run.out);
        CHECK(rj["token_ids"] == doc["token_ids"]);
        CHECK(rj["token_spans"] == doc["token_spans"]);
        CHECK(rj["text"] == text);
    }
    // ids given: the ids, and no text to span
    REQUIRE(run_cli({"export", "--model", model("tiny-gpt2"), "--ids", "1,2,3", "-o", d.file("ids.json")}).status == 0);
    const auto doc = nlohmann::json::parse(read_text(d.file("ids.json")));
    CHECK(doc["token_ids"] == nlohmann::json::array({1, 2, 3}));
    CHECK(!doc.contains("text"));
    CHECK(!doc.contains("token_spans"));
    // a lesson's trace has none, even a lesson that gives token_ids (its golden is unchanged)
    REQUIRE(run_cli({"export", "001-positions-learned", "-o", d.file("lesson.json")}).status == 0);
    const auto lesson = nlohmann::json::parse(read_text(d.file("lesson.json")));
    CHECK(!lesson.contains("token_ids"));
    CHECK(!lesson.contains("token_spans"));
}

TEST_CASE("the trace reader refuses token spans that do not fit the text, naming the field") {
    TempDir d;
    const std::string file = d.file("t.json");
    REQUIRE(run_cli({"export", "--model", model("tiny-gpt2"), "--text", "the ring fell", "-o", file}).status == 0);
    const auto good = nlohmann::json::parse(read_text(file));
    // the field path the refusal names ("" when the edited trace is read)
    auto refused_at = [&](const std::function<void(nlohmann::json&)>& edit) -> std::string {
        auto doc = good;
        edit(doc);
        try {
            parse_trace(doc, "t.json");
        } catch (const InputError& e) {
            CHECK(e.file() == "t.json");
            return e.path();
        }
        return "";
    };
    CHECK(refused_at([](auto& j) { j["token_spans"][2][1] = 99; }) == "token_spans[2][1]");  // past the text
    CHECK(refused_at([](auto& j) { j["token_spans"][2][0] = 0; }) == "token_spans[2][0]");   // before the one before
    CHECK(refused_at([](auto& j) { j["token_spans"][1] = {4, 3}; }) == "token_spans[1][1]");  // ends before it begins
    CHECK(refused_at([](auto& j) { j["token_spans"].erase(1); }) == "token_spans");          // not one per id
    CHECK(refused_at([](auto& j) { j.erase("text"); }) == "text");
    CHECK(refused_at([](auto& j) { j["token_ids"].push_back(7); }) == "token_ids");  // not one per token
    CHECK(refused_at([](auto& j) { j["token_ids"][0] = -1; }) == "token_ids[0]");
    CHECK(refused_at([](auto&) {}).empty());
}

}  // namespace test_token_spans

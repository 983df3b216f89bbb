// SentencePiece through libsentencepiece; the Tokenizer's SentencePiece backend.
#include "model/sentencepiece.hpp"

#include <fmt/format.h>
#include <sentencepiece_processor.h>

#include <algorithm>
#include <filesystem>
#include <stdexcept>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/json_field.hpp"
#include "io/read_file.hpp"
#include "model/tokenizer.hpp"

namespace attntrace {

namespace {

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
    for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
    return s;
}

}  // namespace

SentencePiece SentencePiece::load(const std::string& path) {
    return from_bytes(read_small_file(path, kMaxSentencePieceBytes, "a SentencePiece model"), path);
}

SentencePiece SentencePiece::from_bytes(const std::string& bytes, const std::string& path) {
    if (bytes.size() > kMaxSentencePieceBytes)
        fail_file(path, fmt::format("a SentencePiece model of at most {} bytes", kMaxSentencePieceBytes),
                  fmt::format("{} bytes", bytes.size()));
    check_sentencepiece_model(bytes, path);  // what libsentencepiece cannot take safely
    SentencePiece s;
    s.file_ = path;
    s.sp_ = std::make_shared<sentencepiece::SentencePieceProcessor>();
    const char* expected = "a SentencePiece model (a serialized ModelProto, as spm_train writes)";
    sentencepiece::util::Status st;
    try {
        st = s.sp_->LoadFromSerializedProto(bytes);
    } catch (const std::exception& e) {  // the guard above missed something the library throws on
        fail_file(path, expected, fmt::format("{} bytes on which the library threw: {}", bytes.size(), e.what()));
    }
    if (!st.ok()) fail_file(path, expected, fmt::format("{} bytes the library refuses: {}", bytes.size(), st.message()));
    if (s.size() == 0 || s.size() > kMaxVocabEntries)
        fail_file(path, fmt::format("from 1 to {} pieces", kMaxVocabEntries), fmt::format("{}", s.size()));
    return s;
}

std::vector<std::int64_t> SentencePiece::encode(const std::string& text, const std::string& source) const {
    std::vector<int> ids;
    if (const auto st = sp_->Encode(text, &ids); !st.ok())
        fail_file(source, fmt::format("a text {} can tokenize", file_), st.message());
    return {ids.begin(), ids.end()};
}

std::vector<std::pair<std::int64_t, TokenSpan>> SentencePiece::tokenize(const std::string& text,
                                                                      const std::string& source) const {
    sentencepiece::ImmutableSentencePieceText spt;
    if (const auto st = sp_->Encode(text, spt.mutable_proto()); !st.ok())
        fail_file(source, fmt::format("a text {} can tokenize", file_), st.message());
    // Held within the text and in order whatever the model file says (its normalizer's alignment is its own).
    std::vector<std::pair<std::int64_t, TokenSpan>> out;
    out.reserve(spt.pieces_size());
    std::size_t last = 0;
    for (const auto& p : spt.pieces()) {
        const std::size_t b = std::clamp<std::size_t>(p.begin(), last, text.size());
        out.push_back({p.id(), TokenSpan{b, std::clamp<std::size_t>(p.end(), b, text.size())}});
        last = b;
    }
    return out;
}

std::size_t SentencePiece::size() const { return static_cast<std::size_t>(sp_->GetPieceSize()); }

std::string SentencePiece::piece(std::int64_t id) const {
    if (id < 0 || static_cast<std::size_t>(id) >= size()) return {};
    return sp_->IdToPiece(static_cast<int>(id));
}

std::string SentencePiece::shown(std::int64_t id) const {
    const std::string p = piece(id);
    if (id >= 0 && static_cast<std::size_t>(id) < size() && sp_->IsByte(static_cast<int>(id))) {
        if (p == "<0x0A>") return "↵";
        if (p == "<0x09>") return "⇥";
        if (p == "<0x20>") return "␣";
        return p;
    }
    return replace_all(p, "\xE2\x96\x81", "␣");  // ▁ (U+2581) -> ␣ (U+2423)
}

std::string SentencePiece::decode(const std::vector<std::int64_t>& ids) const {
    std::vector<int> known;
    for (const std::int64_t id : ids)
        if (id >= 0 && static_cast<std::size_t>(id) < size()) known.push_back(static_cast<int>(id));
    std::string text;
    if (const auto st = sp_->Decode(known, &text); !st.ok())
        throw std::logic_error("sentencepiece: decoding ids in range failed: " + std::string(st.message()));
    return text;
}

std::int64_t SentencePiece::bos_id() const { return sp_->bos_id(); }
std::int64_t SentencePiece::eos_id() const { return sp_->eos_id(); }

// DIR/tokenizer.model with tokenizer_config.json's add_bos_token / add_eos_token.
std::optional<Tokenizer> Tokenizer::open_sentencepiece(const std::string& dir) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path model = fs::path(dir) / "tokenizer.model";
    if (!fs::exists(model, ec)) return std::nullopt;
    Tokenizer t;
    t.file_ = model.string();
    t.spm_ = std::make_shared<const SentencePiece>(SentencePiece::load(model.string()));
    for (std::size_t id = 0; id < t.spm_->size(); ++id) t.pieces_.push_back(t.spm_->piece(static_cast<std::int64_t>(id)));
    bool add_bos = true, add_eos = false;  // LlamaTokenizer's defaults
    const fs::path cfg = fs::path(dir) / "tokenizer_config.json";
    if (fs::exists(cfg, ec)) {
        const json doc = load_json_file(cfg.string());
        Fields f(cfg.string());
        f.object(doc, "");
        if (auto* b = f.optional(doc, "add_bos_token"); b && !b->is_null()) add_bos = f.boolean(*b, "add_bos_token");
        if (auto* e = f.optional(doc, "add_eos_token"); e && !e->is_null()) add_eos = f.boolean(*e, "add_eos_token");
    }
    if (add_bos && t.spm_->bos_id() < 0)
        fail_file(model.string(), "a <s> piece (tokenizer_config.json's add_bos_token is true)", "none (bos_id -1)");
    if (add_eos && t.spm_->eos_id() < 0)
        fail_file(model.string(), "a </s> piece (tokenizer_config.json's add_eos_token is true)", "none (eos_id -1)");
    t.bos_ = add_bos ? t.spm_->bos_id() : -1;
    t.eos_ = add_eos ? t.spm_->eos_id() : -1;
    return t;
}

Encoding Tokenizer::encode_sentencepiece(const std::string& text, const std::string& source) const {
    Encoding out;
    if (bos_ >= 0) out.ids.push_back(bos_), out.spans.push_back({0, 0});
    for (const auto& [id, span] : spm_->tokenize(text, source)) out.ids.push_back(id), out.spans.push_back(span);
    if (eos_ >= 0) out.ids.push_back(eos_), out.spans.push_back({text.size(), text.size()});
    return out;
}

}  // namespace attntrace

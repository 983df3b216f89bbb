// SentencePiece .model files (tokenizer.model: Llama 1 and 2, Mistral), read
// and applied by Google's own library (Debian's libsentencepiece), so that
// its normaliser, its BPE or unigram segmentation and its byte fallback are
// the reference's and not a second implementation.
//
// A folder's tokenizer.model is taken before its tokenizer.json (Llama 2's
// folders hold both; the JSON spells the same model in tokenizers' terms).
// tokenizer_config.json's add_bos_token (default true, as LlamaTokenizer)
// says whether the model's <s> goes first; add_eos_token (default false)
// whether </s> goes last.
//
// Pieces mark a word's leading space with ▁ (U+2581): shown as ␣, as GPT-2's Ġ.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/token_span.hpp"

namespace sentencepiece {
class SentencePieceProcessor;
}

namespace attntrace {

// tokenizer.model files larger than this are refused before they are read
// (Llama 2's: 500 KB; a 256 K-piece model ~5 MB).
inline constexpr std::size_t kMaxSentencePieceBytes = std::size_t{64} << 20;

class SentencePiece {
public:
    // Refused (one line naming the file): unreadable, too large, not a
    // serialized ModelProto (a truncated file), more pieces than kMaxVocabEntries.
    static SentencePiece load(const std::string& path);
    // The same from the file's bytes (the fuzz target); `path` names them in errors.
    static SentencePiece from_bytes(const std::string& bytes, const std::string& path);
    // The ids of the text (valid UTF-8, checked by the caller), without BOS/EOS.
    std::vector<std::int64_t> encode(const std::string& text, const std::string& source) const;
    // The same ids and each piece's bytes in `text`, as the library reports them (its normalizer's
    // alignment: a piece spans the characters it was made from; ▁ for a space spans that space,
    // the dummy prefix nothing).
    std::vector<std::pair<std::int64_t, TokenSpan>> tokenize(const std::string& text, const std::string& source) const;
    std::size_t size() const;
    std::string piece(std::int64_t id) const;
    // As shown: ▁ as ␣, the byte pieces <0x0A> <0x09> <0x20> as ↵ ⇥ ␣ (others as written).
    std::string shown(std::int64_t id) const;
    // The text of the ids, by the library's DecodeIds (ids past the pieces skipped).
    std::string decode(const std::vector<std::int64_t>& ids) const;
    std::int64_t bos_id() const;  // -1: none
    std::int64_t eos_id() const;
    const std::string& file() const { return file_; }

private:
    std::string file_;
    std::shared_ptr<sentencepiece::SentencePieceProcessor> sp_;
};

// Refuses (InputError naming `path` and the field) a piece holding a NUL
// byte, which the library's tries cannot take, and a normalizer_spec or
// denormalizer_spec precompiled_charsmap whose trie the library would walk
// out of bounds (model/sentencepiece_guard.cpp); called by from_bytes before
// libsentencepiece is handed the bytes.
void check_sentencepiece_model(const std::string& bytes, const std::string& path);

}  // namespace attntrace

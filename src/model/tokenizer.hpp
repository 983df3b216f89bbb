// Byte-level BPE (GPT-2's tokenizer), from a checkpoint folder's
// tokenizer.json (its "model" section: type "BPE", vocab, merges) or from
// vocab.json and merges.txt.
//
// encode(text):
//   1. the text must be UTF-8 (refused with the byte offset of the first bad byte);
//   2. added tokens ("<|endoftext|>") written in the text are taken whole;
//   3. the rest is split by GPT-2's pattern, which needs Unicode categories
//      (letters \p{L}, numbers \p{N}, white space): PCRE2 with UTF and UCP
//        's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//   4. each piece's bytes become printable characters (GPT-2's byte-to-unicode
//      table: a space is "Ġ", a newline "Ċ"), then merged pairwise, the pair
//      with the lowest rank in merges first, until no listed pair is left;
//   5. each merged symbol is looked up in vocab.
// tokenizer.json's normalizer (model/normalizer.hpp: Qwen2's NFC, NFKC,
// NFD, NFKD, Lowercase, a Sequence of them) is applied to the text between
// added tokens, before step 3 (added tokens are matched in the text as
// written, as tokenizers does for Qwen2's, which are "normalized": false).
// Llama 3 and Qwen2 style tokenizer.json: the pre-tokenizer a Sequence of a
// Split (its own Regex, "Isolated": matches and the text between them are
// pieces) and a ByteLevel without GPT-2's pattern; model.ignore_merges (a
// piece the vocabulary holds whole is taken whole); the post_processor's
// TemplateProcessing adds its special tokens (<|begin_of_text|>) around the text.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/token_span.hpp"
#include "model/normalizer.hpp"

namespace attntrace {

class SentencePiece;
class Fields;

// A text's tokens and where each came from in the text as typed
// (core/token_span.hpp): an added token written in the text spans what was
// written; one the post-processor adds (<s>, [CLS]) is empty, at the text's
// start or end; a byte-level piece spans exactly its bytes, even part of a
// character; a piece of normalized text spans the characters it was made
// from (model/normalizer.hpp, normalize_aligned).
struct Encoding {
    std::vector<std::int64_t> ids;
    std::vector<TokenSpan> spans;  // one per id, begins never decreasing
};
// What every encoding holds (the fuzz targets check it): one span per id, each within a text of
// `text_size` bytes, begin <= end, and begins never decreasing.
bool spans_fit(const Encoding& e, std::size_t text_size);

// Bounds on the tokenizer's files, checked while they are read.
inline constexpr std::size_t kMaxVocabEntries = std::size_t{1} << 22;  // 4 M; GPT-2 has 50257, Llama 3 128256
inline constexpr std::size_t kMaxTokenizerTextBytes = std::size_t{1} << 26;  // 64 MiB of text to tokenize

class Tokenizer {
public:
    // The folder's tokenizer: tokenizer.model (SentencePiece, model/sentencepiece.hpp),
    // else tokenizer.json, else vocab.json + merges.txt;
    // none when it has neither. A file that is there but wrong is refused.
    static std::optional<Tokenizer> open(const std::string& dir);
    // From a tokenizer.json's text (the fuzz target and tests).
    static Tokenizer from_tokenizer_json(const std::string& text, const std::string& file);

    // `source` names the text in errors ("--text").
    std::vector<std::int64_t> encode(const std::string& text, const std::string& source) const {
        return tokenize(text, source).ids;
    }
    // The ids and each one's span in `text`.
    Encoding tokenize(const std::string& text, const std::string& source) const;
    // The piece as the vocabulary spells it ("Ġring"); "" for an id it lacks.
    const std::string& piece(std::int64_t id) const;
    // The piece's bytes as text, a leading space shown as ␣ (U+2423), a
    // newline as ↵, a tab as ⇥, a byte that is no whole UTF-8 character as \xNN.
    std::string shown(std::int64_t id) const;
    // The text the ids spell, as Hugging Face's tokenizer.decode(ids) gives it
    // with its default skip_special_tokens=False and without its
    // clean_up_tokenization_spaces: byte-level pieces back to their bytes,
    // joined, an added token as written; then each byte run that is no UTF-8
    // character (one cut between two tokens, or at the end) as one U+FFFD.
    // SentencePiece: its library's DecodeIds (<s>, </s> are control pieces:
    // no text). An id past the vocabulary spells nothing.
    std::string decode(const std::vector<std::int64_t>& ids) const;
    std::size_t vocab_size() const { return pieces_.size(); }
    const std::string& file() const { return file_; }

private:
    std::string file_;  // tokenizer.json or vocab.json, for messages
    std::unordered_map<std::string, std::int64_t> vocab_;
    std::vector<std::string> pieces_;  // id -> piece
    std::unordered_map<std::string, std::size_t> ranks_;  // "a b" -> merge rank
    std::vector<std::pair<std::string, std::int64_t>> added_;  // added tokens, longest first
    std::shared_ptr<void> pattern_;  // the compiled pre-tokenizer pattern (pcre2_code)
    std::string pattern_text_;        // its source: GPT-2's, or a Split pre-tokenizer's Regex (Llama 3, Qwen2)
    std::string pattern_path_;        // where a Split's Regex is in the file, for its refusal
    TextNormalizer normalizer_;           // tokenizer.json's normalizer; none for vocab.json + merges.txt
    bool ignore_merges_ = false;      // model.ignore_merges: a word the vocabulary holds whole is one token
    std::vector<std::int64_t> prefix_, suffix_;  // post_processor TemplateProcessing's tokens around the text
    // a word's bytes -> its pieces: (id, how many of the word's bytes it stands for)
    mutable std::unordered_map<std::string, std::vector<std::pair<std::int64_t, std::size_t>>> cache_;

    static Tokenizer from_tokenizer_doc(const nlohmann::json& doc, const std::string& file);
    void add_piece(const std::string& piece, std::int64_t id, const std::string& path);
    void add_vocab_piece(const std::string& piece, std::int64_t id, const std::string& path);
    void add_merge(const std::string& a, const std::string& b, const std::string& file, const std::string& path);
    void compile_pattern();
    void read_pre_tokenizer(const nlohmann::json& p, const Fields& f);
    void read_post_processor(const nlohmann::json& pp, const Fields& f);
    // Appends the word's pieces: (id, how many of its bytes the piece stands for).
    void encode_word(const std::string& bytes, std::vector<std::pair<std::int64_t, std::size_t>>& out) const;
    bool is_added(std::int64_t id) const;  // one of added_ ("<|endoftext|>")

    // SentencePiece (model/sentencepiece.cpp): set, it encodes and shows the pieces.
    std::shared_ptr<const SentencePiece> spm_;
    std::int64_t bos_ = -1, eos_ = -1;  // put first / last by encode; -1: none
    static std::optional<Tokenizer> open_sentencepiece(const std::string& dir);
    Encoding encode_sentencepiece(const std::string& text, const std::string& source) const;
};

// The first byte of `text` that is not valid UTF-8 (overlong forms,
// surrogates and code points past U+10FFFF included); nullopt when it all is.
std::optional<std::size_t> first_invalid_utf8(const std::string& text);
// `bytes` as UTF-8 text: each maximal ill-formed subsequence (Unicode §3.9,
// "U+FFFD substitution of maximal subparts", as Python's
// decode(errors="replace") and the WHATWG TextDecoder do) becomes one U+FFFD.
std::string replace_invalid_utf8(const std::string& bytes);

}  // namespace attntrace

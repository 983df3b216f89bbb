// tokenizer.json's "normalizer" section for byte-level BPE (Qwen2's NFC,
// and the other Unicode forms and lower-casing that Hugging Face's
// tokenizers name), applied through utf8proc before the pre-tokenizer.
//
//   null                      nothing (GPT-2, Llama 3)
//   {"type": "NFC"}           canonical composition: e + U+0301 -> é (Qwen2, Qwen2.5)
//   "NFD" | "NFKC" | "NFKD"   decomposition; the compatibility forms also fold ﬁ -> fi, ² -> 2, ｆ -> f
//   "Lowercase"               each character's lower case (full mapping: İ -> i + U+0307)
//   {"type": "Sequence", "normalizers": [...]}   of these, in order
//
// Any other type (Llama 2's Prepend and Replace, which go with a
// non-byte-level BPE; BertNormalizer, read by model/wordpiece.cpp; Strip,
// Precompiled, ...) is refused naming its path and the known ones.
#pragma once

#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "core/token_span.hpp"

namespace attntrace {

class Fields;

// Normalized text longer than this many characters is refused (NFKD can
// make 18 characters of one: ﷺ): utf8proc is asked for the length first.
inline constexpr std::size_t kMaxNormalizedChars = std::size_t{1} << 26;  // 64 M

class TextNormalizer {
public:
    enum class Step { nfc, nfd, nfkc, nfkd, lowercase };

    // `n` is doc["normalizer"] (null allowed); refusals name `path` in f's file.
    static TextNormalizer read(const nlohmann::json& n, const Fields& f, const std::string& path = "normalizer");
    // `text` is valid UTF-8 (checked by the caller); `source` names it in errors.
    std::string apply(const std::string& text, const std::string& source) const;
    bool empty() const { return steps_.empty(); }
    const std::vector<Step>& steps() const { return steps_; }

private:
    std::vector<Step> steps_;
};

// One Unicode normal form (nfc, nfd, nfkc or nfkd) of valid UTF-8; a text
// that would grow past kMaxNormalizedChars is refused naming `source`.
// Also WordPiece's accent stripping (model/wordpiece.cpp) decomposes with it.
std::string unicode_form(const std::string& text, TextNormalizer::Step form, const std::string& source);
// Each character's lower case, as the Rust tokenizers map it (char::to_lowercase):
// utf8proc's simple mapping, and İ (U+0130) -> i + U+0307. No context.
std::string lowercase_chars(const std::string& text);

// A normalized text and where each of its bytes came from in the text as
// typed, for the tokens' spans (core/token_span.hpp). The text is cut into
// runs of a starter and the combining marks after it (utf8proc's canonical
// combining class), and each run normalized alone; a run whose normalization
// is not the whole text's at that place (a composition across runs: Hangul's
// jamo under NFC) is joined to the runs after it until it is (at most 32).
// Where the runs' normalizations, joined, are still not the whole text's, the
// whole text is one run, and every piece of it spans all of it.
struct NormalizedText {
    std::string text;  // normalize(original)
    // Run k: text's bytes [norm[k], norm[k+1]) came from the original's
    // [orig[k], orig[k+1]) (`offset` added). Empty with `identity`.
    std::vector<std::size_t> norm, orig;
    bool identity = false;  // no normalizer: byte i of text is byte offset + i
    std::size_t offset = 0;
    // The original bytes the normalized bytes [a, b) came from (a < b <= text.size()).
    TokenSpan span(std::size_t a, std::size_t b) const;
};
// `original` is valid UTF-8 found at byte `offset` of the text as typed;
// `normalize` (null: none) is applied to runs of it and to the whole.
NormalizedText normalize_aligned(const std::string& original, std::size_t offset,
                                 const std::function<std::string(const std::string&)>& normalize);

}  // namespace attntrace

// WordPiece (BERT's tokenizer), from a checkpoint folder's tokenizer.json
// (its "model" section: type "WordPiece", vocab, unk_token,
// continuing_subword_prefix, max_input_chars_per_word; normalizer
// BertNormalizer; pre_tokenizer BertPreTokenizer; post_processor
// TemplateProcessing or BertProcessing) or from vocab.txt (one piece a line,
// its id the line's number from 0) with tokenizer_config.json's do_lower_case.
//
// encode(text), as Hugging Face's tokenizers (and BERT's tokenization.py):
//   1. the text must be UTF-8 (refused with the byte offset of the first bad byte);
//   2. added tokens ("[MASK]", "[SEP]") written in the text are taken whole;
//   3. BertNormalizer, in the order of the JavaScript port (@huggingface/transformers),
//      which the tests hold us to:
//        clean_text: drop U+0000, U+FFFD and controls (Cc, Cf, Co, Cs; not \t \n \r),
//                    white space (\t \n \r, Zs, Zl, Zp) becomes " ";
//        handle_chinese_chars: a space either side of each CJK ideograph (BERT's ranges);
//        lowercase (full Unicode lower-casing), then strip_accents (null: as lowercase):
//                    NFD, then every Mn (non-spacing mark) removed;
//      the Unicode properties and mappings come from utf8proc;
//   4. BertPreTokenizer: split at white space (dropped) and around every
//      punctuation character (\p{P}, and ASCII's symbols !-/ :-@ [-` {-~), each
//      its own word: PCRE2 with UTF and UCP;
//   5. each word greedily, longest match first: the longest prefix in the
//      vocabulary, then the longest "##"-prefixed continuation, and so on; a
//      word with no match at some point, or longer than
//      max_input_chars_per_word (100) characters, is one [UNK];
//   6. the post-processor's special tokens around it: [CLS] ... [SEP].
// Pieces are shown as the vocabulary spells them ("##ing", "[CLS]").
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "model/tokenizer.hpp"  // Encoding

namespace attntrace {

struct BertNormalizer {
    bool clean_text = true;
    bool handle_chinese_chars = true;
    bool lowercase = true;
    bool strip_accents = true;  // null in the file: as lowercase
    bool on = true;             // false: tokenizer.json's normalizer is null
    std::string apply(const std::string& text, const std::string& source) const;  // text: valid UTF-8; source names it
};

class WordPiece {
public:
    // The folder's WordPiece tokenizer: tokenizer.json, else vocab.txt (+
    // tokenizer_config.json); none when it has neither. A file that is there
    // but wrong is refused (InputError naming the file and field or line).
    static std::optional<WordPiece> open(const std::string& dir);
    static WordPiece from_tokenizer_json(const std::string& text, const std::string& file);
    static WordPiece from_vocab_txt(const std::string& text, const std::string& file, bool lowercase);

    // `source` names the text in errors ("--text").
    std::vector<std::int64_t> encode(const std::string& text, const std::string& source) const {
        return tokenize(text, source).ids;
    }
    // The ids and each one's span in `text` (model/tokenizer.hpp, Encoding): a piece spans the characters of
    // the text as typed its normalized characters came from ("É" for "e"); [UNK] its whole word; [CLS] and
    // [SEP] nothing, at the text's start and end.
    Encoding tokenize(const std::string& text, const std::string& source) const;
    // The pieces of one pre-tokenized word (steps 5): "playing" -> play, ##ing.
    std::vector<std::int64_t> encode_word(const std::string& word) const;
    // The same with each piece's bytes [begin, end) in the word.
    std::vector<std::pair<std::int64_t, TokenSpan>> encode_word_spans(const std::string& word) const;
    const std::string& piece(std::int64_t id) const;  // "" for an id it lacks
    std::size_t vocab_size() const { return pieces_.size(); }
    const std::string& file() const { return file_; }
    const BertNormalizer& normalizer() const { return norm_; }

private:
    std::string file_;
    std::unordered_map<std::string, std::int64_t> vocab_;
    std::vector<std::string> pieces_;  // id -> piece
    std::int64_t unk_ = -1;
    std::string prefix_ = "##";
    std::size_t max_chars_ = 100;
    BertNormalizer norm_;
    std::vector<std::int64_t> before_, after_;  // the post-processor's specials around the text's ids
    std::vector<std::pair<std::string, std::int64_t>> added_;  // added tokens, longest first
    std::shared_ptr<void> pattern_;  // the pre-tokenizer's pattern (pcre2_code)

    static WordPiece from_tokenizer_doc(const nlohmann::json& doc, const std::string& file);
    void add_piece(const std::string& piece, std::int64_t id, const std::string& where);
    void finish(const std::string& where);  // [UNK] present, the pattern compiled
};

}  // namespace attntrace

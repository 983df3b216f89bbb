// WordPiece: the files read with field paths, the normalizer through utf8proc,
// the pre-tokenizer through PCRE2, each word matched longest first.
#include "model/wordpiece.hpp"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <fmt/format.h>
#include <pcre2.h>
#include <utf8proc.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/json_field.hpp"
#include "io/read_file.hpp"
#include "model/normalizer.hpp"
#include "model/tokenizer.hpp"

namespace attntrace {

namespace {

// BertPreTokenizer: runs of neither white space nor punctuation, or one
// punctuation character. Punctuation is Unicode's \p{P} and every ASCII
// symbol !-/ :-@ [-` {-~ (BERT's _is_punctuation, the JavaScript port's class).
constexpr const char* kBertPattern =
    R"([^\s\p{P}\x21-\x2F\x3A-\x40\x5B-\x60\x7B-\x7E]+|[\p{P}\x21-\x2F\x3A-\x40\x5B-\x60\x7B-\x7E])";

// vocab.txt larger than this is refused before it is read (bert-base's: 232 KB).
constexpr std::uintmax_t kMaxVocabTxtBytes = std::uintmax_t{64} << 20;

// BERT's definition of a CJK ideograph (tokenization.py's _is_chinese_char):
// the CJK Unified Ideographs blocks and their extensions, and the
// compatibility ideographs; not Hiragana, Katakana or Hangul, which are
// written with spaces between words.
bool is_chinese_char(std::int32_t cp) {
    return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) || (cp >= 0x20000 && cp <= 0x2A6DF) ||
           (cp >= 0x2A700 && cp <= 0x2B73F) || (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B820 && cp <= 0x2CEAF) ||
           (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

// Calls f(code point) for each character of valid UTF-8.
template <class F>
void each_char(const std::string& s, F&& f) {
    const auto* p = reinterpret_cast<const utf8proc_uint8_t*>(s.data());
    std::size_t i = 0;
    while (i < s.size()) {
        utf8proc_int32_t cp = 0;
        const auto n = utf8proc_iterate(p + i, static_cast<utf8proc_ssize_t>(s.size() - i), &cp);
        if (n <= 0) throw std::logic_error("WordPiece: invalid UTF-8 past the check");
        f(cp);
        i += static_cast<std::size_t>(n);
    }
}

void put(std::string& out, std::int32_t cp) {
    utf8proc_uint8_t buf[4];
    const auto n = utf8proc_encode_char(cp, buf);
    out.append(reinterpret_cast<const char*>(buf), static_cast<std::size_t>(n));
}

}  // namespace

std::string BertNormalizer::apply(const std::string& text, const std::string& source) const {
    if (!on) return text;
    std::string s;
    s.reserve(text.size());
    each_char(text, [&](std::int32_t cp) {
        const auto cat = utf8proc_category(cp);
        if (clean_text) {
            // controls dropped (\t \n \r are white space, not controls); U+0000 and U+FFFD too
            const bool white = cp == '\t' || cp == '\n' || cp == '\r';
            const bool control = !white && (cat == UTF8PROC_CATEGORY_CC || cat == UTF8PROC_CATEGORY_CF ||
                                            cat == UTF8PROC_CATEGORY_CO || cat == UTF8PROC_CATEGORY_CS);
            if (cp == 0 || cp == 0xFFFD || control) return;
            if (white || cat == UTF8PROC_CATEGORY_ZS || cat == UTF8PROC_CATEGORY_ZL || cat == UTF8PROC_CATEGORY_ZP) {
                s += ' ';
                return;
            }
        }
        if (handle_chinese_chars && is_chinese_char(cp)) {
            s += ' ';
            put(s, cp);
            s += ' ';
            return;
        }
        put(s, cp);
    });
    // Each character's lower case as the Rust tokenizers map it (model/normalizer.hpp;
    // JavaScript's toLowerCase also applies Greek's final sigma rule: docs/models.md)
    if (lowercase) s = lowercase_chars(s);
    if (strip_accents) {
        // NFD, then every non-spacing mark (Mn) removed: é = e + U+0301 -> e
        std::string d = unicode_form(s, TextNormalizer::Step::nfd, source), out;
        out.reserve(d.size());
        each_char(d, [&](std::int32_t cp) {
            if (utf8proc_category(cp) != UTF8PROC_CATEGORY_MN) put(out, cp);
        });
        s = std::move(out);
    }
    return s;
}

void WordPiece::add_piece(const std::string& piece, std::int64_t id, const std::string& where) {
    if (id < 0 || id >= static_cast<std::int64_t>(kMaxVocabEntries))
        fail_file(where, fmt::format("an id from 0 to {}", kMaxVocabEntries - 1), fmt::format("{}", id));
    if (auto bad = first_invalid_utf8(piece))
        fail_file(where, "a piece in UTF-8", fmt::format("the byte 0x{:02x} at byte {}", static_cast<unsigned char>(piece[*bad]), *bad));
    if (static_cast<std::size_t>(id) >= pieces_.size()) pieces_.resize(static_cast<std::size_t>(id) + 1);
    pieces_[static_cast<std::size_t>(id)] = piece;
    vocab_[piece] = id;
}

void WordPiece::finish(const std::string& where) {
    if (unk_ < 0) fail_file(where, "the unknown token [UNK] in the vocabulary (words it cannot spell become it)", "none");
    std::stable_sort(added_.begin(), added_.end(),
                     [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
    int code = 0;
    PCRE2_SIZE offset = 0;
    pcre2_code* re = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(kBertPattern), PCRE2_ZERO_TERMINATED,
                                   PCRE2_UTF | PCRE2_UCP, &code, &offset, nullptr);
    if (!re) throw std::logic_error("BERT's pre-tokenizer pattern does not compile under this PCRE2");
    pattern_ = std::shared_ptr<void>(re, [](void* p) { pcre2_code_free(static_cast<pcre2_code*>(p)); });
}

WordPiece WordPiece::from_tokenizer_json(const std::string& text, const std::string& file) {
    return from_tokenizer_doc(parse_json_text(text, file), file);
}

WordPiece WordPiece::from_tokenizer_doc(const json& doc, const std::string& file) {
    WordPiece t;
    t.file_ = file;
    Fields f(file);
    f.object(doc, "");
    if (auto* n = f.optional(doc, "normalizer"); n && !n->is_null()) {
        f.object(*n, "normalizer");
        const std::string type = f.string(f.member(*n, "normalizer", "type"), "normalizer.type");
        if (type != "BertNormalizer") f.fail("normalizer.type", "\"BertNormalizer\" or a null normalizer", describe((*n)["type"]));
        auto flag = [&](const char* key, bool dflt) {
            const json* v = f.optional(*n, key);
            return v && !v->is_null() ? f.boolean(*v, join("normalizer", key)) : dflt;
        };
        t.norm_.clean_text = flag("clean_text", true);
        t.norm_.handle_chinese_chars = flag("handle_chinese_chars", true);
        t.norm_.lowercase = flag("lowercase", true);
        t.norm_.strip_accents = flag("strip_accents", t.norm_.lowercase);
    } else {
        t.norm_.on = false;
    }
    if (auto* p = f.optional(doc, "pre_tokenizer"); p && !p->is_null()) {
        f.object(*p, "pre_tokenizer");
        const std::string type = f.string(f.member(*p, "pre_tokenizer", "type"), "pre_tokenizer.type");
        if (type != "BertPreTokenizer")
            f.fail("pre_tokenizer.type", "\"BertPreTokenizer\" (BERT's: white space and punctuation)", describe((*p)["type"]));
    }
    const json& model = f.object(f.member(doc, "", "model"), "model");
    const std::string type = f.string(f.member(model, "model", "type"), "model.type");
    if (type != "WordPiece") f.fail("model.type", "\"WordPiece\" (a BERT checkpoint's tokenizer)", describe(model["type"]));
    const json& vocab = f.object(f.member(model, "model", "vocab"), "model.vocab");
    if (vocab.size() > kMaxVocabEntries)
        f.fail("model.vocab", fmt::format("at most {} entries", kMaxVocabEntries), fmt::format("{}", vocab.size()));
    for (auto it = vocab.begin(); it != vocab.end(); ++it) {
        const std::string path = join("model.vocab", it.key());
        const std::int64_t id = f.integer(it.value(), path, 0, static_cast<std::int64_t>(kMaxVocabEntries) - 1);
        // One piece per id (vocab.txt gives each line its own): a second would leave the id decoding to either.
        if (const auto i = static_cast<std::size_t>(id); i < t.pieces_.size()) {
            const std::string& other = t.pieces_[i];
            if (auto o = t.vocab_.find(other); o != t.vocab_.end() && o->second == id && other != it.key())
                f.fail(path, "an id no other piece of the vocabulary has", fmt::format("{}, the id of \"{}\" too", id, other));
        }
        t.add_piece(it.key(), id, file + ": " + path);
    }
    const std::string unk = [&] {
        const json* u = f.optional(model, "unk_token");
        return u ? f.string(*u, "model.unk_token") : std::string("[UNK]");
    }();
    if (auto it = t.vocab_.find(unk); it != t.vocab_.end()) t.unk_ = it->second;
    else f.fail("model.unk_token", "a token of model.vocab", fmt::format("\"{}\", not in it", unk));
    if (auto* p = f.optional(model, "continuing_subword_prefix"); p && !p->is_null())
        t.prefix_ = f.string(*p, "model.continuing_subword_prefix");
    if (auto* m = f.optional(model, "max_input_chars_per_word"); m && !m->is_null())
        t.max_chars_ = static_cast<std::size_t>(f.integer(*m, "model.max_input_chars_per_word", 1, 1 << 20));
    if (auto* added = f.optional(doc, "added_tokens"); added && !added->is_null()) {
        if (!added->is_array()) f.fail("added_tokens", "an array", describe(*added));
        for (std::size_t i = 0; i < added->size(); ++i) {
            const std::string path = index("added_tokens", i);
            const json& a = f.object((*added)[i], path);
            const std::string content = f.string(f.member(a, path, "content"), join(path, "content"));
            const std::int64_t id = f.integer(f.member(a, path, "id"), join(path, "id"), 0,
                                              static_cast<std::int64_t>(kMaxVocabEntries) - 1);
            if (content.empty()) f.fail(join(path, "content"), "a non-empty token", "\"\"");
            t.add_piece(content, id, file + ": " + join(path, "id"));
            t.added_.emplace_back(content, id);
        }
    }
    // The post-processor's special tokens around a single text.
    if (auto* pp = f.optional(doc, "post_processor"); pp && !pp->is_null()) {
        f.object(*pp, "post_processor");
        const std::string pt = f.string(f.member(*pp, "post_processor", "type"), "post_processor.type");
        auto special = [&](const json& v, const std::string& path) {
            const std::string tok = f.string(v, path);
            auto it = t.vocab_.find(tok);
            if (it == t.vocab_.end()) f.fail(path, "a token of the vocabulary", fmt::format("\"{}\", not in it", tok));
            return it->second;
        };
        if (pt == "BertProcessing") {
            for (const char* key : {"cls", "sep"}) {
                const std::string path = join("post_processor", key);
                const json& v = f.member(*pp, "post_processor", key);
                if (!v.is_array() || v.empty()) f.fail(path, "[\"TOKEN\", id]", describe(v));
                (std::string(key) == "cls" ? t.before_ : t.after_).push_back(special(v[0], index(path, 0)));
            }
        } else if (pt == "TemplateProcessing") {
            const json& single = f.member(*pp, "post_processor", "single");
            if (!single.is_array()) f.fail("post_processor.single", "an array of pieces", describe(single));
            bool seen = false;
            for (std::size_t i = 0; i < single.size(); ++i) {
                const std::string path = index("post_processor.single", i);
                const json& item = f.object(single[i], path);
                if (item.contains("Sequence")) {
                    seen = true;
                } else if (item.contains("SpecialToken")) {
                    const json& s = f.object(item["SpecialToken"], join(path, "SpecialToken"));
                    (seen ? t.after_ : t.before_)
                        .push_back(special(f.member(s, join(path, "SpecialToken"), "id"), join(join(path, "SpecialToken"), "id")));
                } else {
                    f.fail(path, "{\"Sequence\": ...} or {\"SpecialToken\": ...}", describe(item));
                }
            }
        } else {
            f.fail("post_processor.type", "\"TemplateProcessing\", \"BertProcessing\" or a null post-processor",
                   describe((*pp)["type"]));
        }
    }
    t.finish(file);
    return t;
}

WordPiece WordPiece::from_vocab_txt(const std::string& text, const std::string& file, bool lowercase) {
    WordPiece t;
    t.file_ = file;
    t.norm_.lowercase = lowercase;
    t.norm_.strip_accents = lowercase;  // BertTokenizer: strip_accents None follows do_lower_case
    std::size_t pos = 0;
    std::int64_t line = 0;
    while (pos < text.size()) {
        std::size_t end = text.find('\n', pos);
        if (end == std::string::npos) end = text.size();
        std::string piece = text.substr(pos, end - pos);
        if (!piece.empty() && piece.back() == '\r') piece.pop_back();
        const std::string where = fmt::format("{}: line {}", file, line + 1);
        if (piece.empty()) fail_file(where, "one piece a line (its id is the line's number from 0)", "an empty line");
        if (piece.find_first_of(" \t") != std::string::npos)
            fail_file(where, "one piece a line, without white space", fmt::format("\"{}\"", piece.substr(0, 80)));
        if (t.vocab_.count(piece))
            fail_file(where, "each piece once", fmt::format("\"{}\" again (line {} has it)", piece, t.vocab_[piece] + 1));
        if (line >= static_cast<std::int64_t>(kMaxVocabEntries))
            fail_file(where, fmt::format("at most {} pieces", kMaxVocabEntries), "more");
        t.add_piece(piece, line, where);
        ++line;
        pos = end + 1;
    }
    if (auto it = t.vocab_.find("[UNK]"); it != t.vocab_.end()) t.unk_ = it->second;
    // BertTokenizer's specials: [CLS] text [SEP], and each taken whole when written in the text.
    for (const char* s : {"[CLS]", "[SEP]"}) {
        auto it = t.vocab_.find(s);
        if (it == t.vocab_.end()) fail_file(file, fmt::format("the special token {} in the vocabulary", s), "none");
        (std::string(s) == "[CLS]" ? t.before_ : t.after_).push_back(it->second);
    }
    for (const char* s : {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"})
        if (auto it = t.vocab_.find(s); it != t.vocab_.end()) t.added_.emplace_back(s, it->second);
    t.finish(file);
    return t;
}

std::optional<WordPiece> WordPiece::open(const std::string& dir) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path tj = fs::path(dir) / "tokenizer.json";
    if (fs::exists(tj, ec)) return from_tokenizer_doc(load_json_file(tj.string()), tj.string());
    const fs::path vt = fs::path(dir) / "vocab.txt";
    if (!fs::exists(vt, ec)) return std::nullopt;
    bool lower = true;  // BertTokenizer's default do_lower_case
    const fs::path tc = fs::path(dir) / "tokenizer_config.json";
    if (fs::exists(tc, ec)) {
        const json cfg = load_json_file(tc.string());
        Fields f(tc.string());
        f.object(cfg, "");
        if (auto* d = f.optional(cfg, "do_lower_case")) lower = f.boolean(*d, "do_lower_case");
    }
    return from_vocab_txt(read_small_file(vt.string(), kMaxVocabTxtBytes), vt.string(), lower);
}

const std::string& WordPiece::piece(std::int64_t id) const {
    static const std::string none;
    if (id < 0 || static_cast<std::size_t>(id) >= pieces_.size()) return none;
    return pieces_[static_cast<std::size_t>(id)];
}

std::vector<std::int64_t> WordPiece::encode_word(const std::string& word) const {
    std::vector<std::int64_t> ids;
    for (const auto& [id, span] : encode_word_spans(word)) ids.push_back(id);
    return ids;
}

std::vector<std::pair<std::int64_t, TokenSpan>> WordPiece::encode_word_spans(const std::string& word) const {
    // character boundaries: bound[k] is character k's first byte
    std::vector<std::size_t> bound;
    const auto* p = reinterpret_cast<const utf8proc_uint8_t*>(word.data());
    for (std::size_t i = 0; i < word.size();) {
        bound.push_back(i);
        utf8proc_int32_t cp = 0;
        const auto n = utf8proc_iterate(p + i, static_cast<utf8proc_ssize_t>(word.size() - i), &cp);
        i += n > 0 ? static_cast<std::size_t>(n) : 1;
    }
    const std::size_t chars = bound.size();
    bound.push_back(word.size());
    const std::vector<std::pair<std::int64_t, TokenSpan>> unknown = {{unk_, TokenSpan{0, word.size()}}};
    if (chars > max_chars_) return unknown;
    std::vector<std::pair<std::int64_t, TokenSpan>> pieces;
    std::size_t start = 0;
    while (start < chars) {
        // the longest piece from character `start`, "##"-prefixed after the first
        std::int64_t found = -1;
        std::size_t end = chars;
        for (; end > start; --end) {
            std::string sub = word.substr(bound[start], bound[end] - bound[start]);
            if (start > 0) sub = prefix_ + sub;
            if (auto it = vocab_.find(sub); it != vocab_.end()) {
                found = it->second;
                break;
            }
        }
        if (found < 0) return unknown;  // the whole word is unknown, not just its rest
        pieces.push_back({found, TokenSpan{bound[start], bound[end]}});
        start = end;
    }
    return pieces;
}

Encoding WordPiece::tokenize(const std::string& text, const std::string& source) const {
    if (text.size() > kMaxTokenizerTextBytes)
        fail_file(source, fmt::format("a text of at most {} bytes", kMaxTokenizerTextBytes), fmt::format("{} bytes", text.size()));
    if (auto bad = first_invalid_utf8(text))
        fail_at(source, *bad, "UTF-8 text", fmt::format("the byte 0x{:02x}", static_cast<unsigned char>(text[*bad])));
    Encoding out;
    out.ids = before_;
    out.spans.assign(before_.size(), TokenSpan{0, 0});  // [CLS]: no text spelled it
    auto* re = static_cast<pcre2_code*>(pattern_.get());
    std::unique_ptr<pcre2_match_data, void (*)(pcre2_match_data*)> md(pcre2_match_data_create_from_pattern(re, nullptr),
                                                                       pcre2_match_data_free);
    std::function<std::string(const std::string&)> normalize;
    if (norm_.on) normalize = [&](const std::string& s) { return norm_.apply(s, source); };
    // The text between added tokens: normalised, split into words, each word's pieces.
    auto split = [&](std::size_t from, std::size_t to) {
        const NormalizedText n = normalize_aligned(text.substr(from, to - from), from, normalize);
        const std::string& part = n.text;
        std::size_t at = 0;
        while (at < part.size()) {
            const int rc = pcre2_match(re, reinterpret_cast<PCRE2_SPTR>(part.data()), part.size(), at, PCRE2_NO_UTF_CHECK,
                                       md.get(), nullptr);
            if (rc == PCRE2_ERROR_NOMATCH) break;  // only white space is left
            if (rc < 0) throw std::logic_error("BERT's pre-tokenizer pattern failed on valid UTF-8");
            const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md.get());
            if (ov[1] <= at) throw std::logic_error("BERT's pre-tokenizer pattern matched an empty word");
            for (const auto& [id, span] : encode_word_spans(part.substr(ov[0], ov[1] - ov[0]))) {
                out.ids.push_back(id);
                out.spans.push_back(n.span(ov[0] + span.begin, ov[0] + span.end));
            }
            at = ov[1];
        }
    };
    std::size_t start = 0, i = 0;
    while (i < text.size()) {
        bool taken = false;
        for (const auto& a : added_)
            if (text.compare(i, a.first.size(), a.first) == 0) {
                split(start, i);
                out.ids.push_back(a.second);
                out.spans.push_back({i, i + a.first.size()});  // as written in the text
                i += a.first.size();
                start = i;
                taken = true;
                break;
            }
        if (!taken) ++i;
    }
    split(start, text.size());
    out.ids.insert(out.ids.end(), after_.begin(), after_.end());
    out.spans.insert(out.spans.end(), after_.size(), TokenSpan{text.size(), text.size()});  // [SEP]
    return out;
}

}  // namespace attntrace

// Byte-level BPE: the files read with field paths, the pattern through PCRE2, the merges by rank.
#include "model/tokenizer.hpp"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <fmt/format.h>
#include <pcre2.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/json_field.hpp"
#include "io/read_file.hpp"
#include "model/sentencepiece.hpp"

namespace attntrace {

namespace {

// GPT-2's pre-tokenizer pattern (OpenAI's encoder.py; tokenizers' ByteLevel).
constexpr const char* kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

// merges.txt and vocab.json larger than this are refused before they are read (GPT-2's: 456 KB, 1 MB).
constexpr std::uintmax_t kMaxMergesBytes = std::uintmax_t{256} << 20;

std::string utf8(std::uint32_t cp) {
    std::string s;
    if (cp < 0x80) {
        s += static_cast<char>(cp);
    } else if (cp < 0x800) {
        s += static_cast<char>(0xC0 | (cp >> 6));
        s += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
        s += static_cast<char>(0xE0 | (cp >> 12));
        s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        s += static_cast<char>(0x80 | (cp & 0x3F));
    }
    return s;
}

// GPT-2's bytes_to_unicode: the printable bytes ! .. ~, ¡ .. ¬, ® .. ÿ stand
// for themselves; the other 68 bytes (space, controls, ...) are U+0100 + n in
// byte order, so that every byte is one visible character (space -> Ġ, U+0120).
struct ByteTable {
    std::string to_char[256];
    std::unordered_map<std::string, std::uint8_t> to_byte;
    ByteTable() {
        int n = 0;
        for (int b = 0; b < 256; ++b) {
            const bool kept = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
            to_char[b] = utf8(kept ? static_cast<std::uint32_t>(b) : static_cast<std::uint32_t>(256 + n++));
            to_byte[to_char[b]] = static_cast<std::uint8_t>(b);
        }
    }
};
const ByteTable& byte_table() {
    static const ByteTable t;
    return t;
}

// The length of the UTF-8 character starting at s[i] (1 for a stray byte: the vocabulary's pieces are valid).
std::size_t char_len(const std::string& s, std::size_t i) {
    const auto c = static_cast<unsigned char>(s[i]);
    const std::size_t n = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    return std::min(n, s.size() - i);
}

}  // namespace

std::optional<std::size_t> first_invalid_utf8(const std::string& s) {
    std::size_t i = 0;
    while (i < s.size()) {
        const auto c = static_cast<unsigned char>(s[i]);
        std::size_t n;
        std::uint32_t cp, min;
        if (c < 0x80) {
            ++i;
            continue;
        } else if ((c & 0xE0) == 0xC0) {
            n = 2, cp = c & 0x1F, min = 0x80;
        } else if ((c & 0xF0) == 0xE0) {
            n = 3, cp = c & 0x0F, min = 0x800;
        } else if ((c & 0xF8) == 0xF0) {
            n = 4, cp = c & 0x07, min = 0x10000;
        } else {
            return i;
        }
        if (i + n > s.size()) return i;
        for (std::size_t k = 1; k < n; ++k) {
            const auto d = static_cast<unsigned char>(s[i + k]);
            if ((d & 0xC0) != 0x80) return i;
            cp = (cp << 6) | (d & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return i;
        i += n;
    }
    return std::nullopt;
}

bool spans_fit(const Encoding& e, std::size_t text_size) {
    if (e.spans.size() != e.ids.size()) return false;
    std::size_t last = 0;
    for (const TokenSpan& s : e.spans) {
        if (s.begin < last || s.begin > s.end || s.end > text_size) return false;
        last = s.begin;
    }
    return true;
}

void Tokenizer::add_piece(const std::string& piece, std::int64_t id, const std::string& path) {
    if (id < 0 || id >= static_cast<std::int64_t>(kMaxVocabEntries))
        fail_field(file_, path, fmt::format("an id from 0 to {}", kMaxVocabEntries - 1), fmt::format("{}", id));
    if (static_cast<std::size_t>(id) >= pieces_.size()) pieces_.resize(static_cast<std::size_t>(id) + 1);
    pieces_[static_cast<std::size_t>(id)] = piece;
    vocab_[piece] = id;
}

// The model's vocabulary (model.vocab, vocab.json): one piece per id. A second
// piece with an id already given would leave that id decoding to either; refused.
// (added_tokens may repeat a vocabulary entry: they go through add_piece alone.)
void Tokenizer::add_vocab_piece(const std::string& piece, std::int64_t id, const std::string& path) {
    if (id >= 0 && static_cast<std::size_t>(id) < pieces_.size()) {
        const std::string& other = pieces_[static_cast<std::size_t>(id)];
        if (auto it = vocab_.find(other); it != vocab_.end() && it->second == id && other != piece)
            fail_field(file_, path, "an id no other piece of the vocabulary has",
                       fmt::format("{}, the id of \"{}\" too", id, other));
    }
    add_piece(piece, id, path);
}

// A merge joins two pieces of the vocabulary into a third. As Hugging Face's
// tokenizers (BpeBuilder::build, MergeTokenOutOfVocabulary), both pieces and
// their join must be in the model's vocabulary: a merge outside it could only
// make a piece with no id. Checked against the model's vocabulary alone, read
// before the merges (added_tokens come after).
void Tokenizer::add_merge(const std::string& a, const std::string& b, const std::string& file, const std::string& path) {
    if (a.empty() || b.empty()) fail_field(file, path, "a merge of two non-empty pieces", fmt::format("\"{}\" \"{}\"", a, b));
    for (const std::string* piece : {&a, &b})
        if (!vocab_.count(*piece))
            fail_field(file, path, "a merge of two pieces of the vocabulary", fmt::format("\"{}\", which is not in it", *piece));
    if (!vocab_.count(a + b))
        fail_field(file, path, "a merge whose result is in the vocabulary",
                   fmt::format("\"{}\" + \"{}\" = \"{}\", which is not in it", a, b, a + b));
    ranks_.emplace(a + " " + b, ranks_.size());  // the first listing of a pair is its rank
}

void Tokenizer::compile_pattern() {
    int code = 0;
    PCRE2_SIZE offset = 0;
    if (pattern_text_.empty()) pattern_text_ = kGpt2Pattern;
    pcre2_code* re = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern_text_.data()), pattern_text_.size(),
                                   PCRE2_UTF | PCRE2_UCP, &code, &offset, nullptr);
    if (!re && !pattern_path_.empty()) {
        PCRE2_UCHAR message[256];
        pcre2_get_error_message(code, message, sizeof message);
        fail_field(file_, pattern_path_, "a pattern PCRE2 compiles (UTF, Unicode categories)",
                   fmt::format("{} at character {}", reinterpret_cast<const char*>(message), offset));
    }
    if (!re) throw std::logic_error("GPT-2's pattern does not compile under this PCRE2");
    pattern_ = std::shared_ptr<void>(re, [](void* p) { pcre2_code_free(static_cast<pcre2_code*>(p)); });
}

Tokenizer Tokenizer::from_tokenizer_json(const std::string& text, const std::string& file) {
    return from_tokenizer_doc(parse_json_text(text, file), file);
}

Tokenizer Tokenizer::from_tokenizer_doc(const json& doc, const std::string& file) {
    Tokenizer t;
    t.file_ = file;
    Fields f(file);
    f.object(doc, "");
    if (auto* n = f.optional(doc, "normalizer")) t.normalizer_ = TextNormalizer::read(*n, f);
    if (auto* p = f.optional(doc, "pre_tokenizer"); p && !p->is_null()) t.read_pre_tokenizer(*p, f);
    const json& model = f.object(f.member(doc, "", "model"), "model");
    const std::string type = f.string(f.member(model, "model", "type"), "model.type");
    if (type != "BPE")
        f.fail("model.type", "\"BPE\" (byte-level BPE; WordPiece and Unigram are not read yet)", describe(model["type"]));
    const json& vocab = f.object(f.member(model, "model", "vocab"), "model.vocab");
    if (vocab.size() > kMaxVocabEntries)
        f.fail("model.vocab", fmt::format("at most {} entries", kMaxVocabEntries), fmt::format("{}", vocab.size()));
    for (auto it = vocab.begin(); it != vocab.end(); ++it) {
        const std::string path = join("model.vocab", it.key());
        t.add_vocab_piece(it.key(), f.integer(it.value(), path, 0, static_cast<std::int64_t>(kMaxVocabEntries) - 1), path);
    }
    if (auto* im = f.optional(model, "ignore_merges"); im && !im->is_null()) t.ignore_merges_ = f.boolean(*im, "model.ignore_merges");
    // Options of tokenizers' BPE that byte-level BPE files leave off (GPT-2, Llama 3, Qwen2): set, they
    // would change the pieces, so they are refused rather than ignored. byte_fallback is Llama 2's and
    // Mistral's BPE over ▁-marked pieces (their tokenizer.model is read instead).
    if (auto* bf = f.optional(model, "byte_fallback"); bf && !bf->is_null() && f.boolean(*bf, "model.byte_fallback"))
        f.fail("model.byte_fallback", "false or null (byte-level BPE has a piece for every byte; Llama 2's and Mistral's "
               "tokenizer.model is read instead)", "true");
    for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"})
        if (auto* a = f.optional(model, key); a && !a->is_null() && !f.string(*a, join("model", key)).empty())
            f.fail(join("model", key), "\"\" or null (byte-level BPE marks no word's inside or end)", describe(*a));
    if (auto* d = f.optional(model, "dropout"); d && !d->is_null() && f.number(*d, "model.dropout") != 0.0)
        f.fail("model.dropout", "null or 0 (BPE dropout makes encoding random; it is for training)", describe(*d));
    const json& merges = f.member(model, "model", "merges");
    if (!merges.is_array()) f.fail("model.merges", "an array of merges", describe(merges));
    for (std::size_t i = 0; i < merges.size(); ++i) {
        const std::string path = index("model.merges", i);
        const json& m = merges[i];
        if (m.is_string()) {
            const std::string s = m.get<std::string>();
            const auto sp = s.find(' ');
            if (sp == std::string::npos || s.find(' ', sp + 1) != std::string::npos)
                f.fail(path, "\"A B\": two pieces and one space", describe(m));
            t.add_merge(s.substr(0, sp), s.substr(sp + 1), file, path);
        } else if (m.is_array() && m.size() == 2) {
            t.add_merge(f.string(m[0], index(path, 0)), f.string(m[1], index(path, 1)), file, path);
        } else {
            f.fail(path, "\"A B\" or [\"A\", \"B\"]", describe(m));
        }
    }
    if (auto* added = f.optional(doc, "added_tokens"); added && !added->is_null()) {
        if (!added->is_array()) f.fail("added_tokens", "an array", describe(*added));
        for (std::size_t i = 0; i < added->size(); ++i) {
            const std::string path = index("added_tokens", i);
            const json& a = f.object((*added)[i], path);
            const std::string content = f.string(f.member(a, path, "content"), join(path, "content"));
            const std::int64_t id = f.integer(f.member(a, path, "id"), join(path, "id"), 0,
                                              static_cast<std::int64_t>(kMaxVocabEntries) - 1);
            if (content.empty()) f.fail(join(path, "content"), "a non-empty token", "\"\"");
            t.add_piece(content, id, join(path, "id"));
            t.added_.emplace_back(content, id);
        }
    }
    std::stable_sort(t.added_.begin(), t.added_.end(),
                     [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
    if (auto* pp = f.optional(doc, "post_processor"); pp && !pp->is_null()) t.read_post_processor(*pp, f);
    t.compile_pattern();
    return t;
}

std::optional<Tokenizer> Tokenizer::open(const std::string& dir) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (auto spm = open_sentencepiece(dir)) return spm;
    const fs::path tj = fs::path(dir) / "tokenizer.json";
    // load_json_file holds the parse to --max-memory (a parsed document takes up to kJsonBytesPerTextByte per byte of text).
    if (fs::exists(tj, ec)) return from_tokenizer_doc(load_json_file(tj.string()), tj.string());
    const fs::path vj = fs::path(dir) / "vocab.json", mt = fs::path(dir) / "merges.txt";
    if (!fs::exists(vj, ec) && !fs::exists(mt, ec)) return std::nullopt;
    if (!fs::exists(vj, ec)) fail_file(vj.string(), "vocab.json beside merges.txt", "no such file");
    if (!fs::exists(mt, ec)) fail_file(mt.string(), "merges.txt beside vocab.json", "no such file");
    Tokenizer t;
    t.file_ = vj.string();
    const json vocab = load_json_file(vj.string());
    Fields f(vj.string());
    f.object(vocab, "");
    if (vocab.size() > kMaxVocabEntries)
        f.fail("", fmt::format("at most {} entries", kMaxVocabEntries), fmt::format("{}", vocab.size()));
    for (auto it = vocab.begin(); it != vocab.end(); ++it)
        t.add_vocab_piece(it.key(), f.integer(it.value(), it.key(), 0, static_cast<std::int64_t>(kMaxVocabEntries) - 1), it.key());
    // merges.txt: "#version: 0.2" first (a comment), then one "A B" a line, by rank.
    const std::string merges = read_small_file(mt.string(), kMaxMergesBytes);
    std::size_t pos = 0, line = 0;
    while (pos < merges.size()) {
        std::size_t end = merges.find('\n', pos);
        if (end == std::string::npos) end = merges.size();
        std::string l = merges.substr(pos, end - pos);
        ++line;
        if (!l.empty() && l.back() == '\r') l.pop_back();
        if (!(line == 1 && l.rfind("#version", 0) == 0) && !l.empty()) {
            const auto sp = l.find(' ');
            if (sp == std::string::npos || l.find(' ', sp + 1) != std::string::npos)
                fail_field(mt.string(), fmt::format("line {}", line), "\"A B\": two pieces and one space",
                           fmt::format("\"{}\"", l.substr(0, 80)));
            t.add_merge(l.substr(0, sp), l.substr(sp + 1), mt.string(), fmt::format("line {}", line));
        }
        pos = end + 1;
    }
    t.compile_pattern();
    return t;
}

const std::string& Tokenizer::piece(std::int64_t id) const {
    static const std::string none;
    if (id < 0 || static_cast<std::size_t>(id) >= pieces_.size()) return none;
    return pieces_[static_cast<std::size_t>(id)];
}

namespace {

// Appends the bytes a byte-level piece stands for ("Ġring" -> " ring"); false
// (nothing appended) when a character of it is not in GPT-2's byte table.
bool append_piece_bytes(const std::string& p, std::string& out) {
    const ByteTable& bt = byte_table();
    std::string bytes;
    for (std::size_t i = 0; i < p.size();) {
        const std::size_t n = char_len(p, i);
        auto it = bt.to_byte.find(p.substr(i, n));
        if (it == bt.to_byte.end()) return false;
        bytes += static_cast<char>(it->second);
        i += n;
    }
    out += bytes;
    return true;
}

}  // namespace

bool Tokenizer::is_added(std::int64_t id) const {
    return std::any_of(added_.begin(), added_.end(), [id](const auto& a) { return a.second == id; });
}

std::string Tokenizer::shown(std::int64_t id) const {
    if (spm_) return spm_->shown(id);
    const std::string& p = piece(id);
    if (is_added(id)) return p;  // "<|endoftext|>" as written
    std::string bytes;
    if (!append_piece_bytes(p, bytes)) return p;  // not a byte-level piece: as the vocabulary spells it
    std::string out;
    for (std::size_t i = 0; i < bytes.size();) {
        const char c = bytes[i];
        const auto bad = first_invalid_utf8(bytes.substr(i, char_len(bytes, i)));
        if (c == ' ') out += "␣";
        else if (c == '\n') out += "↵";
        else if (c == '\t') out += "⇥";
        else if (bad) out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
        else {
            out += bytes.substr(i, char_len(bytes, i));
            i += char_len(bytes, i);
            continue;
        }
        ++i;
    }
    return out;
}

std::string Tokenizer::decode(const std::vector<std::int64_t>& ids) const {
    if (spm_) return spm_->decode(ids);
    std::string bytes;
    for (const std::int64_t id : ids) {
        const std::string& p = piece(id);  // "" for an id past the vocabulary: no text
        // an added token is its content as written; a piece outside the byte table too (as tokenizers' ByteLevel decoder)
        if (is_added(id) || !append_piece_bytes(p, bytes)) bytes += p;
    }
    return replace_invalid_utf8(bytes);
}

std::string replace_invalid_utf8(const std::string& s) {
    static constexpr char kReplacement[] = "\xEF\xBF\xBD";  // U+FFFD
    std::string out;
    out.reserve(s.size());
    std::size_t i = 0;
    while (i < s.size()) {
        const auto c = static_cast<unsigned char>(s[i]);
        const std::size_t n = c < 0x80                  ? 1
                              : (c >= 0xC2 && c <= 0xDF) ? 2
                              : (c >= 0xE0 && c <= 0xEF) ? 3
                              : (c >= 0xF0 && c <= 0xF4) ? 4
                                                         : 0;  // a continuation byte, C0, C1, F5..FF: never a lead
        if (n == 0) {
            out += kReplacement;
            ++i;
            continue;
        }
        // the longest prefix of a well-formed sequence (Table 3-7: the second byte's range depends on the lead)
        std::size_t k = 1;
        for (; k < n && i + k < s.size(); ++k) {
            const auto b = static_cast<unsigned char>(s[i + k]);
            unsigned lo = 0x80, hi = 0xBF;
            if (k == 1) {
                if (c == 0xE0) lo = 0xA0;       // no overlong 3-byte forms
                else if (c == 0xED) hi = 0x9F;  // no surrogates
                else if (c == 0xF0) lo = 0x90;  // no overlong 4-byte forms
                else if (c == 0xF4) hi = 0x8F;  // nothing past U+10FFFF
            }
            if (b < lo || b > hi) break;
        }
        if (k == n) out.append(s, i, n);
        else out += kReplacement;  // a maximal ill-formed subpart: one U+FFFD
        i += k;
    }
    return out;
}

// One pre-tokenized piece: its bytes as byte-level characters, merged by rank.
void Tokenizer::encode_word(const std::string& bytes, std::vector<std::pair<std::int64_t, std::size_t>>& out) const {
    if (auto it = cache_.find(bytes); it != cache_.end()) {
        out.insert(out.end(), it->second.begin(), it->second.end());
        return;
    }
    const ByteTable& bt = byte_table();
    std::vector<std::string> sym;
    for (unsigned char b : bytes) sym.push_back(bt.to_char[b]);
    if (ignore_merges_) {  // a piece the vocabulary holds whole is one token, whatever the merges would make
        std::string whole;
        for (const auto& c : sym) whole += c;
        if (auto v = vocab_.find(whole); v != vocab_.end()) {
            out.emplace_back(v->second, bytes.size());
            return;
        }
    }
    // Merge the adjacent pair of lowest rank, every occurrence left to right, until none is listed.
    while (sym.size() > 1) {
        std::size_t best = std::numeric_limits<std::size_t>::max();
        for (std::size_t i = 0; i + 1 < sym.size(); ++i)
            if (auto r = ranks_.find(sym[i] + " " + sym[i + 1]); r != ranks_.end()) best = std::min(best, r->second);
        if (best == std::numeric_limits<std::size_t>::max()) break;
        std::vector<std::string> next;
        for (std::size_t i = 0; i < sym.size(); ++i) {
            if (i + 1 < sym.size()) {
                auto r = ranks_.find(sym[i] + " " + sym[i + 1]);
                if (r != ranks_.end() && r->second == best) {
                    next.push_back(sym[i] + sym[i + 1]);
                    ++i;
                    continue;
                }
            }
            next.push_back(sym[i]);
        }
        sym = std::move(next);
    }
    std::vector<std::pair<std::int64_t, std::size_t>> ids;
    for (const auto& s : sym) {
        auto v = vocab_.find(s);
        if (v == vocab_.end())
            fail_file(file_, fmt::format("a vocabulary entry for the piece \"{}\" (a merge's result or a byte)", s), "none");
        // each byte-level character of the symbol is one byte of the word
        const auto chars = std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; });
        ids.emplace_back(v->second, static_cast<std::size_t>(chars));
    }
    out.insert(out.end(), ids.begin(), ids.end());
    if (cache_.size() < 100000) cache_.emplace(bytes, std::move(ids));
}

Encoding Tokenizer::tokenize(const std::string& text, const std::string& source) const {
    if (text.size() > kMaxTokenizerTextBytes)
        fail_file(source, fmt::format("a text of at most {} bytes", kMaxTokenizerTextBytes), fmt::format("{} bytes", text.size()));
    if (auto bad = first_invalid_utf8(text))
        fail_at(source, *bad, "UTF-8 text", fmt::format("the byte 0x{:02x}", static_cast<unsigned char>(text[*bad])));
    if (spm_) return encode_sentencepiece(text, source);
    Encoding out;
    auto* re = static_cast<pcre2_code*>(pattern_.get());
    std::unique_ptr<pcre2_match_data, void (*)(pcre2_match_data*)> md(pcre2_match_data_create_from_pattern(re, nullptr),
                                                                       pcre2_match_data_free);
    std::function<std::string(const std::string&)> normalize;
    if (!normalizer_.empty()) normalize = [&](const std::string& s) { return normalizer_.apply(s, source); };
    // The text between added tokens, split by the pattern; each match a word.
    auto split = [&](std::size_t from, std::size_t to) {
        const NormalizedText n = normalize_aligned(text.substr(from, to - from), from, normalize);
        const std::string& part = n.text;
        // A word's pieces, each spanning its own bytes of the normalized text, mapped back to the text as typed.
        std::vector<std::pair<std::int64_t, std::size_t>> pieces;
        auto word = [&](std::size_t w0, std::size_t w1) {
            pieces.clear();
            encode_word(part.substr(w0, w1 - w0), pieces);
            std::size_t at = w0;
            for (const auto& [id, bytes] : pieces) {
                const std::size_t end = std::min(at + std::max<std::size_t>(bytes, 1), w1);
                out.ids.push_back(id);
                out.spans.push_back(n.span(at, end));
                at = end;
            }
        };
        // Matches are pieces, and so is any text between them (a Split's
        // "Isolated"; GPT-2's pattern leaves none); an empty match moves on a character.
        std::size_t at = 0, gap = 0;
        while (at < part.size()) {
            const int rc = pcre2_match(re, reinterpret_cast<PCRE2_SPTR>(part.data()), part.size(), at,
                                       PCRE2_NO_UTF_CHECK, md.get(), nullptr);
            if (rc == PCRE2_ERROR_NOMATCH) break;
            if (rc < 0) {  // PCRE2's match or depth limit: a pattern that backtracks without end on this text
                PCRE2_UCHAR message[256];
                pcre2_get_error_message(rc, message, sizeof message);
                fail_field(file_, pattern_path_.empty() ? std::string("pre_tokenizer") : pattern_path_,
                           fmt::format("a pattern that splits {} within PCRE2's limits", source),
                           fmt::format("{} from byte {}", reinterpret_cast<const char*>(message), from + at));
            }
            const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md.get());
            if (ov[1] == ov[0]) {
                at = ov[0] + char_len(part, ov[0]);
                continue;
            }
            if (ov[0] > gap) word(gap, ov[0]);
            word(ov[0], ov[1]);
            at = gap = ov[1];
        }
        if (gap < part.size()) word(gap, part.size());
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
    // the post-processor's tokens: no text spelled them
    out.ids.insert(out.ids.begin(), prefix_.begin(), prefix_.end());
    out.spans.insert(out.spans.begin(), prefix_.size(), TokenSpan{0, 0});
    out.ids.insert(out.ids.end(), suffix_.begin(), suffix_.end());
    out.spans.insert(out.spans.end(), suffix_.size(), TokenSpan{text.size(), text.size()});
    return out;
}

}  // namespace attntrace

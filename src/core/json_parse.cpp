#include "core/json_parse.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <system_error>
#include <vector>

#include "core/error.hpp"
#include "core/utf8.hpp"

namespace attntrace {

namespace {

// Builds the document value by value, and refuses a key that repeats in its
// object: a lesson with "d_model" twice is a mistake to name, not a value to
// pick. Each event costs O(1) but the key lookup, O(log keys) in its
// object's map, so reading is linear in the text (tests/test_hostile_sizes.cpp).
class DomBuilder {
public:
    DomBuilder(const std::string& file, json& root, JsonLimits limits) : file_(file), root_(root), limits_(limits) {}

    template <class V>
    void scalar(V&& v) {
        *slot() = json(std::forward<V>(v));
    }
    void start_object() {
        json* object = add_container(json::value_t::object);
        hold_to_limit(object);
        stack_.push_back(object);
        keys_.emplace_back();
    }
    void key(std::string& k) {
        json::object_t& obj = stack_.back()->get_ref<json::object_t&>();
        if (stack_.back() == limited_ && obj.size() == limit_)
            fail_field(file_, keys_[0], fmt::format("at most {} members", limit_), "more (refused as it was read)");
        keys_.back() = k;
        auto [it, inserted] = obj.try_emplace(std::move(k), nullptr);
        if (!inserted)
            fail_field(file_, path(), "each key once in an object", "\"" + keys_.back() + "\" a second time");
        member_ = &it->second;
    }
    void start_array() {
        json* array = add_container(json::value_t::array);
        hold_to_limit(array);
        stack_.push_back(array);
        keys_.emplace_back();
    }
    void end_container() {
        stack_.pop_back();
        keys_.pop_back();
    }

private:
    // A top-level member the format bounds: its limit, for slot() and key() to hold it to.
    void hold_to_limit(json* container) {
        if (stack_.size() == 1 && stack_[0]->is_object())
            for (const JsonArrayLimit& l : limits_)
                if (keys_[0] == l.key) limited_ = container, limit_ = l.max_elements;
    }
    // Where a value goes: the root, the end of the open array, or the member
    // whose key was just read.
    json* slot() {
        if (stack_.empty()) return &root_;
        if (stack_.back()->is_array()) {
            auto& arr = stack_.back()->get_ref<json::array_t&>();
            if (stack_.back() == limited_ && arr.size() == limit_)
                fail_field(file_, keys_[0], fmt::format("at most {} elements", limit_),
                           "more (refused as it was read)");
            arr.emplace_back();
            return &arr.back();
        }
        return member_;
    }
    json* add_container(json::value_t type) {
        json* at = slot();
        *at = json(type);
        return at;
    }
    // The field path of the member being read: only spelled out for an error.
    std::string path() const {
        std::string p;
        for (std::size_t d = 0; d < stack_.size(); ++d) {
            if (stack_[d]->is_object()) p = join(p, keys_[d]);
            else p = index(p, stack_[d]->size() - 1);  // the element being read is the last one
        }
        return p;
    }

    const std::string& file_;
    json& root_;
    std::vector<json*> stack_;       // the open containers, outermost first
    std::vector<std::string> keys_;  // per open object, its current key
    json* member_ = nullptr;         // the value of the key just read
    JsonLimits limits_;
    json* limited_ = nullptr;  // the top-level array or object being held to limit_
    std::size_t limit_ = 0;
};

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// What was found at a byte, for an error: a printable ASCII character as it
// is, anything else by its value.
std::string byte_text(const char* p, const char* end) {
    if (p >= end) return "the end of the text";
    const auto c = static_cast<unsigned char>(*p);
    if (c >= 0x21 && c < 0x7f) return fmt::format("'{}'", static_cast<char>(c));
    return fmt::format("byte 0x{:02x}", c);
}

// The text, left to right. Containers are not read recursively: the open
// ones are a stack of their brackets, so nesting costs no C++ stack.
class Parser {
public:
    Parser(std::string_view text, const std::string& file, DomBuilder& out)
        : begin_(text.data()), p_(text.data()), end_(text.data() + text.size()), file_(file), out_(out) {}

    void document() {
        if (end_ - p_ >= 3 && std::string_view(p_, 3) == "\xEF\xBB\xBF") p_ += 3;  // a UTF-8 byte-order mark
        while (value()) {
        }
        for (;;) {
            skip_ws();
            if (open_.empty()) break;
            const bool object = open_.back() == '{';
            if (p_ < end_ && *p_ == ',') {
                ++p_;
                if (object) member_key();
                while (value()) {
                }
            } else if (p_ < end_ && *p_ == (object ? '}' : ']')) {
                ++p_;
                out_.end_container();
                open_.pop_back();
            } else {
                syntax(object ? "',' or '}' after an object's member" : "',' or ']' after an array's element");
            }
        }
        if (p_ != end_) syntax("the end of the text after the document's value");
    }

private:
    [[noreturn]] void syntax(const char* expected) { syntax_at(p_, expected, byte_text(p_, end_)); }
    [[noreturn]] void syntax_at(const char* at, const std::string& expected, const std::string& found) {
        fail_at(file_, static_cast<std::size_t>(at - begin_), "valid JSON: " + expected, found);
    }

    void skip_ws() {
        while (p_ < end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
    }

    // Reads a scalar whole, or opens a container; true when a container was
    // opened and its first value follows (an object's key is read).
    bool value() {
        skip_ws();
        if (p_ == end_) syntax("a value");
        switch (*p_) {
            case '{':
                open('{');
                out_.start_object();
                skip_ws();
                if (p_ < end_ && *p_ == '}') return close_empty();
                member_key();
                return true;
            case '[':
                open('[');
                out_.start_array();
                skip_ws();
                if (p_ < end_ && *p_ == ']') return close_empty();
                return true;
            case '"':
                string(text_);
                out_.scalar(std::move(text_));
                text_.clear();
                return false;
            case 't':
                literal("true");
                out_.scalar(true);
                return false;
            case 'f':
                literal("false");
                out_.scalar(false);
                return false;
            case 'n':
                literal("null");
                out_.scalar(nullptr);
                return false;
            default:
                if (*p_ == '-' || is_digit(*p_)) {
                    number();
                    return false;
                }
                syntax("a value (an object, array, string, number, true, false or null)");
        }
    }

    void open(char bracket) {
        if (open_.size() >= static_cast<std::size_t>(kMaxJsonDepth))
            fail_at(file_, static_cast<std::size_t>(p_ - begin_), fmt::format("JSON nested at most {} deep", kMaxJsonDepth),
                    "deeper nesting");
        open_.push_back(bracket);
        ++p_;
    }
    bool close_empty() {
        ++p_;
        out_.end_container();
        open_.pop_back();
        return false;
    }

    // "key" : — the value follows
    void member_key() {
        skip_ws();
        if (p_ == end_ || *p_ != '"') syntax("a member's name in double quotes");
        string(text_);
        out_.key(text_);
        text_.clear();
        skip_ws();
        if (p_ == end_ || *p_ != ':') syntax("':' after a member's name");
        ++p_;
    }

    void literal(std::string_view word) {
        if (static_cast<std::size_t>(end_ - p_) < word.size() || std::string_view(p_, word.size()) != word)
            syntax_at(p_, fmt::format("the literal {}", word), found_word());
        p_ += word.size();
    }
    // The letters at p_, for "found tru" or "found NaN".
    std::string found_word() const {
        const char* q = p_;
        while (q < end_ && q - p_ < 16 && ((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z'))) ++q;
        return q == p_ ? byte_text(p_, end_) : std::string(p_, q);
    }

    // -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?  An integer that fits
    // int64 (negative) or uint64 stays an integer, as nlohmann reads it; any
    // other number is a double.
    void number() {
        const char* start = p_;
        const bool negative = *p_ == '-';
        if (negative) ++p_;
        if (p_ == end_ || !is_digit(*p_)) syntax("a digit");
        if (*p_ == '0') ++p_;
        else
            while (p_ < end_ && is_digit(*p_)) ++p_;
        bool integer = true;
        if (p_ < end_ && *p_ == '.') {
            ++p_;
            integer = false;
            if (p_ == end_ || !is_digit(*p_)) syntax("a digit after the decimal point");
            while (p_ < end_ && is_digit(*p_)) ++p_;
        }
        if (p_ < end_ && (*p_ == 'e' || *p_ == 'E')) {
            ++p_;
            integer = false;
            if (p_ < end_ && (*p_ == '+' || *p_ == '-')) ++p_;
            if (p_ == end_ || !is_digit(*p_)) syntax("a digit in the exponent");
            while (p_ < end_ && is_digit(*p_)) ++p_;
        }
        if (integer) {
            if (negative) {
                std::int64_t v = 0;
                if (std::from_chars(start, p_, v).ec == std::errc{}) return out_.scalar(v);
            } else {
                std::uint64_t v = 0;
                if (std::from_chars(start, p_, v).ec == std::errc{}) return out_.scalar(v);
            }
            // beyond 64 bits: a double, as nlohmann reads it
        }
        double d = 0;
        if (std::from_chars(start, p_, d).ec == std::errc{}) return out_.scalar(d);
        // Out of range: strtod tells an underflow (0 or a denormal, kept) from an overflow (refused).
        const std::string token(start, p_);
        d = std::strtod(token.c_str(), nullptr);
        if (!std::isfinite(d))
            fail_at(file_, static_cast<std::size_t>(start - begin_), "a finite number",
                    (token.size() > 24 ? token.substr(0, 21) + "..." : token) + " (out of range)");
        out_.scalar(d);
    }

    // A string at p_ ('"'), into s: escapes decoded, UTF-8 checked.
    void string(std::string& s) {
        const char* opening = p_++;
        for (;;) {
            const char* run = p_;
            while (p_ < end_) {
                const auto c = static_cast<unsigned char>(*p_);
                if (c < 0x20 || c >= 0x80 || c == '"' || c == '\\') break;
                ++p_;
            }
            s.append(run, p_);
            if (p_ == end_) syntax_at(opening, "a '\"' closing the string begun here", "the end of the text");
            const auto c = static_cast<unsigned char>(*p_);
            if (c == '"') {
                ++p_;
                return;
            }
            if (c == '\\') escape(s);
            else if (c < 0x20) syntax("a control character written as an escape (\\n, \\t, \\u0001) inside a string");
            else utf8(s);
        }
    }

    // One multi-byte UTF-8 sequence at p_, well formed (Unicode, Table 3-7:
    // no overlong forms, no surrogates, nothing past U+10FFFF).
    void utf8(std::string& s) {
        const auto b0 = static_cast<unsigned char>(*p_);
        int n = 0;
        unsigned char lo = 0x80, hi = 0xBF;  // the second byte's range
        if (b0 >= 0xC2 && b0 <= 0xDF) n = 1;
        else if (b0 >= 0xE0 && b0 <= 0xEF) n = 2, lo = b0 == 0xE0 ? 0xA0 : 0x80, hi = b0 == 0xED ? 0x9F : 0xBF;
        else if (b0 >= 0xF0 && b0 <= 0xF4) n = 3, lo = b0 == 0xF0 ? 0x90 : 0x80, hi = b0 == 0xF4 ? 0x8F : 0xBF;
        else syntax("UTF-8 text (this byte cannot start a character)");
        for (int i = 1; i <= n; ++i) {
            const char* q = p_ + i;
            const auto b = q < end_ ? static_cast<unsigned char>(*q) : 0;
            if (q >= end_ || b < (i == 1 ? lo : 0x80) || b > (i == 1 ? hi : 0xBF))
                syntax_at(q, "UTF-8 text (a continuation byte of the character begun before it)", byte_text(q, end_));
        }
        s.append(p_, p_ + n + 1);
        p_ += n + 1;
    }

    // \" \\ \/ \b \f \n \r \t \uXXXX (a surrogate pair for a character past U+FFFF)
    void escape(std::string& s) {
        const char* at = p_++;
        if (p_ == end_) syntax("an escaped character after '\\'");
        const char e = *p_++;
        switch (e) {
            case '"': s += '"'; return;
            case '\\': s += '\\'; return;
            case '/': s += '/'; return;
            case 'b': s += '\b'; return;
            case 'f': s += '\f'; return;
            case 'n': s += '\n'; return;
            case 'r': s += '\r'; return;
            case 't': s += '\t'; return;
            case 'u': break;
            default: syntax_at(at, "an escape: \\\" \\\\ \\/ \\b \\f \\n \\r \\t or \\uXXXX", byte_text(p_ - 1, end_));
        }
        std::uint32_t cp = hex4();
        if (cp >= 0xDC00 && cp <= 0xDFFF) syntax_at(at, "a \\u escape that is not a lone low surrogate", "one");
        if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (end_ - p_ < 2 || p_[0] != '\\' || p_[1] != 'u')
                syntax_at(at, "a high surrogate followed by \\u and a low surrogate", byte_text(p_, end_));
            p_ += 2;
            const std::uint32_t low = hex4();
            if (low < 0xDC00 || low > 0xDFFF) syntax_at(at, "a high surrogate followed by a low surrogate", "another escape");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
        }
        append_utf8(s, cp);
    }
    std::uint32_t hex4() {
        std::uint32_t v = 0;
        for (int i = 0; i < 4; ++i, ++p_) {
            if (p_ == end_) syntax("four hexadecimal digits after \\u");
            const char c = *p_;
            const int d = is_digit(c) ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : (c >= 'A' && c <= 'F') ? c - 'A' + 10 : -1;
            if (d < 0) syntax("four hexadecimal digits after \\u");
            v = v * 16 + static_cast<std::uint32_t>(d);
        }
        return v;
    }

    const char* begin_;
    const char* p_;
    const char* end_;
    const std::string& file_;
    DomBuilder& out_;
    std::vector<char> open_;  // the brackets of the open containers, outermost first
    std::string text_;        // the string being read (its buffer reused)
};

}  // namespace

json parse_json_document(std::string_view text, const std::string& file, JsonLimits limits) {
    json doc;
    DomBuilder builder(file, doc, limits);
    Parser(text, file, builder).document();
    return doc;
}

}  // namespace attntrace

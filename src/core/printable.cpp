#include "core/printable.hpp"

#include <fmt/format.h>

#include <cstdint>

namespace attntrace {

namespace {

// Length of the valid UTF-8 sequence starting at s[i] (2..4), or 0 when the
// bytes there are not one (RFC 3629: no overlong forms, no surrogates, at
// most U+10FFFF). Called for bytes >= 0x80 only.
std::size_t utf8_length(std::string_view s, std::size_t i) {
    const auto at = [&](std::size_t k) { return k < s.size() ? static_cast<unsigned char>(s[k]) : 0u; };
    const unsigned b0 = at(i), b1 = at(i + 1);
    const auto cont = [](unsigned b) { return (b & 0xC0) == 0x80; };
    if (b0 >= 0xC2 && b0 <= 0xDF) return cont(b1) ? 2 : 0;
    if (b0 >= 0xE0 && b0 <= 0xEF) {
        const unsigned lo = b0 == 0xE0 ? 0xA0 : 0x80, hi = b0 == 0xED ? 0x9F : 0xBF;  // overlong; surrogates
        return b1 >= lo && b1 <= hi && cont(at(i + 2)) ? 3 : 0;
    }
    if (b0 >= 0xF0 && b0 <= 0xF4) {
        const unsigned lo = b0 == 0xF0 ? 0x90 : 0x80, hi = b0 == 0xF4 ? 0x8F : 0xBF;  // overlong; > U+10FFFF
        return b1 >= lo && b1 <= hi && cont(at(i + 2)) && cont(at(i + 3)) ? 4 : 0;
    }
    return 0;  // a continuation byte on its own, 0xC0, 0xC1, 0xF5..0xFF
}

// The code point of the valid n-byte UTF-8 sequence at s[i].
char32_t decode(std::string_view s, std::size_t i, std::size_t n) {
    const auto b = [&](std::size_t k) { return static_cast<char32_t>(static_cast<unsigned char>(s[i + k])); };
    if (n == 2) return (b(0) & 0x1F) << 6 | (b(1) & 0x3F);
    if (n == 3) return (b(0) & 0x0F) << 12 | (b(1) & 0x3F) << 6 | (b(2) & 0x3F);
    return (b(0) & 0x07) << 18 | (b(1) & 0x3F) << 12 | (b(2) & 0x3F) << 6 | (b(3) & 0x3F);
}

// Code points that are not controls but still change what a terminal shows
// around them: the bidirectional marks, embeddings, overrides and isolates
// (a token can reorder the rest of its line, "Trojan Source"), and the line
// and paragraph separators (a line break to some terminals and viewers).
bool invisible_format(char32_t u) {
    return u == 0x061C || u == 0x200E || u == 0x200F || (u >= 0x202A && u <= 0x202E) ||
           (u >= 0x2066 && u <= 0x2069) || u == 0x2028 || u == 0x2029;
}

}  // namespace

std::string valid_utf8(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size();) {
        if (static_cast<unsigned char>(s[i]) < 0x80) {
            out += s[i++];
            continue;
        }
        const std::size_t n = utf8_length(s, i);
        if (n == 0) {
            out += "\xEF\xBF\xBD";
            ++i;
            continue;
        }
        out.append(s.substr(i, n));
        i += n;
    }
    return out;
}

std::string printable(std::string_view s, bool keep_newlines) {
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size();) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c >= 0x20 && c < 0x7F) {
            out += static_cast<char>(c);
            ++i;
        } else if (c < 0x80) {  // C0 controls and DEL
            if (c == '\n' && keep_newlines) out += '\n';
            else if (c == '\n') out += "\\n";
            else if (c == '\r') out += "\\r";
            else if (c == '\t') out += "\\t";
            else out += fmt::format("\\x{:02x}", c);
            ++i;
        } else if (const std::size_t n = utf8_length(s, i); n == 0) {
            out += fmt::format("\\x{:02x}", c);
            ++i;
        } else if (n == 2 && c == 0xC2 && static_cast<unsigned char>(s[i + 1]) < 0xA0) {  // U+0080..U+009F
            out += fmt::format("\\u{:04x}", static_cast<unsigned char>(s[i + 1]));
            i += 2;
        } else if (const char32_t u = decode(s, i, n); invisible_format(u)) {
            out += fmt::format("\\u{:04x}", static_cast<std::uint32_t>(u));
            i += n;
        } else {
            out.append(s.substr(i, n));
            i += n;
        }
    }
    return out;
}

}  // namespace attntrace

#include "draft/numbers.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <string>

namespace attntrace {

namespace {

constexpr std::string_view kUnicodeMinus = "\xE2\x88\x92";
// Longer runs of digits are no printed number an article checks (an id, a hash).
constexpr std::size_t kMaxDigits = 40;

bool ascii_digit(char c) { return c >= '0' && c <= '9'; }
bool is_word(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

}  // namespace

bool may_start_number(std::string_view s, std::size_t i) {
    const char c = s[i];
    return ascii_digit(c) || c == '-' || c == '+' || c == '.' || s.substr(i, 3) == kUnicodeMinus;
}
// An infinity is read only with its sign ("-inf", "−∞", "-\\infty"): "inf" alone is a word more often.

std::optional<NumberToken> read_number(std::string_view s, std::size_t i) {
    if (i >= s.size() || !may_start_number(s, i)) return std::nullopt;
    // not the tail of a word or a number: "W1", "x_2", "d^4", "3.1" read from its "1"
    if (i > 0) {
        const char p = s[i - 1];
        if (is_word(p) || p == '^' || p == '.' || p == '\\') return std::nullopt;
    }
    std::string ascii;
    std::size_t k = i;
    if (s.substr(k, 3) == kUnicodeMinus) {
        ascii += '-';
        k += 3;
    } else if (s[k] == '-' || s[k] == '+') {
        if (s[k] == '-') ascii += '-';
        ++k;
    }
    // an infinity, as articles print a mask's blocked cells: "-inf", "−∞", "-\\infty", "+inf"
    for (std::string_view inf : {"inf", "\xE2\x88\x9E", "\\infty"}) {
        if (s.substr(k, inf.size()) != inf) continue;
        const std::size_t e = k + inf.size();
        if (e < s.size() && is_word(s[e])) break;  // "-infinite" is a word
        NumberToken t;
        t.begin = i;
        t.end = e;
        t.number.value = (!ascii.empty() && ascii[0] == '-') ? -HUGE_VAL : HUGE_VAL;
        t.number.decimals = 0;
        return t;
    }
    std::size_t int_digits = 0, frac_digits = 0;
    while (k < s.size() && ascii_digit(s[k]) && int_digits < kMaxDigits) ascii += s[k++], ++int_digits;
    if (k < s.size() && s[k] == '.' && k + 1 < s.size() && ascii_digit(s[k + 1])) {
        ascii += s[k++];
        while (k < s.size() && ascii_digit(s[k]) && frac_digits < kMaxDigits) ascii += s[k++], ++frac_digits;
    }
    if (int_digits + frac_digits == 0 || int_digits + frac_digits >= kMaxDigits) return std::nullopt;
    // numpy's and torch's "1." and "0.  ": a float printed without decimals, its point part of it
    if (frac_digits == 0 && k < s.size() && s[k] == '.' && (k + 1 == s.size() || s[k + 1] == ',' || s[k + 1] == ']' ||
                                                           s[k + 1] == ' ' || s[k + 1] == '\n' || s[k + 1] == ')'))
        ++k;
    int exponent = 0;
    if (k + 1 < s.size() && (s[k] == 'e' || s[k] == 'E')) {
        std::size_t e = k + 1;
        const bool neg = s[e] == '-';
        if (s[e] == '-' || s[e] == '+') ++e;
        std::size_t ed = 0;
        int value = 0;
        while (e < s.size() && ascii_digit(s[e]) && ed < 3) value = value * 10 + (s[e++] - '0'), ++ed;
        if (ed > 0 && ed < 3 && !(e < s.size() && ascii_digit(s[e]))) {
            exponent = neg ? -value : value;
            ascii += 'e';
            ascii += std::to_string(exponent);
            k = e;
        }
    }
    // not followed by more of a word or a section number: "3rd", "3.1.4", "2x"
    if (k < s.size() && (is_word(s[k]) || (s[k] == '.' && k + 1 < s.size() && ascii_digit(s[k + 1])))) return std::nullopt;
    double value = 0;
    const auto [ptr, ec] = std::from_chars(ascii.data(), ascii.data() + ascii.size(), value);
    if (ec != std::errc() || ptr != ascii.data() + ascii.size()) return std::nullopt;
    NumberToken t;
    t.begin = i;
    t.number.value = value;
    t.number.decimals = static_cast<int>(frac_digits) - exponent;
    // a percentage: "51%", "51 %", LaTeX's "51\%"
    std::size_t p = k;
    if (p < s.size() && s[p] == ' ') ++p;
    if (p < s.size() && s[p] == '\\') ++p;
    if (p < s.size() && s[p] == '%') {
        t.number.value /= 100;
        t.number.decimals += 2;
        k = p + 1;
    }
    t.end = k;
    return t;
}

}  // namespace attntrace

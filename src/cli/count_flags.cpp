// non_negative: a minus sign, or a number past 64 bits, refused before CLI11
// reads an unsigned value.
#include "cli/count_flags.hpp"

#include <charconv>
#include <cstdint>
#include <string>

namespace attntrace {

namespace {

// Why `text` is no unsigned 64-bit number as strtoull would read it without
// wrapping, or "" when it is one (or is no number: CLI11 refuses that itself).
std::string wrap_refusal(const std::string& text) {
    // strtoull skips leading white space before the sign, so the check does too.
    auto first = text.find_first_not_of(" \t\n\v\f\r");
    if (first == std::string::npos) return "";
    if (text[first] == '-') return "expected a non-negative whole number, found " + text;
    if (text[first] == '+') ++first;
    std::uint64_t v = 0;
    if (std::from_chars(text.data() + first, text.data() + text.size(), v).ec == std::errc::result_out_of_range)
        return "expected a whole number below 2^64, found " + text;
    return "";
}

}  // namespace

const CLI::Validator& non_negative() {
    static const CLI::Validator v([](std::string& text) { return wrap_refusal(text); }, "", "NON-NEGATIVE");
    return v;
}

}  // namespace attntrace

// Numbers as articles print them: "0.45", "-1.0", "−0.5" (a Unicode minus),
// ".5", "1e-3", "51%" and LaTeX's "51\%", each with the decimals it shows;
// a mask's "-inf", "−∞" and "-\infty".
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

#include "draft/printed.hpp"

namespace attntrace {

struct NumberToken {
    PrintedNumber number;
    std::size_t begin = 0, end = 0;  // [begin, end) of the text, sign and percent sign included
};

// The number that starts at s[i] (at its sign or first digit), or none: a
// number is not part of a word ("W1", "3rd", "d_4"), of a section number
// ("3.1.4") or of a version ("v2"). Reads at most a bounded run of characters.
std::optional<NumberToken> read_number(std::string_view s, std::size_t i);

// Whether s[i] can begin a number ('-', '+', the first byte of '−', '.', a digit).
bool may_start_number(std::string_view s, std::size_t i);

}  // namespace attntrace

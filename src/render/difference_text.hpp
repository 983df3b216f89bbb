// How a difference between two runs is written, by `diff` and `compare`
// alike: a value as the shortest text that reads back to the same float,
// an error in a few significant digits, and a number in JSON (infinities as
// the strings traces use).
#pragma once

#include <cmath>
#include <string>

#include <fmt/format.h>

#include "trace/json_text.hpp"

namespace attntrace {

inline std::string value_text(float x) { return fmt::format("{}", x); }  // shortest round trip; -inf as "-inf"

// `digits` significant digits: 3 in diff's table, 4 in compare's lines.
inline std::string error_text(double x, int digits) {
    return std::isinf(x) ? "inf" : x == 0 ? "0" : fmt::format("{:.{}g}", x, digits);
}

inline OrderedJson difference_json(double x) {
    if (std::isinf(x)) return x < 0 ? "-inf" : "inf";  // JSON has no infinity, as in traces
    return x;
}

}  // namespace attntrace

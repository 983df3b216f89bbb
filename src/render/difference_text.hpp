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

// One format for the differences of a table (diff's max |a-b| and max rel,
// compare's max |Δ| and max rel): 4 decimals when every one reads so with
// two significant digits or more and stays below 1e8, else scientific
// notation with 3 significant digits for all; inf as "inf".
struct ErrorFormat {
    bool scientific = false;
    static constexpr double kFixedFrom = 1e-3, kFixedBelow = 1e8;
    void add(double x) {
        if (std::isfinite(x) && x != 0 && (std::fabs(x) < kFixedFrom || std::fabs(x) >= kFixedBelow)) scientific = true;
    }
    std::string operator()(double x) const {
        if (std::isinf(x)) return x < 0 ? "-inf" : "inf";
        return scientific ? fmt::format("{:.2e}", x) : fmt::format("{:.4f}", x);
    }
    std::string caption() const { return scientific ? "in scientific notation, 3 significant digits" : "to 4 decimals"; }
};

// One format for the cells' values of a table (diff's a and b, compare's A and
// B): each the shortest text that reads back to the same float32 ("0.47516838"),
// or, when one of them would need an exponent so (below 1e-4, from 1e16),
// every one in scientific notation with 9 significant digits, enough to tell
// any two float32 apart.
struct ValueFormat {
    bool scientific = false;
    void add(float x) { scientific = scientific || (std::isfinite(x) && value_text(x).find('e') != std::string::npos); }
    std::string operator()(float x) const {
        return scientific && std::isfinite(x) ? fmt::format("{:.8e}", x) : value_text(x);
    }
    std::string caption() const {
        return scientific ? "in scientific notation, 9 significant digits"
                          : "as stored, the shortest decimal that reads back";
    }
};

inline OrderedJson difference_json(double x) {
    if (std::isinf(x)) return x < 0 ? "-inf" : "inf";  // JSON has no infinity, as in traces
    return x;
}

}  // namespace attntrace

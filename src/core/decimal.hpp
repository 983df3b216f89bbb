// Numbers as people print them: rounding to d decimals, and deciding whether
// a printed number agrees with a computed one.
#pragma once

#include <cmath>
#include <string>

namespace attntrace {

// float32 cannot hold most decimals exactly: 0.145 is stored as 0.14499999,
// 0.13 as 0.12999999. A few float ulps of slack, relative to the number's
// size, make such decimal ties behave as they do on paper.
inline constexpr double kDecimalTieSlack = 4.0e-7;

// Round half away from zero, as a person rounding by hand: 0.145 -> 0.15.
inline float round_decimals(float x, int decimals) {
    if (!std::isfinite(x)) return x;
    const double scale = std::pow(10.0, decimals);
    const double v = static_cast<double>(x) * scale;
    const double nudged = v + (v >= 0 ? 1.0 : -1.0) * kDecimalTieSlack * std::fmax(1.0, std::fabs(v));
    return static_cast<float>(std::round(nudged) / scale);
}

// A printed p with d decimals agrees with a computed x when x rounds to p:
// |x - p| <= 0.5·10^-d (plus the tie slack, so that 0.125 printed 0.13 agrees).
inline bool agrees_at_precision(float computed, float printed, int decimals) {
    if (std::isinf(printed) || std::isinf(computed)) return computed == printed;
    if (std::isnan(printed) || std::isnan(computed)) return false;
    const double half_unit = 0.5 * std::pow(10.0, -decimals);
    const double slack = kDecimalTieSlack * std::fmax(1.0, std::fabs(static_cast<double>(printed)));
    return std::fabs(static_cast<double>(computed) - printed) <= half_unit + slack;
}

// Where fixed-point stops being readable: numpy prints an array in
// scientific notation once its largest magnitude reaches 1e8, and so do the
// tables (3e38 would otherwise take 39 digits and push a row off the screen).
inline constexpr float kScientificFrom = 1e8f;

enum class Notation { fixed, scientific };

// A table's notation: scientific when any finite value reaches kScientificFrom.
Notation notation_for(const float* x, std::size_t n);

// One number as the tables and explanations show it: `precision` decimals,
// "-inf" for blocked cells, never "-0.0000"; with the scientific notation,
// `precision` decimals of the mantissa (3.0000e+38).
std::string format_number(float x, int precision, Notation notation);
// The same, the notation chosen for this number alone.
std::string format_number(float x, int precision);

}  // namespace attntrace

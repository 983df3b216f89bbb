// Numbers as people print them: rounding to d decimals, and deciding whether
// a printed number agrees with a computed one.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
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

// How an article printed a number: to d decimals (0.19: 2; 1.0: 1) or to n
// significant figures (6.0337e-06: 5; 0.250: 3).
struct Precision {
    enum class Unit : std::uint8_t { decimals, significant };
    Unit unit = Unit::decimals;
    int digits = 2;
    bool operator==(const Precision&) const = default;
};

// The most digits a claim may state. Its printed numbers are held as float32,
// as the trace's are (~7.2 significant digits).
// Decimals: 8, the digits a probability below 1 has in float32 (0.12345678).
inline constexpr int kMaxDecimals = 8;
// Significant figures: 6, float32's FLT_DIG: every decimal of 6 figures
// survives the trip to float32 and back, not every one of 7 (8.589973e9 is
// stored as 8589973504, which no longer reads 8.589973e9 at 7 figures). At
// 6 figures the tie slack below is up to 0.4 of the last figure: float32 has
// no more to give.
inline constexpr int kMaxSignificant = std::numeric_limits<float>::digits10;

// A printed p with n significant figures agrees with a computed x when x
// rounded to n figures (half away from zero, with the tie slack) is p rounded
// to n figures: the figures and the power of ten both equal, so 0.99996 is
// 1.000 at 4 figures while 0.99951 is 0.9995, not 1.000. A printed 0 has no
// figure to round at: only an exact 0 agrees with it.
bool agrees_at_significance(float computed, float printed, int significant);
// x rounded to n significant figures: round_significant(0.000060337f, 3) = 6.03e-05f.
float round_significant(float x, int significant);

// Either rule, as the precision says.
inline bool agrees_as_printed(float computed, float printed, Precision p) {
    return p.unit == Precision::Unit::decimals ? agrees_at_precision(computed, printed, p.digits)
                                               : agrees_at_significance(computed, printed, p.digits);
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
// A number at a claim's precision: decimals as format_number; significant
// figures as C's %#g, trailing zeros kept ("0.250", "6.0337e-06", "1.00e+05"),
// rounded as agrees_at_significance rounds up to kMaxSignificant figures.
std::string format_printed(float x, Precision p, Notation notation);

}  // namespace attntrace

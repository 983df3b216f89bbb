#include "core/decimal.hpp"

#include <fmt/format.h>

#include <cstdio>

namespace attntrace {

namespace {

// x rounded to n significant figures as m · 10^exp, n figures in m
// (10^(n-1) <= |m| < 10^n), or m = 0 for 0. Half away from zero, nudged by
// the tie slack as round_decimals is.
struct Figures {
    long long m = 0;
    int exp = 0;
    bool operator==(const Figures&) const = default;
};

Figures figures(double x, int n) {
    if (x == 0) return {};
    const double top = std::pow(10.0, n);
    int d = n - 1 - static_cast<int>(std::floor(std::log10(std::fabs(x))));  // x·10^d has n figures before the point
    double v = x * std::pow(10.0, d);
    if (std::fabs(v) >= top) v = x * std::pow(10.0, --d);  // log10 a hair off at a power of ten
    else if (std::fabs(v) < top / 10) v = x * std::pow(10.0, ++d);
    double r = std::round(v + (v >= 0 ? 1.0 : -1.0) * kDecimalTieSlack * std::fabs(v));
    if (std::fabs(r) >= top) {  // 9.9996 at 4 figures: 10.00, one power of ten up
        r /= 10;
        --d;
    }
    return {static_cast<long long>(r), -d};
}

// In double: 3.4028235e38 at 4 figures is 3.403e38, past float32's largest.
double to_double(Figures f) { return static_cast<double>(f.m) * std::pow(10.0, f.exp); }

}  // namespace

bool agrees_at_significance(float computed, float printed, int significant) {
    if (std::isinf(printed) || std::isinf(computed)) return computed == printed;
    if (std::isnan(printed) || std::isnan(computed)) return false;
    return figures(computed, significant) == figures(printed, significant);
}

float round_significant(float x, int significant) {
    if (!std::isfinite(x)) return x;
    return static_cast<float>(to_double(figures(x, significant)));
}

Notation notation_for(const float* x, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i)
        if (std::isfinite(x[i]) && std::fabs(x[i]) >= kScientificFrom) return Notation::scientific;
    return Notation::fixed;
}

std::string format_number(float x, int precision, Notation notation) {
    if (std::isinf(x)) return x < 0 ? "-inf" : "inf";
    if (std::isnan(x)) return "nan";
    if (notation == Notation::scientific) return fmt::format("{:.{}e}", x, precision);
    std::string s = fmt::format("{:.{}f}", x, precision);
    if (s[0] == '-' && s.find_first_not_of("-0.") == std::string::npos) s.erase(0, 1);  // "-0.0000" -> "0.0000"
    return s;
}

std::string format_printed(float x, Precision p, Notation notation) {
    if (p.unit == Precision::Unit::decimals || !std::isfinite(x)) return format_number(x, p.digits, notation);
    // At a claim's precision, rounded first as the check rounds (half away from zero, with the tie slack; %g
    // alone rounds 0.25 to 0.2 at 1 figure); beyond it (the computed values shown with more figures than a claim
    // may state, where a few ulps are more than a figure) the float as it is. Written by C's %#g (fmt 9's
    // "{:#g}" writes 100 at 3 figures as "100.0"); -0 as 0.
    const double r = p.digits <= kMaxSignificant ? to_double(figures(x, p.digits)) : (x == 0 ? 0.0 : x);
    char buf[40];
    std::snprintf(buf, sizeof buf, "%#.*g", p.digits, r);
    std::string s = buf;
    const std::size_t point = s.find('.');
    if (point != std::string::npos && (point + 1 == s.size() || s[point + 1] == 'e')) s.erase(point, 1);  // "12." -> "12"
    return s;
}

std::string format_number(float x, int precision) { return format_number(x, precision, notation_for(&x, 1)); }

}  // namespace attntrace

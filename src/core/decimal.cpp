#include "core/decimal.hpp"

#include <fmt/format.h>

namespace attntrace {

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

std::string format_number(float x, int precision) { return format_number(x, precision, notation_for(&x, 1)); }

}  // namespace attntrace

#include "core/decimal.hpp"

#include <fmt/format.h>

namespace attntrace {

std::string format_number(float x, int precision) {
    if (std::isinf(x)) return x < 0 ? "-inf" : "inf";
    if (std::isnan(x)) return "nan";
    std::string s = fmt::format("{:.{}f}", x, precision);
    if (s[0] == '-' && s.find_first_not_of("-0.") == std::string::npos) s.erase(0, 1);  // "-0.0000" -> "0.0000"
    return s;
}

}  // namespace attntrace

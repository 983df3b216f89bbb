#include "core/error.hpp"

#include <fmt/format.h>

namespace attntrace {

namespace {

// One line, whatever a file name or a JSON key holds: control characters are
// written as \uXXXX.
std::string one_line(const std::string& s) {
    std::string out;
    for (unsigned char c : s) {
        if (c < 0x20 || c == 0x7f) out += fmt::format("\\u{:04x}", c);
        else out += static_cast<char>(c);
    }
    return out;
}

}  // namespace

void fail_field(const std::string& file, const std::string& path, const std::string& expected,
                const std::string& found) {
    throw InputError(one_line(fmt::format("{}: {}: expected {}, found {}", file, path, expected, found)));
}

void fail_file(const std::string& file, const std::string& message) {
    throw InputError(one_line(fmt::format("{}: {}", file, message)));
}

}  // namespace attntrace

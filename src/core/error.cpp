#include "core/error.hpp"

#include <fmt/format.h>

namespace attntrace {

void fail_field(const std::string& file, const std::string& path, const std::string& expected,
                const std::string& found) {
    throw InputError(fmt::format("{}: {}: expected {}, found {}", file, path, expected, found));
}

void fail_file(const std::string& file, const std::string& message) {
    throw InputError(fmt::format("{}: {}", file, message));
}

}  // namespace attntrace

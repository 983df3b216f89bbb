#include "core/memory.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cctype>
#include <cstdint>
#include <cstdlib>

#include "core/error.hpp"

namespace attntrace {

namespace {
std::size_t g_override = 0;  // --max-memory; 0: not set
}

std::size_t parse_size(const std::string& s, const std::string& origin) {
    std::size_t digits = 0;
    while (digits < s.size() && std::isdigit(static_cast<unsigned char>(s[digits]))) ++digits;
    std::string suffix = s.substr(digits);
    std::size_t shift = suffix.empty() ? 0 : suffix == "K" ? 10 : suffix == "M" ? 20 : suffix == "G" ? 30 : 99;
    if (digits == 0 || digits > 12 || shift == 99)
        fail_file(origin, "a size such as 512M or 8G", fmt::format("\"{}\"", s));
    const std::size_t n = static_cast<std::size_t>(std::stoull(s.substr(0, digits)));
    if (n > (SIZE_MAX >> shift))  // "17179869184G" would wrap around to 0
        fail_file(origin, "a size below 16 EiB", fmt::format("\"{}\"", s));
    if (n == 0) fail_file(origin, "a size above 0", fmt::format("\"{}\"", s));
    return n << shift;
}

void set_max_memory(std::size_t bytes) { g_override = bytes; }

std::size_t max_memory_bytes() {
    if (g_override) return g_override;
    if (const char* env = std::getenv("ATTNTRACE_MAX_MEMORY"); env && *env)
        return parse_size(env, "ATTNTRACE_MAX_MEMORY");
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0) return std::size_t{4} << 30;
    return static_cast<std::size_t>(pages) * static_cast<std::size_t>(page) / 2;
}

std::string human_bytes(std::size_t bytes) {
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    double v = static_cast<double>(bytes);
    int u = 0;
    while (v >= 1024.0 && u < 6) v /= 1024.0, ++u;
    return u == 0 ? fmt::format("{} B", bytes) : fmt::format("{:.1f} {}", v, units[u]);
}

}  // namespace attntrace

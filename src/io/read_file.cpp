// read_small_file: one capped read, for the tokenizers' files.
#include "io/read_file.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>

#include "core/error.hpp"

namespace attntrace {

std::string read_small_file(const std::string& path, std::uintmax_t max_bytes, const std::string& what) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (fs::is_directory(path, ec)) fail_file(path, what, "a directory");
    const auto size = fs::file_size(path, ec);
    if (ec) fail_file(path, what, ec.message());
    if (size > max_bytes)
        fail_file(path, fmt::format("{} of at most {} bytes", what, max_bytes), fmt::format("{} bytes", size));
    std::ifstream in(path, std::ios::binary);
    if (!in) fail_file(path, what, "a file that cannot be opened");
    std::string bytes(static_cast<std::size_t>(size), '\0');
    in.read(bytes.data(), static_cast<std::streamsize>(size));
    if (static_cast<std::uintmax_t>(in.gcount()) != size) fail_file(path, what, "a read error, or a file shorter than its size");
    return bytes;
}

}  // namespace attntrace

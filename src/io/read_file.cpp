// read_small_file: one capped read, for the tokenizers' files.
#include "io/read_file.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "core/file_kind.hpp"

namespace attntrace {

std::string read_small_file(const std::string& path, std::uintmax_t max_bytes, const std::string& what) {
    namespace fs = std::filesystem;
    std::error_code ec;
    // Refused from its type before it is opened: a FIFO's open would wait for a writer.
    const auto status = fs::status(path, ec);
    if (ec && status.type() != fs::file_type::not_found) fail_file(path, what, ec.message());  // e.g. no permission
    if (const std::string kind = non_regular_kind(status.type()); !kind.empty()) fail_file(path, what, kind);
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

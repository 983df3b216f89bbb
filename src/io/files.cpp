#include "io/files.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "core/error.hpp"

namespace attntrace {

void write_file_atomic(const std::string& path, const std::string& content) {
    namespace fs = std::filesystem;
    fs::path target(path);
    std::error_code ec;
    if (fs::is_directory(target, ec)) fail_file(path, "expected a file path to write, found a directory");
    fs::path dir = target.parent_path().empty() ? fs::path(".") : target.parent_path();
    std::string name = ".";  // built in steps: GCC 12 warns (-Wrestrict) on "." + string, wrongly
    name += target.filename().string();
    name += ".tmp-XXXXXX";
    std::string tmpl = (dir / name).string();
    int fd = mkstemp(tmpl.data());
    if (fd < 0)
        fail_file(path, fmt::format("expected a writable location, found: {}", std::strerror(errno)));
    std::size_t done = 0;
    while (done < content.size()) {
        ssize_t n = ::write(fd, content.data() + done, content.size() - done);
        if (n < 0) {
            if (errno == EINTR) continue;
            int err = errno;
            ::close(fd);
            std::remove(tmpl.c_str());
            fail_file(path, fmt::format("expected to write {} bytes, found: {}", content.size(), std::strerror(err)));
        }
        done += static_cast<std::size_t>(n);
    }
    if (::fsync(fd) != 0 || ::close(fd) != 0) {
        int err = errno;
        std::remove(tmpl.c_str());
        fail_file(path, fmt::format("expected to save the file, found: {}", std::strerror(err)));
    }
    // mkstemp creates 0600; give the file the usual permissions.
    fs::permissions(tmpl, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                              fs::perms::others_read, ec);
    if (std::rename(tmpl.c_str(), path.c_str()) != 0) {
        int err = errno;
        std::remove(tmpl.c_str());
        fail_file(path, fmt::format("expected to replace the file, found: {}", std::strerror(err)));
    }
}

}  // namespace attntrace

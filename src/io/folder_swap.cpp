#include "io/folder_swap.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <stdio.h>  // renameat2 (glibc >= 2.28)
#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "core/error.hpp"

namespace attntrace {

namespace fs = std::filesystem;

namespace {

// A sibling of `target` named ".NAME.KIND-XXXXXX", created empty.
std::string make_sibling(const std::string& target, const char* kind) {
    fs::path t = fs::path(target).lexically_normal();
    if (t.filename().empty()) t = t.parent_path();  // "out/" -> "out"
    fs::path dir = t.parent_path().empty() ? fs::path(".") : t.parent_path();
    std::string name = ".";
    name += t.filename().string();
    name += kind;
    name += "-XXXXXX";
    std::string path = (dir / name).string();
    if (!::mkdtemp(path.data()))
        fail_file(target, fmt::format("expected a writable location, found: {}", std::strerror(errno)));
    return path;
}

// Removes the folder at `path` unless released: the temporary folder on any failure.
class RemoveOnExit {
public:
    explicit RemoveOnExit(std::string path) : path_(std::move(path)) {}
    ~RemoveOnExit() {
        std::error_code ec;
        if (!path_.empty()) fs::remove_all(path_, ec);
    }
    void release() { path_.clear(); }

private:
    std::string path_;
};

[[noreturn]] void fail_swap(const std::string& target, int err) {
    fail_file(target, fmt::format("expected to put the new folder in place, found: {}", std::strerror(err)));
}

// Exchange `temp` (complete) and `target` (the previous output); afterwards
// `temp` holds the previous output, which is removed. RENAME_EXCHANGE swaps
// both names at once; where the file system does not support it, the old
// folder is first renamed aside (and renamed back if the new one cannot go in).
void exchange(const std::string& temp, const std::string& target) {
    if (::renameat2(AT_FDCWD, temp.c_str(), AT_FDCWD, target.c_str(), RENAME_EXCHANGE) == 0) return;
    if (errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP) fail_swap(target, errno);
    const std::string aside = make_sibling(target, ".old");
    if (std::rename(target.c_str(), aside.c_str()) != 0) {  // onto the empty aside folder
        const int err = errno;
        fs::remove(aside);
        fail_swap(target, err);
    }
    if (std::rename(temp.c_str(), target.c_str()) != 0) {
        const int err = errno;
        std::rename(aside.c_str(), target.c_str());  // put the previous one back
        fail_swap(target, err);
    }
    std::error_code ec;
    fs::remove_all(aside, ec);  // the previous output
}

}  // namespace

bool check_folder_target(const std::string& target, const FolderSwap& swap) {
    if (target.empty()) fail_file("(empty path)", "a folder path", "an empty string");
    // What is there now decides how the new folder goes in; refused before any work.
    std::error_code ec;
    const auto status = fs::symlink_status(target, ec);
    bool replace = false;
    if (fs::exists(status)) {
        if (fs::is_symlink(status)) fail_file(target, "a folder to write", "a symbolic link (left as it is)");
        if (!fs::is_directory(status)) fail_file(target, "a folder to write", "a file (left as it is)");
        replace = !fs::is_empty(target, ec);
        if (replace && !swap.replaceable(target))
            fail_file(target, fmt::format("a new folder, an empty one or {}", swap.what),
                      "a folder holding other files (left as it is)");
    }
    return replace;
}

void write_folder_atomic(const std::string& target, const FolderSwap& swap,
                         const std::function<void(const std::string& temp_folder)>& fill) {
    const bool replace = check_folder_target(target, swap);
    const std::string temp = make_sibling(target, ".tmp");
    RemoveOnExit cleanup(temp);
    fill(temp);
    if (!replace) {
        if (std::rename(temp.c_str(), target.c_str()) != 0) fail_swap(target, errno);  // onto nothing or an empty folder
        cleanup.release();
        return;
    }
    exchange(temp, target);  // cleanup then removes the previous output, now at `temp`
}

}  // namespace attntrace

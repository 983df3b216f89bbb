#include "io/folder_swap.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <stdio.h>  // renameat2 (glibc >= 2.28)
#include <stdlib.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "core/error.hpp"
#include "io/targets.hpp"

namespace attntrace {

namespace fs = std::filesystem;

namespace {

// Two writers that both find the folder new, or both replace it, each try
// again with what the other put there; each try either succeeds or finds that
// another writer just did. More tries than this means the folder is being
// replaced faster than we can look at it.
constexpr int kMaxTries = 16;

// "out/" -> "out": the folder's own name, for the siblings beside it.
std::string folder_name(const std::string& target) {
    fs::path t = fs::path(target).lexically_normal();
    if (t.filename().empty()) t = t.parent_path();
    return t.string();
}

// The folder a write to `target` replaces: a symbolic link to a folder is
// followed, so the folder it ends at is swapped and the link stays a link.
std::string resolve(const std::string& target) {
    const std::string real = follow_links(folder_name(target), target);
    if (is_proc_link(real)) fail_file(target, "expected a folder to write, found a link to an open file");
    return real;
}

// A sibling of `real` named ".NAME.KIND-PID-XXXXXX", created empty.
std::string make_sibling(const std::string& real, const std::string& shown, const char* kind) {
    std::string path = temp_template(real, kind);
    if (!::mkdtemp(path.data()))
        fail_file(shown, fmt::format("expected a writable location, found: {}", std::strerror(errno)));
    return path;
}

// The mode an ordinary mkdir gives a new folder: 0777 less the umask. mkdtemp
// makes the temporary folder 0700, which keeps it private while it is filled;
// the finished folder gets this before it goes in place, as users expect of a
// folder a command makes (0755 under umask 022). umask() can only be read by
// setting it: set back at once (as AtomicFile does for a new file's mode).
mode_t usual_folder_mode() {
    const mode_t mask = ::umask(0);
    ::umask(mask);
    return 0777 & ~mask;
}

[[noreturn]] void fail_swap(const std::string& shown, int err) {
    fail_file(shown, fmt::format("expected to put the new folder in place, found: {}", std::strerror(err)));
}

[[noreturn]] void fail_other_files(const std::string& shown, const FolderSwap& swap) {
    fail_file(shown, fmt::format("a new folder, an empty one or {}", swap.what),
              "a folder holding other files (left as it is)");
}

// Exchange `temp` (complete) and `real` (the previous output); afterwards
// `temp` holds the previous output, which the caller removes. RENAME_EXCHANGE
// swaps both names at once; where the file system does not support it, the
// old folder is first renamed aside (and renamed back if the new one cannot
// go in). False when `real` is gone (another writer's doing): try again.
bool exchange(const std::string& temp, const std::string& real, const std::string& shown) {
    if (::renameat2(AT_FDCWD, temp.c_str(), AT_FDCWD, real.c_str(), RENAME_EXCHANGE) == 0) return true;
    if (errno == ENOENT) return false;
    if (errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP) fail_swap(shown, errno);
    const std::string aside = make_sibling(real, shown, "old");
    if (std::rename(real.c_str(), aside.c_str()) != 0) {  // onto the empty aside folder
        const int err = errno;
        fs::remove(aside);
        if (err == ENOENT) return false;
        fail_swap(shown, err);
    }
    if (std::rename(temp.c_str(), real.c_str()) != 0) {
        const int err = errno;
        std::rename(aside.c_str(), real.c_str());  // put the previous one back
        fail_swap(shown, err);
    }
    // The previous output where RENAME_EXCHANGE leaves it: at `temp`, now free.
    if (std::rename(aside.c_str(), temp.c_str()) != 0) {
        std::error_code ec;
        fs::remove_all(aside, ec);
    }
    return true;
}

}  // namespace

bool check_folder_target(const std::string& target, const FolderSwap& swap) {
    if (target.empty()) fail_file("(empty path)", "a folder path", "an empty string");
    // What is there now decides how the new folder goes in; refused before any work.
    const std::string real = resolve(target);
    std::error_code ec;
    const auto status = fs::status(real, ec);
    if (!fs::exists(status)) return false;
    if (!fs::is_directory(status))
        fail_file(target, "a folder to write",
                  fmt::format("{} (left as it is)", fs::is_regular_file(status) ? "a file" : "a device, FIFO or socket"));
    const bool replace = !fs::is_empty(real, ec);
    if (replace && !swap.replaceable(real)) fail_other_files(target, swap);
    return replace;
}

FolderWrite::FolderWrite(std::string target, FolderSwap swap) : target_(std::move(target)), swap_(std::move(swap)) {
    check_folder_target(target_, swap_);
    real_ = resolve(target_);
    remove_stale_temps(real_);  // what a killed writer left beside it
    temp_ = make_sibling(real_, target_, "tmp");
}

FolderWrite::~FolderWrite() {
    std::error_code ec;
    if (!committed_ || replaced_) fs::remove_all(temp_, ec);  // ours unfinished, or the previous output
}

void FolderWrite::commit() {
    if (::chmod(temp_.c_str(), usual_folder_mode()) != 0) fail_swap(target_, errno);
    // Whatever is at `real` now decides, not what was there when the run
    // began: another writer may have put its folder there meanwhile.
    for (int tries = 0; tries < kMaxTries; ++tries) {
        std::error_code ec;
        was_empty_ = fs::is_directory(fs::symlink_status(real_, ec));
        if (std::rename(temp_.c_str(), real_.c_str()) == 0) {  // onto nothing or an empty folder
            committed_ = true;
            return;
        }
        if (errno != ENOTEMPTY && errno != EEXIST) fail_swap(target_, errno);  // EEXIST: POSIX allows either
        if (!swap_.replaceable(real_)) fail_other_files(target_, swap_);
        if (exchange(temp_, real_, target_)) {  // the previous output is now at temp_
            committed_ = replaced_ = true;
            return;
        }
    }
    fail_file(target_, "expected to put the new folder in place, found other writers replacing it at the same time "
                       "(theirs is in place, whole)");
}

void FolderWrite::undo() {
    if (!committed_) return;
    std::error_code ec;
    if (replaced_) {
        // Exchanged back: ours at temp_ (removed with the object), the previous one in place.
        if (::renameat2(AT_FDCWD, temp_.c_str(), AT_FDCWD, real_.c_str(), RENAME_EXCHANGE) != 0) return;
    } else {
        if (std::rename(real_.c_str(), temp_.c_str()) != 0) return;
        if (was_empty_) fs::create_directory(real_, ec);
    }
    committed_ = false;
    replaced_ = false;
}

void FolderWrite::finish() {
    std::error_code ec;
    if (committed_ && replaced_) fs::remove_all(temp_, ec);  // the previous output
    replaced_ = false;
}

void write_folder_atomic(const std::string& target, const FolderSwap& swap,
                         const std::function<void(const std::string& temp_folder)>& fill) {
    FolderWrite w(target, swap);
    fill(w.temp());
    w.commit();
    w.finish();
}

}  // namespace attntrace

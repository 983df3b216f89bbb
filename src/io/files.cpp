#include "io/files.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "core/error.hpp"
#include "io/targets.hpp"

namespace attntrace {

namespace fs = std::filesystem;

namespace {

// The temporary files a signal handler must remove: each written before its
// file is created and cleared before it is renamed, read only by the handler.
// A few at a time: a command prepares all its outputs before it commits any
// (io/outputs.hpp): export -o FILE --npy DIR holds two (the file, the
// folder's index.json while the folder is filled), golden --update one per
// lesson. Beyond the slots, a kill leaves the temporary for the next write
// to the target to remove (io/targets.hpp).
constexpr std::size_t kMaxPendingPath = 4096;
constexpr int kPendingSlots = 64;  // golden --update of every lesson holds one per lesson (30 today)
char g_pending[kPendingSlots][kMaxPendingPath];
volatile std::sig_atomic_t g_has_pending[kPendingSlots] = {};

// The slot now naming `temp`, or -1 when none is free or the path is too
// long to keep (a kill may then leave it behind, for the next write to remove).
int set_pending(const std::string& temp) {
    if (temp.size() >= kMaxPendingPath) return -1;
    for (int i = 0; i < kPendingSlots; ++i) {
        if (g_has_pending[i]) continue;
        std::memcpy(g_pending[i], temp.c_str(), temp.size() + 1);
        g_has_pending[i] = 1;
        return i;
    }
    return -1;
}

void clear_pending(int& slot) {
    if (slot >= 0) g_has_pending[slot] = 0;
    slot = -1;
}

extern "C" void remove_pending_and_die(int sig) {
    for (int i = 0; i < kPendingSlots; ++i)
        if (g_has_pending[i]) ::unlink(g_pending[i]);  // async-signal-safe
    std::signal(sig, SIG_DFL);
    std::raise(sig);
}

// The descriptor N when `link` is /proc/<our pid>/fd/N (which /dev/stdout,
// /dev/fd/N and /proc/self/fd/N lead to), else -1.
int own_fd(const std::string& link) {
    std::error_code ec;
    const fs::path p(link);
    const std::string dir = fs::canonical(p.parent_path().empty() ? fs::path(".") : p.parent_path(), ec).string();
    const std::string pid = std::to_string(::getpid());
    const bool ours = dir == "/proc/" + pid + "/fd" ||
                      (dir.rfind("/proc/" + pid + "/task/", 0) == 0 && dir.ends_with("/fd"));  // /proc/thread-self
    if (ec || !ours) return -1;
    const std::string n = p.filename().string();
    if (n.empty() || n.find_first_not_of("0123456789") != std::string::npos || n.size() > 9) return -1;
    return std::stoi(n);
}

}  // namespace

AtomicFile::AtomicFile(std::string path, std::string shown) : shown_(shown.empty() ? path : std::move(shown)) {
    target_ = follow_links(path, shown_);
    struct stat st {};
    const bool exists = ::stat(target_.c_str(), &st) == 0;
    if (exists && S_ISDIR(st.st_mode)) fail_file(shown_, "expected a file path to write, found a directory");
    // A device, a FIFO, a socket, an open file behind /proc: nothing to rename over.
    if (is_proc_link(target_) || (exists && !S_ISREG(st.st_mode))) {
        open_in_place();
        return;
    }
    if (exists) {
        replacing_ = true;
        mode_ = st.st_mode & 07777;
        uid_ = st.st_uid;
        gid_ = st.st_gid;
    }
    remove_stale_temps(target_);  // what a killed writer left beside it
    temp_ = temp_template(target_, "tmp");
    fd_ = ::mkstemp(temp_.data());
    if (fd_ < 0) fail("a writable location", errno);
    slot_ = set_pending(temp_);
}

// A target that cannot be replaced is written where it is. One of our own
// open files (/dev/stdout, /dev/fd/N) is written through a duplicate of its
// descriptor, so the text goes where the shell sent it, at its offset and in
// its mode (`>>` appends), as `-o -` would; reopening it would start a
// regular file behind it at byte 0. No O_TRUNC: a device or FIFO has nothing
// to truncate. A FIFO's open waits for a reader, as a shell's `> fifo` does.
void AtomicFile::open_in_place() {
    if (const int fd = own_fd(target_); fd >= 0) {
        std::fflush(nullptr);  // what the program already wrote to it goes first
        fd_ = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
    } else {
        fd_ = ::open(target_.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
    }
    if (fd_ < 0) fail("a writable location", errno);
}

AtomicFile::~AtomicFile() {
    discard();
    finish();
}

void AtomicFile::discard() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    if (temp_.empty() || committed_) return;  // written in place, or already the target: nothing of ours to remove
    ::unlink(temp_.c_str());
    clear_pending(slot_);
}

void AtomicFile::fail(const char* expected, int err) {
    discard();
    fail_file(shown_, fmt::format("expected {}, found: {}", expected, std::strerror(err)));
}

void AtomicFile::write(std::string_view text) {
    std::size_t done = 0;
    while (done < text.size()) {
        ssize_t n = ::write(fd_, text.data() + done, text.size() - done);
        if (n < 0) {
            if (errno == EINTR) continue;
            fail("to write the file", errno);
        }
        done += static_cast<std::size_t>(n);
    }
}

void AtomicFile::prepare() {
    if (prepared_) return;
    prepared_ = true;
    if (temp_.empty()) {  // written in place
        const int closed = ::close(fd_);
        fd_ = -1;
        if (closed != 0) fail("to save the file", errno);
        return;
    }
    mode_t mode = mode_;
    if (replacing_) {
        if (uid_ != ::geteuid() || gid_ != ::getegid()) {
            const int given = ::fchown(fd_, uid_, gid_);
            (void)given;  // refused unless we are root: the file is then ours, as after any editor's save
        }
    } else {
        // mkstemp creates 0600; give a new file the usual permissions (umask applies).
        const mode_t mask = ::umask(0);
        ::umask(mask);
        mode = 0666 & ~mask;
    }
    // After fchown, which clears set-user-ID and set-group-ID bits.
    if (::fchmod(fd_, mode) != 0 || ::fsync(fd_) != 0) fail("to save the file", errno);
    const int closed = ::close(fd_);
    fd_ = -1;
    if (closed != 0) fail("to save the file", errno);
}

void AtomicFile::commit() {
    prepare();
    if (temp_.empty() || committed_) return;
    if (std::rename(temp_.c_str(), target_.c_str()) != 0) {
        const int err = errno;
        discard();
        fail_file(shown_, fmt::format("expected to replace the file, found: {}", std::strerror(err)));
    }
    committed_ = true;
    clear_pending(slot_);
}

void AtomicFile::commit_undoable() {
    prepare();
    if (temp_.empty() || committed_) return;
    if (replacing_) {
        // A second name for the file being replaced, so that it survives the
        // rename. (A file system without hard links: no way back, as commit().)
        std::string aside = temp_template(target_, "old");
        const int fd = ::mkstemp(aside.data());  // a fresh name, then free for link()
        if (fd >= 0) {
            ::close(fd);
            ::unlink(aside.c_str());
            if (::link(target_.c_str(), aside.c_str()) == 0) aside_ = aside;
        }
    }
    commit();
}

void AtomicFile::undo() {
    if (!committed_ || temp_.empty()) return;
    if (!aside_.empty()) {
        if (std::rename(aside_.c_str(), target_.c_str()) == 0) aside_.clear();
    } else if (!replacing_) {
        ::unlink(target_.c_str());  // it was new
    }
    committed_ = false;
}

void AtomicFile::finish() {
    if (!aside_.empty()) ::unlink(aside_.c_str());
    aside_.clear();
}

void write_file_atomic(const std::string& path, const std::string& content, const std::string& shown) {
    AtomicFile f(path, shown);
    f.write(content);
    f.commit();
}

void remove_partial_files_on_signals() {
    struct sigaction sa {};
    sa.sa_handler = remove_pending_and_die;
    sigemptyset(&sa.sa_mask);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(sig, &sa, nullptr);
}

}  // namespace attntrace

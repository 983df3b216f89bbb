#include "io/files.hpp"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "core/error.hpp"

namespace attntrace {

namespace {

// The temporary file a signal handler must remove: written before the file
// is created and cleared before it is renamed, read only by the handler.
// One at a time: attntrace writes its outputs one after another.
constexpr std::size_t kMaxPendingPath = 4096;
char g_pending[kMaxPendingPath];
volatile std::sig_atomic_t g_has_pending = 0;

void set_pending(const std::string& temp) {
    if (temp.size() >= kMaxPendingPath) return;  // too long to keep: a kill may then leave it behind
    g_has_pending = 0;
    std::memcpy(g_pending, temp.c_str(), temp.size() + 1);
    g_has_pending = 1;
}

extern "C" void remove_pending_and_die(int sig) {
    if (g_has_pending) ::unlink(g_pending);  // async-signal-safe
    std::signal(sig, SIG_DFL);
    std::raise(sig);
}

}  // namespace

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {
    namespace fs = std::filesystem;
    fs::path target(path_);
    std::error_code ec;
    if (fs::is_directory(target, ec)) fail_file(path_, "expected a file path to write, found a directory");
    fs::path dir = target.parent_path().empty() ? fs::path(".") : target.parent_path();
    std::string name = ".";  // built in steps: GCC 12 warns (-Wrestrict) on "." + string, wrongly
    name += target.filename().string();
    name += ".tmp-XXXXXX";
    temp_ = (dir / name).string();
    fd_ = ::mkstemp(temp_.data());
    if (fd_ < 0) fail_file(path_, fmt::format("expected a writable location, found: {}", std::strerror(errno)));
    set_pending(temp_);
}

AtomicFile::~AtomicFile() { discard(); }

void AtomicFile::discard() {
    if (fd_ < 0) return;
    ::close(fd_);
    fd_ = -1;
    ::unlink(temp_.c_str());
    g_has_pending = 0;
}

void AtomicFile::write(std::string_view text) {
    std::size_t done = 0;
    while (done < text.size()) {
        ssize_t n = ::write(fd_, text.data() + done, text.size() - done);
        if (n < 0) {
            if (errno == EINTR) continue;
            int err = errno;
            discard();
            fail_file(path_, fmt::format("expected to write the file, found: {}", std::strerror(err)));
        }
        done += static_cast<std::size_t>(n);
    }
}

void AtomicFile::commit() {
    // mkstemp creates 0600; give the file the usual permissions (umask applies).
    mode_t mask = ::umask(0);
    ::umask(mask);
    if (::fchmod(fd_, 0666 & ~mask) != 0 || ::fsync(fd_) != 0) {
        int err = errno;
        discard();
        fail_file(path_, fmt::format("expected to save the file, found: {}", std::strerror(err)));
    }
    int closed = ::close(fd_);
    fd_ = -1;
    if (closed != 0 || std::rename(temp_.c_str(), path_.c_str()) != 0) {
        int err = errno;
        ::unlink(temp_.c_str());
        g_has_pending = 0;
        fail_file(path_, fmt::format("expected to replace the file, found: {}", std::strerror(err)));
    }
    g_has_pending = 0;
}

void write_file_atomic(const std::string& path, const std::string& content) {
    AtomicFile f(path);
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

#include "io/targets.hpp"

#include <linux/magic.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <ctime>
#include <filesystem>
#include <string_view>

#include "core/error.hpp"

namespace attntrace {

namespace fs = std::filesystem;

namespace {

// The kernel gives up after 40 links in one path (ELOOP); so do we.
constexpr int kMaxLinks = 40;

bool on_proc(const fs::path& dir) {
    struct statfs s {};
    return ::statfs(dir.empty() ? "." : dir.c_str(), &s) == 0 && s.f_type == PROC_SUPER_MAGIC;
}

bool is_link(const fs::path& p) {
    struct stat st {};
    return ::lstat(p.c_str(), &st) == 0 && S_ISLNK(st.st_mode);
}

// ".NAME.KIND-"
std::string temp_prefix(const fs::path& target, std::string_view kind) {
    std::string name = ".";  // built in steps: GCC 12 warns (-Wrestrict) on "." + string, wrongly
    name += target.filename().string();
    name += '.';
    name += kind;
    name += '-';
    return name;
}

// mkstemp's six characters: letters and digits.
bool random_part(std::string_view s) {
    if (s.size() != 6) return false;
    for (char c : s)
        if (!std::isalnum(static_cast<unsigned char>(c))) return false;
    return true;
}

// The rest of a temporary's name after ".NAME.KIND-": "PID-XXXXXX" (pid > 0
// returned), or "XXXXXX" as earlier versions named it (0). -1: not ours.
long writer_pid(std::string_view rest) {
    if (random_part(rest)) return 0;
    const auto dash = rest.find('-');
    if (dash == 0 || dash == std::string_view::npos || dash > 10 || !random_part(rest.substr(dash + 1))) return -1;
    long pid = 0;
    for (char c : rest.substr(0, dash)) {
        if (!std::isdigit(static_cast<unsigned char>(c))) return -1;
        pid = pid * 10 + (c - '0');
    }
    return pid > 0 ? pid : -1;
}

bool stale(const fs::path& p, long pid) {
    if (pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) return true;  // its writer is gone
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0) return false;
    return std::time(nullptr) - st.st_mtime > kStaleAgeSeconds;
}

}  // namespace

std::string follow_links(const std::string& path, const std::string& shown) {
    fs::path p(path);
    for (int hops = 0; hops < kMaxLinks; ++hops) {
        if (!is_link(p) || on_proc(p.parent_path())) return p.string();
        std::error_code ec;
        const fs::path to = fs::read_symlink(p, ec);
        if (ec) return p.string();  // vanished meanwhile: whatever opens it reports
        // Relative to the link's folder; not normalised: ".." after a linked folder is the kernel's to resolve.
        p = to.is_absolute() ? to : p.parent_path() / to;
    }
    fail_file(shown, "expected a symbolic link that ends at a file or folder, found a chain of more than 40 links "
                     "(a loop?)");
}

bool is_proc_link(const std::string& path) { return is_link(path) && on_proc(fs::path(path).parent_path()); }

std::string temp_template(const std::string& target, const char* kind) {
    const fs::path t(target);
    const fs::path dir = t.parent_path().empty() ? fs::path(".") : t.parent_path();
    std::string name = temp_prefix(t, kind);
    name += std::to_string(::getpid());
    name += "-XXXXXX";
    return (dir / name).string();
}

void remove_stale_temps(const std::string& target) {
    const fs::path t(target);
    const fs::path dir = t.parent_path().empty() ? fs::path(".") : t.parent_path();
    const std::string tmp = temp_prefix(t, "tmp"), old = temp_prefix(t, "old");
    std::error_code ec;
    try {
        for (const auto& entry : fs::directory_iterator(dir, ec)) {
            const std::string name = entry.path().filename().string();
            const std::size_t ours = name.rfind(tmp, 0) == 0 ? tmp.size() : name.rfind(old, 0) == 0 ? old.size() : 0;
            if (ours == 0) continue;
            const long pid = writer_pid(std::string_view(name).substr(ours));
            if (pid < 0 || !stale(entry.path(), pid)) continue;
            std::error_code ignored;
            fs::remove_all(entry.path(), ignored);  // a link planted under our name: only the link goes
        }
    } catch (const fs::filesystem_error&) {
        // the folder changed under the scan: what is left waits for the next write
    }
}

}  // namespace attntrace

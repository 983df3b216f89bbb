#include "io/data_dir.hpp"

#include <cstdlib>
#include <filesystem>

namespace attntrace {

namespace fs = std::filesystem;

std::string executable_dir() {
    std::error_code ec;
    fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    return ec ? std::string() : exe.parent_path().string();
}

std::string data_dir(const char* env_var, const char* name, const std::string& compiled_in) {
    if (const char* env = std::getenv(env_var); env && *env) return env;
    if (std::string bin = executable_dir(); !bin.empty()) {
        // lexically_normal: list and error messages show .../share/attntrace/lessons, not .../bin/../share/...
        fs::path installed = (fs::path(bin) / ATTNTRACE_BIN_TO_DATA / name).lexically_normal();
        std::error_code ec;
        if (fs::is_directory(installed, ec)) return installed.string();
    }
    return compiled_in;
}

// Defined for this file only (CMakeLists.txt): ATTNTRACE_LESSONS_DIR and
// ATTNTRACE_GOLDEN_DIR, the source tree's folders, so that nothing else (and
// no installed header) depends on where the sources were; ATTNTRACE_BIN_TO_DATA,
// the install's share/attntrace relative to its bin/ ("../share/attntrace").
std::string lessons_dir() { return data_dir("ATTNTRACE_LESSONS", "lessons", ATTNTRACE_LESSONS_DIR); }
std::string golden_dir() { return data_dir("ATTNTRACE_GOLDEN", "golden", ATTNTRACE_GOLDEN_DIR); }

}  // namespace attntrace

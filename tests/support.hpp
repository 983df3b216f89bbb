// Helpers shared by the tests: running the CLI (in this process or as the real
// binary), temporary folders, lessons.
#pragma once

#include <string>
#include <vector>

// Built with AddressSanitizer: GCC says so with __SANITIZE_ADDRESS__, clang
// (CI's sanitizer build, .ci/run) with __has_feature. Memory measurements
// skip themselves there: redzones, quarantine and shadow memory are not what
// a user's run holds.
#if defined(__SANITIZE_ADDRESS__)
#define ATTNTRACE_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ATTNTRACE_TEST_ASAN 1
#endif
#endif

namespace attntrace::test {

struct CliResult {
    int status = -1;      // exit status
    std::string out;      // standard output
    std::string err;      // standard error
};

// Runs `attntrace ARGS...` in this process (run_cli, cli/cli.hpp), with
// extra environment entries "NAME=value" set for the call only and standard
// output and error captured, neither a terminal: what a user sees with both
// sent to files, in a few milliseconds instead of a process per call.
CliResult run_cli(const std::vector<std::string>& args, const std::vector<std::string>& env = {});

// The same through the real attntrace binary, for what only a process shows:
// its exit status as the shell sees it, a failing standard output
// (`stdout_path`, e.g. /dev/full, instead of being captured), what is read
// once per process (ATTNTRACE_KERNELS), or what changes the whole process
// (bench's allocator settings).
CliResult run_process(const std::vector<std::string>& args, const std::vector<std::string>& env = {},
                      const std::string& stdout_path = "");

// A command line as a user types it in a shell (/bin/sh -c SCRIPT), with the
// same environment entries as run_process: the README's examples run so.
CliResult run_shell(const std::string& script, const std::vector<std::string>& env = {});

// The attntrace binary under test (in the build folder).
std::string binary_path();

// The binary started without waiting: returns the process id, for a test that
// signals the run midway. wait_cli returns its exit status, or 128 + the
// signal that ended it.
int start_cli(const std::vector<std::string>& args, const std::string& out_path, const std::string& err_path,
              const std::vector<std::string>& env = {});
int wait_cli(int pid);

// A fresh empty folder under the system temp dir, removed at exit of scope.
class TempDir {
public:
    TempDir();
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::string& path() const { return path_; }
    std::string file(const std::string& name) const { return path_ + "/" + name; }
    std::vector<std::string> entries() const;  // names in the folder
private:
    std::string path_;
};

// Runs a command as a doc shows it ("attntrace diff ours.json docs/x.json"):
// words are split at spaces, a path under docs/ is the repository's, and any
// other file a command names (*.json, *-npy) lives in `dir`, so one command's
// output is the next one's input.
CliResult run_shown(const std::string& command, const TempDir& dir);

std::string source_dir();       // the repository
std::string lessons_dir();      // <repo>/lessons
std::vector<std::string> lesson_files();  // every lessons/*.json, sorted
std::string read_text(const std::string& path);
// Prose as one line: every line break and the indentation after it as one
// space, so that a phrase the view wrapped to the width is found whole.
std::string unwrapped(const std::string& text);
// The one-line InputError a lesson's text is refused with, or "(accepted)".
std::string lesson_refusal(const std::string& text, const std::string& file = "lesson.json");
void write_text(const std::string& path, const std::string& text);
// A safetensors file's bytes with `extra` spaces after its JSON header (the
// length field grown to match): every tensor's data `extra` bytes further
// on, e.g. a float32 matrix at an address not a multiple of 4.
std::string with_header_padding(const std::string& safetensors, std::size_t extra);

// This process's resident memory (bytes) now, and its peak since
// reset_peak_rss() (Linux's /proc/self/clear_refs "5"); reset_peak_rss is
// false where the file cannot be written, and a test then measures nothing.
// For a cost measured inside the test process: the peak minus the resident
// size before it (tests/peak_rss.cpp measures a whole command's).
bool reset_peak_rss();
std::size_t resident_bytes();
std::size_t peak_resident_bytes();

}  // namespace attntrace::test

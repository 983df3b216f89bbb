#include "support.hpp"

#include "cli/cli.hpp"
#include "core/error.hpp"
#include "lesson/lesson.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <filesystem>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <stdexcept>

extern char** environ;

namespace attntrace::test {

namespace fs = std::filesystem;

namespace {

std::string slurp_fd(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// Environment entries "NAME=value" set while it lives, and each variable put
// back as it was (or removed) after, so that no test's settings reach the next.
class EnvForCall {
public:
    explicit EnvForCall(const std::vector<std::string>& entries) {
        // All checked before any is set: a throw leaves the environment as it was.
        for (const auto& e : entries)
            if (e.find('=') == std::string::npos) throw std::invalid_argument("expected NAME=value, found " + e);
        for (const auto& e : entries) {
            const auto eq = e.find('=');
            std::string name = e.substr(0, eq);
            const char* old = std::getenv(name.c_str());
            saved_.push_back({name, old ? std::optional<std::string>(old) : std::nullopt});
            setenv(name.c_str(), e.c_str() + eq + 1, 1);
        }
    }
    ~EnvForCall() {
        // In reverse, so that a name given twice ends as it began.
        for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
            if (it->second) setenv(it->first.c_str(), it->second->c_str(), 1);
            else unsetenv(it->first.c_str());
        }
    }
    EnvForCall(const EnvForCall&) = delete;
    EnvForCall& operator=(const EnvForCall&) = delete;

private:
    std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

// `program` with `argv_s` (its argv[0] first), standard input empty, its
// output and errors to the files, and the environment with `env` in it.
int spawn(const std::string& program, std::vector<std::string> argv_s, const std::string& out_path,
          const std::string& err_path, const std::vector<std::string>& env) {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    std::vector<char*> argv;
    for (auto& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);
    // The given entries replace the inherited ones of the same name (getenv
    // would find the first of two).
    auto name_of = [](const std::string& e) { return e.substr(0, e.find('=')); };
    std::vector<std::string> env_s;
    for (char** e = environ; *e; ++e)
        if (std::none_of(env.begin(), env.end(), [&](const std::string& g) { return name_of(g) == name_of(*e); }))
            env_s.emplace_back(*e);
    env_s.insert(env_s.end(), env.begin(), env.end());
    std::vector<char*> envp;
    for (auto& e : env_s) envp.push_back(e.data());
    envp.push_back(nullptr);
    pid_t pid = 0;
    const int failed = posix_spawn(&pid, program.c_str(), &actions, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    if (failed) throw std::runtime_error("cannot start " + program);
    return pid;
}

}  // namespace

int start_cli(const std::vector<std::string>& args, const std::string& out_path, const std::string& err_path,
              const std::vector<std::string>& env) {
    std::vector<std::string> argv_s{ATTNTRACE_BINARY};
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    return spawn(ATTNTRACE_BINARY, std::move(argv_s), out_path, err_path, env);
}

std::string binary_path() { return ATTNTRACE_BINARY; }

int wait_cli(int pid) {
    int wstatus = 0;
    waitpid(pid, &wstatus, 0);
    return WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
}

CliResult run_cli(const std::vector<std::string>& args, const std::vector<std::string>& env) {
    EnvForCall set(env);
    std::ostringstream out, err;
    CliResult r;
    // The default host: neither stream a terminal, as with a spawned run's files.
    r.status = attntrace::run_cli(args, out, err);
    r.out = out.str();
    r.err = err.str();
    return r;
}

CliResult run_process(const std::vector<std::string>& args, const std::vector<std::string>& env,
                      const std::string& stdout_path) {
    TempDir io;
    std::string out_path = stdout_path.empty() ? io.file("stdout") : stdout_path, err_path = io.file("stderr");
    CliResult r;
    r.status = wait_cli(start_cli(args, out_path, err_path, env));
    r.out = stdout_path.empty() ? slurp_fd(out_path) : "";
    r.err = slurp_fd(err_path);
    return r;
}

CliResult run_shell(const std::string& script, const std::vector<std::string>& env) {
    TempDir io;
    CliResult r;
    r.status = wait_cli(spawn("/bin/sh", {"sh", "-c", script}, io.file("stdout"), io.file("stderr"), env));
    r.out = slurp_fd(io.file("stdout"));
    r.err = slurp_fd(io.file("stderr"));
    return r;
}

CliResult run_shown(const std::string& command, const TempDir& dir) {
    std::vector<std::string> args;
    std::istringstream words(command.substr(command.find(' ') + 1));  // after "attntrace"
    for (std::string w; words >> w;) {
        if (w.rfind("docs/", 0) == 0) args.push_back(source_dir() + "/" + w);
        else if (w[0] != '-' && (w.ends_with(".json") || w.ends_with("-npy"))) args.push_back(dir.file(w));
        else args.push_back(w);
    }
    return run_cli(args);
}

TempDir::TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "attntrace-test-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
}

TempDir::~TempDir() {
    std::error_code ec;
    fs::permissions(path_, fs::perms::owner_all, ec);
    fs::remove_all(path_, ec);
}

std::vector<std::string> TempDir::entries() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(path_)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
}

std::string source_dir() { return ATTNTRACE_SOURCE_DIR; }
std::string lessons_dir() { return source_dir() + "/lessons"; }

std::string lesson_refusal(const std::string& text, const std::string& file) {
    try {
        attntrace::parse_lesson(text, file);
    } catch (const attntrace::InputError& e) {
        return e.what();
    }
    return "(accepted)";
}

std::vector<std::string> lesson_files() {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(lessons_dir()))
        if (e.path().extension() == ".json") out.push_back(e.path().string());
    std::sort(out.begin(), out.end());
    return out;
}

std::string read_text(const std::string& path) { return slurp_fd(path); }

std::string unwrapped(const std::string& text) {
    std::string out;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] != '\n') {
            out += text[i];
            continue;
        }
        out += ' ';
        while (i + 1 < text.size() && text[i + 1] == ' ') ++i;
    }
    return out;
}

void write_text(const std::string& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary);
    out << text;
}

std::string with_header_padding(const std::string& safetensors, std::size_t extra) {
    std::uint64_t n = 0;
    for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(safetensors.at(static_cast<std::size_t>(i)));
    std::string out = safetensors.substr(0, 8) + safetensors.substr(8, n) + std::string(extra, ' ') + safetensors.substr(8 + n);
    const std::uint64_t grown = n + extra;
    for (int i = 0; i < 8; ++i) out[static_cast<std::size_t>(i)] = static_cast<char>((grown >> (8 * i)) & 0xff);
    return out;
}

namespace {
std::size_t status_bytes(const char* field) {
    std::ifstream in("/proc/self/status");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind(field, 0) == 0) return std::stoul(line.substr(std::string(field).size())) * 1024;  // kB
    return 0;
}
}  // namespace

bool reset_peak_rss() { return static_cast<bool>(std::ofstream("/proc/self/clear_refs") << "5" << std::flush); }
std::size_t resident_bytes() { return status_bytes("VmRSS:"); }
std::size_t peak_resident_bytes() { return status_bytes("VmHWM:"); }

}  // namespace attntrace::test

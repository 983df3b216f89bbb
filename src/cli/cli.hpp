// The command line as a library: `attntrace ARGS...` run inside the calling
// process, writing to the streams it is given. main.cpp is a thin wrapper
// around run_cli; the tests call it directly, one call per command.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <span>
#include <string>

namespace attntrace {

// What the CLI would otherwise ask the process it runs in: the name --help's
// usage line shows, and whether standard output and standard error are
// terminals (colour with --color=auto, the progress line) and how wide.
// main.cpp asks the real ones (host_of_this_process); an in-process caller
// states them, so its output does not depend on the terminal it runs from.
struct CliHost {
    std::string program = "attntrace";  // argv[0]
    bool stdout_is_terminal = false;
    bool stderr_is_terminal = false;
    std::size_t terminal_columns = 0;  // standard output's width (TIOCGWINSZ); 0: not a terminal or unknown
};

// The host as the file descriptors out_fd and err_fd make it (isatty, TIOCGWINSZ).
CliHost host_of_fds(const std::string& program, int out_fd, int err_fd);
// host_of_fds(argv0, STDOUT_FILENO, STDERR_FILENO).
CliHost host_of_this_process(const char* argv0);

// Runs `attntrace ARGS...` (ARGS without the program name) and returns its
// exit status: 0 all well, 1 a check failed, 2 bad input or usage, 3 an
// internal error. Output goes to `out`, messages to `err`; never exits.
// What it changes of the process is restored before it returns: OpenMP's
// thread count (--threads) and the memory limit (--max-memory). The
// environment (NO_COLOR, TERM, COLUMNS, ATTNTRACE_*) is read as the process
// has it. Signal handlers are the caller's business (main.cpp installs them).
int run_cli(std::span<const std::string> args, std::ostream& out, std::ostream& err, const CliHost& host = {});

}  // namespace attntrace

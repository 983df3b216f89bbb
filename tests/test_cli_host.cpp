// run_cli in this process (cli/cli.hpp): the terminal decisions come from the
// host it is given, each call's output is its own, and nothing a call sets
// (threads, memory limit, environment) reaches the next.
#include <fcntl.h>
#include <omp.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <iostream>
#include <sstream>

#include "cli/cli.hpp"
#include "core/memory.hpp"
#include "support.hpp"

namespace test_cli_host {

namespace {

struct Output {
    int status;
    std::string out, err;
};

Output run_on(const attntrace::CliHost& host, const std::vector<std::string>& args) {
    std::ostringstream out, err;
    const int status = attntrace::run_cli(args, out, err, host);
    return {status, out.str(), err.str()};
}

// A pseudo-terminal: the master end and the path of its slave.
struct Pty {
    int master = -1;
    std::string slave;
    Pty() {
        master = posix_openpt(O_RDWR | O_NOCTTY);
        if (master < 0 || grantpt(master) != 0 || unlockpt(master) != 0) throw std::runtime_error("no pty");
        slave = ptsname(master);
    }
    ~Pty() { close(master); }
};

constexpr const char* kEscape = "\x1b[";  // the start of every colour sequence

}  // namespace

TEST_CASE("host_of_fds: a pseudo-terminal is a terminal with its width, a pipe is not", "[cli]") {
    Pty pty;
    const int slave = open(pty.slave.c_str(), O_RDWR | O_NOCTTY);
    REQUIRE(slave >= 0);
    winsize ws{};
    ws.ws_col = 123;
    ws.ws_row = 40;
    REQUIRE(ioctl(slave, TIOCSWINSZ, &ws) == 0);
    int p[2];
    REQUIRE(pipe(p) == 0);
    const auto h = attntrace::host_of_fds("x", slave, p[1]);
    CHECK(h.stdout_is_terminal);
    CHECK(h.terminal_columns == 123);
    CHECK_FALSE(h.stderr_is_terminal);
    const auto q = attntrace::host_of_fds("x", p[1], slave);
    CHECK_FALSE(q.stdout_is_terminal);
    CHECK(q.terminal_columns == 0);
    CHECK(q.stderr_is_terminal);
    close(slave);
    close(p[0]);
    close(p[1]);
}

TEST_CASE("colour with --color=auto only when the host says standard output is a terminal", "[cli][heatmap]") {
    const std::vector<std::string> args{"run", "003-3.1-ring-fell", "--steps", "hook_pattern"};
    attntrace::CliHost tty;
    tty.stdout_is_terminal = true;
    // TERM and NO_COLOR as a colour terminal has them, for this call only.
    const char* term = std::getenv("TERM");
    const std::string term_was = term ? term : "";
    const char* no_color = std::getenv("NO_COLOR");
    const std::string no_color_was = no_color ? no_color : "";
    setenv("TERM", "xterm-256color", 1);
    unsetenv("NO_COLOR");
    const auto coloured = run_on(tty, args);
    const auto plain = run_on({}, args);
    setenv("NO_COLOR", "1", 1);
    const auto refused = run_on(tty, args);
    if (term) setenv("TERM", term_was.c_str(), 1);
    else unsetenv("TERM");
    if (no_color) setenv("NO_COLOR", no_color_was.c_str(), 1);
    else unsetenv("NO_COLOR");
    REQUIRE(coloured.status == 0);
    CHECK(coloured.out.find(kEscape) != std::string::npos);
    CHECK(plain.out.find(kEscape) == std::string::npos);
    CHECK(refused.out.find(kEscape) == std::string::npos);
}

TEST_CASE("a terminal's width from the host draws as COLUMNS does", "[cli][heatmap]") {
    attntrace::test::TempDir dir;
    REQUIRE(attntrace::test::run_cli({"random", "--tokens", "40", "--d-model", "16", "--out", dir.file("big.json")})
                .status == 0);
    const std::vector<std::string> args{"--color=never", "run", dir.file("big.json"), "--steps", "hook_pattern"};
    attntrace::CliHost narrow;
    narrow.stdout_is_terminal = true;
    narrow.terminal_columns = 60;
    const auto by_host = run_on(narrow, args);
    const auto by_env = attntrace::test::run_cli(args, {"COLUMNS=60"});
    const auto wide = attntrace::test::run_cli(args);  // not a terminal: 80 columns
    REQUIRE(by_host.status == 0);
    CHECK(by_host.out == by_env.out);
    CHECK(by_host.out != wide.out);
}

TEST_CASE("an in-process run writes only to the streams it is given", "[cli]") {
    // std::cout and std::cerr captured around the calls: a command that wrote
    // to them would leak its output into the test's own, and into no result.
    std::ostringstream leaked;
    std::vector<attntrace::test::CliResult> results;
    {
        // Put back when the scope ends, even by an exception, so that Catch can report.
        struct Redirect {
            std::ostream& stream;
            std::streambuf* saved;
            ~Redirect() { stream.rdbuf(saved); }
        } out{std::cout, std::cout.rdbuf(leaked.rdbuf())}, err{std::cerr, std::cerr.rdbuf(leaked.rdbuf())};
        for (const std::vector<std::string>& args :
             {std::vector<std::string>{"run", "003-3.1-ring-fell"}, {"check", "003-3.1-ring-fell", "--format", "json"},
              {"list"}, {"export", "002-cat-sat-down", "-o", "-"}, {"cost", "--tokens", "4K"},
              {"explain", "003-3.1-ring-fell", "hook_pattern[0,ring,fell]"}, {"decode", "002-causal-decode"},
              {"compare", "003-3.1-ring-fell", "--set", "scale=false"}, {"report", "003-3.1-ring-fell", "-o", "-"},
              {"golden", "003-3.1-ring-fell"}, {"random", "--tokens", "3"}, {"run", "no-such-lesson"}})
            results.push_back(attntrace::test::run_cli(args));
    }
    CHECK(leaked.str().empty());
    for (std::size_t i = 0; i + 1 < results.size(); ++i) {
        INFO(i);
        CHECK(results[i].status == 0);
        CHECK(!results[i].out.empty());
        CHECK(results[i].err.empty());
    }
    CHECK(results.back().status == 2);
    CHECK(results.back().err.find("no-such-lesson") != std::string::npos);
}

TEST_CASE("the thread count and memory limit of --threads and --max-memory last one call only", "[cli]") {
    const int threads = omp_get_max_threads();
    const std::size_t limit = attntrace::max_memory_bytes();
    auto one = attntrace::test::run_cli({"--threads", "1", "--max-memory", "512M", "run", "003-3.1-ring-fell"});
    CHECK(one.status == 0);
    CHECK(omp_get_max_threads() == threads);
    CHECK(attntrace::max_memory_bytes() == limit);
    // A refused run (the limit below what the lesson needs) restores them as well.
    auto refused = attntrace::test::run_cli({"--threads", "1", "--max-memory", "1K", "run", "003-3.1-ring-fell"});
    CHECK(refused.status == 2);
    CHECK(omp_get_max_threads() == threads);
    CHECK(attntrace::max_memory_bytes() == limit);
}

TEST_CASE("the environment a test gives one call is gone after it", "[cli]") {
    const char* before = std::getenv("ATTNTRACE_GOLDEN");
    const std::string was = before ? before : "";
    attntrace::test::TempDir dir;
    auto r = attntrace::test::run_cli({"golden", "003-3.1-ring-fell"}, {"ATTNTRACE_GOLDEN=" + dir.path()});
    CHECK(r.status == 2);  // no golden in the empty folder: it was used
    const char* after = std::getenv("ATTNTRACE_GOLDEN");
    CHECK((after != nullptr) == (before != nullptr));
    if (after) CHECK(std::string(after) == was);
    CHECK(attntrace::test::run_cli({"golden", "003-3.1-ring-fell"}).status == 0);
}

}  // namespace test_cli_host

// The real binary: what only a process shows. main.cpp is a thin wrapper
// around run_cli, so the rest of the suite calls run_cli in-process; these
// keep the wrapper honest (the same output and exit statuses as the shell
// sees them) and the terminal decisions made from real file descriptors.
// Signals and atomic writes under kill: test_safe_writes.cpp and
// test_npy_export.cpp; a failing standard output, bench and ATTNTRACE_KERNELS:
// test_cli.cpp.
#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "support.hpp"

using attntrace::test::run_cli;
using attntrace::test::run_process;

namespace test_cli_process {

TEST_CASE("the binary gives what run_cli gives: output, messages and exit status 0, 1, 2", "[cli][process]") {
    attntrace::test::TempDir dir;
    std::string text = attntrace::test::read_text(attntrace::test::lessons_dir() + "/003-3.1-ring-fell.json");
    // One claim's expected verdict turned around: the check fails with exit 1.
    const std::string agrees = "\"expect\": \"agrees-from-given\"";
    const auto pos = text.find(agrees);
    REQUIRE(pos != std::string::npos);
    text.replace(pos, agrees.size(), "\"expect\": \"disagrees\"");
    attntrace::test::write_text(dir.file("wrong.json"), text);
    const std::vector<std::pair<std::vector<std::string>, int>> cases{
        {{"check", "003-3.1-ring-fell"}, 0},
        {{"--version"}, 0},
        {{"check", dir.file("wrong.json")}, 1},
        {{"run", "no-such-lesson"}, 2},
        {{"run", "003-3.1-ring-fell", "--precision", "12"}, 2},
        {{"no-such-command"}, 2},
    };
    for (const auto& [args, status] : cases) {
        INFO(args[0] << " " << (args.size() > 1 ? args[1] : ""));
        const auto real = run_process(args);
        const auto inproc = run_cli(args);
        CHECK(real.status == status);
        CHECK(inproc.status == status);
        CHECK(real.out == inproc.out);
        CHECK(real.err == inproc.err);
    }
}

TEST_CASE("with no arguments the binary runs the flagship lesson, as run_cli does", "[cli][process]") {
    const auto real = run_process({});
    REQUIRE(real.status == 0);
    CHECK(real.err.empty());
    CHECK(real.out == run_cli({}).out);
}

TEST_CASE("on a terminal, bench shows its progress line on standard error and erases it", "[cli][process][progress]") {
    // Standard error is a pseudo-terminal's slave, standard output a file:
    // the binary's own isatty decides.
    const int master = posix_openpt(O_RDWR | O_NOCTTY);
    REQUIRE(master >= 0);
    REQUIRE(grantpt(master) == 0);
    REQUIRE(unlockpt(master) == 0);
    const std::string slave = ptsname(master);
    // Held open here too, so that the master stays readable after the child exits.
    const int held = open(slave.c_str(), O_RDWR | O_NOCTTY);
    REQUIRE(held >= 0);
    attntrace::test::TempDir dir;
    const int pid = attntrace::test::start_cli(
        {"bench", "--tokens", "16", "--d-model", "8", "--heads", "2", "--d-ff", "16", "--repeat", "2"},
        dir.file("stdout"), slave, {"ATTNTRACE_NO_PROGRESS="});
    const int status = attntrace::test::wait_cli(pid);
    std::string shown;
    fcntl(master, F_SETFL, O_NONBLOCK);
    char buf[4096];
    for (ssize_t n; (n = read(master, buf, sizeof buf)) > 0;) shown.append(buf, static_cast<std::size_t>(n));
    REQUIRE(status == 0);
    CHECK(shown.find("\rattntrace: bench [") != std::string::npos);
    CHECK(shown.ends_with("\r"));  // erased: the next prompt starts on a clean line
    const std::string out = attntrace::test::read_text(dir.file("stdout"));
    CHECK(out.find("attntrace bench:") != std::string::npos);
    CHECK(out.find('\r') == std::string::npos);
    // --quiet: nothing on the terminal.
    const int quiet_pid = attntrace::test::start_cli({"--quiet", "bench", "--tokens", "16", "--d-model", "8", "--heads",
                                                      "2", "--d-ff", "16", "--repeat", "1"},
                                                     dir.file("stdout"), slave, {"ATTNTRACE_NO_PROGRESS="});
    CHECK(attntrace::test::wait_cli(quiet_pid) == 0);
    CHECK(read(master, buf, sizeof buf) <= 0);
    close(held);
    close(master);
}

}  // namespace test_cli_process

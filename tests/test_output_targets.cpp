// Outputs are safe whatever the target is (io/files.hpp, io/folder_swap.hpp):
// a device, a FIFO or /dev/stdout is written in place and stays what it was,
// a write error there is one line and exit 2; a symbolic link stays a link
// and the file it ends at is replaced; a replaced file keeps its mode; what a
// killed writer left beside a target goes on the next write; an --npy error
// names the user's folder; and two exports racing to one folder both succeed.
//
// Run as root, a regression here would replace the machine's /dev/null or
// /dev/stdout with a regular file. So each test on a real device first runs
// on a private twin (a device node made with mknod, a link to /proc/self/fd/1
// in a temporary folder) and REQUIREs that it survived.
#include <signal.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/error.hpp"
#include "io/files.hpp"
#include "io/folder_swap.hpp"
#include "io/targets.hpp"
#include "support.hpp"

using attntrace::test::CliResult;
using attntrace::test::read_text;
using attntrace::test::run_cli;
using attntrace::test::TempDir;
using attntrace::test::write_text;

namespace test_output_targets {

namespace {

namespace fs = std::filesystem;

const std::string kLesson = attntrace::test::lessons_dir() + "/003-3.1-ring-fell.json";

struct stat lstat_of(const std::string& path) {
    struct stat st {};
    REQUIRE(::lstat(path.c_str(), &st) == 0);
    return st;
}

void require_exit_2(const CliResult& r, const std::string& needle) {
    INFO("stderr: " << r.err);
    CHECK(r.status == 2);
    CHECK(r.err.find(needle) != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);  // one line
    CHECK(r.err.rfind("attntrace: error: ", 0) == 0);
}

std::vector<std::string> temporaries(const std::string& dir) {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir))
        if (e.path().filename().string().find(".tmp-") != std::string::npos) out.push_back(e.path().string());
    return out;
}

// The trace `export` writes, as a regular file: what any other target must receive.
std::string exported(const TempDir& dir) {
    const std::string file = dir.file("reference.json");
    REQUIRE(run_cli({"export", kLesson, "-o", file}).status == 0);
    return read_text(file);
}

// A character device node like /dev/null (1,3) or /dev/full (1,7) in `dir`;
// empty where nodes cannot be made (not root, a nodev mount).
std::string private_device(const TempDir& dir, const char* name, unsigned minor) {
    const std::string path = dir.file(name);
    if (::mknod(path.c_str(), S_IFCHR | 0666, makedev(1, minor)) != 0) return "";
    return path;
}

bool is_char_device(const std::string& path, unsigned minor) {
    const struct stat st = lstat_of(path);
    return S_ISCHR(st.st_mode) && major(st.st_rdev) == 1 && minor(st.st_rdev) == minor;
}

// A pid no process has: a child that has exited and been waited for.
pid_t dead_pid() {
    const pid_t pid = ::fork();
    if (pid == 0) ::_exit(0);
    REQUIRE(pid > 0);
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    return pid;
}

}  // namespace

TEST_CASE("a FIFO is written in place: its reader gets the whole trace and it stays a FIFO", "[safe-writes]") {
    TempDir dir;
    const std::string fifo = dir.file("pipe");
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    // Our own end for writing (Linux opens a FIFO read-write without waiting),
    // held until the run is over: the read end below opens without waiting
    // for the run, and sees the end only once both the run and we are done,
    // whatever the run did (or failed to do) with the FIFO's name.
    const int held = ::open(fifo.c_str(), O_RDWR);
    REQUIRE(held >= 0);
    const int fd = ::open(fifo.c_str(), O_RDONLY);
    REQUIRE(fd >= 0);
    std::string received;
    std::thread reader([&] {
        char buf[65536];
        for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) received.append(buf, static_cast<std::size_t>(n));
    });
    const CliResult r = run_cli({"export", kLesson, "-o", fifo});
    ::close(held);
    reader.join();
    ::close(fd);
    INFO("stderr: " << r.err);
    CHECK(r.status == 0);
    CHECK(S_ISFIFO(lstat_of(fifo).st_mode));
    CHECK(received.size() > 1000);
    CHECK(received == exported(dir));
    CHECK(temporaries(dir.path()).empty());
}

TEST_CASE("/dev/null is written in place by every output flag and stays a character device", "[safe-writes]") {
    TempDir dir;
    const std::string twin = private_device(dir, "null", 3);
    std::vector<std::string> targets;
    if (twin.empty()) WARN("cannot make device nodes here (not root?): only the real /dev/null is tested");
    else targets.push_back(twin);
    if (!fs::exists("/dev/null")) WARN("this system has no /dev/null");  // the twin, if any, is tested
    else targets.push_back("/dev/null");
    for (const std::string& target : targets) {
        for (const auto& args : std::vector<std::vector<std::string>>{
                 {"export", kLesson, "-o", target},
                 {"report", kLesson, "-o", target},
                 {"random", "--tokens", "4", "--d-model", "4", "--heads", "1", "--d-ff", "4", "-o", target}}) {
            const CliResult r = run_cli(args);
            INFO(args[0] << " -o " << target << "; stderr: " << r.err);
            CHECK(r.status == 0);
            REQUIRE(is_char_device(target, 3));  // on the twin first: never go on to break the real one
        }
    }
    CHECK(temporaries("/dev").empty());
}

TEST_CASE("/dev/full: exit 2, one line naming it and the write error, and it stays a character device",
          "[safe-writes]") {
    TempDir dir;
    const std::string twin = private_device(dir, "full", 7);
    std::vector<std::string> targets;
    if (twin.empty()) WARN("cannot make device nodes here (not root?): only the real /dev/full is tested");
    else targets.push_back(twin);
    if (!fs::exists("/dev/full")) WARN("this system has no /dev/full: only a private twin, if any, is tested");
    else targets.push_back("/dev/full");
    for (const std::string& target : targets) {
        for (const char* command : {"export", "report"}) {
            INFO(command << " -o " << target);
            require_exit_2(run_cli({command, kLesson, "-o", target}),
                           target + ": expected to write the file, found: No space left on device");
            REQUIRE(is_char_device(target, 7));
        }
    }
}

TEST_CASE("report -o /dev/stdout writes to standard output, and /dev/stdout stays a link", "[safe-writes]") {
    TempDir dir;
    // A real process: /dev/stdout is the process's own standard output.
    const CliResult dash = attntrace::test::run_process({"report", kLesson, "-o", "-"});
    REQUIRE(dash.status == 0);
    // The twin: a link of our own to /proc/self/fd/1, as /dev/stdout is.
    const std::string twin = dir.file("stdout");
    fs::create_symlink("/proc/self/fd/1", twin);
    std::vector<std::string> targets{twin};
    if (!fs::is_symlink(fs::symlink_status("/dev/stdout")))
        WARN("this system's /dev/stdout is not a link: only the twin is tested");
    else targets.push_back("/dev/stdout");
    for (const std::string& target : targets) {
        const CliResult r = attntrace::test::run_process({"report", kLesson, "-o", target});  // stdout: a regular file
        INFO(target << "; stderr: " << r.err);
        CHECK(r.status == 0);
        CHECK(r.out == dash.out);
        REQUIRE(S_ISLNK(lstat_of(target).st_mode));
        CHECK(fs::read_symlink(target) == "/proc/self/fd/1");
    }
}

TEST_CASE("a symbolic link stays a link: the file it ends at is replaced, whole", "[safe-writes]") {
    TempDir dir;
    fs::create_directory(dir.file("real"));
    const std::string file = dir.file("real/trace.json"), link = dir.file("latest.json");
    const std::string expected = exported(dir);
    SECTION("a link to a file, through a second link") {
        write_text(file, "previous\n");
        fs::create_symlink("real/trace.json", dir.file("middle.json"));
        fs::create_symlink("middle.json", link);
        REQUIRE(run_cli({"export", kLesson, "-o", link}).status == 0);
        CHECK(S_ISLNK(lstat_of(link).st_mode));
        CHECK(fs::read_symlink(link) == "middle.json");
        CHECK(S_ISLNK(lstat_of(dir.file("middle.json")).st_mode));
        CHECK(S_ISREG(lstat_of(file).st_mode));
        CHECK(read_text(file) == expected);
    }
    SECTION("a dangling link: the file it names is created") {
        fs::create_symlink("real/trace.json", link);
        REQUIRE(run_cli({"export", kLesson, "-o", link}).status == 0);
        CHECK(S_ISLNK(lstat_of(link).st_mode));
        CHECK(read_text(file) == expected);
    }
    SECTION("a loop of links: exit 2, one line naming the link") {
        fs::create_symlink("b.json", dir.file("a.json"));
        fs::create_symlink("a.json", dir.file("b.json"));
        require_exit_2(run_cli({"export", kLesson, "-o", dir.file("a.json")}), dir.file("a.json") + ": expected");
        CHECK(S_ISLNK(lstat_of(dir.file("a.json")).st_mode));
    }
    SECTION("golden --update writes through a link in the golden folder") {
        fs::create_directory(dir.file("golden"));
        const std::string id = "000-softmax-example-row";
        fs::create_symlink("../real/trace.json", dir.file("golden/" + id + ".json"));
        REQUIRE(run_cli({"golden", "--update", id}, {"ATTNTRACE_GOLDEN=" + dir.file("golden")}).status == 0);
        CHECK(S_ISLNK(lstat_of(dir.file("golden/" + id + ".json")).st_mode));
        CHECK(read_text(file) == read_text(attntrace::test::source_dir() + "/golden/" + id + ".json"));
    }
    CHECK(temporaries(dir.path()).empty());
    CHECK(temporaries(dir.file("real")).empty());
}

TEST_CASE("a replaced file keeps its mode, a new one gets 0666 & ~umask", "[safe-writes]") {
    TempDir dir;
    const std::string target = dir.file("trace.json");
    const mode_t old_mask = ::umask(022);
    for (mode_t mode : {0600, 0640, 0664}) {
        write_text(target, "previous\n");
        REQUIRE(::chmod(target.c_str(), mode) == 0);
        const CliResult r = run_cli({"export", kLesson, "-o", target});  // the child inherits umask 022
        INFO("mode " << std::oct << mode << "; stderr: " << r.err);
        CHECK(r.status == 0);
        CHECK((lstat_of(target).st_mode & 07777) == mode);
        CHECK(read_text(target) != "previous\n");
    }
    fs::remove(target);
    attntrace::write_file_atomic(target, "new\n");
    CHECK((lstat_of(target).st_mode & 07777) == 0644);
    ::umask(old_mask);
}

TEST_CASE("the next write removes what a killed writer left beside the target, and only that", "[safe-writes]") {
    TempDir dir;
    const std::string dead = std::to_string(dead_pid()), alive = std::to_string(::getpid());
    auto make_file = [&](const std::string& name) { write_text(dir.file(name), std::string(4096, 'x')); };
    make_file(".trace.json.tmp-" + dead + "-a1B2c3");   // a writer killed with -9
    make_file(".trace.json.tmp-" + alive + "-d4E5f6");  // a writer still running (this test)
    make_file(".trace.json.tmp-Q1w2E3");                // an earlier version's, fresh: its writer may still run
    make_file(".trace.json.tmp-R4t5Y6");                // an earlier version's, untouched for two days
    const std::string two_days_ago = dir.file(".trace.json.tmp-R4t5Y6");
    const struct timespec times[2] = {{::time(nullptr) - 2 * attntrace::kStaleAgeSeconds, 0},
                                      {::time(nullptr) - 2 * attntrace::kStaleAgeSeconds, 0}};
    REQUIRE(::utimensat(AT_FDCWD, two_days_ago.c_str(), times, 0) == 0);
    make_file(".trace.json.tmp-notes");                 // not our naming
    make_file(".other.json.tmp-" + dead + "-g7H8i9");   // another target's
    fs::create_directory(dir.file(".out.tmp-" + dead + "-j0K1l2"));  // a killed --npy export's folder
    make_file(".out.tmp-" + dead + "-j0K1l2/blocks.0.attn.hook_pattern.npy");

    REQUIRE(run_cli({"export", kLesson, "-o", dir.file("trace.json")}).status == 0);
    CHECK(dir.entries() == std::vector<std::string>{".other.json.tmp-" + dead + "-g7H8i9",
                                                    ".out.tmp-" + dead + "-j0K1l2",
                                                    ".trace.json.tmp-" + alive + "-d4E5f6",
                                                    ".trace.json.tmp-Q1w2E3", ".trace.json.tmp-notes", "trace.json"});
    REQUIRE(run_cli({"export", kLesson, "--npy", dir.file("out")}).status == 0);
    CHECK(!fs::exists(dir.file(".out.tmp-" + dead + "-j0K1l2")));
    CHECK(fs::exists(dir.file("out/index.json")));
}

TEST_CASE("export --npy: a link to a folder stays a link, and the folder it ends at is replaced", "[safe-writes][npy]") {
    TempDir dir;
    fs::create_directory(dir.file("real"));
    fs::create_directory_symlink("real/out", dir.file("out"));  // dangling: the folder is made where it points
    for (int run = 0; run < 2; ++run) {  // made, then replaced as a previous export
        const CliResult r = run_cli({"export", kLesson, "--npy", dir.file("out")});
        INFO("run " << run << "; stderr: " << r.err);
        REQUIRE(r.status == 0);
        CHECK(fs::is_symlink(fs::symlink_status(dir.file("out"))));
        CHECK(fs::is_directory(fs::symlink_status(dir.file("real/out"))));
        CHECK(fs::exists(dir.file("real/out/index.json")));
        CHECK(dir.entries() == std::vector<std::string>{"out", "real"});
        CHECK(fs::directory_iterator(dir.file("real"))->path().filename() == "out");  // no sibling left
    }
    SECTION("a link to a folder of other things is refused, both left as they are") {
        fs::remove_all(dir.file("real/out"));
        fs::create_directory(dir.file("real/out"));
        write_text(dir.file("real/out/notes.txt"), "mine\n");
        require_exit_2(run_cli({"export", kLesson, "--npy", dir.file("out")}), dir.file("out") + ": expected");
        CHECK(read_text(dir.file("real/out/notes.txt")) == "mine\n");
        CHECK(fs::is_symlink(fs::symlink_status(dir.file("out"))));
    }
}

TEST_CASE("export --npy out of disk: one line naming the user's folder, not the temporary one, nothing left",
          "[safe-writes][npy]") {
    TempDir dir;
    const std::string lesson = dir.file("big.json"), disk = dir.file("disk");
    REQUIRE(run_cli({"random", "--tokens", "128", "--d-model", "64", "--heads", "4", "--d-ff", "64", "-o", lesson})
                .status == 0);
    fs::create_directory(disk);
    // A disk of 64 KiB (a tmpfs; root only), smaller than the export's pattern step alone (4 x 128 x 128 floats).
    struct Unmount {
        std::string path;
        bool mounted;
        ~Unmount() {
            if (mounted) ::umount2(path.c_str(), MNT_DETACH);
        }
    } disk_mount{disk, ::mount("tmpfs", disk.c_str(), "tmpfs", 0, "size=64k") == 0};
    CliResult r;
    if (disk_mount.mounted) {
        r = run_cli({"export", lesson, "--npy", disk + "/out"});
        CHECK(r.err.find("No space left on device") != std::string::npos);
    } else {
        WARN("cannot mount a small tmpfs here (not root?): a file size limit makes the write fail instead");
        struct rlimit old {};
        REQUIRE(::getrlimit(RLIMIT_FSIZE, &old) == 0);
        const struct rlimit small {64 * 1024, old.rlim_max};
        const auto old_handler = ::signal(SIGXFSZ, SIG_IGN);  // inherited: the write fails with EFBIG instead
        REQUIRE(::setrlimit(RLIMIT_FSIZE, &small) == 0);
        r = run_cli({"export", lesson, "--npy", disk + "/out"});
        ::setrlimit(RLIMIT_FSIZE, &old);
        ::signal(SIGXFSZ, old_handler);
        CHECK(r.err.find("File too large") != std::string::npos);
    }
    require_exit_2(r, "attntrace: error: " + disk + "/out/");
    CHECK(r.err.find(".tmp-") == std::string::npos);
    CHECK(fs::is_empty(disk));  // neither a partial folder nor the temporary one
}

TEST_CASE("two writers racing to one new folder: the later one replaces the earlier's whole folder",
          "[safe-writes][npy]") {
    TempDir dir;
    const std::string target = dir.file("out");
    // Replaceable: a folder without notes.txt (as an export folder is one without other files).
    const attntrace::FolderSwap swap{[](const std::string& f) { return !fs::exists(f + "/notes.txt"); },
                                     "a previous output"};
    SECTION("in process: the other writer finishes while we fill; ours then replaces theirs") {
        attntrace::write_folder_atomic(target, swap, [&](const std::string& ours) {
            write_text(ours + "/who", "us\n");
            attntrace::write_folder_atomic(target, swap, [](const std::string& theirs) {
                write_text(theirs + "/who", "them\n");
            });
            REQUIRE(read_text(target + "/who") == "them\n");  // they won the race to the new folder
        });
        CHECK(read_text(target + "/who") == "us\n");
        CHECK(dir.entries() == std::vector<std::string>{"out"});
    }
    SECTION("in process: what the other writer put there is not replaceable: refused, theirs left, ours gone") {
        try {
            attntrace::write_folder_atomic(target, swap, [&](const std::string& ours) {
                write_text(ours + "/who", "us\n");
                fs::create_directory(target);
                write_text(target + "/notes.txt", "theirs\n");
            });
            FAIL("expected an InputError");
        } catch (const attntrace::InputError& e) {
            CHECK(std::string(e.what()).rfind(target + ": expected a new folder", 0) == 0);
            CHECK(std::string(e.what()).find("holding other files (left as it is)") != std::string::npos);
        }
        CHECK(read_text(target + "/notes.txt") == "theirs\n");
        CHECK(dir.entries() == std::vector<std::string>{"out"});
    }
    SECTION("real processes: eight exports at once to a new folder all succeed; it holds one whole export") {
        std::vector<int> pids;
        for (int i = 0; i < 8; ++i)
            pids.push_back(attntrace::test::start_cli({"export", kLesson, "--npy", target},
                                                      dir.file("stdout" + std::to_string(i)),
                                                      dir.file("stderr" + std::to_string(i))));
        for (std::size_t i = 0; i < pids.size(); ++i) {
            const int status = attntrace::test::wait_cli(pids[i]);
            INFO("writer " << i << ": " << read_text(dir.file("stderr" + std::to_string(i))));
            CHECK(status == 0);
        }
        const auto index = nlohmann::json::parse(read_text(target + "/index.json"));
        std::size_t files = 1;  // index.json
        for (const auto& step : index["steps"])
            for (const char* key : {"file", "formula_file"})
                if (step.contains(key) && step[key].is_string()) {
                    CHECK(fs::exists(target + "/" + step[key].get<std::string>()));
                    ++files;
                }
        CHECK(static_cast<std::size_t>(std::distance(fs::directory_iterator(target), fs::directory_iterator())) ==
              files);
        CHECK(temporaries(dir.path()).empty());
    }
}

}  // namespace test_output_targets

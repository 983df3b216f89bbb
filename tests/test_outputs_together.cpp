// A command that fails changes none of its outputs (io/outputs.hpp): every
// output is prepared (written whole beside its target, or filled as a folder)
// before any replaces its target, and when putting one in place fails, those
// already in place are put back.
#include <signal.h>
#include <sys/mount.h>
#include <sys/resource.h>

#include <catch2/catch.hpp>
#include <filesystem>

#include "core/error.hpp"
#include "io/outputs.hpp"
#include "support.hpp"

using attntrace::test::CliResult;
using attntrace::test::read_text;
using attntrace::test::run_cli;
using attntrace::test::TempDir;
using attntrace::test::write_text;

namespace test_outputs_together {

namespace {

namespace fs = std::filesystem;

void require_exit_2(const CliResult& r, const std::string& needle) {
    INFO("stderr: " << r.err);
    CHECK(r.status == 2);
    CHECK(r.err.find(needle) != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
}

// A folder replaceable by the unit tests below: one holding a file "marker".
attntrace::FolderSwap marker_swap() {
    return {[](const std::string& dir) { return fs::exists(fs::path(dir) / "marker"); }, "a folder with a marker"};
}

std::vector<std::string> names(const std::string& dir) {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
}

}  // namespace

TEST_CASE("export -o FILE --npy DIR with no room for DIR: exit 2 and FILE as it was", "[safe-writes][npy]") {
    TempDir dir;
    const std::string lesson = dir.file("big.json"), disk = dir.file("disk"), both = dir.file("both.json");
    REQUIRE(run_cli({"random", "--tokens", "128", "--d-model", "64", "--heads", "4", "--d-ff", "64", "-o", lesson})
                .status == 0);
    write_text(both, "previous\n");
    fs::create_directory(disk);
    // A disk of 64 KiB (a tmpfs; root only), smaller than the export's pattern step alone.
    struct Unmount {
        std::string path;
        bool mounted;
        ~Unmount() {
            if (mounted) ::umount2(path.c_str(), MNT_DETACH);
        }
    } disk_mount{disk, ::mount("tmpfs", disk.c_str(), "tmpfs", 0, "size=64k") == 0};
    CliResult r;
    if (disk_mount.mounted) {
        r = run_cli({"export", lesson, "-o", both, "--npy", disk + "/out"});
    } else {
        WARN("cannot mount a small tmpfs here (not root?): a file size limit makes the writes fail instead");
        struct rlimit old {};
        REQUIRE(::getrlimit(RLIMIT_FSIZE, &old) == 0);
        const struct rlimit small {64 * 1024, old.rlim_max};
        const auto old_handler = ::signal(SIGXFSZ, SIG_IGN);
        REQUIRE(::setrlimit(RLIMIT_FSIZE, &small) == 0);
        r = run_cli({"export", lesson, "-o", both, "--npy", disk + "/out"});
        ::setrlimit(RLIMIT_FSIZE, &old);
        ::signal(SIGXFSZ, old_handler);
    }
    require_exit_2(r, disk + "/out/");
    CHECK(read_text(both) == "previous\n");
    CHECK(names(dir.path()) == std::vector<std::string>{"big.json", "both.json", "disk"});  // no temporary left
    CHECK(fs::is_empty(disk));
    // With room, both are written.
    REQUIRE(run_cli({"export", lesson, "-o", both, "--npy", dir.file("npy")}).status == 0);
    CHECK(read_text(both) != "previous\n");
    CHECK(fs::exists(dir.file("npy/index.json")));
}

TEST_CASE("golden --update A B with B's golden path a folder: exit 2, A's golden as it was, nothing said written",
          "[safe-writes]") {
    TempDir goldens;
    write_text(goldens.file("000-softmax-example-row.json"), "previous\n");
    fs::create_directory(goldens.file("003-3.1-ring-fell.json"));
    const CliResult r = run_cli({"golden", "--update", "000-softmax-example-row", "003-3.1-ring-fell"},
                                {"ATTNTRACE_GOLDEN=" + goldens.path()});
    require_exit_2(r, goldens.file("003-3.1-ring-fell.json"));
    CHECK(r.out.find("wrote") == std::string::npos);
    CHECK(read_text(goldens.file("000-softmax-example-row.json")) == "previous\n");
    CHECK(names(goldens.path()) == std::vector<std::string>{"000-softmax-example-row.json", "003-3.1-ring-fell.json"});
}

TEST_CASE("Outputs: when one output cannot be put in place, those before it are put back", "[safe-writes]") {
    TempDir dir;
    const std::string file = dir.file("a.json"), folder = dir.file("out");
    SECTION("a replaced file gets its previous text back; a new one goes") {
        const bool existed = GENERATE(true, false);
        if (existed) write_text(file, "previous\n");
        {
            attntrace::Outputs outputs;
            outputs.file(file).write("new\n");
            fs::path temp = outputs.folder(folder, marker_swap()).temp();
            write_text((temp / "data").string(), "ours");
            // Another writer puts a folder there that is not ours to replace.
            fs::create_directory(folder);
            write_text(folder + "/theirs", "x");
            CHECK_THROWS_AS(outputs.commit(), attntrace::InputError);
        }
        if (existed) CHECK(read_text(file) == "previous\n");
        else CHECK(!fs::exists(file));
        CHECK(names(folder) == std::vector<std::string>{"theirs"});
        CHECK(names(dir.path()) == (existed ? std::vector<std::string>{"a.json", "out"} : std::vector<std::string>{"out"}));
    }
    SECTION("a replaced folder gets its previous files back") {
        fs::create_directory(folder);
        write_text(folder + "/marker", "previous");
        {
            attntrace::Outputs outputs;
            fs::path temp = outputs.folder(folder, marker_swap()).temp();
            write_text((temp / "marker").string(), "new");
            outputs.file(file).write("new\n");
            // The file's target becomes a folder before it can be put in place: its rename fails.
            fs::create_directory(file);
            write_text(file + "/x", "x");
            CHECK_THROWS_AS(outputs.commit(), attntrace::InputError);
        }
        CHECK(read_text(folder + "/marker") == "previous");
        CHECK(names(dir.path()) == std::vector<std::string>{"a.json", "out"});
    }
    SECTION("all put in place: nothing kept aside") {
        write_text(file, "previous\n");
        fs::create_directory(folder);
        write_text(folder + "/marker", "previous");
        attntrace::Outputs outputs;
        outputs.file(file).write("new\n");
        fs::path temp = outputs.folder(folder, marker_swap()).temp();
        write_text((temp / "marker").string(), "new");
        outputs.commit();
        CHECK(read_text(file) == "new\n");
        CHECK(read_text(folder + "/marker") == "new");
        CHECK(names(dir.path()) == std::vector<std::string>{"a.json", "out"});
    }
}

}  // namespace test_outputs_together

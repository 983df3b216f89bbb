// Nothing is lost: every file attntrace writes replaces the previous one only
// once it is whole (io/files.hpp). A run that fails, or is killed while it
// writes, leaves the previous file as it was. And the streamed trace writer
// (values written straight from the tensors) is held to the tree writer.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "evaluate/evaluate.hpp"
#include "core/error.hpp"
#include "export/trace_export.hpp"
#include "io/files.hpp"
#include "lesson/random_lesson.hpp"
#include "support.hpp"

using attntrace::test::read_text;
using attntrace::test::run_cli;
using attntrace::test::TempDir;
using attntrace::test::write_text;

namespace test_safe_writes {

namespace {

namespace fs = std::filesystem;

std::string streamed_text(const attntrace::Evaluation& e, const attntrace::Trace& t) {
    std::string out;
    attntrace::StringSink sink(out);
    attntrace::write_trace_json(sink, e.lesson, t, &e.report);
    return out;
}

std::string tree_text(const attntrace::Evaluation& e, const attntrace::Trace& t) {
    return attntrace::dump_readable(attntrace::trace_to_json(e.lesson, t, &e.report));
}

std::vector<std::string> temp_files(const TempDir& dir) {
    std::vector<std::string> out;
    for (const auto& name : dir.entries())
        if (name.find(".tmp-") != std::string::npos) out.push_back(name);
    return out;
}

}  // namespace

TEST_CASE("the streamed trace text is byte for byte the tree writer's, for every lesson", "[safe-writes]") {
    for (const auto& file : attntrace::test::lesson_files()) {
        DYNAMIC_SECTION(file) {
            auto e = attntrace::evaluate(attntrace::read_lesson(file));
            CHECK(streamed_text(*e, e->exact) == tree_text(*e, e->exact));
            if (e->document) CHECK(streamed_text(*e, *e->document) == tree_text(*e, *e->document));
        }
    }
}

TEST_CASE("the streamed trace text equals the tree writer's on a masked model of several MiB", "[safe-writes]") {
    // Long rows (T = 96 > one line), nested heads, -inf cells, and more text
    // than one flush of the writer's buffer.
    attntrace::RandomSpec spec;
    spec.tokens = 96;
    spec.d_model = 64;
    spec.heads = 4;
    spec.d_ff = 96;
    spec.mask = attntrace::MaskKind::causal;
    auto e = attntrace::evaluate(attntrace::parse_lesson(attntrace::random_lesson_json(spec).dump(), "random.json"));
    std::string streamed = streamed_text(*e, e->exact);
    CHECK(streamed.size() > (std::size_t{2} << 20));
    CHECK(streamed.find("\"-inf\"") != std::string::npos);
    CHECK(streamed == tree_text(*e, e->exact));
}

TEST_CASE("AtomicFile: the target changes only on commit, and no temporary file is left", "[safe-writes]") {
    TempDir dir;
    const std::string target = dir.file("out.json");
    write_text(target, "previous\n");
    SECTION("destroyed without commit (an error midway): the previous file, nothing else") {
        {
            attntrace::AtomicFile f(target);
            f.write("half of a new fi");
            CHECK(fs::exists(f.temp_path()));
            CHECK(read_text(target) == "previous\n");
        }
        CHECK(read_text(target) == "previous\n");
        CHECK(dir.entries() == std::vector<std::string>{"out.json"});
    }
    SECTION("committed: the new text, with the usual permissions, nothing else") {
        mode_t old_mask = umask(022);
        {
            attntrace::AtomicFile f(target);
            f.write("new ");
            f.write("file\n");
            f.commit();
        }
        umask(old_mask);
        CHECK(read_text(target) == "new file\n");
        CHECK(dir.entries() == std::vector<std::string>{"out.json"});
        struct stat st {};
        REQUIRE(stat(target.c_str(), &st) == 0);
        CHECK((st.st_mode & 0777) == 0644);
    }
    SECTION("a target in a folder that does not exist: InputError naming it") {
        const std::string bad = dir.file("no-such-folder/out.json");
        CHECK_THROWS_AS(attntrace::AtomicFile(bad), attntrace::InputError);
        CHECK_THROWS_WITH(attntrace::AtomicFile(bad), Catch::Contains(bad));
    }
}

TEST_CASE("a run killed while it writes its trace leaves the previous file intact", "[safe-writes]") {
    TempDir work, out_dir;
    // ~100 MB of trace text: long enough to write that the signal lands midway.
    const std::string lesson = work.file("big.json");
    REQUIRE(run_cli({"random", "--tokens", "512", "--d-model", "64", "--heads", "8", "--d-ff", "64", "-o", lesson})
                .status == 0);
    const std::string target = out_dir.file("trace.json");
    for (int sig : {SIGKILL, SIGTERM, SIGINT}) {
        DYNAMIC_SECTION("signal " << sig) {
            write_text(target, "previous trace\n");
            int pid = attntrace::test::start_cli({"export", lesson, "-o", target}, work.file("stdout"),
                                                 work.file("stderr"));
            // Wait until the new trace is being written (its temporary file has
            // bytes), then signal: the run is interrupted midway, not before.
            bool signalled = false;
            const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
            while (!signalled && std::chrono::steady_clock::now() < deadline) {
                for (const auto& name : temp_files(out_dir)) {
                    std::error_code ec;
                    if (fs::file_size(out_dir.file(name), ec) > 0 && !ec) {
                        kill(pid, sig);
                        signalled = true;
                        break;
                    }
                }
                if (!signalled) std::this_thread::sleep_for(std::chrono::microseconds(500));
            }
            int status = attntrace::test::wait_cli(pid);
            INFO("stderr: " << read_text(work.file("stderr")));
            REQUIRE(signalled);
            CHECK(status == 128 + sig);  // died of the signal, not finished
            CHECK(read_text(target) == "previous trace\n");
            if (sig == SIGKILL) {
                // Cannot be caught: the partial temporary file remains beside it,
                // until the next write to the target removes it (its writer is gone).
                CHECK(temp_files(out_dir).size() == 1);
                REQUIRE(run_cli({"export", "000-softmax-example-row", "-o", target}).status == 0);
            }
            CHECK(out_dir.entries() == std::vector<std::string>{"trace.json"});  // SIGTERM, SIGINT: no litter
        }
    }
}

TEST_CASE("golden --update writes nothing when any lesson's claims do not check as expected", "[safe-writes]") {
    TempDir lessons, goldens;
    // The flagship lesson with one claim's expected verdict turned around:
    // it loads and runs, but no longer checks as the lesson says it should.
    auto doc = nlohmann::json::parse(read_text(attntrace::test::lessons_dir() + "/003-3.1-ring-fell.json"));
    REQUIRE(doc["claims"].size() > 0);
    auto& claim = doc["claims"][0];
    claim["expect"] = claim["expect"] == "agrees" ? "disagrees" : "agrees";
    write_text(lessons.file("003-3.1-ring-fell.json"), doc.dump(2));
    auto r = run_cli({"golden", "--update", "000-softmax-example-row", lessons.file("003-3.1-ring-fell.json")},
                     {"ATTNTRACE_GOLDEN=" + goldens.path()});
    INFO(r.err);
    CHECK(r.status == 2);
    CHECK(r.err.find(lessons.file("003-3.1-ring-fell.json")) != std::string::npos);
    CHECK(goldens.entries().empty());  // not even the good lesson's golden
    // The unmodified lessons do write.
    CHECK(run_cli({"golden", "--update", "000-softmax-example-row"}, {"ATTNTRACE_GOLDEN=" + goldens.path()}).status ==
          0);
    CHECK(goldens.entries() == std::vector<std::string>{"000-softmax-example-row.json"});
}

}  // namespace test_safe_writes

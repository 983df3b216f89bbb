// The CLI's progress line (src/cli/progress.hpp): its text on a terminal, and
// nothing at all on standard error when it is not one.
#include <catch2/catch.hpp>

#include <sstream>

#include "cli/progress.hpp"
#include "lesson/lesson.hpp"
#include "pipeline/plan.hpp"
#include "support.hpp"

using attntrace::Progress;
using attntrace::ProgressLine;

namespace test_progress {

TEST_CASE("on a terminal the progress line is rewritten in place and erased at the end", "[progress]") {
    std::ostringstream sink;
    {
        ProgressLine line(sink, true);
        line.update({"bench", "run 1/3, trace full", 1, 6});
        CHECK(sink.str() == "\rattntrace: bench [1/6] run 1/3, trace full");
        sink.str("");
        // Shorter than the line before: blanks cover what is left of it.
        line.update({"bench", "", 6, 6});
        CHECK(sink.str() == "\rattntrace: bench [6/6]" + std::string(20, ' '));
        sink.str("");
    }  // the destructor erases the line, so the command's output starts on a clean one
    CHECK(sink.str() == "\r" + std::string(22, ' ') + "\r");
}

TEST_CASE("the progress line names the lesson when several run, and never wraps", "[progress]") {
    std::ostringstream sink;
    ProgressLine line(sink, true, "003-3.1-ring-fell");
    line.update({"exact run", "scale", 3, 13});
    CHECK(sink.str() == "\rattntrace: 003-3.1-ring-fell: exact run [3/13] scale");
    sink.str("");
    const std::string long_item(200, 'x');
    line.update({"exact run", long_item, 4, 13});
    CHECK(sink.str().size() == 1 + 79);  // \r and at most 79 columns: a wrapped line would not return to its start
    line.clear();
    sink.str("");
    line.clear();  // nothing shown: nothing to erase
    CHECK(sink.str().empty());
}

TEST_CASE("off a terminal the progress line writes nothing", "[progress]") {
    std::ostringstream sink;
    {
        ProgressLine line(sink, false);
        line.update({"bench", "FMA peak", 0, 4});
        line.clear();
    }
    CHECK(sink.str().empty());
}

TEST_CASE("a bench with standard error not a terminal prints nothing on standard error", "[progress][cli][process]") {
    // The real binary with standard error a file, as in a log or a pipe: the
    // real isatty says no, so no progress line and no escape codes.
    auto r = attntrace::test::run_process(
        {"bench", "--tokens", "16", "--d-model", "8", "--heads", "2", "--d-ff", "16", "--repeat", "2"});
    REQUIRE(r.status == 0);
    CHECK(r.err.empty());
    CHECK(r.out.find('\r') == std::string::npos);
}

TEST_CASE("no lesson in lessons/ is long enough to show progress", "[progress]") {
    // kProgressMinFlops says every lesson runs below it: the lessons stay quiet whatever the terminal.
    for (const auto& file : attntrace::test::lesson_files()) {
        INFO(file);
        attntrace::Lesson lesson = attntrace::read_lesson(file);
        CHECK(attntrace::lesson_flops(lesson) < attntrace::kProgressMinFlops);
        CHECK(!attntrace::long_run(lesson));
    }
}

}  // namespace test_progress

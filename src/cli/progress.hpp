// The CLI's progress line: one line on standard error, rewritten in place
// (\r) as a long run goes, and erased when it ends, so that nothing of it is
// left between the command's output and the next prompt. Shown only when
// standard error is a terminal: a log file, a pipe or a test never gets it.
// `--quiet` and ATTNTRACE_NO_PROGRESS=1 turn it off.
#pragma once

#include <cstddef>
#include <ostream>
#include <string>
#include <utility>

#include "core/progress.hpp"

namespace attntrace {

struct Lesson;

// Runs below this many FLOPs of matrix products show no progress: at the
// 20-60 GFLOP/s `attntrace bench` measures on a 2-core machine, they finish in
// a few seconds at most. The largest lesson in lessons/ (002-multi-head-shapes,
// d_model 4096) needs 1.3e8; BERT-base on 512 tokens 8e9; on 4096 tokens 1.1e11.
inline constexpr double kProgressMinFlops = 5e10;

struct CliContext;

// Whether a progress line may be shown: standard error is a terminal,
// --quiet was not given and ATTNTRACE_NO_PROGRESS is unset, empty or 0.
bool progress_allowed(const CliContext& cli);

class ProgressLine {
public:
    // Writes to `sink` only when `shown`; the tests pass a string stream.
    // `label` (a lesson id) starts the line when several lessons run.
    ProgressLine(std::ostream& sink, bool shown, std::string label = "")
        : sink_(sink), shown_(shown), label_(std::move(label)) {}
    // To the run's standard error when progress_allowed() and `wanted` (the run is long).
    ProgressLine(const CliContext& cli, bool wanted, std::string label = "");
    ~ProgressLine() { clear(); }
    ProgressLine(const ProgressLine&) = delete;
    ProgressLine& operator=(const ProgressLine&) = delete;

    // "\rattntrace: LABEL: exact run [3/13] scale" (no "LABEL: " without a
    // label), padded with blanks over the rest of the previous line.
    void update(const Progress& p);
    // Erases the line (blanks, then \r): call before writing to the terminal.
    void clear();
    // A ProgressFn for the library that updates this line (which must outlive it).
    ProgressFn callback() {
        return [this](const Progress& p) { update(p); };
    }

private:
    std::ostream& sink_;
    bool shown_;
    std::string label_;
    std::size_t width_ = 0;  // characters on the line now (0: nothing shown)
};

// Whether a lesson is long enough to show progress (kProgressMinFlops).
bool long_run(const Lesson& lesson);

}  // namespace attntrace

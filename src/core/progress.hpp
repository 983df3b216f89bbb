// How far a long computation is. The library reports and never prints: the
// caller decides what to show (the CLI: one line on stderr, only on a
// terminal; see src/cli/progress.hpp) or passes nothing.
#pragma once

#include <functional>
#include <string_view>

namespace attntrace {

struct Progress {
    std::string_view task;  // what is being done: "exact run", "bench"
    std::string_view item;  // what starts now: a stage name, "warm-up", ... (empty when done == total)
    int done = 0;           // items finished
    int total = 0;          // items in the task
};

// Called from the calling thread, between stages or runs, never inside a
// parallel region. An empty function reports nothing.
using ProgressFn = std::function<void(const Progress&)>;

}  // namespace attntrace

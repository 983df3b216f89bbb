// What a Python call names, read while the interpreter is held (the Python
// objects converted to C++ values, a wrong type a TypeError), then evaluated
// without it: the lesson (a path, an id, a dict of its JSON) or a checkpoint
// with its text or ids, the trace policy, the blocks, the threads. The
// evaluation is the CLI's: the same library calls in the same order
// (cli/cmd_run.cpp), its refusals InputErrors naming the argument.
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "evaluate/evaluate.hpp"
#include "lesson/lesson.hpp"

namespace attntrace::python {

struct RunArgs {
    std::string function = "run";         // the caller, for messages: "run", "check"
    std::optional<std::string> path;      // a lesson file or id
    std::optional<std::string> json;      // a lesson given as a dict, as JSON text
    std::optional<std::string> model;     // a checkpoint folder
    std::optional<std::string> text;      // with model: the text its tokenizer reads
    std::optional<std::vector<std::int64_t>> ids;  // with model: token ids
    std::string trace = "full";           // full, summary, none, or step names/globs separated by commas
    std::string arithmetic = "exact";     // exact or document
    std::optional<std::string> blocks;    // "0,5-7"
    int threads = 0;                      // 0: the library's default (every core)
};

// Conversions, under the interpreter: TypeError for a wrong type.
// A path (str or os.PathLike), or none for None.
std::optional<std::string> optional_path(const pybind11::object& o, const char* what);
// A path that must be given: None is a TypeError too.
std::string required_path(const pybind11::object& o, const char* what);
// threads: none, or 1 to 1024 (an InputError naming `threads` otherwise).
RunArgs run_args(const std::string& function, const pybind11::object& lesson, const pybind11::object& model,
                 const pybind11::object& text, const pybind11::object& ids, const pybind11::object& blocks,
                 std::optional<int> threads);

// The lesson args name (as `attntrace run` reads it), without the interpreter.
Lesson read_args_lesson(const RunArgs& args);
// The lesson evaluated under args' policy, blocks and threads, without the interpreter.
std::unique_ptr<Evaluation> evaluate_args(const RunArgs& args);
// The same for a lesson read already (read_args_lesson), its policy kept in
// full for `keep` (the steps hooks read) besides what args' trace keeps.
std::unique_ptr<Evaluation> evaluate_lesson(const RunArgs& args, Lesson lesson, const std::vector<std::string>& keep = {});

// omp_set_num_threads(n) for a scope (n > 0), the previous number put back
// after: one call cannot change the next one's threads, as the CLI's --threads.
class ThreadsFor {
public:
    explicit ThreadsFor(int n);
    ~ThreadsFor();
    ThreadsFor(const ThreadsFor&) = delete;
    ThreadsFor& operator=(const ThreadsFor&) = delete;

private:
    int saved_;
};

}  // namespace attntrace::python

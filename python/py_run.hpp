// attntrace.Run: an evaluated lesson seen from Python. run[step] is a
// read-only numpy.ndarray over the trace's own float32 buffer (no copy),
// whose `base` is the Run, so the trace lives as long as any array of it. A
// derived step (trace/derived.hpp) is computed when first read, kept by the
// run, and viewed the same way. The step's axes, labels, formula and
// meaning, the tokens, the claims' verdicts, explain, the report, and the
// export (JSON, .npy) are the library's own, as the CLI calls them.
#pragma once

#include <pybind11/pybind11.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "evaluate/evaluate.hpp"

namespace attntrace::python {

class RunState {
public:
    RunState(std::unique_ptr<Evaluation> e, bool document) : e_(std::move(e)), document_(document) {}
    const Evaluation& evaluation() const { return *e_; }
    const Lesson& lesson() const { return e_->lesson; }
    // The trace chosen by arithmetic=: the exact one, or the document-arithmetic one.
    const Trace& trace() const { return document_ ? *e_->document : e_->exact; }
    bool document() const { return document_; }
    // Step `name` of the trace: its full name, or the end of it when exactly
    // one recorded step ends so ("hook_pattern" in a one-block lesson);
    // KeyError otherwise, naming the closest.
    const Step& step(const std::string& name) const;
    // The step's values: its buffer, or a derived step's values, computed
    // once (without the interpreter) and kept. ValueError for a step kept
    // only as a summary or not computable, saying why.
    const Tensor& values(const Step& s);

private:
    std::unique_ptr<Evaluation> e_;
    bool document_;
    std::mutex derived_mutex_;
    std::map<std::string, std::unique_ptr<Tensor>> derived_;  // computed derived steps, by name: addresses stay
};

void bind_run(pybind11::module_& m);

}  // namespace attntrace::python

// hooks={"blocks.0.attn.hook_pattern": fn} on attntrace.run, with
// TransformerLens' semantics: each hooked step, in pipeline order, is handed
// to fn(values, name) once it is computed (from the steps before it, earlier
// hooks' changes included); an array fn returns replaces the step's values
// and everything after it is computed again from them; None leaves the step
// as it is. The replacement is a lesson's `given` (lesson/lesson.hpp), the
// machinery `--set` uses: a hook that changes a step and a lesson that gives
// the same values give the same run.
#pragma once

#include <pybind11/pybind11.h>

#include <memory>

#include "evaluate/evaluate.hpp"
#include "py_inputs.hpp"

namespace attntrace::python {

// Called with the interpreter held; releases it while C++ computes. A hook
// that is not callable, a key that is no step of the run (KeyError-like
// InputError naming `hooks`), a returned value that is not an array of the
// step's shape: refused before or at that hook, nothing half-run returned.
std::unique_ptr<Evaluation> evaluate_hooked(const RunArgs& args, const pybind11::dict& hooks);

}  // namespace attntrace::python

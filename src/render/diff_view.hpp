// `attntrace diff`'s report (trace/diff.hpp: diff_traces) as text and as JSON.
#pragma once

#include <cstddef>
#include <ostream>

#include "trace/diff.hpp"
#include "trace/json_text.hpp"

namespace attntrace {

// Both files, the tolerance rule, one row per step (shape, largest absolute and
// relative errors and where, verdict), the steps in one trace only, and the
// conclusion: where B first parts from A, or that it never does. `width`:
// display columns (0: no limit); a table wider folds where and what the
// largest errors are under each step.
void render_diff(std::ostream& out, const DiffReport& r, std::size_t width);
// The same as JSON: format "attntrace-diff", version 1 (docs/diffing.md).
OrderedJson diff_json(const DiffReport& r);

}  // namespace attntrace

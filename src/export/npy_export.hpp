// A trace as a folder of .npy files, for numpy and PyTorch (`attntrace export
// LESSON --npy DIR`): DIR/<step name>.npy per step with values (the names keep
// their dots: blocks.0.attn.hook_q.npy) and DIR/index.json describing them
// (format "attntrace-npy", docs/trace-format.md). `attntrace diff` reads such
// a folder as a trace, with the minimal reader's rules.
#pragma once

#include <string>

#include "io/outputs.hpp"
#include "lesson/lesson.hpp"
#include "trace/trace.hpp"
#include "trace/trace_json.hpp"

namespace attntrace {

inline constexpr int kNpyExportVersion = 1;
inline constexpr const char* kNpyIndexFile = "index.json";

// Written through a temporary sibling folder and swapped into place
// (io/folder_swap.hpp): DIR may be new, empty, or a previous npy export,
// which is replaced; anything else there is refused and left as it is.
void write_npy_export(const std::string& dir, const Lesson& lesson, const Trace& trace);
// The same as one of a command's outputs (io/outputs.hpp): the folder filled
// now, put in place by outputs.commit() with the command's other outputs.
void prepare_npy_export(Outputs& outputs, const std::string& dir, const Lesson& lesson, const Trace& trace);
// The refusal write_npy_export would give for `dir`, before any work is done.
void check_npy_export_target(const std::string& dir);

// Whether `dir` holds an index.json of format "attntrace-npy" and nothing but
// it and .npy files: the only non-empty folder write_npy_export replaces.
bool is_npy_export(const std::string& dir);

// The folder as a trace: index.json needs `format`, `version` and per step
// `name`, `shape` and `file` (null for a step without values: then `source`
// "not-computable" or `recorded` "summary"); `lesson`, `source`, `recorded`
// are optional, as in a minimal JSON trace. Each file must hold the shape
// the index gives. Throws InputError naming index.json and the field, or the
// .npy file and its byte offset.
TraceData read_npy_export(const std::string& dir);

// What `diff` reads: a folder as read_npy_export, anything else as a JSON
// trace with the minimal fields (trace_json.hpp, TraceRequire::minimal).
TraceData read_trace_or_npy(const std::string& path);

}  // namespace attntrace

// Trace JSON (format "attntrace-trace", documented in docs/trace-format.md,
// schema in docs/trace.schema.json): the reader the golden comparison (and
// diff) use. The text writer is trace/json_text.hpp; writing a whole trace
// with its claims is export/trace_export.hpp.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/tensor.hpp"
#include "trace/json_text.hpp"
#include "trace/trace.hpp"

namespace attntrace {

// A trace read back from JSON: enough to compare it with another.
struct TraceStepData {
    std::string name;
    Shape shape;
    std::string source;
    std::string recorded = "full";  // "summary": no values (version 2 traces under the summary policy)
    Tensor values;             // empty when not computable or summarized
    std::optional<Tensor> formula_values;
};
struct TraceClaimData {
    std::string id;
    std::string verdict;
};
struct TraceData {
    std::string file;
    std::string lesson_id;
    std::vector<TraceStepData> steps;
    std::vector<TraceClaimData> claims;
};

// Throws InputError with file and field path on anything malformed.
TraceData read_trace_file(const std::string& path);
TraceData parse_trace(const nlohmann::json& doc, const std::string& file);

}  // namespace attntrace

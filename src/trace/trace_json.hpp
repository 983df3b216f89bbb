// Trace JSON (format "attntrace-trace", documented in docs/trace-format.md,
// schema in docs/trace.schema.json): the reader the golden comparison (and
// diff) use. The text writer is trace/json_text.hpp; writing a whole trace
// with its claims is export/trace_export.hpp.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/tensor.hpp"
#include "core/token_span.hpp"
#include "trace/json_text.hpp"
#include "trace/trace.hpp"

namespace attntrace {

class Fields;

// Rank of a trace step, at most: 3 for one sequence ((head, query, key)), 4
// for a batched trace (src/batch/), the batch axis first. Both readers (the
// JSON trace, the npy export's index.json) hold a step's shape to it.
inline constexpr std::size_t kMaxTraceRank = 4;
// A trace's steps and claims, held while its JSON is parsed: a 64-block
// decoder stack records ~6,000 steps; a file of millions of `{}` is refused
// at the first one past the bound, not after building them all.
inline constexpr std::size_t kMaxTraceSteps = std::size_t{1} << 16;
inline constexpr std::size_t kMaxTraceClaims = std::size_t{1} << 16;

// A trace read back from JSON: enough to compare it with another.
struct TraceStepData {
    std::string name;
    Shape shape;
    std::string source;        // computed, given, not-computable
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
    // A checkpoint's run: its token ids; with a text, the text and each token's bytes in it (absent: empty).
    std::vector<std::int64_t> token_ids;
    std::optional<std::string> text;
    std::vector<TokenSpan> token_spans;
    std::vector<TraceStepData> steps;
    std::vector<TraceClaimData> claims;
};

// What a trace must hold to be read.
//   complete: everything attntrace writes that the golden comparison reads:
//             `lesson.id` and each step's `source`, besides the fields below.
//   minimal:  what `attntrace diff` reads, so that another implementation can
//             write it: `format`, `version`, and `steps[]` with `name`, `shape`
//             and `values`. `lesson` and `source` may be left out (a step then
//             counts as computed); when present they are checked all the same.
// Both refuse two steps of one name (diff matches steps by name).
enum class TraceRequire { complete, minimal };

// token_ids, text and token_spans of a document (a trace, an npy export's index.json) into `t`: one id
// per token, one span per id, each [begin, end) within the text, begins never decreasing; absent, none.
void read_token_sources(const Fields& f, const nlohmann::json& doc, TraceData& t);

// Throws InputError with file and field path on anything malformed.
TraceData read_trace_file(const std::string& path, TraceRequire require = TraceRequire::complete);
TraceData parse_trace(const nlohmann::json& doc, const std::string& file,
                      TraceRequire require = TraceRequire::complete);

}  // namespace attntrace

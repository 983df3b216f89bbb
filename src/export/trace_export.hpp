// A lesson's trace and its claims' verdicts as one JSON document: what
// `export` writes and golden/ holds (docs/trace-format.md). Sits below both
// the trace and the checker, so that neither depends on the other.
#pragma once

#include "check/check.hpp"
#include "lesson/lesson.hpp"
#include "trace/trace.hpp"
#include "trace/trace_json.hpp"

namespace attntrace {

// A checkpoint's token_ids, and with a text the text and token_spans (docs/trace-format.md), put into `j`
// (the export's document, the npy export's index.json); nothing for a lesson's own tokens.
void put_token_sources(OrderedJson& j, const Lesson& lesson);

// The trace as a JSON tree. With `deferred`, step values are deferred_tensor
// nodes (json_text.hpp) instead of arrays: a tree of the trace's metadata only.
OrderedJson trace_to_json(const Lesson& lesson, const Trace& trace, const CheckReport* report,
                          DeferredTensors* deferred = nullptr);

// The same trace as readable text, written to `out` as it is made, with the
// values written straight from the trace's tensors: the memory it needs is the
// metadata's, whatever the trace's size. Byte for byte what
// dump_readable(trace_to_json(...)) gives (tests/test_trace_schema.cpp).
void write_trace_json(TextSink& out, const Lesson& lesson, const Trace& trace, const CheckReport* report);

}  // namespace attntrace

// Fuzz target: the trace reader (what `golden` and `diff` read), in both its
// modes. Bytes in; the only acceptable outcomes are a trace or an InputError.
// A trace that reads must compare equal to itself, by the golden comparison
// (complete traces) and by diff (every trace), so their walks over every
// step and value are fuzzed too.
// Built as a libFuzzer binary and as a replay binary (see fuzz_lesson.cpp).
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.hpp"
#include "core/json_field.hpp"
#include "fuzz/fuzz_limits.hpp"
#include "trace/diff.hpp"
#include "trace/golden.hpp"
#include "trace/trace_json.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace attntrace;
    attntrace::fuzz::apply_limits();
    const std::string text(reinterpret_cast<const char*>(data), size);
    json doc;
    try {
        doc = parse_json_text(text, "fuzz.json");
    } catch (const InputError&) {
        return 0;
    }
    try {
        TraceData trace = parse_trace(doc, "fuzz.json");
        if (!compare_traces(trace, trace, "(self)").empty()) __builtin_trap();
    } catch (const InputError&) {
    }
    try {
        TraceData trace = parse_trace(doc, "fuzz.json", TraceRequire::minimal);
        DiffReport self = diff_traces(trace, trace, DiffOptions{});
        if (self.first_divergence) __builtin_trap();
    } catch (const InputError&) {
    }
    return 0;
}

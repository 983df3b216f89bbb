// Fuzz target: the trace reader (what `golden` and `diff` read). Bytes in; the
// only acceptable outcomes are a trace or an InputError. A trace that reads
// must compare equal to itself (compare_traces finds no difference), so the
// comparison's own walk over every step and value is fuzzed too.
// Built as a libFuzzer binary and as a replay binary (see fuzz_lesson.cpp).
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.hpp"
#include "core/json_field.hpp"
#include "fuzz/fuzz_limits.hpp"
#include "trace/golden.hpp"
#include "trace/trace_json.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace attntrace;
    attntrace::fuzz::apply_limits();
    const std::string text(reinterpret_cast<const char*>(data), size);
    TraceData trace;
    try {
        trace = parse_trace(parse_json_text(text, "fuzz.json"), "fuzz.json");
    } catch (const InputError&) {
        return 0;
    }
    if (!compare_traces(trace, trace, "(self)").empty()) __builtin_trap();
    return 0;
}

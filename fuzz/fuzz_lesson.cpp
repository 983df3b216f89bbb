// Fuzz target: the lesson reader, and everything downstream of a lesson that
// loads. Bytes in; the only acceptable outcomes are a loaded lesson or an
// InputError (the one-line message the CLI prints with exit 2). Anything else
// (another exception, a crash, a sanitizer report, a hang) is a bug.
//
// A lesson small enough to run (fuzz_limits.hpp) is also evaluated, rendered
// and exported, and its exported trace must read back with our own trace
// reader: a property no hand-written test enumerates. It is run again under a
// random --trace list, whose kept steps must equal the full trace's bit for
// bit (up to a streamed attention's Z, which agrees to rounding).
//
// Built two ways (CMakeLists.txt): with -fsanitize=fuzzer as a libFuzzer
// binary (clang, ATTNTRACE_FUZZ=ON; ATTNTRACE_LIBFUZZER adds the
// structure-aware mutator), and in every build as a replay binary that runs
// saved inputs (tests/fuzz-regressions/) under ctest.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <random>
#include <sstream>
#include <string>

#include "evaluate/evaluate.hpp"
#include "core/error.hpp"
#include "core/json_field.hpp"
#include "cost/cost_lesson.hpp"
#include "render/cost_check.hpp"
#include "export/trace_export.hpp"
#include "fuzz/fuzz_limits.hpp"
#include "lesson/lesson.hpp"
#include "render/text.hpp"
#include "trace/derived.hpp"
#include "trace/policy.hpp"
#include "trace/trace_json.hpp"

#ifdef ATTNTRACE_LIBFUZZER
#include <cstring>

#include "fuzz/lesson_mutator.hpp"

extern "C" std::size_t LLVMFuzzerMutate(std::uint8_t* data, std::size_t size, std::size_t max_size);

// Half of the mutations structure-aware (fuzz/lesson_mutator.hpp: one field of
// the lesson changed, the document still JSON), half libFuzzer's own on the
// bytes, with the dictionary fuzz/lesson.dict (scripts/fuzz.sh passes it).
extern "C" std::size_t LLVMFuzzerCustomMutator(std::uint8_t* data, std::size_t size, std::size_t max_size,
                                               unsigned int seed) {
    if (seed % 2 == 0) {
        const std::string_view text(reinterpret_cast<const char*>(data), size);
        if (auto mutant = attntrace::fuzz::mutate_lesson(text, seed / 2, max_size)) {
            std::memcpy(data, mutant->data(), mutant->size());
            return mutant->size();
        }
    }
    return LLVMFuzzerMutate(data, size, max_size);
}
#endif

namespace {

// A streamed Z (an online softmax over key blocks) against the materialised
// one: each sums T weighted values in another order with other rescalings, so
// they differ by up to about T·2^-24 of the largest |V| (T <= 256 here: 1.5e-5);
// 1e-4 of it is still far below a value read from a buffer not yet filled.
constexpr double kStreamedZTol = 1e-4;

bool streamed_z_agrees(const attntrace::Tensor& streamed, const attntrace::Tensor& materialised,
                       const attntrace::Tensor* v) {
    double scale = 0;
    const attntrace::Tensor& of = v ? *v : materialised;
    for (std::size_t i = 0; i < of.size(); ++i) scale = std::max(scale, std::fabs(double(of.ptr()[i])));
    for (std::size_t i = 0; i < streamed.size(); ++i)
        if (!(std::fabs(double(streamed.ptr()[i]) - materialised.ptr()[i]) <= kStreamedZTol * scale)) return false;
    return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace attntrace;
    attntrace::fuzz::apply_limits();
    const std::string text(reinterpret_cast<const char*>(data), size);
    // The same bytes as a cost lesson (docs/cost.md): read, then checked.
    try {
        const CostLesson cost = parse_cost_lesson(parse_json_text(text, "fuzz.json"), "fuzz.json");
        std::ostringstream sink;
        render_cost_check(sink, cost, check_cost_lesson(cost));
    } catch (const InputError&) {
    }
    Lesson lesson;
    try {
        lesson = parse_lesson(text, "fuzz.json");
    } catch (const InputError&) {
        return 0;  // refused with a message: the expected answer to most inputs
    }
    if (!attntrace::fuzz::small_enough_to_run(lesson)) return 0;
    std::unique_ptr<Evaluation> e;
    try {
        e = evaluate(std::move(lesson));
    } catch (const InputError&) {
        return 0;  // e.g. a value overflowing float32 mid-run, refused naming the step
    }
    std::ostringstream sink;
    render_run(sink, e->lesson, e->exact, e->report, RunView{});
    render_check(sink, e->lesson, e->exact, e->report);
    // What we write, we must read back: the exported trace parses and has every step.
    const std::string exported = dump_readable(trace_to_json(e->lesson, e->exact, &e->report));
    TraceData back = parse_trace(parse_json_text(exported, "(exported)"), "(exported)");
    if (back.steps.size() != e->exact.steps.size()) __builtin_trap();
    // Every number shown is the number computed: the lesson again under a
    // --trace list picked from the input's bytes (each step name with
    // probability 1/4), each step it keeps the full trace's.
    std::uint64_t seed = 1469598103934665603ull;  // FNV-1a of the input
    for (std::size_t i = 0; i < size; ++i) seed = (seed ^ data[i]) * 1099511628211ull;
    std::mt19937_64 gen(seed);
    std::string list;
    for (const std::string& name : e->lesson.recorded_step_names())
        if (gen() % 4 == 0) list += (list.empty() ? "" : ",") + name;
    if (list.empty()) return 0;
    std::unique_ptr<Evaluation> part;
    try {
        part = evaluate(Lesson(e->lesson), parse_trace_policy(list, "--trace"));
    } catch (const InputError&) {
        return 0;
    }
    // A run that kept no step of an attention's core streamed it (docs/trace-format.md):
    // its Z is an online softmax's sum, equal to the materialised one to rounding, not
    // bit for bit, and every step after it inherits the difference. So: bit for bit
    // before the first attention's Z (kept or not), that Z, when kept, within
    // kStreamedZTol of its block's largest |V|, the rest not compared.
    // In the full trace's order, which holds every step, kept by the partial run or not.
    for (const Step& whole : e->exact.steps) {
        const Step* s = part->exact.find(whole.name);
        const bool kept = s && s->recorded == Record::full && s->source != StepSource::not_computable;
        const bool z = computes(whole, Leaf::z);
        if (z && part->exact.streamed_attention) {
            if (kept) {
                const StepValues a = values_of(part->exact, *s), b = values_of(e->exact, whole);
                const Step* v = nullptr;  // the same attention's V (by the step table, not by name)
                for (const Step& c : e->exact.steps)
                    if (!v && whole.def && c.def && c.def->leaf == Leaf::v && c.def->block == whole.def->block &&
                        c.def->cross == whole.def->cross)
                        v = &c;
                std::optional<StepValues> v_values;
                if (v && v->recorded == Record::full) v_values.emplace(values_of(e->exact, *v));
                if (a->size() != b->size() || !streamed_z_agrees(*a, *b, v_values ? v_values->get() : nullptr))
                    __builtin_trap();
            }
            break;
        }
        if (!kept) continue;
        const StepValues a = values_of(part->exact, *s), b = values_of(e->exact, whole);
        if (a->size() != b->size() || (a->size() && std::memcmp(a->ptr(), b->ptr(), a->size() * sizeof(float)) != 0))
            __builtin_trap();
    }
    // Every step the partial run kept is one of the full run's.
    for (const Step& s : part->exact.steps)
        if (!e->exact.find(s.name)) __builtin_trap();
    return 0;
}

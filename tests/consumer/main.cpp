// A program built against an installed attntrace (find_package(attntrace),
// attntrace::attntrace): reads the flagship lesson from the installed
// share/attntrace/lessons, runs it through the library, and checks the
// attention weights of the first query: the row sums to one, and its first
// weight is the one the installed golden trace holds.
#include <attntrace/lesson/lesson.hpp>
#include <attntrace/pipeline/run.hpp>
#include <attntrace/trace/trace_json.hpp>

#include <cmath>
#include <cstdio>
#include <exception>
#include <string>

namespace {

// A softmax row of 3 float32 weights sums to 1 within a few float32 ulps (1.2e-7 each).
constexpr double kRowSumTolerance = 1e-6;
// The golden stores weights as JSON decimals with float32's 9 significant
// digits; this is the same computation, so anything above rounding is a bug.
constexpr double kGoldenTolerance = 1e-6;

}  // namespace

int main() {
    using namespace attntrace;
    const std::string id = "003-3.1-ring-fell";
    try {
        Lesson lesson = read_lesson(std::string(LESSONS_DIR) + "/" + id + ".json");
        Trace trace = run_lesson(lesson);
        // A: (NH, Tq, T); row 0 of head 0 is what the first token reads from each token.
        const Step* pattern = trace.find("blocks.0.attn.hook_pattern");
        if (!pattern || pattern->value.size() == 0) {
            std::fprintf(stderr, "attntrace_consumer: expected a computed hook_pattern, found none\n");
            return 1;
        }
        const std::size_t T = pattern->shape.back();
        double row_sum = 0;
        for (std::size_t j = 0; j < T; ++j) row_sum += pattern->value.ptr()[j];

        TraceData golden = read_trace_file(std::string(GOLDEN_DIR) + "/" + id + ".json");
        double golden_a00 = NAN;
        for (const auto& s : golden.steps)
            if (s.name == pattern->name && s.values.size() > 0) golden_a00 = s.values.ptr()[0];
        const double a00 = pattern->value.ptr()[0];

        std::printf("attntrace_consumer: %s: A[0,0,:] sums to %.7f; A[0,0,0] = %.7f (golden %.7f)\n", id.c_str(),
                    row_sum, a00, golden_a00);
        const bool ok = std::fabs(row_sum - 1) <= kRowSumTolerance && std::fabs(a00 - golden_a00) <= kGoldenTolerance;
        return ok ? 0 : 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "attntrace_consumer: error: %s\n", e.what());
        return 1;
    }
}

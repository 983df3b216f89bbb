// A program built against an installed attntrace (find_package(attntrace
// COMPONENTS xtensor), attntrace::xtensor): reads the flagship lesson from the
// installed share/attntrace/lessons, runs it through the library, and looks
// at its attention weights through xtensor views of the trace's own buffers
// (trace/xview.hpp): every row sums to one, the softmax of the masked scores
// computed here with xtensor is the trace's pattern, and the pattern is the
// one the installed golden trace holds.
#include <attntrace/lesson/lesson.hpp>
#include <attntrace/pipeline/run.hpp>
#include <attntrace/trace/trace_json.hpp>
#include <attntrace/trace/xview.hpp>

#include <xtensor/xmath.hpp>
#include <xtensor/xtensor.hpp>
#include <xtensor/xview.hpp>

#include <cmath>
#include <cstdio>
#include <exception>
#include <string>

namespace {

// A softmax row of 3 float32 weights sums to 1 within a few float32 ulps (1.2e-7 each).
constexpr double kRowSumTolerance = 1e-6;
// The same softmax in float32 by another implementation (xtensor's exp and
// sum against the library's kernel): weights <= 1 agree within a few ulps.
constexpr double kSoftmaxTolerance = 1e-6;
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
        // The masked scores are a derived step (computed when read, trace/derived.hpp): views need buffers.
        materialise(trace);
        // Steps named by typed handles: the catalogue gives block 0's names.
        const Catalogue& steps = lesson.catalogue();
        const Step* pattern = trace.find(steps.step(Leaf::pattern).name);
        const Step* scores = trace.find(steps.step(Leaf::attn_scores).name);
        if (!pattern || !scores) {
            std::fprintf(stderr, "attntrace_consumer: expected hook_pattern and hook_attn_scores, found %s\n",
                         pattern ? "no scores" : "no pattern");
            return 1;
        }
        // A, S: (NH, Tq, T), views over the trace's buffers (no copy).
        const auto A = as_xtensor<3>(*pattern);
        const auto S = as_xtensor<3>(*scores);

        // 1. Every row of A sums to 1 (reductions evaluated into tensors: xtensor 0.24's lazy keep_dims reducers gave wrong rows inside broadcasts).
        const xt::xtensor<float, 2> row_sums = xt::sum(A, {2});
        const double worst_row = xt::amax(xt::abs(row_sums - 1.0f))();

        // 2. softmax(S) along the keys with xtensor, against the trace's A.
        const xt::xtensor<float, 2> row_max = xt::amax(S, {2});
        const xt::xtensor<float, 3> e = xt::exp(S - xt::view(row_max, xt::all(), xt::all(), xt::newaxis()));
        const xt::xtensor<float, 2> e_sum = xt::sum(e, {2});
        const xt::xtensor<float, 3> softmax = e / xt::view(e_sum, xt::all(), xt::all(), xt::newaxis());
        const double worst_softmax = xt::amax(xt::abs(softmax - A))();

        // 3. A against the installed golden trace, read into its own Tensor.
        TraceData golden = read_trace_file(std::string(GOLDEN_DIR) + "/" + id + ".json");
        double worst_golden = NAN;
        for (const auto& s : golden.steps)
            if (s.name == pattern->name && s.values.size() > 0)
                worst_golden = xt::amax(xt::abs(as_xtensor<3>(s.values) - A))();

        std::printf("attntrace_consumer: %s: A is %zux%zux%zu; rows sum to 1 within %.2g; "
                    "xtensor's softmax(S) within %.2g; golden within %.2g; A[0,0,0] = %.7f\n",
                    id.c_str(), A.shape()[0], A.shape()[1], A.shape()[2], worst_row, worst_softmax, worst_golden,
                    double(A(0, 0, 0)));
        const bool ok = worst_row <= kRowSumTolerance && worst_softmax <= kSoftmaxTolerance &&
                        worst_golden <= kGoldenTolerance;  // NaN (no golden pattern) fails
        return ok ? 0 : 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "attntrace_consumer: error: %s\n", e.what());
        return 1;
    }
}

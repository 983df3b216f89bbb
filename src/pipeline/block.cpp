// The model: the lesson catalogue's passes (trace/catalogue.hpp) in order, from
// run.from to run.to. One post-norm encoder block runs the stages in the order
// of PyTorch's nn.TransformerEncoderLayer(norm_first=False).
#include <algorithm>
#include <chrono>

#include <omp.h>

#include "core/memory.hpp"

#include "pipeline/operation.hpp"
#include "pipeline/run.hpp"

namespace attntrace {

namespace {

// Passes first..last of the lesson's catalogue, in order. Streaming: each mix
// pass computes Z from Q, K and V over key blocks (scores..softmax skipped).
void run_passes(Run& run, int first, int last, std::string_view task, const ProgressFn& progress) {
    const auto& passes = run.lesson().catalogue().passes();
    auto skipped = [&](Stage stage) {
        return run.plan().stream_attention && stage >= Stage::scores && stage <= Stage::softmax;
    };
    int total = 0, done = 0;
    for (int p = first; p <= last; ++p) total += skipped(passes[static_cast<std::size_t>(p)].stage) ? 0 : 1;
    for (int p = first; p <= last; ++p) {
        const Stage stage = passes[static_cast<std::size_t>(p)].stage;
        if (skipped(stage)) continue;
        if (progress) progress({task, stage_name(stage), done++, total});
        const auto t0 = std::chrono::steady_clock::now();
        run.begin_pass(p);
        operation(stage).forward(run);
        run.end_pass(p);
        run.trace().stage_seconds[static_cast<std::size_t>(stage)] +=
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    if (progress) progress({task, {}, total, total});
}

}  // namespace

Trace run_planned(const Lesson& lesson, Arithmetic mode, const Plan& plan, const ProgressFn& progress) {
    Run run(lesson, mode, plan);
    run_passes(run, lesson.first_pass, lesson.last_pass, mode == Arithmetic::exact ? "exact run" : "document run",
               progress);
    return run.finish();
}

Trace run_window(const Lesson& lesson, const Plan& plan, RowWindow window, Tensor x) {
    Run run(lesson, Arithmetic::exact, plan, window);
    run.seed(lesson.catalogue().step(Leaf::resid_pre).name, std::move(x), "the causal run's rows of X: the decode starts from them");
    run_passes(run, std::max(lesson.first_pass, 1), lesson.last_pass, "decode", {});
    return run.finish();
}

Trace run_embeddings(const Lesson& lesson, const Plan& plan) {
    Run run(lesson, Arithmetic::exact, plan);
    run_passes(run, 0, 0, "embeddings", {});
    return run.finish();
}

Trace run_lesson(const Lesson& lesson, Arithmetic mode, const TracePolicy& policy, const ProgressFn& progress) {
    const int threads = omp_get_max_threads();
    const Plan plan = make_plan(lesson, policy, mode, threads);
    require_memory(plan, lesson, mode, threads, max_memory_bytes());
    return run_planned(lesson, mode, plan, progress);
}

}  // namespace attntrace

// The encoder block: the stages in the order of PyTorch's
// nn.TransformerEncoderLayer(norm_first=False), run from run.from to run.to.
#include <array>
#include <chrono>

#include <omp.h>

#include "core/memory.hpp"

#include "pipeline/stages.hpp"

namespace attntrace {

Trace run_planned(const Lesson& lesson, Arithmetic mode, const Plan& plan, const ProgressFn& progress) {
    using StageFn = void (*)(Run&);
    static constexpr std::array<StageFn, kStageCount> kStages = {
        embed_forward, qkv_forward,      rope_forward,   scores_forward, scale_forward, mask_forward,
        softmax_forward, mix_forward,    out_proj_forward, add1_forward, norm1_forward,
        ffn_forward,   add2_forward,     norm2_forward};
    Run run(lesson, mode, plan);
    // Streaming: the mix stage computes Z from Q, K and V over key blocks.
    auto skipped = [&](Stage stage) {
        return plan.stream_attention && stage >= Stage::scores && stage <= Stage::softmax;
    };
    int total = 0, done = 0;
    for (int s = static_cast<int>(lesson.from); s <= static_cast<int>(lesson.to); ++s)
        total += skipped(static_cast<Stage>(s)) ? 0 : 1;
    const std::string_view task = mode == Arithmetic::exact ? "exact run" : "document run";
    for (int s = static_cast<int>(lesson.from); s <= static_cast<int>(lesson.to); ++s) {
        const Stage stage = static_cast<Stage>(s);
        if (skipped(stage)) continue;
        if (progress) progress({task, stage_name(stage), done++, total});
        const auto t0 = std::chrono::steady_clock::now();
        kStages[s](run);
        run.end_stage(stage);
        run.trace().stage_seconds[s] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    if (progress) progress({task, {}, total, total});
    return run.finish();
}

Trace run_lesson(const Lesson& lesson, Arithmetic mode, const TracePolicy& policy, const ProgressFn& progress) {
    const int threads = omp_get_max_threads();
    const Plan plan = make_plan(lesson, policy, mode, threads);
    require_memory(plan, lesson, mode, threads, max_memory_bytes());
    return run_planned(lesson, mode, plan, progress);
}

}  // namespace attntrace

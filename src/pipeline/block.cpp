// The encoder block: the stages in the order of PyTorch's
// nn.TransformerEncoderLayer(norm_first=False), run from run.from to run.to.
#include <array>
#include <chrono>

#include "pipeline/stages.hpp"

namespace attntrace {

Trace run_lesson(const Lesson& lesson, Arithmetic mode) {
    using StageFn = void (*)(Run&);
    static constexpr std::array<StageFn, kStageCount> kStages = {
        embed_forward, qkv_forward,      scores_forward, scale_forward, mask_forward,
        softmax_forward, mix_forward,    out_proj_forward, add1_forward, norm1_forward,
        ffn_forward,   add2_forward,     norm2_forward};
    Run run(lesson, mode);
    for (int s = static_cast<int>(lesson.from); s <= static_cast<int>(lesson.to); ++s) {
        const auto t0 = std::chrono::steady_clock::now();
        kStages[s](run);
        run.trace().stage_seconds[s] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    return std::move(run.trace());
}

}  // namespace attntrace

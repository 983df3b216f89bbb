#include "pipeline/plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

#include "core/error.hpp"
#include "core/memory.hpp"
#include "kernels/simd/kernels.hpp"
#include "pipeline/mask_pattern.hpp"

namespace attntrace {

namespace {

// Hidden-unit chunks the streamed FFN holds at once: H, plus SwiGLU's U and
// the scalar activations' output (ffn.cpp).
std::size_t ffn_chunk_buffers(Activation a) {
    return a == Activation::swiglu ? 3 : a == Activation::gelu_tanh ? 2 : 1;
}

std::size_t add_sat(std::size_t a, std::size_t b) { return a > SIZE_MAX - b ? SIZE_MAX : a + b; }

std::size_t bytes_of(const Shape& s) {
    std::size_t n = 0;
    if (!checked_numel(s, SIZE_MAX / sizeof(float), n)) return SIZE_MAX;
    return n * sizeof(float);
}

std::size_t index_of(const StepDef& def) { return static_cast<std::size_t>(&def - step_catalogue().data()); }

// The program, its libraries and thread stacks: measured ~11 MiB RSS for the
// default lesson (`/usr/bin/time -v attntrace`); rounded up.
constexpr std::size_t kBaselineBytes = std::size_t{16} << 20;

bool in_attention_core(Stage s) { return s >= Stage::scores && s <= Stage::softmax; }

}  // namespace

double stage_flops(Stage s, const Dims& d) {
    const double T = d.T, Tq = d.Tq, C = d.C, F = d.F;
    switch (s) {
        case Stage::qkv: return 2 * T * C * (C + 2.0 * d.KVH * d.hs);  // Q: C columns, K and V: KVH·hs each
        case Stage::scores: return 2 * Tq * T * C;  // NH heads of Tq x hs x T
        case Stage::mix: return 2 * Tq * T * C;
        case Stage::out: return 2 * Tq * C * C;
        case Stage::ffn: return 2 * 2 * T * C * F;
        default: return 0;
    }
}

double lesson_flops(const Lesson& lesson) {
    const Dims d = lesson.dims();
    double flops = 0;
    for (int s = static_cast<int>(lesson.from); s <= static_cast<int>(lesson.to); ++s)
        flops += stage_flops(static_cast<Stage>(s), d);
    return flops;
}

bool intervened(const Lesson& lesson, Arithmetic mode, std::string_view step) {
    const std::string name(step);
    return lesson.given.count(name) || (mode == Arithmetic::document && lesson.document_rounding.count(name));
}

Record Plan::record_of(const StepDef& def) const { return record[index_of(def)]; }

Plan make_plan(const Lesson& lesson, const TracePolicy& policy, Arithmetic mode, int threads) {
    const auto& steps = step_catalogue();
    const Dims d = lesson.dims();
    Plan p;
    p.policy = policy;
    p.record.assign(steps.size(), Record::none);
    p.last_read.assign(steps.size(), -1);

    // The run's output, the last step of its last stage, is kept in full whatever the policy.
    const StepDef* output = nullptr;
    for (const StepDef& def : steps) {
        if (!lesson.records(def)) continue;
        p.record[index_of(def)] = policy.record_of(def.name);
        if (def.stage == lesson.to) output = &def;
    }
    if (output) p.record[index_of(*output)] = Record::full;

    // Streaming needs every step it skips to be neither kept nor given nor rounded.
    auto quiet = [&](auto&& pick) {
        for (const StepDef& def : steps)
            if (pick(def.stage) && (p.record_of(def) != Record::none || intervened(lesson, mode, def.name)))
                return false;
        return true;
    };
    // The streaming kernel takes a key range per query (none, causal, windows);
    // the other patterns run materialised. ALiBi adds a bias the streaming
    // kernel does not have: such a run is materialised too.
    const bool streamable_mask = key_window(lesson.config).has_value();
    const PositionKind positions = lesson.config.positions.kind;
    p.stream_attention = streamable_mask && lesson.from <= Stage::scores && lesson.to >= Stage::mix &&
                         quiet(in_attention_core) && positions != PositionKind::alibi;
    // The FFN's output (hook_mlp_out) may still be kept: the chunks write it whole.
    p.stream_ffn = lesson.runs(Stage::ffn) && d.F > 0 && [&] {
        for (const char* n : {"blocks.0.mlp.hook_pre", "blocks.0.mlp.hook_pre_linear", "blocks.0.mlp.hook_post"})
            if (p.record_of(*find_step(n)) != Record::none || intervened(lesson, mode, n)) return false;
        return true;
    }();

    for (int s = static_cast<int>(lesson.from); s <= static_cast<int>(lesson.to); ++s)
        for (const auto& name : consumed_by(static_cast<Stage>(s), positions == PositionKind::rope))
            if (const StepDef* def = find_step(name)) p.last_read[index_of(*def)] = s;
    if (p.stream_attention)  // the mix stage reads Q, K (rotated, with RoPE) and V itself
        for (const auto& n : consumed_by(Stage::scores, positions == PositionKind::rope))
            p.last_read[index_of(*find_step(n))] = static_cast<int>(Stage::mix);
    if (p.stream_attention) p.last_read[index_of(*find_step("blocks.0.attn.hook_v"))] = static_cast<int>(Stage::mix);

    // The lesson's own tensors are in memory already.
    for (const auto* m : {&lesson.inputs, &lesson.weights, &lesson.given})
        for (const auto& [name, t] : *m) p.lesson_bytes = add_sat(p.lesson_bytes, bytes_of(t.shape));

    // Walk the stages: each allocates its steps, then frees what nothing later reads.
    const std::size_t gemm_scratch = std::size_t(std::max(threads, 1)) * simd::gemm_workspace_floats() * sizeof(float);
    std::vector<std::size_t> live(steps.size(), 0);
    std::size_t now = 0, peak = 0;
    for (const StepDef& def : steps)
        if (def.stage < lesson.from && lesson.records(def)) now = add_sat(now, live[index_of(def)] = bytes_of(step_shape(def, d)));
    for (int si = static_cast<int>(lesson.from); si <= static_cast<int>(lesson.to); ++si) {
        const Stage s = static_cast<Stage>(si);
        if (p.stream_attention && in_attention_core(s)) continue;
        std::size_t alloc = 0, scratch = gemm_scratch;
        for (const StepDef& def : steps) {
            if (def.stage != s || !lesson.records(def)) continue;
            const bool chunked = p.stream_ffn && def.stage == Stage::ffn && std::string_view(def.name) != "blocks.0.hook_mlp_out";
            if (chunked) continue;
            std::size_t b = bytes_of(step_shape(def, d));
            if (lesson.given.count(def.name)) b = add_sat(b, b);  // the formula's value is kept beside the given one
            alloc = add_sat(alloc, live[index_of(def)] = b);
        }
        if (p.stream_ffn && s == Stage::ffn)  // the hidden chunk (and SwiGLU's linear branch beside it)
            scratch = add_sat(scratch, bytes_of({kFfnChunkRows * ffn_chunk_buffers(lesson.config.activation), d.F}));
        peak = std::max(peak, add_sat(add_sat(now, alloc), scratch));
        now = add_sat(now, alloc);
        for (std::size_t i = 0; i < steps.size(); ++i)
            if (live[i] && p.record[i] != Record::full && p.last_read[i] <= si) now -= live[i], live[i] = 0;
    }
    for (std::size_t i = 0; i < steps.size(); ++i)
        if (p.record[i] == Record::full) p.kept_bytes = add_sat(p.kept_bytes, live[i]);
    p.peak_bytes = add_sat(add_sat(p.lesson_bytes, kBaselineBytes), peak);
    return p;
}

void require_memory(const Plan& plan, const Lesson& lesson, Arithmetic mode, int threads, std::size_t max_bytes) {
    if (plan.peak_bytes <= max_bytes) return;
    const Dims d = lesson.dims();
    std::string hint;
    for (const char* lighter : {"summary", "none"}) {
        if (plan.policy.describe() == lighter) continue;
        const Plan alt = make_plan(lesson, parse_trace_policy(lighter, "--trace"), mode, threads);
        if (alt.peak_bytes <= max_bytes) {
            hint = fmt::format("; with --trace {} (run, export, bench) it needs about {}", lighter,
                               human_bytes(alt.peak_bytes));
            break;
        }
    }
    if (hint.empty()) hint = "; no trace policy fits: use fewer tokens, or raise --max-memory";
    fail_field(lesson.file, "config",
               fmt::format("a run that fits in {} (--max-memory, $ATTNTRACE_MAX_MEMORY)", human_bytes(max_bytes)),
               fmt::format("{} tokens, d_model {}, {} heads with trace policy {} needing about {}{}", d.T, d.C, d.NH,
                           plan.policy.describe(), human_bytes(plan.peak_bytes), hint));
}

}  // namespace attntrace

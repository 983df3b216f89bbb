#include "pipeline/plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

#include "core/error.hpp"
#include "core/memory.hpp"
#include "kernels/kernels.hpp"
#include "kernels/tuning.hpp"
#include "pipeline/mask_pattern.hpp"
#include "pipeline/derived_steps.hpp"
#include "pipeline/operation.hpp"
#include "pipeline/stages.hpp"

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


bool in_attention_core(Stage s) { return s >= Stage::scores && s <= Stage::softmax; }

std::size_t d_ff_of(const Lesson& lesson) { return lesson.config.d_ff; }

std::size_t mul_sat(std::size_t a, std::size_t b) { return b && a > SIZE_MAX / b ? SIZE_MAX : a * b; }

}  // namespace

std::size_t view_bytes(const Shape& shape, bool heatmap, int threads) {
    const std::size_t cols = shape.empty() ? 1 : shape.back();
    // the rows each thread reads (a derived step's computed into a block of its own)
    std::size_t bytes = mul_sat(mul_sat(std::max(cols, kViewBlockFloats), sizeof(float)), static_cast<std::size_t>(std::max(threads, 1)));
    bytes = add_sat(bytes, mul_sat(cols, kViewLineBytesPerValue));
    if (heatmap && shape.size() >= 2) {
        const std::size_t R = shape[shape.size() - 2], C = cols;
        const std::size_t f = C > kViewMaxMapColumns ? (C + kViewMaxMapColumns - 1) / kViewMaxMapColumns : 1;
        std::size_t maps = 1;
        for (std::size_t k = 0; k + 2 < shape.size(); ++k) maps = mul_sat(maps, shape[k]);
        const std::size_t cells = mul_sat(mul_sat(maps, (R + f - 1) / f), (C + f - 1) / f);
        bytes = add_sat(bytes, mul_sat(cells, kViewMapBytesPerCell + kViewPooledCellBytes));
    }
    return bytes;
}

double stage_flops(Stage s, const Dims& d, Activation activation) {
    CostQuery q{d, double(d.Tq) * d.T, double(d.Tq) * d.T};  // a run computes every pair, masked or not
    q.activation = activation;
    return product_flops(s, q);
}

double lesson_flops(const Lesson& lesson) {
    const auto& passes = lesson.catalogue().passes();
    double flops = 0;
    for (int p = lesson.first_pass; p <= lesson.last_pass; ++p) {
        const Pass& pass = passes[static_cast<std::size_t>(p)];
        flops += stage_flops(pass.stage, lesson.dims_of(pass), lesson.config.activation);
    }
    return flops;
}

double stage_kind_flops(const Lesson& lesson, Stage s) {
    const auto& passes = lesson.catalogue().passes();
    double flops = 0;
    for (int p = lesson.first_pass; p <= lesson.last_pass; ++p) {
        const Pass& pass = passes[static_cast<std::size_t>(p)];
        if (pass.stage == s) flops += stage_flops(s, lesson.dims_of(pass), lesson.config.activation);
    }
    return flops;
}

bool intervened(const Lesson& lesson, Arithmetic mode, std::string_view step) {
    const std::string name(step);
    return lesson.given.count(name) || (mode == Arithmetic::document && lesson.document_rounding.count(name));
}

Record Plan::record_of(const StepDef& def) const { return record[catalogue->index_of(def)]; }

Plan make_plan(const Lesson& lesson, const TracePolicy& policy, Arithmetic mode, int threads) {
    const Catalogue& cat = lesson.catalogue();
    const auto& steps = cat.steps();
    const auto& passes = cat.passes();
    auto index_of = [&](const StepDef& def) { return cat.index_of(def); };
    Plan p;
    p.catalogue = &cat;
    p.policy = policy;
    p.record.assign(steps.size(), Record::none);
    p.last_read.assign(steps.size(), -1);

    // The run's output, the last step of its last pass, is kept in full whatever the policy.
    const StepDef* output = nullptr;
    for (const StepDef& def : steps) {
        if (!lesson.records(def)) continue;
        p.record[index_of(def)] = policy.record_of(def.name);
        if (def.pass == lesson.last_pass) output = &def;
    }
    if (output) p.record[index_of(*output)] = Record::full;

    // Streaming needs every step it skips to be neither kept nor given nor rounded.
    auto quiet = [&](auto&& pick) {
        for (const StepDef& def : steps)
            if (pick(def) && (p.record_of(def) != Record::none || intervened(lesson, mode, def.name))) return false;
        return true;
    };
    // The streaming kernel takes a key range per query (none, causal, windows);
    // the other patterns run materialised. ALiBi adds a bias the streaming
    // kernel does not have: such a run is materialised too, as is one that
    // multiplies the scores (config.scale multiply_by: the kernel divides), or
    // normalises otherwise than by a shifted softmax (the kernel's online softmax),
    // or applies the mask elsewhere than to the scaled scores (config.mask_at),
    // or has value heads of another width than the query/key heads (config.d_v:
    // the kernel's Q, K, V and Z rows are all NH·hs or KVH·hs wide).
    const bool streamable_mask = key_window(lesson.config).has_value();
    const PositionKind positions = lesson.config.positions.kind;
    p.stream_attention = streamable_mask && lesson.runs(Stage::scores) && lesson.runs(Stage::mix) &&
                         lesson.from <= Stage::scores && quiet([](const StepDef& d) { return in_attention_core(d.stage); }) &&
                         positions != PositionKind::alibi && lesson.config.scale.kind != ScaleKind::multiply_by &&
                         lesson.config.normalizer == Normalizer::softmax && lesson.config.max_shift &&
                         lesson.config.mask_at == MaskAt::scaled && lesson.config.dv() == lesson.config.dk();
    // The FFN's output (hook_mlp_out) may still be kept: the chunks write it whole.
    auto hidden = [](const StepDef& d) { return d.stage == Stage::ffn && d.leaf != Leaf::mlp_out; };
    p.stream_ffn = lesson.runs(Stage::ffn) && d_ff_of(lesson) > 0 && quiet(hidden);
    p.ffn_chunk_rows = ffn_chunk_rows(d_ff_of(lesson));

    // Derived steps: scaled, masked, shifted and exp'd scores from the raw ones.
    p.derived.assign(steps.size(), false);
    p.derive_attention = !p.stream_attention && lesson.from <= Stage::scores && lesson.runs(Stage::softmax) &&
                         positions != PositionKind::alibi && lesson.config.normalizer == Normalizer::softmax &&
                         lesson.config.max_shift && lesson.config.mask_at == MaskAt::scaled &&
                         std::none_of(steps.begin(), steps.end(), [&](const StepDef& d) {
                             return d.stage >= Stage::scale && d.stage <= Stage::softmax &&
                                    intervened(lesson, mode, d.name);
                         });
    if (p.derive_attention)
        for (int pi = lesson.first_pass; pi <= lesson.last_pass; ++pi) {
            const Pass& sm = passes[static_cast<std::size_t>(pi)];
            if (sm.stage != Stage::softmax) continue;
            for (const DerivedStep& ds : derived_steps(lesson.config)) {
                const StepDef& def = cat.step(sm, ds.leaf);
                const Record r = p.record_of(def);
                bool sources_kept = true;
                for (Leaf src : ds.sources) sources_kept = sources_kept && p.record_of(cat.step(sm, src)) == Record::full;
                const bool no_buffer = r == Record::none || (r == Record::full && sources_kept);
                p.derived[index_of(def)] = no_buffer;
                if (r == Record::full && no_buffer) p.derived_bytes = add_sat(p.derived_bytes, bytes_of(step_shape(def, lesson.dims_of(sm))));
            }
        }

    p.fuse_attention = p.derive_attention && std::none_of(steps.begin(), steps.end(), [&](const StepDef& d) {
        return d.leaf == Leaf::scores_raw && lesson.records(d) &&
               (intervened(lesson, mode, d.name) || p.record_of(d) == Record::summary);
    });

    const Reads reads = lesson.reads();
    for (int pi = lesson.first_pass; pi <= lesson.last_pass; ++pi)
        for (const StepDef* def : cat.consumed_by(passes[static_cast<std::size_t>(pi)], reads))
            p.last_read[index_of(*def)] = pi;
    if (p.stream_attention)  // each mix pass reads its Q, K (rotated, with RoPE) and V itself
        for (int pi = lesson.first_pass; pi <= lesson.last_pass; ++pi) {
            const Pass& mix = passes[static_cast<std::size_t>(pi)];
            if (mix.stage != Stage::mix) continue;
            Pass scores = mix;
            scores.stage = Stage::scores;
            for (const StepDef* def : cat.consumed_by(scores, reads)) p.last_read[index_of(*def)] = pi;
            p.last_read[index_of(*&cat.step(mix, Leaf::v))] = pi;
        }

    if (p.derive_attention)  // each softmax pass reads the raw scores, the factor and the mask itself
        for (int pi = lesson.first_pass; pi <= lesson.last_pass; ++pi) {
            const Pass& sm = passes[static_cast<std::size_t>(pi)];
            if (sm.stage != Stage::softmax) continue;
            for (const DerivedStep& ds : derived_steps(lesson.config))
                for (Leaf src : ds.sources) {
                    const std::size_t i = index_of(cat.step(sm, src));
                    p.last_read[i] = std::max(p.last_read[i], pi);
                }
        }

    if (p.fuse_attention)  // each softmax pass computes its scores from Q and K (rotated, with RoPE) and Z from V
        for (int pi = lesson.first_pass; pi <= lesson.last_pass; ++pi) {
            const Pass& sm = passes[static_cast<std::size_t>(pi)];
            if (sm.stage != Stage::softmax) continue;
            Pass scores = sm;
            scores.stage = Stage::scores;
            auto reads_until = [&](const StepDef& def) {
                p.last_read[index_of(def)] = std::max(p.last_read[index_of(def)], pi);
            };
            for (const StepDef* def : cat.consumed_by(scores, reads)) reads_until(*def);
            reads_until(cat.step(sm, Leaf::v));
        }

    // The lesson's own tensors are in memory already.
    for (const auto* m : {&lesson.inputs, &lesson.weights})
        for (const auto& [name, t] : *m) p.lesson_bytes = add_sat(p.lesson_bytes, bytes_of(t.shape));
    for (const auto& [name, g] : lesson.given)
        p.lesson_bytes = add_sat(p.lesson_bytes, add_sat(bytes_of(g.values.shape), g.whole() ? 0 : bytes_of(g.cells.shape)));
    // A checkpoint's weights: one block's converted at a time (lesson/weight_source.hpp).
    if (lesson.weight_source) p.lesson_bytes = add_sat(p.lesson_bytes, lesson.weight_source->largest_group_bytes());

    // Walk the passes: each allocates its steps, then frees what nothing later reads.
    const std::size_t gemm_scratch = std::size_t(std::max(threads, 1)) * simd::gemm_workspace_floats() * sizeof(float);
    std::vector<std::size_t> live(steps.size(), 0);
    auto shape_of = [&](const StepDef& def) { return step_shape(def, lesson.dims_of(cat.pass_of(def))); };
    std::size_t now = 0, peak = 0;
    for (const StepDef& def : steps)
        if (def.pass < lesson.first_pass && lesson.records(def)) now = add_sat(now, live[index_of(def)] = bytes_of(shape_of(def)));
    for (int pi = lesson.first_pass; pi <= lesson.last_pass; ++pi) {
        const Pass& pass = passes[static_cast<std::size_t>(pi)];
        if (p.stream_attention && in_attention_core(pass.stage)) continue;
        std::size_t alloc = 0, scratch = gemm_scratch;
        for (std::size_t i = pass.first; i < pass.end; ++i) {
            const StepDef& def = steps[i];
            if (!lesson.records(def) || (p.stream_ffn && hidden(def)) || p.derived[i]) continue;
            std::size_t b = bytes_of(shape_of(def));
            if (lesson.given.count(def.name)) b = add_sat(b, b);  // the formula's value is kept beside the given one
            alloc = add_sat(alloc, live[i] = b);
        }
        if (p.fuse_attention && pass.stage == Stage::softmax) {
            // each thread's scratch (its head's packed K and V, a block's scores and weights), and Z
            // computed ahead of the mix pass
            const Dims pd = lesson.dims_of(pass);
            scratch = add_sat(scratch, add_sat(std::size_t(std::max(threads, 1)) * fused_attention_scratch_floats(pd) *
                                                   sizeof(float),
                                               bytes_of({pd.Tq, pd.NH * pd.hv})));
        }
        if (p.stream_ffn && pass.stage == Stage::ffn)  // the hidden chunk (and SwiGLU's linear branch beside it)
            scratch = add_sat(scratch, bytes_of({std::min(p.ffn_chunk_rows, lesson.dims_of(pass).P) * ffn_chunk_buffers(lesson.config.activation), d_ff_of(lesson)}));
        peak = std::max(peak, add_sat(add_sat(now, alloc), scratch));
        p.step_peak_bytes = std::max(p.step_peak_bytes, add_sat(add_sat(now, alloc), scratch - gemm_scratch));
        now = add_sat(now, alloc);
        for (std::size_t i = 0; i < steps.size(); ++i)
            if (live[i] && p.record[i] != Record::full && p.last_read[i] <= pi) now -= live[i], live[i] = 0;
    }
    for (std::size_t i = 0; i < steps.size(); ++i)
        if (p.record[i] == Record::full) {
            p.kept_bytes = add_sat(p.kept_bytes, live[i]);
            p.view_bytes = std::max(p.view_bytes, view_bytes(shape_of(steps[i]), drawn_as_map(steps[i].leaf), threads));
        }
    // After the run the trace is viewed (run): what it keeps, and what its views hold beside it.
    peak = std::max(peak, add_sat(p.kept_bytes, p.view_bytes));
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

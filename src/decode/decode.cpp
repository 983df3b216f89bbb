#include "decode/decode.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "kernels/kernels.hpp"
#include "kernels/positions.hpp"
#include "pipeline/run.hpp"

namespace attntrace {

namespace {

constexpr const char* kX = "blocks.0.hook_resid_pre";
constexpr const char* kQ = "blocks.0.attn.hook_q";
constexpr const char* kK = "blocks.0.attn.hook_k";
constexpr const char* kV = "blocks.0.attn.hook_v";
constexpr const char* kRotQ = "blocks.0.attn.hook_rot_q";
constexpr const char* kRotK = "blocks.0.attn.hook_rot_k";
constexpr const char* kScores = "blocks.0.attn.hook_attn_scores";
constexpr const char* kPattern = "blocks.0.attn.hook_pattern";
constexpr const char* kZ = "blocks.0.attn.hook_z";

// The steps of the attention core a lesson may not give for the decode to be
// the formula's: from there on the run carries the article's numbers.
constexpr const char* kCore[] = {"blocks.0.attn.hook_scores_raw", "blocks.0.attn.hook_scores_scaled",
                                 "blocks.0.attn.hook_mask",       kScores,
                                 "blocks.0.attn.softmax.hook_exp", kPattern};

// Row t of a step whose first axis is the position: (T, a, b) -> (a, b).
Tensor row_of(const Tensor& full, std::size_t t) {
    Shape s(full.shape.begin() + 1, full.shape.end());
    Tensor out(s);
    std::copy_n(full.ptr() + t * out.size(), out.size(), out.ptr());
    return out;
}

double max_abs_diff(const float* a, const float* b, std::size_t n) {
    double m = 0;
    for (std::size_t i = 0; i < n; ++i) m = std::max(m, std::fabs(double(a[i]) - double(b[i])));
    return m;
}

// The new token's projection: x_t·W + b, alone (1, C)·(C, N) -> (N), as
// (N / hs, hs). Where the lesson gives the step (an article's Q), its row t
// is what the causal run used, and so what the decode uses.
Tensor project(const Lesson& lesson, const Step& step, const Tensor& x_row, const char* w, const char* b,
               std::size_t t) {
    if (step.source == StepSource::given || !lesson.weight(w)) return row_of(step.value, t);
    const Tensor& W = *lesson.weight(w);
    const Tensor* B = lesson.weight(b);
    Tensor out(Shape{step.shape[1], step.shape[2]});
    linear(x_row.ptr(), W.ptr(), B ? B->ptr() : nullptr, out.ptr(), 1, W.shape[0], W.shape[1]);
    return out;
}

// Why the decode does not apply, or "" when it does.
std::string not_applicable(const Lesson& lesson, const Trace& full) {
    if (!lesson.config.arch.is_default())
        return "the model is not one encoder block (decode follows one block's attention; config.blocks, norm_first "
               "and block \"decoder\" are not decoded yet)";
    if (lesson.config.mask != MaskKind::causal) return "the lesson's mask is not causal";
    if (lesson.batch) return "the lesson is a batch (decode follows one sequence)";
    if (!lesson.query_tokens.empty()) return "the queries are not the tokens (query_tokens)";
    if (lesson.from > Stage::qkv || lesson.to < Stage::mix) return "the run does not go from qkv (or embed) to mix";
    for (const char* name : kCore)
        if (lesson.given.count(name)) return fmt::format("the lesson gives {}: the article's numbers, not attention's", name);
    std::vector<const char*> needed = {kX, kQ, kK, kV, kPattern, kZ};
    if (lesson.config.positions.kind == PositionKind::rope) needed.insert(needed.end(), {kRotQ, kRotK});
    for (const char* name : needed) {
        const Step* s = full.find(name);
        if (!s || s->source == StepSource::not_computable) return fmt::format("{} is not computable", name);
        if (s->recorded != Record::full) return fmt::format("the trace policy did not keep {} in full", name);
    }
    return "";
}

}  // namespace

bool DecodeReport::matches() const {
    if (!applicable) return false;
    return std::all_of(steps.begin(), steps.end(), [](const DecodeStep& s) {
        return s.dev_k <= kDecodeTol && s.dev_pattern <= kDecodeTol && s.dev_z <= kDecodeTol && s.future_weight == 0;
    });
}

DecodeReport decode_lesson(const Lesson& lesson, const Trace& full) {
    DecodeReport report;
    report.why_not = not_applicable(lesson, full);
    if (!report.why_not.empty()) return report;
    report.applicable = true;

    const Step &X = *full.find(kX), &Q = *full.find(kQ), &K = *full.find(kK), &V = *full.find(kV);
    // With RoPE the cache holds the rotated keys, as a real one does, and the
    // new query is rotated at its position t: steps scores .. mix read
    // hook_rot_q and hook_rot_k then.
    const Positions& pos = lesson.config.positions;
    const bool rope = pos.kind == PositionKind::rope;
    const Step& Kcached = rope ? *full.find(kRotK) : K;
    const char* q_in = rope ? kRotQ : kQ;
    const char* k_in = rope ? kRotK : kK;
    const Tensor &A = full.find(kPattern)->value, &Z = full.find(kZ)->value;
    const std::size_t T = X.shape[0], NH = Q.shape[1], hs = Q.shape[2], KVH = K.shape[1];
    Tensor k_cache(Shape{T, KVH, hs}), v_cache(Shape{T, KVH, hs});  // rows 0..t filled at step t
    const std::size_t row = KVH * hs;

    // One query over the cache: the pipeline's own scores .. mix, with the
    // query at the last of t + 1 positions (as causal decoding places it).
    Lesson step_lesson;
    step_lesson.file = lesson.file;
    step_lesson.id = lesson.id;
    step_lesson.config = lesson.config;
    step_lesson.set_range(Stage::scores, Stage::mix);

    for (std::size_t t = 0; t < T; ++t) {
        DecodeStep s;
        s.t = t;
        s.token = lesson.tokens[t];
        const Tensor x = row_of(X.value, t);
        s.q = project(lesson, Q, x, "W_Q", "b_Q", t);
        s.k = project(lesson, K, x, "W_K", "b_K", t);
        s.v = project(lesson, V, x, "W_V", "b_V", t);
        if (rope) {  // (1, heads, hs) rows at position t
            Tensor qr(s.q.shape), kr(s.k.shape);
            const bool interleaved = pos.layout == RopeLayout::interleaved;
            rope_rows(s.q.ptr(), qr.ptr(), 1, NH, hs, t, pos.base, interleaved);
            rope_rows(s.k.ptr(), kr.ptr(), 1, KVH, hs, t, pos.base, interleaved);
            s.q = std::move(qr);
            s.k = std::move(kr);
        }
        std::copy_n(s.k.ptr(), row, k_cache.ptr() + t * row);
        std::copy_n(s.v.ptr(), row, v_cache.ptr() + t * row);
        s.dev_k = std::max(max_abs_diff(s.k.ptr(), Kcached.value.ptr() + t * row, row),
                           max_abs_diff(s.v.ptr(), V.value.ptr() + t * row, row));

        step_lesson.tokens.assign(lesson.tokens.begin(), lesson.tokens.begin() + long(t + 1));
        step_lesson.query_tokens = {lesson.tokens[t]};
        Tensor q3(Shape{1, NH, hs}), kc(Shape{t + 1, KVH, hs}), vc(Shape{t + 1, KVH, hs});
        std::copy_n(s.q.ptr(), q3.size(), q3.ptr());
        std::copy_n(k_cache.ptr(), kc.size(), kc.ptr());
        std::copy_n(v_cache.ptr(), vc.size(), vc.ptr());
        step_lesson.given = {{q_in, std::move(q3)}, {k_in, std::move(kc)}, {kV, std::move(vc)}};
        const Trace one = run_lesson(step_lesson);
        for (const char* name : {kScores, kPattern, kZ}) {
            const Step* st = one.find(name);
            if (!st || st->source == StepSource::not_computable)
                throw std::logic_error(fmt::format("attntrace: decode step {} left {} not computable", t, name));
        }

        // (NH, 1, t+1) -> (NH, t+1); (1, NH, hs) -> (NH, hs)
        const Tensor& scores = one.find(kScores)->value;
        const Tensor& pattern = one.find(kPattern)->value;
        s.scores = Tensor(Shape{NH, t + 1});
        std::copy_n(scores.ptr(), s.scores.size(), s.scores.ptr());
        s.pattern = Tensor(Shape{NH, t + 1});
        std::copy_n(pattern.ptr(), s.pattern.size(), s.pattern.ptr());
        s.z = row_of(one.find(kZ)->value, 0);

        // Against row t of the causal run: A (NH, T, T), Z (T, NH, hs).
        for (std::size_t h = 0; h < NH; ++h) {
            const float* full_row = A.ptr() + (h * T + t) * T;
            s.dev_pattern = std::max(s.dev_pattern, max_abs_diff(s.pattern.ptr() + h * (t + 1), full_row, t + 1));
            for (std::size_t j = t + 1; j < T; ++j) s.future_weight = std::max(s.future_weight, double(full_row[j]));
        }
        s.dev_z = max_abs_diff(s.z.ptr(), Z.ptr() + t * NH * hs, NH * hs);
        report.max_dev = std::max({report.max_dev, s.dev_k, s.dev_pattern, s.dev_z});
        report.steps.push_back(std::move(s));
    }
    report.cache_floats = 2 * T * row;
    return report;
}

}  // namespace attntrace

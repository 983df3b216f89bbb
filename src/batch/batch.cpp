// Batches as B one-sequence runs, stacked (see batch.hpp).
#include "batch/batch.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <omp.h>

#include "core/error.hpp"
#include "core/memory.hpp"
#include "lesson/batch_reader.hpp"
#include "pipeline/run.hpp"

namespace attntrace {

namespace {

bool token_axis(const std::string& axis) { return axis == "pos" || axis == "query" || axis == "key"; }

// (rows...) padded: the first `len` rows of `x` (len, C), then `pad` (C) up to T rows.
Tensor pad_rows(const Tensor& x, const Tensor& pad, std::size_t T) {
    const std::size_t C = pad.size();
    Tensor out(Shape{T, C});
    std::copy(x.data.begin(), x.data.end(), out.data.begin());
    for (std::size_t r = x.shape.empty() ? 0 : x.shape[0]; r < T; ++r)
        std::copy(pad.data.begin(), pad.data.end(), out.data.begin() + static_cast<std::ptrdiff_t>(r * C));
    return out;
}

// Under the summary policy the sequences keep their steps in full: the summary
// is of the stacked step (its min, max and row sums over the whole batch).
TracePolicy sequence_policy(const TracePolicy& p) {
    if (p.kind != TracePolicy::Kind::summary) return p;
    return TracePolicy{};
}

}  // namespace

Lesson sequence_lesson(const Lesson& batched, std::size_t b) {
    const Batch& batch = *batched.batch;
    const BatchSequence& seq = batch.sequences.at(b);
    const std::size_t T = batched.tokens.size(), L = seq.tokens.size();
    Lesson one;
    one.file = batched.file;
    one.id = fmt::format("{}.b{}", batched.id, b);
    one.title = batched.title;
    one.description = batched.description;
    one.source = batched.source;
    one.config = batched.config;
    one.set_range(batched.from, batched.to);
    one.inputs = batched.inputs;  // embedding, positions: shared by every sequence
    one.weights = batched.weights;
    one.document_rounding = batched.document_rounding;
    one.tokens = seq.tokens;
    one.tokens.resize(T, batch.pad_token);
    if (!seq.token_ids.empty()) {
        one.token_ids = seq.token_ids;
        one.token_ids.resize(T, batch.pad_id);
    } else {
        one.inputs["X"] = pad_rows(seq.X, batch.pad_x, T);
    }
    // The key padding mask of this sequence; "causal" in config.mask adds j <= p.
    one.config.mask = MaskKind::padding;
    one.config.mask_spec = MaskSpec{};
    one.config.mask_spec.causal = batched.config.mask == MaskKind::causal;
    for (std::size_t p = L; p < T; ++p) one.config.mask_spec.pad.push_back(p);
    return one;
}

Trace stack_traces(const std::vector<Trace>& traces, const std::vector<std::vector<std::string>>& tokens) {
    if (traces.empty()) throw std::logic_error("attntrace: stack_traces of no trace");
    const std::size_t B = traces.size();
    const Trace& first = traces.front();
    Trace out;
    out.policy = first.policy;
    out.streamed_attention = first.streamed_attention;
    out.sequence_tokens = tokens;
    const std::vector<std::string> labels_of_batch = batch_labels(B);
    for (std::size_t k = 0; k < first.steps.size(); ++k) {
        const Step& s0 = first.steps[k];
        for (const Trace& t : traces)  // the same lesson but for its inputs and mask: the same steps
            if (t.steps.size() != first.steps.size() || t.steps[k].name != s0.name || t.steps[k].shape != s0.shape ||
                t.steps[k].recorded != s0.recorded)
                throw std::logic_error("attntrace: the sequences of a batch recorded different steps");
        Step& s = out.steps.emplace_back();
        s.name = s0.name;
        s.def = s0.def;
        s.shape = s0.shape;
        s.shape.insert(s.shape.begin(), B);
        s.axes = s0.axes;
        s.axes.insert(s.axes.begin(), std::string(axis_name(Axis::batch)));
        s.labels = s0.labels;
        for (std::size_t a = 0; a < s0.axes.size() && a < s.labels.size(); ++a)
            if (token_axis(s0.axes[a])) s.labels[a] = batch_position_labels(s0.shape[a]);
        s.labels.insert(s.labels.begin(), labels_of_batch);
        s.inputs = s0.inputs;
        s.rounded_to = s0.rounded_to;
        s.recorded = s0.recorded;
        s.source = s0.source;
        s.note = s0.note;
        for (std::size_t b = 0; b < B; ++b) {
            const Step& sb = traces[b].steps[k];
            if (sb.source == StepSource::not_computable && s.source != StepSource::not_computable) {
                s.source = StepSource::not_computable;
                s.note = fmt::format("b{}: {}", b, sb.note);
            }
        }
        if (s.recorded != Record::full || s.source == StepSource::not_computable) continue;
        // Row-major: sequence b's values are the b-th contiguous block.
        Tensor& stacked = s.buffer() = Tensor::uninitialized(s.shape);
        const std::size_t n = numel(s0.shape);
        for (std::size_t b = 0; b < B; ++b) {
            const Tensor& v = traces[b].steps[k].held();  // materialised (stack_batch): a buffer, derived or not
            std::copy(v.data.begin(), v.data.end(), stacked.data.begin() + static_cast<std::ptrdiff_t>(b * n));
        }
    }
    for (std::size_t b = 0; b < B; ++b) {
        for (const auto& w : traces[b].warnings) out.warnings.push_back(fmt::format("sequence b{}: {}", b, w));
        for (int i = 0; i < kStageCount; ++i) out.stage_seconds[i] += traces[b].stage_seconds[i];
    }
    return out;
}

Trace run_batch(const Lesson& batched, Arithmetic mode, const TracePolicy& policy, const ProgressFn& progress) {
    const std::size_t B = batched.batch->sequences.size();
    const int threads = omp_get_max_threads();
    const TracePolicy seq_policy = sequence_policy(policy);
    std::vector<Trace> traces;
    std::vector<std::vector<std::string>> tokens;
    for (std::size_t b = 0; b < B; ++b) {
        const Lesson one = sequence_lesson(batched, b);
        const Plan plan = make_plan(one, seq_policy, mode, threads);
        if (b == 0) {
            require_memory(plan, one, mode, threads, max_memory_bytes());
            // All B traces are held, then stacked into a copy: twice B sequences' steps.
            const std::size_t budget = max_memory_bytes();
            const std::size_t kept = plan.kept_bytes;
            if (kept > 0 && (2 * B > (budget - std::min(budget, plan.peak_bytes)) / kept))
                fail_field(batched.file, "batch",
                           fmt::format("a batch that fits in {} (--max-memory, $ATTNTRACE_MAX_MEMORY)", human_bytes(budget)),
                           fmt::format("{} sequences of {} tokens whose traces need about {} each", B,
                                       batched.tokens.size(), human_bytes(kept)));
        }
        ProgressFn inner;
        if (progress) {
            const std::string task = fmt::format("sequence b{} of {}: {} run", b, B, mode == Arithmetic::exact ? "exact" : "document");
            inner = [&progress, task](const Progress& p) { progress({task, p.item, p.done, p.total}); };
        }
        traces.push_back(run_planned(one, mode, plan, inner));
        tokens.push_back(one.tokens);
    }
    for (Trace& t : traces) materialise(t);  // stacked as buffers: each sequence's mask differs
    Trace out = stack_traces(traces, tokens);
    out.policy = policy;
    if (policy.kind == TracePolicy::Kind::summary)
        for (Step& s : out.steps) {
            if (s.recorded != Record::full || s.source == StepSource::not_computable) continue;
            s.summary = summarize(s.held());
            s.recorded = Record::summary;
            s.buffer() = Tensor();
        }
    return out;
}

Trace unstack_trace(const Trace& batched, std::size_t b) {
    Trace out;
    out.policy = batched.policy;
    out.streamed_attention = batched.streamed_attention;
    out.warnings = batched.warnings;
    for (const Step& s : batched.steps) {
        if (s.axes.empty() || s.axes.front() != axis_name(Axis::batch) || b >= s.shape.front())
            throw std::logic_error("attntrace: unstack_trace of a step without a batch axis");
        Step& o = out.steps.emplace_back();
        o.name = s.name;
        o.def = s.def;
        o.shape.assign(s.shape.begin() + 1, s.shape.end());
        o.axes.assign(s.axes.begin() + 1, s.axes.end());
        if (!s.labels.empty()) o.labels.assign(s.labels.begin() + 1, s.labels.end());
        if (b < batched.sequence_tokens.size())
            for (std::size_t a = 0; a < o.axes.size() && a < o.labels.size(); ++a)
                if (token_axis(o.axes[a]) && batched.sequence_tokens[b].size() == o.shape[a])
                    o.labels[a] = batched.sequence_tokens[b];
        o.source = s.source;
        o.inputs = s.inputs;
        o.note = s.note;
        o.rounded_to = s.rounded_to;
        o.recorded = s.recorded;
        if (s.recorded == Record::summary) {
            o.summary = s.summary;  // of the whole batch: a summary cannot be sliced
            continue;
        }
        const std::size_t n = numel(o.shape);
        auto slice = [&](const Tensor& t) {
            Tensor r = Tensor::uninitialized(o.shape);
            if (t.size() == n * s.shape.front())
                std::copy(t.data.begin() + static_cast<std::ptrdiff_t>(b * n),
                          t.data.begin() + static_cast<std::ptrdiff_t>((b + 1) * n), r.data.begin());
            return r;
        };
        if (s.holds_values()) o.buffer() = slice(s.held());
        if (s.formula) o.formula = slice(*s.formula);
    }
    return out;
}

std::optional<SequenceCell> sequence_cell(const Lesson& lesson, const Trace& trace, const Step& step,
                                          const std::vector<std::size_t>& at) {
    if (!lesson.batch || trace.sequence_tokens.empty() || step.axes.empty() || step.axes.front() != "batch")
        return std::nullopt;
    const std::size_t b = at.at(0);
    return SequenceCell{b, sequence_lesson(lesson, b), unstack_trace(trace, b),
                        std::vector<std::size_t>(at.begin() + 1, at.end())};
}

}  // namespace attntrace

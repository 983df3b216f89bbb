#include "decode/decode.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <omp.h>

#include "core/memory.hpp"
#include "kernels/crew.hpp"
#include "pipeline/plan.hpp"
#include "pipeline/run.hpp"

namespace attntrace {

namespace {

// Steps of the attention core a lesson may not give for the decode to be the
// formula's: from there on the run carries the article's numbers.
constexpr Leaf kCore[] = {Leaf::scores_raw, Leaf::scores_scaled, Leaf::mask, Leaf::scores_masked, Leaf::attn_scores,
                          Leaf::exp, Leaf::pattern};

// Why the decode does not apply, or "" when it does.
std::string not_applicable(const Lesson& lesson, const Trace& full) {
    if (lesson.config.mask != MaskKind::causal) return "the lesson's mask is not causal";
    if (lesson.batch) return "the lesson is a batch (decode follows one sequence)";
    if (lesson.config.mask_at == MaskAt::weights)
        return "the mask zeroes the weights after a softmax over every key (config.mask_at \"weights\"): "
               "a KV cache holds no future keys to normalise over";
    if (!lesson.query_tokens.empty()) return "the queries are not the tokens (query_tokens)";
    if (lesson.from > Stage::qkv || lesson.to < Stage::mix) return "the run does not go from qkv (or embed) to mix";
    for (const auto& [name, given] : lesson.given)
        if (const StepDef* def = lesson.catalogue().find(name))
            for (Leaf core : kCore)
                if (def->leaf == core)
                    return given.by.empty()
                               ? fmt::format("the lesson gives {}: the article's numbers, not attention's", name)
                               : fmt::format("{} changes {}: cells of attention's own scores or weights, which may "
                                             "reach keys a KV cache does not hold yet",
                                             given.by, name);
    const Catalogue& cat = lesson.catalogue();
    const std::string& x_name = cat.step(Leaf::resid_pre).name;
    const Step* x = full.find(x_name);
    if (!x || x->source == StepSource::not_computable) return x_name + " is not computable";
    for (const Step& s : full.steps)
        if (s.recorded != Record::full) return fmt::format("the trace policy did not keep {} in full", s.name);
    for (Leaf leaf : {Leaf::q, Leaf::k, Leaf::v, Leaf::pattern, Leaf::z}) {
        const std::string& name = cat.step(leaf).name;
        const Step* s = full.find(name);
        if (!s || s->source == StepSource::not_computable) return name + " is not computable";
    }
    return "";
}

}  // namespace

HeldWeights::HeldWeights(const Lesson& lesson, std::size_t beside) {
    WeightSource* w = lesson.weight_source.get();
    if (!w || w->holds_all()) return;  // none, or an outer decode holds them already
    const std::size_t all = w->total_bytes(), one_block = w->largest_group_bytes();
    const std::size_t need = beside + (all > one_block ? all - one_block : 0);  // the plan counts one block already
    if (need < beside || need > max_memory_bytes()) return;
    w->hold_all(true);
    source_ = w;
    // A tied unembedding reads W_E (V, C) transposed; held as W_Eᵀ (C, V) too when there is room, its
    // product is a row by a matrix read in order (gemv's x·W, ~2x the rate of x·Wᵀ: docs/performance.md,
    // Decode), with the same sums.
    const auto e = lesson.inputs.find("embedding");
    if (!lesson.config.unembed_tied || e == lesson.inputs.end()) return;
    const std::size_t transposed_bytes = e->second.size() * sizeof(float);
    if (need + transposed_bytes < need || need + transposed_bytes > max_memory_bytes()) return;
    w->put(kTiedUnembeddingTransposed, transposed(e->second));
}

HeldWeights::~HeldWeights() {
    if (source_) source_->hold_all(false);
}

bool DecodeReport::matches() const {
    if (!applicable) return false;
    return std::all_of(steps.begin(), steps.end(), [](const DecodeStep& s) {
        return s.dev_k <= kDecodeTol && s.dev_pattern <= kDecodeTol && s.dev_z <= kDecodeTol &&
               s.dev_rows <= kDecodeTol && s.future_weight == 0;
    });
}

namespace {

// max |a - b| over the cells, in units of the step's scale max(1, max |b|)
// (kDecodeTol's reason, decode.hpp): absolute for values up to 1, relative beyond.
double scaled_diff(const Tensor& a, const Tensor& b) {
    double m = 0, scale = 1;
    for (std::size_t i = 0; i < a.size(); ++i) {
        m = std::max(m, std::fabs(double(a.data[i]) - double(b.data[i])));
        if (std::isfinite(b.data[i])) scale = std::max(scale, std::fabs(double(b.data[i])));
    }
    return m / scale;
}

// Whether a step has values to compare: a buffer, or (the whole run's) a derivation.
bool computed(const Step* s) { return s && s->source != StepSource::not_computable && (s->holds_values() || is_derived(*s)); }

// The cells of the whole run's step f that token t's window step w covers
// (window_slice). A derived step (head, query, key) is computed for those
// rows alone, from its sources (derive_rows, as values_of computes it whole):
// NH rows of T per token, not the (NH, T, T) step.
Tensor covered(const Trace& full, const Step& f, const Step& w, std::size_t t) {
    if (!is_derived(f)) return window_slice(f.held(), w.shape, w.axes, t);
    const std::size_t NH = f.shape.at(0), Tq = f.shape.at(1), T = f.shape.at(2), keys = w.shape.at(2);
    const StepFinder find = [&full](const std::string& name) { return full.find(name); };
    Tensor out = Tensor::uninitialized(w.shape);
    std::vector<float> row(T);
    for (std::size_t h = 0; h < NH; ++h) {
        derive_rows(*f.derivation, find, row.data(), h * Tq + t, 1, T);
        std::copy_n(row.data(), keys, out.ptr() + h * keys);
    }
    return out;
}

// A (1, a, b) window step as (a, b).
Tensor drop_row_axis(const Tensor& t) {
    Tensor out = t;
    out.shape.erase(out.shape.begin());
    return out;
}

// Holds every step of token t's window to the same cells of the causal run:
// keys and values (dev_k), weights (dev_pattern, and the run's weights past t
// must be 0), Z (dev_z), and every row of the stream and of the steps computed
// from it, the attention's internals included (dev_rows).
void compare(const Trace& window, const Trace& full, std::size_t t, DecodeStep& s) {
    for (const Step& w : window.steps) {
        const Step* fs = full.find(w.name);
        if (!w.holds_values() || !computed(fs)) continue;
        const Leaf leaf = w.def->leaf;
        const std::string& first = w.axes.front();
        const double dev = scaled_diff(w.held(), covered(full, *fs, w, t));
        if (first == axis_name(Axis::key)) {
            s.dev_k = std::max(s.dev_k, dev);
        } else if (leaf == Leaf::pattern) {
            s.dev_pattern = std::max(s.dev_pattern, dev);
            const Tensor& f = fs->held();  // the weights: recorded, never derived
            const std::size_t NH = f.shape[0], Tq = f.shape[1], keys = f.shape[2];
            for (std::size_t h = 0; h < NH; ++h)
                for (std::size_t j = w.shape[2]; j < keys; ++j)
                    s.future_weight = std::max(s.future_weight, double(f.data[(h * Tq + t) * keys + j]));
        } else if (leaf == Leaf::z) {
            s.dev_z = std::max(s.dev_z, dev);
        } else if (first == axis_name(Axis::pos) || first == axis_name(Axis::query)) {
            s.dev_rows = std::max(s.dev_rows, dev);
        }
    }
}

// Block 0's self-attention of token t, for display: its query, key and value,
// its scores over the cache, its weights and its z.
void show(const Lesson& lesson, const Trace& window, DecodeStep& s) {
    const bool rope = lesson.config.positions.kind == PositionKind::rope;
    auto value = [&](Leaf leaf) -> const Tensor* {
        const Step* st = window.find(lesson.catalogue().step(leaf).name);
        return st && st->holds_values() ? &st->held() : nullptr;
    };
    const Tensor* q = value(scores_query(rope));
    const Tensor* k = value(scores_key(rope));
    const Tensor* v = value(Leaf::v);
    const Tensor* scores = value(Leaf::attn_scores);
    const Tensor* pattern = value(Leaf::pattern);
    const Tensor* z = value(Leaf::z);
    if (q) s.q = drop_row_axis(*q);
    // The new token's key and value: the last row of K and V.
    auto last_row = [&](const Tensor& kv) {
        const std::size_t row = kv.size() / kv.shape[0];
        Tensor out(Shape{kv.shape[1], kv.shape[2]});
        std::copy_n(kv.ptr() + (kv.shape[0] - 1) * row, row, out.ptr());
        return out;
    };
    if (k) s.k = last_row(*k);
    if (v) s.v = last_row(*v);
    auto plane = [&](const Tensor& a) {  // (NH, 1, keys) -> (NH, keys)
        Tensor out = a;
        out.shape = Shape{a.shape[0], a.shape[2]};
        return out;
    };
    if (scores) s.scores = plane(*scores);
    if (pattern) s.pattern = plane(*pattern);
    if (z) s.z = drop_row_axis(*z);
}

}  // namespace

DecodeStep window_step(const Lesson& lesson, const Trace& window, std::size_t t) {
    DecodeStep s;
    s.t = t;
    s.token = lesson.tokens.at(t);
    show(lesson, window, s);
    return s;
}

DecodeReport decode_lesson(const Lesson& lesson, const Trace& full) {
    DecodeReport report;
    report.why_not = not_applicable(lesson, full);
    if (!report.why_not.empty()) return report;
    report.applicable = true;
    // Every step of every window is kept: each is compared.
    const Plan plan = make_plan(lesson, TracePolicy{}, Arithmetic::exact, omp_get_max_threads());
    const Catalogue& cat = lesson.catalogue();
    const Step& X = *full.find(cat.step(Leaf::resid_pre).name);
    std::size_t full_bytes = 0;  // the whole run's trace, held beside the decode
    for (const Step& s : full.steps)
        if (s.holds_values()) full_bytes += s.held().size() * sizeof(float);
    const HeldWeights weights(lesson, plan.peak_bytes + full_bytes);
    KeyCache cache;
    // each window is one row against the weights (GEMVs): a crew keeps the threads awake between them
    Crew::run(omp_get_max_threads(), [&] {
    for (std::size_t t = 0; t < lesson.tokens.size(); ++t) {
        DecodeStep s;
        s.t = t;
        s.token = lesson.tokens[t];
        // Token t through every pass, as the run computes the sequence: the same stages over one row.
        Trace window = run_window(lesson, plan, RowWindow{t, 1, &cache},
                                  window_slice(X.held(), Shape{1, X.shape[1]}, X.axes, t));
        materialise(window);  // its derived steps (one query row each) as buffers, for show()
        compare(window, full, t, s);
        show(lesson, window, s);
        report.max_dev = std::max({report.max_dev, s.dev_k, s.dev_pattern, s.dev_z, s.dev_rows});
        report.steps.push_back(std::move(s));
        if (t + 1 == lesson.tokens.size())
            for (const Step& st : window.steps)
                if (computed(&st)) report.through = st.name;
        cache.reclaim(window, cat);  // its keys and values: the cache's rows for the next token
    }
    });
    // What a KV cache holds: per attention, the keys its scores read (rotated with RoPE) and the values.
    const bool rope = lesson.config.positions.kind == PositionKind::rope;
    report.attentions = 0;
    for (const Pass& p : cat.passes()) {
        if (p.stage != Stage::mix) continue;
        ++report.attentions;
        for (Leaf leaf : {scores_key(rope && !p.cross), Leaf::v})
            report.cache_floats += cache.floats(cat.index_of(cat.step(p, leaf)));
    }
    return report;
}

}  // namespace attntrace

#include "pipeline/run.hpp"

#include "core/decimal.hpp"
#include "core/error.hpp"
#include "kernels/kernels.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>

namespace attntrace {

std::size_t KeyCache::rows(std::size_t step) const {
    auto it = steps_.find(step);
    return it == steps_.end() ? 0 : it->second.rows;
}

std::size_t KeyCache::floats(std::size_t step) const {
    auto it = steps_.find(step);
    return it == steps_.end() ? 0 : it->second.data.size();
}

Tensor KeyCache::lend(std::size_t step, const Shape& shape) {
    Rows& r = steps_[step];
    if (r.lent) throw std::logic_error("attntrace: KeyCache: a key-axis step's rows were lent twice (reclaim the window)");
    if (!shape.empty() && shape[0] < r.rows) throw std::logic_error("attntrace: KeyCache: fewer rows lent than cached");
    Tensor t = std::move(r.data);
    const std::size_t n = numel(shape);
    // past the capacity, at least twice it: the rows are copied only when it doubles, amortised O(1) a token
    if (n > t.data.capacity()) t.data.reserve(std::max(n, 2 * t.data.capacity()));
    t.data.resize(n);  // the new rows uninitialised: the stage writes them
    t.shape = shape;
    r.lent = true;
    return t;
}

void KeyCache::reclaim(Trace& window, const Catalogue& catalogue) {
    for (Step& s : window.steps) {
        if (!s.def || s.def->axes.front() != Axis::key) continue;
        auto it = steps_.find(catalogue.index_of(*s.def));
        if (it == steps_.end() || !it->second.lent) continue;  // not lent: not computable in this window
        Rows& r = it->second;
        r.lent = false;
        if (s.source == StepSource::not_computable || !s.holds_values()) {
            r = Rows{};  // nothing computed: the cache starts again from this step's next window
            continue;
        }
        r.data = std::move(s.buffer());
        r.rows = s.shape.at(0);
        s.buffer() = Tensor{};
    }
}

Tensor window_slice(const Tensor& full, const Shape& shape, const std::vector<std::string>& axes, std::size_t pos0) {
    if (full.shape.size() != shape.size() || axes.size() != shape.size())
        throw std::logic_error("attntrace: window_slice: ranks differ");
    std::vector<std::size_t> from(shape.size(), 0);
    for (std::size_t a = 0; a < shape.size(); ++a) {
        if (axes[a] == axis_name(Axis::pos) || axes[a] == axis_name(Axis::query)) from[a] = pos0;
        if (from[a] + shape[a] > full.shape[a]) throw std::logic_error("attntrace: window_slice: out of range");
    }
    Tensor out = Tensor::uninitialized(shape);
    // The trailing axes taken whole are contiguous in both: copied a run of `inner` floats at a time
    // (a decode's row of the logits, 50257 floats, was a walk of one float at a time).
    std::size_t whole = shape.size(), inner = 1;
    while (whole > 0 && from[whole - 1] == 0 && shape[whole - 1] == full.shape[whole - 1]) inner *= shape[--whole];
    // Row-major walk over the other axes of `shape`, reading full at (index + from).
    std::vector<std::size_t> idx(whole, 0);
    for (std::size_t flat = 0; flat < out.size(); flat += inner) {
        std::size_t off = 0;
        for (std::size_t a = 0; a < whole; ++a) off = off * full.shape[a] + idx[a] + from[a];
        std::copy_n(full.data.data() + off * inner, inner, out.data.data() + flat);
        for (std::size_t a = whole; a-- > 0;) {
            if (++idx[a] < shape[a]) break;
            idx[a] = 0;
        }
    }
    return out;
}

Run::Run(const Lesson& lesson, Arithmetic mode, const Plan& plan, RowWindow window)
    : lesson_(lesson), mode_(mode), plan_(plan), window_(window), catalogue_(lesson.catalogue()),
      pass_(&catalogue_.passes().front()), cross_config_(cross_attention_config(lesson.config)),
      dims_(dims_of(*pass_)), pool_(plan.step_peak_bytes) {
    trace_.policy = plan.policy;
    trace_.streamed_attention = plan.stream_attention;
    by_index_.assign(catalogue_.steps().size(), nullptr);
    if (!window_.cache) record_given_inputs();
}

Dims Run::dims_of(const Pass& p) const {
    Dims d = lesson_.dims_of(p);
    if (window_.cache) {
        d.P = d.Tq = window_.rows;
        if (!p.cross) d.T = window_.pos0 + window_.rows;  // the cache's keys and the new ones
    }
    return d;
}

void Run::begin_pass(int index) {
    pass_ = &catalogue_.passes()[static_cast<std::size_t>(index)];
    dims_ = dims_of(*pass_);
    // Outside the blocks (the embeddings, the unembedding) the steps have other sizes than the blocks' kept ones.
    if (pass_->block < 0) pool_.clear();
    // A checkpoint's weights: this pass's block converted as asked, the block before released.
    if (lesson_.weight_source) {
        if (pass_->block < 0) lesson_.weight_source->release_blocks();  // the embeddings, or after the last block
        else lesson_.weight_source->keep_group(pass_->weights);
    }
}

std::size_t Run::cached_rows(const std::string& name) const {
    if (!window_.cache) return 0;
    const StepDef* def = catalogue_.find(name);
    return def ? window_.cache->rows(catalogue_.index_of(*def)) : 0;
}

void Run::seed(const std::string& name, Tensor value, std::string note) {
    const StepDef* def = catalogue_.find(name);
    if (!def) throw std::logic_error(fmt::format("attntrace: step {} is not in the catalogue", name));
    Step& s = add_step(*def);
    if (s.shape != value.shape) throw std::logic_error(fmt::format("attntrace: seed {} has the wrong shape", name));
    s.source = StepSource::given;
    s.buffer() = std::move(value);
    s.note = std::move(note);
}

Tensor Run::given_value(const Step& s, const Tensor& given) const {
    if (!window_.cache) return given;
    return window_slice(given, s.shape, s.axes, window_.pos0);
}

Step& Run::add_step(const StepDef& def) {
    Step*& slot = by_index_[catalogue_.index_of(def)];
    if (slot) throw std::logic_error("attntrace: step " + def.name + " was recorded twice");
    Step& s = steps_.emplace_back();
    slot = &s;
    s.name = def.name;
    s.def = &def;
    s.recorded = plan_.record_of(def);
    const Dims d = dims_of(catalogue_.pass_of(def));
    s.shape = step_shape(def, d);
    // A decode step's trace is compared, never shown: its axes go unlabelled
    // (labelling d_model and d_ff for every step of every token cost more than its arithmetic).
    for (Axis a : def.axes) {
        s.axes.emplace_back(axis_name(a));
        s.labels.push_back(window_.cache ? std::vector<std::string>{} : lesson_.axis_labels(a, d, def.cross));
    }
    return s;
}

// Given steps of stages before run.from are the run's inputs: recorded first,
// in pipeline order.
void Run::record_given_inputs() {
    for (const StepDef& def : catalogue_.steps()) {
        if (def.pass >= lesson_.first_pass) break;
        auto it = lesson_.given.find(def.name);
        if (it == lesson_.given.end()) continue;
        Step& s = add_step(def);
        // No formula runs before run.from: the values are taken whole (an
        // intervention's hold the original run's values in the cells it leaves).
        s.source = StepSource::given;
        s.buffer() = it->second.values;
        s.note = it->second.by.empty() ? "given by the lesson: the run starts after the stage that computes it"
                                       : "set by " + it->second.by + ": the run starts after the stage that computes it";
        if (auto r = lesson_.document_rounding.find(def.name);
            mode_ == Arithmetic::document && r != lesson_.document_rounding.end()) {
            for (float& x : s.buffer().data) x = round_decimals(x, r->second);
            s.rounded_to = r->second;
        }
        check_finite(s);
        if (s.recorded == Record::summary) s.summary = summarize(s.held());
    }
}

bool Run::intervenes(std::initializer_list<std::string> steps) const {
    for (const auto& name : steps)
        if (intervened(lesson_, mode_, name)) return true;
    return false;
}

Step* Run::recorded(const std::string& name) {
    const StepDef* def = catalogue_.find(name);
    return def ? by_index_[catalogue_.index_of(*def)] : nullptr;
}

const Tensor* Run::value(const std::string& name) const {
    const StepDef* def = catalogue_.find(name);
    const Step* s = def ? by_index_[catalogue_.index_of(*def)] : nullptr;
    if (!s || s->source == StepSource::not_computable) return nullptr;
    return &s->held();  // refuses a derived step without a buffer, or one a later pass fills
}

const StoredMatrix* Run::matrix(const std::string& name) {
    const std::string w = wname(name);
    if (!lesson_.weights.count(w) && lesson_.weight_source)
        if (const StoredMatrix* m = lesson_.weight_source->stored(w)) return m;
    const Tensor* t = lesson_.weight(w);
    if (!t) return nullptr;
    StoredMatrix& m = matrices_[w];
    m = StoredMatrix{t->ptr(), StoredType::f32, t->shape.back(), false};  // W: (K, N) row-major
    return &m;
}

void Run::require_finite(const std::string& name, bool finite) const {
    if (finite) return;
    const std::string w = wname(name);
    // the lesson's own float32 weight (or a converted one): its product's values not finite are the run's to report
    if (lesson_.weights.count(w) || !lesson_.weight_source || !lesson_.weight_source->provides(w)) return;
    lesson_.weight_source->refuse_if_not_finite(w);
}

float* Run::open(const std::string& name, std::initializer_list<Need> needs, std::initializer_list<Need> optional) {
    const StepDef* def = catalogue_.find(name);
    if (!def) throw std::logic_error(fmt::format("attntrace: step {} is not in the catalogue", name));
    Step& s = add_step(*def);
    open_.push_back(&s);
    std::string missing;
    for (const auto& [input, ptr] : needs) {
        s.inputs.push_back(input);
        if (!ptr && missing.empty()) missing = input;
    }
    for (const auto& [input, ptr] : optional)
        if (ptr) s.inputs.push_back(input);
    if (!missing.empty()) {
        s.source = StepSource::not_computable;
        bool is_weight = missing.rfind("weights.", 0) == 0;
        s.note = is_weight ? fmt::format("needs {}, which the lesson does not give", missing)
                           : fmt::format("needs {}, which is not available", missing);
        return nullptr;
    }
    // The stage writes every element; a decode's key-axis step: the new rows, after the cache's in place.
    Tensor& buffer = s.buffer() = window_.cache && def->axes.front() == Axis::key
                                      ? window_.cache->lend(catalogue_.index_of(*def), s.shape)
                                      : pool_.take(s.shape);
    return buffer.ptr();
}

bool Run::computable(const std::string& name) const {
    const StepDef* def = catalogue_.find(name);
    const Step* s = def ? by_index_[catalogue_.index_of(*def)] : nullptr;
    return s && s->source != StepSource::not_computable;
}

StepFinder Run::finder() const {
    return [this](const std::string& name) -> const Step* {
        const StepDef* def = catalogue_.find(name);
        return def ? by_index_[catalogue_.index_of(*def)] : nullptr;
    };
}

Derivation Run::derivation_of(const std::string& name) const {
    const Step* s = finder()(name);
    if (s && s->derivation) return *s->derivation;
    return Derivation{name, {}};
}

void Run::derive(const std::string& name, const std::string& from, DerivedOp op) {
    const StepDef* def = catalogue_.find(name);
    if (!def) throw std::logic_error(fmt::format("attntrace: step {} is not in the catalogue", name));
    Step& s = add_step(*def);
    s.inputs.push_back(from);
    std::string missing = computable(from) ? "" : from;
    for (const std::string& r : op.reads) {
        s.inputs.push_back(r);
        if (missing.empty() && !computable(r)) missing = r;
    }
    if (!missing.empty()) {
        s.source = StepSource::not_computable;
        s.note = fmt::format("needs {}, which is not available", missing);
        return;
    }
    auto d = std::make_shared<Derivation>(derivation_of(from));
    d->ops.push_back(std::move(op));
    s.derivation = std::move(d);
    // A step the plan gives a buffer (a summary; sources not kept) is computed when closed.
    if (!plan_.derived[catalogue_.index_of(*def)]) open_.push_back(&s);
}

void Run::check_derived(const std::string& name) {
    const StepDef* def = catalogue_.find(name);
    Step* s = def ? by_index_[catalogue_.index_of(*def)] : nullptr;
    if (!s || !is_derived(*s)) return;
    Step copy = *s;
    copy.derivation.reset();
    copy.buffer() = derive_values(*s, finder());
    check_finite(copy);
}

void Run::set_formula(const std::string& name, std::string formula, std::string meaning) {
    if (Step* st = recorded(name)) {
        st->formula_text = std::move(formula);
        if (!meaning.empty()) st->meaning_text = std::move(meaning);
    }
}

void Run::close() {
    for (Step* step : open_) close_step(*step);
    open_.clear();
}

void Run::close_step(Step& s) {
    // A derived step with a buffer (derive()): computed now, unless a step it
    // is computed from is still to be filled by a later pass (the fused
    // attention's raw scores): then when that pass fills it (filled()).
    if (s.derivation && !s.holds_values() && s.source != StepSource::not_computable) {
        if (waits_for_sources(s)) {
            s.pending = true;
            waiting_.push_back(&s);
            return;
        }
        s.buffer() = derive_values(s, finder(), pool_.take(s.shape));
    }
    if (auto it = lesson_.given.find(s.name); it != lesson_.given.end()) apply_given(s, it->second);
    if (mode_ == Arithmetic::document && s.source != StepSource::not_computable) {
        if (auto r = lesson_.document_rounding.find(s.name); r != lesson_.document_rounding.end()) {
            for (float& x : s.buffer().data) x = round_decimals(x, r->second);
            s.rounded_to = r->second;
        }
    }
    check_finite(s);
    // A decode step's new keys and values are already in the cache's rows (KeyCache::lend); reclaim keeps them.
    // The values stay until nothing reads them (end_pass); the summary is what the trace keeps.
    if (s.recorded == Record::summary && s.source != StepSource::not_computable) s.summary = summarize(s.held());
}

void Run::apply_given(Step& s, const Given& g) {
    Tensor values = given_value(s, g.values);
    Tensor cells = g.whole() ? Tensor{} : given_value(s, g.cells);
    if (g.only_where_formula_agrees && s.source == StepSource::computed) {
        // The run without the article's mistakes: the cells the formula contradicts keep the formula's values.
        const std::vector<bool> wrong = wrongly_given_cells(values, cells, s.held());
        if (std::find(wrong.begin(), wrong.end(), true) != wrong.end()) {
            if (cells.data.empty()) cells = Tensor(values.shape, 1.0f);
            for (std::size_t i = 0; i < wrong.size(); ++i)
                if (wrong[i]) cells.data[i] = 0;
            if (std::all_of(cells.data.begin(), cells.data.end(), [](float c) { return c == 0; })) return;
        }
    }
    if (s.source == StepSource::computed) s.formula = std::move(s.buffer());
    std::size_t replaced = values.size();
    if (!cells.data.empty()) {
        // Only the marked cells: the others keep the formula's values, computed
        // from this run's inputs (an earlier intervention's effect included).
        if (!s.formula)
            throw InputError(fmt::format("{}: {}: expected a step the run computes for {} to change some of its "
                                         "cells, found one that is not computable ({})",
                                         lesson_.file, s.name, g.by.empty() ? "given" : g.by, s.note));
        const FloatBuffer& formula = s.formula->data;
        replaced = 0;
        for (std::size_t i = 0; i < values.size(); ++i) {
            if (cells.data[i] != 0) ++replaced;
            else values.data[i] = formula[i];
        }
    }
    s.buffer() = std::move(values);
    s.given_cells = std::move(cells);
    s.source = StepSource::given;
    if (!g.by.empty())
        s.note = fmt::format("set by {} ({} of {} cells; {})", g.by, replaced, s.held().size(),
                             s.formula ? "the steps after it read the changed values" : s.note);
    else if (!s.given_cells.data.empty())
        s.note = fmt::format("given by the lesson in part ({} of {} cells; the article's values replace the "
                             "formula's there from here on)", replaced, s.held().size());
    else
        s.note = s.formula ? "given by the lesson (the article's values replace the formula's from here on)"
                           : "given by the lesson; " + s.note;
}

bool Run::waits_for_sources(const Step& s) const {
    const StepFinder find = finder();
    for (const std::string& name : s.derivation->sources())
        if (const Step* src = find(name); src && src->pending) return true;
    return false;
}

void Run::defer(const std::string& name) {
    if (!is_finite_by_construction(name))
        throw std::logic_error("attntrace: step " + name + " is deferred without a bound that makes it finite");
    Step* s = recorded(name);
    if (!s) throw std::logic_error("attntrace: step " + name + " is deferred without being recorded");
    s->pending = true;
}

bool Run::deferred(const std::string& name) const {
    const Step* s = finder()(name);
    return s && s->pending;
}

void Run::filled(const std::string& name) {
    if (Step* s = recorded(name)) s->pending = false;
    // The derived steps that waited for it, computed and closed as close() would have.
    std::vector<Step*> still;
    for (Step* w : waiting_) {
        w->pending = false;
        if (waits_for_sources(*w)) {
            w->pending = true;
            still.push_back(w);
        } else {
            close_step(*w);
        }
    }
    waiting_ = std::move(still);
}

namespace {

// Never a silent NaN: finite inputs can still overflow float32 inside the
// block (X entries of 1e30 square past 3.4e38 in the scores). Such a run is
// refused, naming the step and cell. -inf is a blocked cell only where the
// step may hold one: computed values only from the mask, given values also
// in the scores an article states, and the scores computed from those.
// One pass of the float_bits_max kernel (it runs on every step of every run:
// ~25M floats for BERT-base at n = 512; the loop here before was the
// baseline's 4-lane SSE); the cell is looked for only when there is one.
bool any_not_finite(const float* x, std::size_t n, bool neg_inf_ok) {
    constexpr std::int32_t kInfBits = 0x7f800000;  // +inf; above it with the sign bit cleared: NaN
    const FloatBitsMax m = float_bits_max(x, n);
    return neg_inf_ok ? m.magnitude > kInfBits || m.raw >= kInfBits : m.magnitude >= kInfBits;
}

// "[h,i,j]" for flat index `flat` of a tensor of shape `shape`.
std::string cell_index(const Shape& shape, std::size_t flat) {
    std::vector<std::size_t> idx(shape.size());
    for (std::size_t a = shape.size(); a-- > 0;) {
        idx[a] = flat % shape[a];
        flat /= shape[a];
    }
    return fmt::format("[{}]", fmt::join(idx, ","));
}

void check_tensor(const Step& s, const Tensor& t, bool neg_inf_ok, const std::string& file, const char* what) {
    if (!any_not_finite(t.ptr(), t.size(), neg_inf_ok)) return;
    for (std::size_t i = 0; i < t.size(); ++i) {
        const float x = t.data[i];
        if (std::isnan(x) || (std::isinf(x) && (x > 0 || !neg_inf_ok)))
            fail_file(file, fmt::format("{}{}: expected finite {}, found {} (float32 overflow or an undefined "
                                        "operation upstream)",
                                        s.name, cell_index(t.shape, i), what,
                                        std::isnan(x) ? "NaN" : x > 0 ? "+inf" : "-inf"));
    }
}

bool has_neg_inf(const Tensor& t) {
    for (float x : t.data)
        if (x == -std::numeric_limits<float>::infinity()) return true;
    return false;
}

}  // namespace

void Run::check_finite(const Step& s) {
    if (s.source == StepSource::not_computable) return;
    // a scan of (NH, T, T) weights read ~200 MB at T = 2048 (13 ms of a BERT-base block's 390, one thread).
    // Values rounded as the article printed them are scanned: rounding may carry one past a bound.
    if (s.source == StepSource::computed && s.rounded_to < 0 && finite_by_construction_.count(s.name)) return;
    const NegInf kind = s.def ? s.def->neg_inf : NegInf::never;
    const bool given = s.source == StepSource::given;
    if (given && kind == NegInf::given && has_neg_inf(s.held())) given_blocked_ = true;
    const bool neg_inf_ok = kind == NegInf::masked || (kind == NegInf::given && (given || given_blocked_));
    check_tensor(s, s.held(), neg_inf_ok, lesson_.file, "values");
    // The formula's own values beside a given step: -inf only where computed steps may hold it.
    if (s.formula)
        check_tensor(s, *s.formula, kind == NegInf::masked || (kind == NegInf::given && given_blocked_), lesson_.file,
                     "formula values");
}

void Run::finite_by_bound(const std::string& name, double bound) {
    if (bound <= static_cast<double>(std::numeric_limits<float>::max())) finite_by_construction(name);  // false for NaN
}

void Run::end_pass(int index) {
    for (Step& s : steps_) {
        if (s.recorded == Record::full || !s.holds_values() || !s.def) continue;
        const int last = plan_.last_read[catalogue_.index_of(*s.def)];
        if (last <= index) {
            pool_.give(std::move(s.buffer()));  // kept for a later step of its size, or freed
            if (s.formula) pool_.give(std::move(*s.formula));
            s.formula.reset();
        }
    }
}

bool Run::fuses_attention() const {
    if (!plan_.fuse_attention || !plan_.derive_attention || window_.cache) return false;
    const StepDef& z = catalogue_.step(*pass_, Leaf::z);  // the last step of the attention's mix pass
    return z.pass <= lesson_.last_pass && catalogue_.step(*pass_, Leaf::scores_raw).pass >= lesson_.first_pass;
}


std::optional<Tensor> Run::take_ahead(const std::string& name) {
    auto it = ahead_.find(name);
    if (it == ahead_.end()) return std::nullopt;
    std::optional<Tensor> out(std::move(it->second));
    ahead_.erase(it);
    return out;
}

bool Run::open_with(const std::string& name, std::initializer_list<Need> needs, Tensor values) {
    float* buffer = open(name, needs);
    if (!buffer) return false;
    Step& s = *open_.back();
    if (values.shape != s.shape)
        throw std::logic_error("attntrace: values computed ahead for " + name + " have another shape than the step");
    pool_.give(std::move(s.buffer()));  // the buffer open() took, unused: the values computed ahead are the step's
    s.buffer() = std::move(values);
    return true;
}

Trace Run::finish() {
    for (const Step& s : steps_)
        if (s.pending) throw std::logic_error("attntrace: step " + s.name + " was left unfilled");
    if (!ahead_.empty())
        throw std::logic_error("attntrace: values computed ahead were never recorded: " + ahead_.begin()->first);
    if (lesson_.weight_source) lesson_.weight_source->release_all();
    pool_.clear();
    trace_.steps.clear();
    for (Step& s : steps_)
        if (s.recorded != Record::none) trace_.steps.push_back(std::move(s));
    steps_.clear();
    by_index_.assign(by_index_.size(), nullptr);
    return std::move(trace_);
}

}  // namespace attntrace

#include "trace/derived.hpp"

#include <algorithm>
#include <stdexcept>

#include "trace/trace.hpp"

namespace attntrace {

namespace {

// Rows per chunk when a whole step is derived: a chunk's rows stay in L2
// between the ops (64 rows of 2048 floats: 512 KiB).
constexpr std::size_t kChunkFloats = std::size_t{1} << 17;

const Tensor& held_values(const StepFinder& find, const std::string& name) {
    const Step* s = find(name);
    if (!s || !s->holds_values() || s->source == StepSource::not_computable)
        throw std::logic_error("attntrace: a derived step reads " + name + ", which holds no values here");
    return s->held();
}

// What a derived step's reader starts from before it points at the step.
const Tensor kNoRows;

}  // namespace

std::vector<std::string> Derivation::sources() const {
    std::vector<std::string> out{base};
    for (const DerivedOp& op : ops)
        for (const std::string& r : op.reads)
            if (std::find(out.begin(), out.end(), r) == out.end()) out.push_back(r);
    return out;
}

void derive_rows(const Derivation& d, const StepFinder& find, float* out, std::size_t r0, std::size_t n,
                 std::size_t cols, const float* base_rows) {
    const float* x = base_rows ? base_rows : held_values(find, d.base).ptr() + r0 * cols;
    if (d.ops.empty()) std::copy_n(x, n * cols, out);
    std::vector<const Tensor*> reads;
    for (const DerivedOp& op : d.ops) {  // the first from the base's rows, the others in place
        reads.clear();
        for (const std::string& r : op.reads) reads.push_back(&held_values(find, r));
        op.apply(reads, x, out, r0, n, cols);
        x = out;
    }
}

Tensor derive_values(const Step& s, const StepFinder& find) { return derive_values(s, find, Tensor::uninitialized(s.shape)); }

Tensor derive_values(const Step& s, const StepFinder& find, Tensor out) {
    if (!s.derivation) throw std::logic_error("attntrace: step " + s.name + " is not derived");
    if (out.shape != s.shape) throw std::logic_error("attntrace: step " + s.name + "'s derived values given a buffer of another shape");
    const std::size_t cols = s.shape.empty() ? 1 : s.shape.back();
    const std::size_t rows = cols ? out.size() / cols : 0;
    if (rows == 0) return out;
    for (const std::string& name : s.derivation->sources()) held_values(find, name);  // refused before any thread starts
    const std::size_t chunk = std::max<std::size_t>(1, kChunkFloats / std::max<std::size_t>(cols, 1));
    const std::size_t chunks = (rows + chunk - 1) / chunk;
#pragma omp parallel for schedule(static) if (chunks > 1 && out.size() > kChunkFloats)
    for (std::size_t c = 0; c < chunks; ++c) {
        const std::size_t r0 = c * chunk, n = std::min(chunk, rows - r0);
        derive_rows(*s.derivation, find, out.ptr() + r0 * cols, r0, n, cols);
    }
    return out;
}

bool is_derived(const Step& s) {
    return s.derivation && !s.pending && !s.holds_values() && s.source != StepSource::not_computable &&
           s.recorded == Record::full;
}

StepValues values_of(const Trace& t, const Step& s) {
    if (!is_derived(s)) return StepValues(&s.held());
    return StepValues(derive_values(s, [&t](const std::string& name) { return t.find(name); }));
}

StepRows::StepRows(const Tensor& held)
    : shape_(&held.shape), held_(held.ptr()), size_(held.size()),
      cols_(held.shape.empty() ? 1 : held.shape.back()) {}

StepRows::StepRows(const Trace& t, const Step& s)
    : StepRows(is_derived(s) ? kNoRows : s.held()) {  // held() refuses a step without values, as values_of does
    if (!is_derived(s)) return;
    shape_ = &s.shape;
    held_ = nullptr;
    trace_ = &t;
    step_ = &s;
    size_ = numel(s.shape);
    cols_ = s.shape.empty() ? 1 : s.shape.back();
}

const float* StepRows::span(std::size_t first, std::size_t n) {
    if (held_ || n == 0) return held_ + first;
    const std::size_t cols = std::max<std::size_t>(cols_, 1);
    const std::size_t r0 = first / cols, r1 = (first + n - 1) / cols + 1;
    if (r0 < buffer_r0_ || r1 > buffer_r0_ + buffer_rows_) {
        buffer_.resize((r1 - r0) * cols);
        derive_rows(*step_->derivation, [this](const std::string& name) { return trace_->find(name); }, buffer_.data(),
                    r0, r1 - r0, cols);
        buffer_r0_ = r0;
        buffer_rows_ = r1 - r0;
    }
    return buffer_.data() + (first - buffer_r0_ * cols);
}

std::optional<StepValues> checked_values(const Trace& t, const Step& s) {
    if (is_derived(s)) return values_of(t, s);
    if (const Tensor* v = s.checked_value()) return StepValues(v);
    return std::nullopt;
}

void materialise(Trace& t) {
    for (Step& s : t.steps)
        if (is_derived(s))
            s.buffer() = derive_values(s, [&t](const std::string& name) { return t.find(name); });
}

}  // namespace attntrace

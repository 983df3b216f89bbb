#include "trace/trace.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "kernels/kernels.hpp"  // float_bits_max

namespace attntrace {

const std::string& formula_of(const Step& s) {
    static const std::string kNone;
    if (!s.formula_text.empty()) return s.formula_text;
    return s.def ? s.def->formula : kNone;
}

const std::string& meaning_of(const Step& s) {
    static const std::string kNone;
    if (!s.meaning_text.empty()) return s.meaning_text;
    return s.def ? s.def->explain : kNone;
}

const std::string& title_of(const Step& s) {
    static const std::string kNone;
    if (!s.title_text.empty()) return s.title_text;
    return s.def ? s.def->title : kNone;
}

std::string_view source_name(StepSource s) {
    switch (s) {
        case StepSource::computed: return "computed";
        case StepSource::given: return "given";
        case StepSource::not_computable: return "not-computable";
    }
    return "?";
}

const Tensor* Step::checked_value() const {
    if (recorded != Record::full) return nullptr;  // only a summary is left
    if (formula) return &*formula;
    if (source == StepSource::not_computable) return nullptr;
    return &held();
}

const Tensor& Step::held() const {
    if (pending)
        throw std::logic_error("attntrace: step " + name + " is read before the pass that fills it has run");
    if (derivation && value_.size() == 0 && source != StepSource::not_computable && recorded == Record::full)
        throw std::logic_error("attntrace: step " + name + " is derived and holds no buffer: read it with values_of");
    return value_;
}

bool computes(const Step& s, Leaf leaf) {
    if (s.def) return s.def->leaf == leaf;
    for (const StepTemplate& t : step_templates())
        if (t.leaf == leaf) return s.name == t.name;
    return false;
}

const Step* Trace::find(std::string_view name) const {
    for (const auto& s : steps)
        if (s.name == name) return &s;
    return nullptr;
}

Step* Trace::find(std::string_view name) {
    for (auto& s : steps)
        if (s.name == name) return &s;
    return nullptr;
}

namespace {

// R rows' sums (double, over c ascending), finite cells, -inf cells, and
// least and greatest finite values (the first met of equal ones).
template <std::size_t R>
struct RowsSummary {
    std::array<double, R> sum;
    std::array<float, R> lo, hi;
    std::array<std::size_t, R> count, neg_inf;
};

// R rows of `cols` floats from p, side by side: fixed R, so that the
// accumulators live in registers. AllFinite: the caller has found every value
// of the R rows finite, so no cell is tested or skipped (the same sums, least
// and greatest values as the test would give, in the same order).
template <std::size_t R, bool AllFinite>
void summary_rows(const float* p, std::size_t cols, RowsSummary<R>& b) {
    std::array<double, R> sum{};
    std::array<float, R> lo, hi;
    lo.fill(std::numeric_limits<float>::infinity());
    hi.fill(-std::numeric_limits<float>::infinity());
    std::array<std::size_t, R> count{}, neg_inf{};
    for (std::size_t c = 0; c < cols; ++c)
#pragma GCC unroll 8
        for (std::size_t i = 0; i < R; ++i) {
            const float x = p[i * cols + c];
            if (!AllFinite && !std::isfinite(x)) {
                neg_inf[i] += x < 0;
                continue;
            }
            lo[i] = std::min(lo[i], x), hi[i] = std::max(hi[i], x);
            sum[i] += x;
            if (!AllFinite) ++count[i];
        }
    if (AllFinite) count.fill(cols);
    b = {sum, lo, hi, count, neg_inf};
}

// Whether the n floats at p are all finite: one vector pass of float_bits_max (in cache for summary_rows after it).
bool all_finite(const float* p, std::size_t n) {
    constexpr std::int32_t kInfBits = 0x7f800000;  // +inf; above it with the sign bit cleared: NaN
    return float_bits_max(p, n).magnitude < kInfBits;
}

}  // namespace

StepSummary summarize(const Tensor& t) {
    StepSummary s;
    const std::size_t n = t.size();
    const std::size_t cols = t.shape.empty() ? n : t.shape.back();
    const std::size_t rows = cols ? n / cols : 0;
    Shape row_shape(t.shape.begin(), t.shape.end() - (t.shape.empty() ? 0 : 1));
    if (row_shape.empty()) row_shape = {1};
    s.row_sums = Tensor(row_shape);
    // Each row summed in double over c ascending, skipping the cells that are
    // not finite; kRows rows side by side (summary_rows), so that their
    // chains of additions overlap (one row alone waits on each add's latency:
    // 7% of a Llama-1B-sized forward with --trace summary). Each row's sum,
    // the total over the rows in order, and min and max (the first of equal
    // values, ±0, in row-major order, row by row then across rows) are those
    // of one row at a time. A block of rows all finite (nearly every step's,
    // found by one vector pass) skips the test of each cell: 6% of a
    // Llama-1B-sized forward with --trace summary, one thread, before (`perf record`, 2026-12-08).
    // Such a block goes kFiniteRows rows at a time: its sums, least and greatest
    // values (12 accumulators) stay in the 16 SSE registers (8 rows side by
    // side spilled the least and greatest to the stack, each update a store
    // and a reload).
    constexpr std::size_t kRows = 8, kFiniteRows = 4;
    double lo = std::numeric_limits<double>::infinity(), hi = -lo, total = 0;
    std::size_t finite = 0;
    RowsSummary<kRows> block;
    RowsSummary<kFiniteRows> finite_rows;
    RowsSummary<1> one;
    auto fold = [&](const auto& b, std::size_t r0) {
        for (std::size_t i = 0; i < b.sum.size(); ++i) {
            if (b.count[i]) lo = std::min(lo, double(b.lo[i])), hi = std::max(hi, double(b.hi[i]));
            s.row_sums.data[r0 + i] = static_cast<float>(b.sum[i]);
            total += b.sum[i];
            finite += b.count[i];
            s.neg_inf += b.neg_inf[i];
        }
    };
    std::size_t r0 = 0;
    for (; r0 + kRows <= rows; r0 += kRows) {
        const float* p = t.data.data() + r0 * cols;
        if (all_finite(p, kRows * cols)) {
            for (std::size_t i = 0; i < kRows; i += kFiniteRows) {
                summary_rows<kFiniteRows, true>(p + i * cols, cols, finite_rows);
                fold(finite_rows, r0 + i);
            }
            continue;
        }
        summary_rows<kRows, false>(p, cols, block);
        fold(block, r0);
    }
    for (; r0 < rows; ++r0) {
        summary_rows<1, false>(t.data.data() + r0 * cols, cols, one);
        fold(one, r0);
    }
    if (finite) s.min = lo, s.max = hi, s.mean = total / static_cast<double>(finite);
    // corner: index 0 of the leading axes, the first <= 4 of the last two
    const std::size_t cr = t.shape.size() >= 2 ? std::min<std::size_t>(4, t.shape[t.shape.size() - 2]) : 1;
    const std::size_t cc = std::min<std::size_t>(4, cols);
    s.corner = t.shape.size() >= 2 ? Tensor(Shape{cr, cc}) : Tensor(Shape{cc});
    for (std::size_t r = 0; r < cr; ++r)
        for (std::size_t c = 0; c < cc; ++c) s.corner.data[r * cc + c] = t.data[r * cols + c];
    return s;
}

}  // namespace attntrace

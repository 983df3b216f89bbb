#include "trace/trace.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

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

StepSummary summarize(const Tensor& t) {
    StepSummary s;
    const std::size_t n = t.size();
    const std::size_t cols = t.shape.empty() ? n : t.shape.back();
    const std::size_t rows = cols ? n / cols : 0;
    Shape row_shape(t.shape.begin(), t.shape.end() - (t.shape.empty() ? 0 : 1));
    if (row_shape.empty()) row_shape = {1};
    s.row_sums = Tensor(row_shape);
    double lo = std::numeric_limits<double>::infinity(), hi = -lo, total = 0;
    std::size_t finite = 0;
    for (std::size_t r = 0; r < rows; ++r) {
        double row = 0;  // double, so that a long row's sum does not lose its small terms
        for (std::size_t c = 0; c < cols; ++c) {
            const float x = t.data[r * cols + c];
            if (!std::isfinite(x)) {
                s.neg_inf += x < 0;
                continue;
            }
            lo = std::min(lo, double(x)), hi = std::max(hi, double(x));
            row += x, ++finite;
        }
        s.row_sums.data[r] = static_cast<float>(row);
        total += row;
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

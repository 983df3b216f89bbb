#include "render/report_page.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include <omp.h>

#include "check/output_size.hpp"
#include "export/trace_export.hpp"
#include "trace/catalogue.hpp"

namespace attntrace {

namespace {

// Text per pooled value (4 significant digits, ", ", brackets): measured 6.3 to
// 7.3 bytes on a random lesson of 300 tokens (weights; a mask's 0 and "-inf").
constexpr double kPageTextBytesPerPooledFloat = 7.5;

bool token_axis(const std::string& a) { return a == "pos" || a == "query" || a == "key"; }

// x with `digits` significant digits, as the float nearest that decimal: its
// shortest round-trip text is then the decimal itself (0.001235, not 0.0012345678).
float significant(float x, int digits) {
    if (!std::isfinite(x) || x == 0.0f) return x;
    const double e = std::floor(std::log10(std::fabs(double(x))));
    const double scale = std::pow(10.0, double(digits - 1) - e);
    return static_cast<float>(std::round(double(x) * scale) / scale);
}

// Labels of a pooled axis: "the…cat" for a block of several, the label itself for one.
std::vector<std::string> pooled_labels(const std::vector<std::string>& labels, std::size_t block) {
    std::vector<std::string> out;
    for (std::size_t i = 0; i < labels.size(); i += block) {
        const std::size_t last = std::min(labels.size(), i + block) - 1;
        out.push_back(last == i ? labels[i] : labels[i] + "…" + labels[last]);
    }
    return out;
}

bool ends_with(const std::string& s, std::string_view tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

}  // namespace

Tensor pool(const Tensor& t, const std::vector<std::size_t>& block, PoolOp op) {
    const std::size_t rank = t.shape.size();
    Shape out_shape(rank);
    for (std::size_t k = 0; k < rank; ++k) out_shape[k] = (t.shape[k] + block[k] - 1) / block[k];
    Tensor out(out_shape, op == PoolOp::max ? kNegInf : 0.0f);
    std::vector<double> sum(out.size(), 0.0);     // mean: double, so a block of many small terms keeps them
    std::vector<std::size_t> count(out.size(), 0);
    std::vector<std::size_t> idx(rank, 0);
    for (std::size_t n = 0; n < t.size(); ++n) {
        std::size_t o = 0;  // the pooled cell of t's cell idx, row-major
        for (std::size_t k = 0; k < rank; ++k) o = o * out_shape[k] + idx[k] / block[k];
        const float x = t.data[n];
        if (op == PoolOp::max) out.data[o] = std::max(out.data[o], x);
        else sum[o] += x, ++count[o];
        for (std::size_t k = rank; k-- > 0;) {  // next index, last axis fastest
            if (++idx[k] < t.shape[k]) break;
            idx[k] = 0;
        }
    }
    if (op == PoolOp::mean)
        for (std::size_t o = 0; o < out.size(); ++o) out.data[o] = static_cast<float>(sum[o] / double(count[o]));
    return out;
}

std::vector<std::size_t> page_blocks(const Shape& shape, const std::vector<std::string>& axes, std::size_t side) {
    std::vector<std::size_t> block(shape.size(), 1);
    for (std::size_t k = 0; k < shape.size() && k < axes.size(); ++k)
        if (token_axis(axes[k]) && shape[k] > side) block[k] = (shape[k] + side - 1) / side;
    return block;
}

PageKeep page_keep(const std::string& base, const Shape& shape, const std::vector<std::string>& axes) {
    if (numel(shape) <= kPageStepFloats) return PageKeep::whole;
    const bool map = ends_with(base, "hook_pattern") || ends_with(base, "hook_mask");
    const std::vector<std::size_t> block = page_blocks(shape, axes, kPageSide);
    return map && std::any_of(block.begin(), block.end(), [](std::size_t b) { return b > 1; }) ? PageKeep::pooled
                                                                                                : PageKeep::summary;
}

std::size_t page_floats(PageKeep keep, const Shape& shape, const std::vector<std::string>& axes) {
    const std::size_t n = numel(shape);
    if (keep == PageKeep::whole) return n;
    if (keep == PageKeep::summary) return (shape.empty() || shape.back() == 0 ? 1 : n / shape.back()) + 16;
    const std::vector<std::size_t> block = page_blocks(shape, axes, kPageSide);
    std::size_t pooled = 1;
    for (std::size_t k = 0; k < shape.size(); ++k) pooled *= (shape[k] + block[k] - 1) / block[k];
    return pooled;
}

std::size_t estimate_page_bytes(const Lesson& lesson, Arithmetic mode) {
    const Plan plan = make_plan(lesson, TracePolicy{}, mode, omp_get_max_threads());
    const Catalogue& cat = *plan.catalogue;
    std::size_t all = 0, steps = 0;
    std::vector<std::pair<const StepDef*, Shape>> kept;
    for (const StepDef& def : cat.steps()) {
        if (plan.record_of(def) == Record::none) continue;
        kept.emplace_back(&def, step_shape(def, lesson.dims_of(cat.pass_of(def))));
        all += numel(kept.back().second), ++steps;
    }
    double text = double(all) * kJsonTextBytesPerFloat;
    if (all > kPageFullFloats) {
        text = 0;
        for (const auto& [def, shape] : kept) {
            std::vector<std::string> axes;
            for (Axis a : def->axes) axes.emplace_back(axis_name(a));
            const PageKeep keep = page_keep(def->base, shape, axes);
            text += double(page_floats(keep, shape, axes)) *
                    (keep == PageKeep::pooled ? kPageTextBytesPerPooledFloat : kJsonTextBytesPerFloat);
        }
    }
    std::size_t token_text = 0;  // labels: each step lists the tokens on its token axes (two at most)
    for (const auto& t : lesson.tokens) token_text += t.size() + 4;
    return static_cast<std::size_t>(text) + steps * (kJsonBytesPerStep + 2 * token_text);
}

OrderedJson PageReduction::note() const {
    return {{"reduced", true},
            {"trace_floats", floats},
            {"kept", fmt::format("The trace holds {:.1f} million values: too many for a page that opens in seconds. This "
                                 "page keeps every step's metadata, every value of the steps of up to {} values, {} "
                                 "attention map{} (weights, mask) max-pooled to at most {} cells per token axis ({} "
                                 "significant digits), and the {} other large step{} as a summary (min, max, mean, row "
                                 "sums, a corner). `attntrace export` writes every value.",
                                 double(floats) / 1e6, kPageStepFloats, pooled, pooled == 1 ? "" : "s", kPageSide,
                                 kPageSignificantDigits, summarised, summarised == 1 ? "" : "s")}};
}

std::unique_ptr<Tensor> reduce_page_step(OrderedJson& sj, const std::string& name, const Tensor& value,
                                         const std::vector<std::string>& axes,
                                         const std::vector<std::vector<std::string>>& labels, PageReduction& r) {
    const PageKeep keep = page_keep(name, value.shape, axes);
    if (keep == PageKeep::whole) return nullptr;
    sj.erase("formula_values");
    sj.erase("values");
    if (keep == PageKeep::summary) {
        const StepSummary m = summarize(value);
        sj["summary"] = {{"min", m.min},         {"max", m.max},
                         {"mean", m.mean},       {"neg_inf", m.neg_inf},
                         {"row_sums", tensor_to_json(m.row_sums)}, {"corner", tensor_to_json(m.corner)}};
        ++r.summarised;
        return nullptr;
    }
    // the attention map (or its mask), max-pooled: a block is as dark as its darkest cell
    const std::vector<std::size_t> block = page_blocks(value.shape, axes, kPageSide);
    auto t = std::make_unique<Tensor>(pool(value, block, PoolOp::max));
    for (float& x : t->data) x = significant(x, kPageSignificantDigits);
    OrderedJson pooled_labels_json = OrderedJson::array();
    for (std::size_t k = 0; k < value.shape.size(); ++k)
        pooled_labels_json.push_back(k < labels.size() ? pooled_labels(labels[k], block[k]) : std::vector<std::string>{});
    sj["shape"] = t->shape;
    sj["labels"] = pooled_labels_json;
    sj["pooled"] = {{"op", "max"}, {"from_shape", value.shape}, {"block", block}};
    ++r.pooled;
    return t;
}

OrderedJson page_json(const Lesson& lesson, const Trace& trace, const CheckReport& report,
                      DeferredTensors& deferred, std::vector<std::unique_ptr<Tensor>>& owned) {
    OrderedJson j = trace_to_json(lesson, trace, &report, &deferred);
    PageReduction r;
    for (const Step& s : trace.steps)  // a derived step's values are written too (trace/derived.hpp)
        r.floats += (s.holds_values() || is_derived(s) ? numel(s.shape) : 0) + (s.formula ? s.formula->size() : 0);
    if (r.floats <= kPageFullFloats) return j;
    for (std::size_t i = 0; i < trace.steps.size(); ++i) {
        const Step& s = trace.steps[i];
        OrderedJson& sj = j["steps"][i];
        if (!sj.contains("values") || sj["values"].is_null()) continue;  // summarised or not computable
        const StepValues v = values_of(trace, s);  // a derived step's computed now, freed after
        if (v->size() != numel(s.shape)) continue;
        if (auto t = reduce_page_step(sj, base_name(s), *v, s.axes, s.labels, r)) {
            sj["values"] = deferred_tensor(*t, deferred);
            owned.push_back(std::move(t));
        }
    }
    j["page"] = r.note();
    return j;
}

}  // namespace attntrace

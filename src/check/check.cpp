#include "check/check.hpp"

#include "core/decimal.hpp"
#include "core/error.hpp"
#include "core/json_field.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace attntrace {

namespace {

bool all_agree(const Tensor& computed, const Claim& c) {
    for (std::size_t i = 0; i < c.values.size(); ++i)
        if (!agrees_at_precision(computed.data[i], c.values.data[i], c.decimals)) return false;
    return true;
}

void deviations(ClaimResult& r) {
    const Claim& c = r.claim;
    for (std::size_t i = 0; i < c.values.size(); ++i) {
        float x = r.computed.data[i], p = c.values.data[i];
        double dev = (std::isinf(x) || std::isinf(p)) ? (x == p ? 0.0 : INFINITY)
                                                       : std::fabs(static_cast<double>(x) - p);
        if (!agrees_at_precision(x, p, c.decimals)) ++r.cells_off;
        if (dev > r.max_deviation) r.max_deviation = dev;
    }
}

ClaimResult check_shape(const Claim& c, const Step& step) {
    ClaimResult r;
    r.claim = c;
    std::string ours, theirs;
    bool ok = true;
    for (const auto& [axis, extent] : c.shape) {
        std::size_t k = std::find(step.axes.begin(), step.axes.end(), axis_name(axis)) - step.axes.begin();
        std::size_t have = step.shape[k];
        if (have == 0) {  // d_ff not in the lesson: the extent is unknown
            r.basis = Basis::none;
            r.reason = fmt::format("the lesson does not give the {} extent (config)", axis_name(axis));
            return r;
        }
        ok = ok && have == extent;
        theirs += fmt::format("{}{}={}", theirs.empty() ? "" : ", ", axis_name(axis), extent);
        ours += fmt::format("{}{}={}", ours.empty() ? "" : ", ", axis_name(axis), have);
    }
    r.verdict = ok ? Verdict::agrees : Verdict::disagrees;
    r.basis = Basis::config;
    r.reason = ok ? fmt::format("shape {}", ours) : fmt::format("article: {}; computed: {}", theirs, ours);
    return r;
}

}  // namespace

std::string_view basis_text(Basis b) {
    switch (b) {
        case Basis::formula: return "formula";
        case Basis::given: return "given";
        case Basis::config: return "config";
        case Basis::none: return "none";
    }
    return "none";
}

Tensor select_claimed(const Claim& claim, const Step& step, const Tensor& values, std::optional<std::size_t>* overflow) {
    // Strides of the step's tensor, then walk the free axes in order.
    const std::size_t rank = step.shape.size();
    std::vector<std::size_t> stride(rank, 1);
    for (std::size_t k = rank; k-- > 1;) stride[k - 1] = stride[k] * step.shape[k];
    std::size_t base = 0;
    std::vector<std::size_t> free;
    for (std::size_t k = 0; k < rank; ++k) {
        auto it = std::find_if(claim.at.begin(), claim.at.end(),
                               [&](const auto& p) { return axis_name(p.first) == step.axes[k]; });
        if (it != claim.at.end()) base += it->second * stride[k];
        else free.push_back(k);
    }
    Shape out_shape;
    for (std::size_t k : free) out_shape.push_back(step.shape[k]);
    Tensor region(out_shape);
    std::vector<std::size_t> idx(free.size(), 0);
    for (std::size_t n = 0; n < region.size(); ++n) {
        std::size_t off = base;
        for (std::size_t f = 0; f < free.size(); ++f) off += idx[f] * stride[free[f]];
        region.data[n] = values.data[off];
        for (std::size_t f = free.size(); f-- > 0;) {
            if (++idx[f] < out_shape[f]) break;
            idx[f] = 0;
        }
    }
    if (claim.kind != Claim::Kind::row_sum) return region;
    // Σ over the last free axis, in double so the sum adds no error of its own.
    const std::size_t cols = out_shape.back();
    out_shape.pop_back();
    Tensor sums(out_shape);
    for (std::size_t r = 0; r < sums.size(); ++r) {
        double s = 0.0;
        for (std::size_t j = 0; j < cols; ++j) s += region.data[r * cols + j];
        sums.data[r] = static_cast<float>(s);
        // A finite double that is no float: the row's values are finite, their sum is not (a -inf cell, a
        // masked one, gives a -inf sum in double too, and is not an overflow).
        if (overflow && !*overflow && std::isfinite(s) && !std::isfinite(sums.data[r])) *overflow = r;
    }
    return sums;
}

std::string describe_at(const Claim& claim, const Step& step) {
    std::string out;
    // In the step's axis order, whatever order the lesson wrote them in.
    for (std::size_t k = 0; k < step.axes.size(); ++k)
        for (const auto& [axis, i] : claim.at)
            if (axis_name(axis) == step.axes[k])
                out += fmt::format("{}{} {}", out.empty() ? "" : ", ", step.axes[k],
                                   k < step.labels.size() && i < step.labels[k].size() ? "'" + step.labels[k][i] + "'"
                                                                                        : std::to_string(i));
    if (claim.kind == Claim::Kind::row_sum) out += out.empty() ? "row sums" : ", row sums";
    return out;
}

CheckReport check_claims(const Lesson& lesson, const Trace& exact, const Trace* document) {
    CheckReport report;
    for (std::size_t ci = 0; ci < lesson.claims.size(); ++ci) {
        const Claim& c = lesson.claims[ci];
        // A row sum computed here for the claim overflows as a step would in the run: refused, naming the claim
        // and the step (pipeline/run.cpp refuses a step's own +inf the same way).
        auto claimed = [&](const Step& s, const Tensor& v) {
            std::optional<std::size_t> overflow;
            Tensor t = select_claimed(c, s, v, &overflow);
            if (overflow)
                fail_field(lesson.file, index("claims", ci),
                           fmt::format("row sums of {} within float32 (|x| <= 3.4e38)", s.name),
                           fmt::format("{} for row {} (float32 overflow of finite values)",
                                       t.data[*overflow] > 0 ? "+inf" : "-inf", *overflow));
            return t;
        };
        const Step* step = exact.find(c.step);
        ClaimResult r;
        r.claim = c;
        if (!step) {
            r.reason = "the step is not recorded (see the trace policy)";
        } else if (step->recorded != Record::full && c.kind != Claim::Kind::shape) {
            r.reason = "the trace policy kept only a summary of this step";
        } else if (c.kind == Claim::Kind::shape) {
            r = check_shape(c, *step);
        } else if (const Tensor* v = step->checked_value()) {
            r.basis = step->formula || step->source == StepSource::computed ? Basis::formula : Basis::given;
            r.computed = claimed(*step, *v);
            deviations(r);
            if (all_agree(r.computed, c)) r.verdict = Verdict::agrees;
            else r.verdict = Verdict::disagrees;
            if (document) {
                const Step* ds = document->find(c.step);
                if (const Tensor* dv = ds ? ds->checked_value() : nullptr) {
                    r.document = claimed(*ds, *dv);
                    if (r.verdict == Verdict::disagrees && all_agree(r.document, c))
                        r.verdict = Verdict::agrees_when_rounded;
                }
            }
        } else {
            r.reason = step->note;
        }
        report.results.push_back(std::move(r));
    }
    return report;
}

bool CheckReport::all_as_expected() const {
    return std::all_of(results.begin(), results.end(), [](const auto& r) { return r.as_expected(); });
}

std::size_t CheckReport::count(Verdict v) const {
    return static_cast<std::size_t>(
        std::count_if(results.begin(), results.end(), [&](const auto& r) { return r.verdict == v; }));
}

}  // namespace attntrace

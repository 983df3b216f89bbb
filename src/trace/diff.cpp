#include "trace/diff.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "trace/policy.hpp"

namespace attntrace {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::vector<std::size_t> unflatten(const Shape& shape, std::size_t flat) {
    std::vector<std::size_t> idx(shape.size());
    for (std::size_t k = shape.size(); k-- > 0;) {
        idx[k] = flat % shape[k];
        flat /= shape[k];
    }
    return idx;
}

// |a - b| and |a - b| / max(|a|, |b|), with the -inf and 0/0 rules of DiffCell.
void cell_errors(float a, float b, double& abs, double& rel) {
    if (a == b) {  // both -inf included: a masked cell masked on both sides
        abs = rel = 0;
        return;
    }
    if (!std::isfinite(a) || !std::isfinite(b)) {  // -inf against a number, or a NaN
        abs = rel = kInf;
        return;
    }
    abs = std::fabs(static_cast<double>(a) - static_cast<double>(b));
    rel = abs / std::max(std::fabs(static_cast<double>(a)), std::fabs(static_cast<double>(b)));
}

// Why a step with this record and source has no values to compare, or "".
std::string no_values(const TraceStepData& s, const char* side) {
    if (s.recorded == "summary") return std::string(side) + " holds a summary, no values";
    if (s.values.size() == 0) return std::string(side) + " has no values (not computable)";
    return "";
}

StepDiff diff_step(const TraceStepData& a, const TraceStepData& b, double atol, double rtol) {
    StepDiff d;
    d.name = a.name;
    d.shape_a = a.shape;
    d.shape_b = b.shape;
    std::string why = no_values(a, "A");
    if (why.empty()) why = no_values(b, "B");
    if (!why.empty()) {
        d.verdict = StepVerdict::not_comparable;
        d.note = why;
        return d;
    }
    if (a.shape != b.shape || a.values.size() != b.values.size()) {
        d.verdict = StepVerdict::shape_mismatch;
        return d;
    }
    const std::size_t n = a.values.size();
    std::size_t at_abs = 0, at_rel = 0, at_beyond = n;
    double max_abs = -1, max_rel = -1;
    for (std::size_t k = 0; k < n; ++k) {
        double abs = 0, rel = 0;
        cell_errors(a.values.data[k], b.values.data[k], abs, rel);
        // strict >: the first cell in row-major order wins a tie
        if (abs > max_abs) max_abs = abs, at_abs = k;
        if (rel > max_rel) max_rel = rel, at_rel = k;
        if (cell_diverges(a.values.data[k], b.values.data[k], atol, rtol)) {
            if (d.beyond == 0) at_beyond = k;
            ++d.beyond;
        }
    }
    d.cells = n;
    auto cell = [&](std::size_t k) {
        DiffCell c{unflatten(a.shape, k), a.values.data[k], b.values.data[k], 0, 0};
        cell_errors(c.a, c.b, c.abs, c.rel);
        return c;
    };
    if (n > 0) {
        d.max_abs = cell(at_abs);
        d.max_rel = cell(at_rel);
    }
    if (d.beyond > 0) d.first_beyond = cell(at_beyond);
    d.verdict = d.beyond > 0 ? StepVerdict::diverges : StepVerdict::match;
    return d;
}

}  // namespace

const char* verdict_name(StepVerdict v) {
    switch (v) {
        case StepVerdict::match: return "match";
        case StepVerdict::diverges: return "diverges";
        case StepVerdict::shape_mismatch: return "shape-mismatch";
        case StepVerdict::not_comparable: return "not-comparable";
    }
    return "?";
}

bool cell_diverges(float a, float b, double atol, double rtol) {
    if (a == b) return false;  // both -inf: equal
    if (!std::isfinite(a) || !std::isfinite(b)) return true;  // rtol·|-inf| would let anything pass
    return std::fabs(static_cast<double>(a) - static_cast<double>(b)) > atol + rtol * std::fabs(static_cast<double>(a));
}

std::size_t DiffReport::compared() const {
    std::size_t n = 0;
    for (const auto& s : steps) n += s.verdict != StepVerdict::not_comparable;
    return n;
}

DiffReport diff_traces(const TraceData& a, const TraceData& b, const DiffOptions& options) {
    DiffReport r;
    r.file_a = a.file;
    r.file_b = b.file;
    r.atol = options.atol;
    r.rtol = options.rtol;
    auto wanted = [&](const std::string& name) { return options.steps.empty() || step_matches(name, options.steps); };
    std::map<std::string, const TraceStepData*> in_b;
    for (const auto& s : b.steps)
        if (wanted(s.name)) in_b.emplace(s.name, &s);
    std::set<std::string> in_a;
    for (const auto& s : a.steps) {
        if (!wanted(s.name)) continue;
        in_a.insert(s.name);
        auto it = in_b.find(s.name);
        if (it == in_b.end()) {
            r.only_a.push_back(s.name);
            continue;
        }
        r.steps.push_back(diff_step(s, *it->second, options.atol, options.rtol));
        if (!r.first_divergence && r.steps.back().diverges()) r.first_divergence = r.steps.size() - 1;
    }
    for (const auto& s : b.steps)
        if (wanted(s.name) && !in_a.count(s.name)) r.only_b.push_back(s.name);
    return r;
}

Tensor abs_difference(const TraceStepData& a, const TraceStepData& b) {
    if (a.shape != b.shape || a.values.size() == 0 || a.values.size() != b.values.size()) return Tensor{};
    Tensor d(a.shape);
    for (std::size_t i = 0; i < d.size(); ++i) {
        double abs = 0, rel = 0;
        cell_errors(a.values.data[i], b.values.data[i], abs, rel);
        d.data[i] = static_cast<float>(abs);
    }
    return d;
}

}  // namespace attntrace

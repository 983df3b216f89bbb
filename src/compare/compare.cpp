#include "compare/compare.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "trace/steps.hpp"

namespace attntrace {

namespace {

// What trace/diff reads, from a trace in memory (the values copied: diff
// compares traces read back from files, and a lesson's trace is small
// beside the two runs that made it).
TraceData as_trace_data(const Trace& t, const std::string& file) {
    TraceData d;
    d.file = file;
    for (const Step& s : t.steps) {
        TraceStepData x;
        x.name = s.name;
        x.shape = s.shape;
        x.source = std::string(source_name(s.source));
        x.recorded = std::string(record_name(s.recorded));
        if (s.source != StepSource::not_computable && s.recorded == Record::full) x.values = values_of(t, s).take();
        d.steps.push_back(std::move(x));
    }
    return d;
}

// Position in the pipeline: the catalogue's order; a step the catalogue does
// not know (none today) after all of them, in its trace's order.
std::size_t pipeline_rank(const std::string& name) {
    const auto& cat = step_catalogue();
    for (std::size_t i = 0; i < cat.size(); ++i)
        if (name == cat[i].name) return i;
    return cat.size();
}

std::string not_computable_note(const Step* a, const Step* b) {
    auto why = [](const Step* s) { return s->note.empty() ? std::string("no values") : s->note; };
    const bool na = a->source == StepSource::not_computable, nb = b->source == StepSource::not_computable;
    if (na && nb) return "not computable in A (" + why(a) + ") nor in B (" + why(b) + ")";
    if (na) return "not computable in A (" + why(a) + ")";
    if (nb) return "not computable in B (" + why(b) + ")";
    return std::string(a->recorded != Record::full ? "A" : "B") + " kept no values";
}

}  // namespace

const char* change_name(Change c) {
    switch (c) {
        case Change::unchanged: return "unchanged";
        case Change::changed: return "changed";
        case Change::shape_changed: return "shape-changed";
        case Change::only_a: return "only-in-a";
        case Change::only_b: return "only-in-b";
        case Change::not_computable: return "not-computable";
    }
    return "?";
}

std::size_t Comparison::count(Change c) const {
    return static_cast<std::size_t>(std::count_if(steps.begin(), steps.end(), [&](const StepChange& s) { return s.change == c; }));
}

std::optional<std::size_t> Comparison::first_change() const {
    for (std::size_t i = 0; i < steps.size(); ++i)
        if (steps[i].change == Change::changed) return i;
    for (std::size_t i = 0; i < steps.size(); ++i)
        if (steps[i].change != Change::unchanged) return i;
    return std::nullopt;
}

const StepChange* Comparison::find(const std::string& name) const {
    for (const auto& s : steps)
        if (s.name == name) return &s;
    return nullptr;
}

StepSelection Comparison::select(const std::string& pattern) const {
    std::vector<NamedStep> named;
    for (const StepChange& s : steps) named.push_back({s.name, s.a ? s.a->def : s.b ? s.b->def : nullptr});
    return select_steps(named, {pattern});
}

Comparison compare_traces(Trace a_trace, Trace b_trace) {
    Comparison c;
    c.a = std::make_shared<const Trace>(std::move(a_trace));
    c.b = std::make_shared<const Trace>(std::move(b_trace));
    const Trace &a = *c.a, &b = *c.b;
    // No tolerance: "unchanged" means every cell equal, so a change of one
    // float32 ulp is still reported (and its size says how small it is).
    DiffOptions exact;
    exact.atol = 0;
    exact.rtol = 0;
    const DiffReport r = diff_traces(as_trace_data(a, "A"), as_trace_data(b, "B"), exact);
    std::map<std::string, const StepDiff*> diffs;
    for (const auto& d : r.steps) diffs.emplace(d.name, &d);

    for (const Step& s : a.steps) {
        StepChange x;
        x.name = s.name;
        x.a = &s;
        x.b = b.find(s.name);
        if (!x.b) {
            x.change = Change::only_a;
        } else {
            x.diff = *diffs.at(s.name);
            switch (x.diff.verdict) {
                case StepVerdict::match: x.change = Change::unchanged; break;
                case StepVerdict::diverges: x.change = Change::changed; break;
                case StepVerdict::shape_mismatch: x.change = Change::shape_changed; break;
                case StepVerdict::not_comparable:
                    x.change = Change::not_computable;
                    x.note = not_computable_note(x.a, x.b);
                    break;
            }
        }
        c.steps.push_back(std::move(x));
    }
    for (const Step& s : b.steps)
        if (!a.find(s.name)) {
            StepChange x;
            x.name = s.name;
            x.b = &s;
            x.change = Change::only_b;
            c.steps.push_back(std::move(x));
        }
    // Stable: steps of one rank (none today) keep A's order, then B's.
    std::stable_sort(c.steps.begin(), c.steps.end(), [](const StepChange& x, const StepChange& y) {
        return pipeline_rank(x.name) < pipeline_rank(y.name);
    });
    return c;
}

Tensor delta(const Tensor& a, const Tensor& b) {
    Tensor d(a.shape);
    for (std::size_t k = 0; k < a.size() && k < b.size(); ++k)
        d.data[k] = a.data[k] == b.data[k] ? 0.0f : b.data[k] - a.data[k];
    return d;
}

std::string cell_labels(const Step& s, const std::vector<std::size_t>& index) {
    std::string out;
    for (std::size_t k = 0; k < index.size(); ++k) {
        const bool labelled = k < s.labels.size() && index[k] < s.labels[k].size();
        out += (k ? ", " : "") + (labelled ? s.labels[k][index[k]] : std::to_string(index[k]));
    }
    return out;
}

}  // namespace attntrace

// --set STEP[SELECTION]=VALUE and --ablate blocks.B.attn.hH[:zero|:mean] /
// blocks.B.mlp[:zero|:mean], resolved into the lesson's `given`.
#include "compare/intervention.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <optional>

#include "core/error.hpp"
#include "pipeline/cell.hpp"
#include "trace/derived.hpp"
#include "trace/step_lookup.hpp"
#include "trace/trace_json.hpp"

namespace attntrace {

namespace {

constexpr std::string_view kFrom = "from:";

std::string trim(std::string_view s) {
    const auto b = s.find_first_not_of(" \t");
    if (b == std::string_view::npos) return {};
    return std::string(s.substr(b, s.find_last_not_of(" \t") - b + 1));
}

// An --ablate target: the step and how its cells are picked.
struct Ablation {
    std::string step;
    std::optional<std::size_t> head;  // a head of hook_z; none: the whole step (an MLP's output)
    bool mean = false;                // replaced by the mean over positions, else by 0
};

// A --set argument split: STEP, the selection inside [...] (empty: the whole step), VALUE.
struct SetParts {
    std::string step, inner, value;
};

SetParts split_set(const InterventionArg& a) {
    const std::string& t = a.text;
    const auto open = t.find('['), eq = t.find('=');
    if (eq == std::string::npos)
        fail_field("--set", t, "STEP[SELECTION]=VALUE (e.g. blocks.0.attn.hook_pattern[h0, ring, :]=0)", "no '='");
    SetParts p;
    if (open != std::string::npos && open < eq) {
        const auto close = t.find(']', open);
        if (close == std::string::npos || close + 1 >= t.size() || t[close + 1] != '=')
            fail_field("--set", t, "STEP[SELECTION]=VALUE, the selection closed by ']' right before '='",
                       close == std::string::npos ? "no ']'" : fmt::format("\"{}\" after ']'", t.substr(close + 1)));
        p.step = trim(std::string_view(t).substr(0, open));
        p.inner = t.substr(open + 1, close - open - 1);
        p.value = trim(std::string_view(t).substr(close + 2));
    } else {
        p.step = trim(std::string_view(t).substr(0, eq));
        p.value = trim(std::string_view(t).substr(eq + 1));
    }
    if (p.step.empty()) fail_field("--set", t, "a step's name before the selection", "none");
    if (p.value.empty()) fail_field("--set", t, "a number or from:TRACE.json after '='", "nothing");
    return p;
}

// VALUE as a number: finite, or -inf (a score blocked as a mask blocks it).
std::optional<float> number_value(const std::string& v, const std::string& text) {
    if (v.substr(0, kFrom.size()) == kFrom) return std::nullopt;
    if (v == "-inf") return -std::numeric_limits<float>::infinity();
    double d = 0;
    const auto r = std::from_chars(v.data(), v.data() + v.size(), d);
    if (r.ec != std::errc() || r.ptr != v.data() + v.size() || !std::isfinite(d) ||
        std::fabs(d) > std::numeric_limits<float>::max())
        fail_field("--set", text, "a number within float32's range, -inf, or from:TRACE.json after '='", "\"" + v + "\"");
    return static_cast<float>(d);
}

// The step a --set names: its full name in the lesson's catalogue, recorded by the lesson.
std::string set_step(const Lesson& lesson, const std::string& name, const std::string& text) {
    const StepLookup found = lookup_step(lesson.catalogue(), name, [&](const StepDef& d) { return lesson.records(d); });
    if (!found.def) fail_field("--set", text, "a step of this run (`attntrace steps` lists them)", lookup_failure(name, found));
    if (!lesson.records(*found.def))
        fail_field("--set", text, "a step this run computes", "\"" + found.def->name + "\" (its stage does not run here)");
    return found.def->name;
}

// "blocks.0.attn.h1:mean" -> blocks.0.attn.hook_z, head 1, mean.
Ablation parse_ablation(const Lesson& lesson, const std::string& text) {
    const std::string expected = "blocks.B.attn.hH or blocks.B.mlp, optionally followed by :zero (the default) or :mean";
    Ablation a;
    std::string target = text;
    if (const auto colon = text.rfind(':'); colon != std::string::npos) {
        const std::string how = text.substr(colon + 1);
        if (how != "zero" && how != "mean") fail_field("--ablate", text, expected, "\":" + how + "\"");
        a.mean = how == "mean";
        target = text.substr(0, colon);
    }
    const auto dot = target.rfind('.');
    const std::string last = dot == std::string::npos ? target : target.substr(dot + 1);
    const std::string prefix = dot == std::string::npos ? "" : target.substr(0, dot);
    const Catalogue& cat = lesson.catalogue();
    auto known = [&](const std::string& name) {
        const StepDef* def = cat.find(name);
        return def && lesson.records(*def) ? def : nullptr;
    };
    if (last.size() > 1 && last[0] == 'h' && last.find_first_not_of("0123456789", 1) == std::string::npos) {
        a.step = prefix + ".hook_z";
        const StepDef* def = known(a.step);
        if (!def) fail_field("--ablate", text, "an attention of this run (" + expected + ")", "\"" + prefix + "\"");
        const std::size_t heads = lesson.dims_of(cat.pass_of(*def)).NH;
        std::size_t h = 0;
        const auto r = std::from_chars(last.data() + 1, last.data() + last.size(), h);
        if (r.ec != std::errc() || h >= heads)
            fail_field("--ablate", text, fmt::format("a head h0..h{}", heads - 1), "\"" + last + "\"");
        a.head = h;
        return a;
    }
    if (last == "mlp") {
        a.step = prefix + ".hook_mlp_out";
        if (!known(a.step)) fail_field("--ablate", text, "an MLP of this run (" + expected + ")", "\"" + prefix + "\"");
        return a;
    }
    fail_field("--ablate", text, expected, "\"" + target + "\"");
}

std::size_t parse_index(const Step& s, std::size_t k, const std::string& text, const std::string& origin, bool end) {
    const std::size_t n = s.shape[k];
    const std::string range = fmt::format("0..{} on axis {} of {}", end ? n : n - 1, s.axes[k], s.name);
    std::size_t i = 0;
    const auto r = std::from_chars(text.data(), text.data() + text.size(), i);
    if (r.ec == std::errc() && r.ptr == text.data() + text.size()) {
        if (i > n || (!end && i == n)) fail_field(origin, text, range, std::to_string(i) + " (out of range)");
        return i;
    }
    std::size_t found = n, count = 0;
    for (std::size_t j = 0; j < n; ++j)
        if (Cell::label_text(s, k, j) == text) found = j, ++count;
    if (count == 0)
        fail_field(origin, text,
                   fmt::format("a label of axis {}{}, an index {}, or ':'", s.axes[k],
                               k < s.labels.size() && !s.labels[k].empty() && s.labels[k].size() <= 16
                                   ? fmt::format(" ({})", fmt::join(s.labels[k], " "))
                                   : "",
                               range),
                   "\"" + text + "\"");
    if (count > 1)
        fail_field(origin, text, fmt::format("a label that names one position of axis {}, or an index ({})", s.axes[k], range),
                   fmt::format("\"{}\", which names {} of them", text, count));
    return found + (end ? 1 : 0);
}

// Every index of every axis: a whole step.
std::vector<AxisPick> every_cell(const Shape& shape) {
    std::vector<AxisPick> picks(shape.size());
    for (std::size_t k = 0; k < shape.size(); ++k) {
        picks[k].every = true;
        for (std::size_t i = 0; i < shape[k]; ++i) picks[k].at.push_back(i);
    }
    return picks;
}

// The cells a selection picks, as a 0/1 mask of the step's shape.
Tensor cells_of(const Shape& shape, const std::vector<AxisPick>& picks) {
    Tensor mask(shape);
    std::vector<std::size_t> idx(shape.size(), 0);
    const std::size_t n = mask.size();
    // Row-major strides, to place each combination of picked indices.
    std::vector<std::size_t> stride(shape.size(), 1);
    for (std::size_t k = shape.size(); k-- > 1;) stride[k - 1] = stride[k] * shape[k];
    if (n == 0) return mask;
    for (;;) {
        std::size_t at = 0;
        for (std::size_t k = 0; k < shape.size(); ++k) at += picks[k].at[idx[k]] * stride[k];
        mask.data[at] = 1;
        std::size_t k = shape.size();
        while (k > 0 && ++idx[k - 1] == picks[k - 1].at.size()) idx[--k] = 0;
        if (k == 0) break;
    }
    return mask;
}

std::string describe_picks(const Step& s, const std::vector<AxisPick>& picks) {
    std::vector<std::string> parts;
    for (std::size_t k = 0; k < picks.size(); ++k) {
        std::vector<std::string> names;
        for (std::size_t i : picks[k].at) names.push_back(Cell::label(s, k, i));
        parts.push_back(fmt::format("{} {}", s.axes[k],
                                    picks[k].every ? std::string("all") : fmt::format("{}", fmt::join(names, " "))));
    }
    return fmt::format("{}", fmt::join(parts, ", "));
}

// The original values of the step, a copy to change.
Tensor original_values(const Trace& original, const std::string& step) {
    const Step* s = original.find(step);
    if (!s || s->source == StepSource::not_computable || s->recorded != Record::full)
        throw std::logic_error("attntrace: the original run did not keep " + step + " for an intervention");
    return values_of(original, *s).take();
}

// Adds `values` on `cells` to the lesson's given for `step`: over what a
// lesson or an earlier intervention gives there, the union of their cells.
void add_given(Lesson& lesson, const std::string& step, Tensor values, Tensor cells, const std::string& typed) {
    auto it = lesson.given.find(step);
    if (it == lesson.given.end()) {
        lesson.given[step] = Given{std::move(values), std::move(cells), typed};
        return;
    }
    Given& g = it->second;
    for (std::size_t i = 0; i < values.size(); ++i)
        if (cells.data[i] != 0) {
            g.values.data[i] = values.data[i];
            if (!g.whole()) g.cells.data[i] = 1;
        }
    g.by = g.by.empty() ? "the lesson and " + typed : g.by + " and " + typed;
}

Intervention apply_set(Lesson& lesson, const Trace& original, const InterventionArg& a) {
    const SetParts p = split_set(a);
    const std::string name = set_step(lesson, p.step, a.text);
    const Step* s = original.find(name);
    if (!s) throw std::logic_error("attntrace: the original run has no step " + name);
    const std::vector<AxisPick> picks = p.inner.empty() ? every_cell(s->shape) : parse_selection(*s, p.inner, "--set");
    Tensor cells = cells_of(s->shape, picks);
    Tensor values = original_values(original, name);
    Intervention iv{a.typed(), name, describe_picks(*s, picks), 0, p.value};
    if (const auto v = number_value(p.value, a.text)) {
        if (std::isinf(*v) && s->def && s->def->neg_inf == NegInf::never)
            fail_field("--set", a.text, fmt::format("a finite number ({} cannot hold -inf)", name), "-inf");
        for (std::size_t i = 0; i < values.size(); ++i)
            if (cells.data[i] != 0) values.data[i] = *v;
    } else {
        const std::string file = p.value.substr(kFrom.size());
        const TraceData other = read_trace_file(file, TraceRequire::minimal);
        const TraceStepData* o = nullptr;
        for (const TraceStepData& d : other.steps)
            if (d.name == name) o = &d;
        if (!o) fail_field(file, "steps", fmt::format("a step named {} (for {})", name, a.typed()), "none");
        if (o->shape != s->shape || o->values.size() != values.size())
            fail_field(file, name + ".shape", fmt::format("{} as this run's (for {})", shape_str(s->shape), a.typed()),
                       o->values.size() != values.size() && o->shape == s->shape ? "no values" : shape_str(o->shape));
        for (std::size_t i = 0; i < values.size(); ++i)
            if (cells.data[i] != 0) values.data[i] = o->values.data[i];
        iv.value = "the same cells of " + file;
    }
    for (float c : cells.data) iv.count += c != 0;
    add_given(lesson, name, std::move(values), std::move(cells), a.typed());
    return iv;
}

Intervention apply_ablation(Lesson& lesson, const Trace& original, const InterventionArg& a) {
    const Ablation ab = parse_ablation(lesson, a.text);
    const Step* s = original.find(ab.step);
    if (!s) throw std::logic_error("attntrace: the original run has no step " + ab.step);
    Tensor values = original_values(original, ab.step);
    // hook_z (query, head, d_head_v); hook_mlp_out (pos, d_model): the first axis is the positions.
    const std::size_t T = s->shape[0], row = T ? values.size() / T : 0;
    std::vector<AxisPick> picks = every_cell(s->shape);
    if (ab.head) picks[1] = AxisPick{{*ab.head}, false};
    Tensor cells = cells_of(s->shape, picks);
    std::vector<double> mean(row, 0.0);
    if (ab.mean)
        for (std::size_t t = 0; t < T; ++t)
            for (std::size_t j = 0; j < row; ++j) mean[j] += values.data[t * row + j];
    for (std::size_t t = 0; t < T; ++t)
        for (std::size_t j = 0; j < row; ++j)
            if (cells.data[t * row + j] != 0) values.data[t * row + j] = static_cast<float>(mean[j] / double(T));
    Intervention iv{a.typed(), ab.step, describe_picks(*s, picks), 0,
                    ab.mean ? fmt::format("their mean over the {} positions", T) : "0"};
    for (float c : cells.data) iv.count += c != 0;
    add_given(lesson, ab.step, std::move(values), std::move(cells), a.typed());
    return iv;
}

}  // namespace

std::vector<AxisPick> parse_selection(const Step& s, const std::string& inner, const std::string& origin) {
    std::vector<std::string> parts;
    for (std::size_t start = 0;;) {
        const auto comma = inner.find(',', start);
        parts.push_back(trim(std::string_view(inner).substr(start, comma == std::string::npos ? std::string::npos : comma - start)));
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    if (parts.size() != s.shape.size())
        fail_field(origin, "[" + inner + "]",
                   fmt::format("{} indices, one per axis of {} ({})", s.shape.size(), s.name, fmt::join(s.axes, ", ")),
                   std::to_string(parts.size()));
    std::vector<AxisPick> picks(parts.size());
    for (std::size_t k = 0; k < parts.size(); ++k) {
        const std::string& p = parts[k];
        if (p.empty()) fail_field(origin, "[" + inner + "]", "an index, a label or ':' on every axis", "an empty one");
        const auto colon = p.find(':');
        std::size_t from = 0, to = 0;
        if (p == ":" || p == "*") {
            picks[k].every = true;
            to = s.shape[k];
        } else if (colon != std::string::npos) {
            const std::string a = trim(std::string_view(p).substr(0, colon)), b = trim(std::string_view(p).substr(colon + 1));
            from = a.empty() ? 0 : parse_index(s, k, a, origin, false);
            to = b.empty() ? s.shape[k] : parse_index(s, k, b, origin, true);
            if (from >= to) fail_field(origin, p, fmt::format("a range A:B with A < B on axis {}", s.axes[k]), "an empty one");
            picks[k].every = from == 0 && to == s.shape[k];
        } else {
            from = parse_index(s, k, p, origin, false);
            to = from + 1;
        }
        for (std::size_t i = from; i < to; ++i) picks[k].at.push_back(i);
    }
    return picks;
}

std::vector<std::string> intervention_steps(const Lesson& lesson, const std::vector<InterventionArg>& args) {
    std::vector<std::string> steps;
    for (const InterventionArg& a : args) {
        std::string name;
        if (a.kind == InterventionArg::Kind::set) {
            const SetParts p = split_set(a);
            name = set_step(lesson, p.step, a.text);
            number_value(p.value, a.text);
        } else {
            name = parse_ablation(lesson, a.text).step;
        }
        if (std::find(steps.begin(), steps.end(), name) == steps.end()) steps.push_back(name);
    }
    return steps;
}

std::vector<Intervention> apply_interventions(Lesson& lesson, const Trace& original, const std::vector<InterventionArg>& args) {
    std::vector<Intervention> done;
    for (const InterventionArg& a : args)
        done.push_back(a.kind == InterventionArg::Kind::set ? apply_set(lesson, original, a) : apply_ablation(lesson, original, a));
    return done;
}

}  // namespace attntrace

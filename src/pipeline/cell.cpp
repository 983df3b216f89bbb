#include "pipeline/cell.hpp"

#include <algorithm>

#include "core/decimal.hpp"
#include "core/error.hpp"
#include "core/printable.hpp"
#include "pipeline/operation.hpp"

namespace attntrace {

namespace {

const Step& held(const Cell& c, const std::string& name) {
    const Step* s = c.trace.find(name);
    if (s && is_derived(*s) && s->recorded == Record::full) {
        for (const Step& d : c.derived_inputs)
            if (d.name == name) return d;
        Step& d = c.derived_inputs.emplace_back(*s);
        d.buffer() = values_of(c.trace, *s).take();
        return d;
    }
    if (!s || !s->holds_values())
        throw InputError(fmt::format("explain {}: expected its input {} in the trace, found it not kept", c.step.name, name));
    return *s;
}

}  // namespace

std::string Cell::num(float x) const { return format_number(x, opt.precision); }

const Step& Cell::input(Leaf leaf) const { return held(*this, lesson.catalogue().step(pass(), leaf).name); }

const Step& Cell::input(StepId id) const { return held(*this, lesson.catalogue().at(id).name); }

const Step* Cell::embeddings(Leaf leaf) const {
    const Step* s = trace.find(lesson.catalogue().step(leaf, -1).name);
    return s && s->holds_values() ? s : nullptr;
}

const Tensor* Cell::optional_weight(const std::string& name) const { return lesson.weight(pass().weights + name); }

std::string Cell::weight_entry(const std::string& name, const std::string& in, const std::string& out) const {
    if (lesson.config.weight_layout == WeightLayout::out_in) return fmt::format("{}[{},{}]", name, out, in);
    return fmt::format("{}[{},{}]", name, in, out);
}

std::string Cell::weight_entry(const std::string& name, std::size_t in, std::size_t out) const {
    return weight_entry(name, std::to_string(in), std::to_string(out));
}

const Tensor& Cell::weight(const std::string& name) const {
    const Tensor* w = optional_weight(name);
    if (!w) throw InputError(fmt::format("explain {}: expected weight {} in the lesson, found none", step.name, name));
    return *w;
}

std::string Cell::label_text(const Step& s, std::size_t k, std::size_t i) {
    return k < s.labels.size() && i < s.labels[k].size() ? s.labels[k][i] : std::to_string(i);
}

std::string Cell::label(const Step& s, std::size_t k, std::size_t i) { return printable(label_text(s, k, i)); }

float recompute(Cell& c) {
    float r = operation(c.step.def->stage).explain(c);
    if (c.step.rounded_to >= 0) {  // --arithmetic document: Run::close rounds the step as the article printed it
        r = round_decimals(r, c.step.rounded_to);
        c.line("rounded to {} decimals, as the article did: {}", c.step.rounded_to, c.num(r));
        if (c.terms) c.terms->sum = r;
    }
    return r;
}

std::size_t offset(const Shape& shape, std::initializer_list<std::size_t> at) {
    std::size_t off = 0, k = 0;
    for (std::size_t i : at) off = off * shape[k++] + i;
    return off;
}

void list_terms(Cell& c, std::size_t n, const std::function<std::string(std::size_t)>& term) {
    const bool elide = !c.opt.full && n > c.opt.max_terms;
    for (std::size_t k = 0; k < n; ++k) {
        if (elide && k == 3) {
            c.line("    ... ({} more terms; --full shows them)", n - 6);
            k = n - 4;
            continue;
        }
        c.line("    {}", term(k));
    }
}

float write_dot(Cell& c, std::size_t n, const std::function<std::string(std::size_t)>& a_name,
                const std::function<float(std::size_t)>& a, const std::function<std::string(std::size_t)>& b_name,
                const std::function<float(std::size_t)>& b, const char* bias_name, const float* bias) {
    std::size_t wa = 0, wb = 0;
    for (std::size_t k = 0; k < n; ++k) wa = std::max(wa, a_name(k).size()), wb = std::max(wb, b_name(k).size());
    float acc = 0.0f;  // float, k ascending: the order of matmul_ref / matmul_nt_ref
    Terms terms;
    for (std::size_t k = 0; k < n; ++k) {
        terms.values.push_back(a(k) * b(k));
        acc += terms.values.back();
    }
    list_terms(c, n, [&](std::size_t k) {
        return fmt::format("{} {:<{}} · {:<{}} = {:>9} · {:>9} = {:>9}", k ? "+" : " ", a_name(k), wa, b_name(k), wb,
                           c.num(a(k)), c.num(b(k)), c.num(a(k) * b(k)));
    });
    c.line("  = {}   (sum of {} terms)", c.num(acc), n);
    if (bias_name && bias) {
        c.line("  + {} = {}", bias_name, c.num(*bias));
        acc += *bias;
        terms.values.push_back(*bias);
        c.line("  = {}", c.num(acc));
    } else if (bias_name) {
        c.line("  (no {} in this lesson)", bias_name);
    }
    terms.sum = acc;
    c.terms = std::move(terms);
    return acc;
}

}  // namespace attntrace

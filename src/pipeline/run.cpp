#include "pipeline/run.hpp"

#include "core/decimal.hpp"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

namespace attntrace {

Run::Run(const Lesson& lesson, Arithmetic mode) : lesson_(lesson), mode_(mode), dims_(lesson.dims()) {
    // Every step is recorded at most once: reserving them all keeps the
    // pointers value() hands out valid while later steps are added.
    trace_.steps.reserve(step_catalogue().size());
    record_given_inputs();
}

std::vector<std::string> Run::labels_for(Axis a) const {
    std::vector<std::string> out;
    switch (a) {
        case Axis::pos:
        case Axis::key: return lesson_.tokens;
        case Axis::query: return lesson_.query_labels();
        case Axis::head:
            for (std::size_t h = 0; h < dims_.NH; ++h) out.push_back(fmt::format("h{}", h));
            return out;
        case Axis::d_model:
        case Axis::d_head:
            for (std::size_t i = 0; i < dims_.extent(a); ++i) out.push_back(fmt::format("d{}", i));
            return out;
        case Axis::d_ff:
            for (std::size_t i = 0; i < dims_.F; ++i) out.push_back(fmt::format("f{}", i));
            return out;
    }
    return out;
}

Step& Run::add_step(const StepDef& def) {
    if (trace_.steps.size() == trace_.steps.capacity())
        throw std::logic_error("attntrace: a step was recorded twice");  // would move recorded buffers
    Step& s = trace_.steps.emplace_back();
    s.name = def.name;
    s.def = &def;
    s.shape = step_shape(def, dims_);
    for (Axis a : def.axes) {
        s.axes.emplace_back(axis_name(a));
        s.labels.push_back(labels_for(a));
    }
    return s;
}

// Given steps of stages before run.from are the run's inputs: recorded first,
// in pipeline order.
void Run::record_given_inputs() {
    for (const StepDef& def : step_catalogue()) {
        if (def.stage >= lesson_.from) break;
        auto it = lesson_.given.find(def.name);
        if (it == lesson_.given.end()) continue;
        Step& s = add_step(def);
        s.source = StepSource::given;
        s.value = it->second;
        s.note = "given by the lesson: the run starts after the stage that computes it";
        if (auto r = lesson_.document_rounding.find(def.name);
            mode_ == Arithmetic::document && r != lesson_.document_rounding.end()) {
            for (float& x : s.value.data) x = round_decimals(x, r->second);
            s.rounded_to = r->second;
        }
    }
}

bool Run::intervenes(std::initializer_list<std::string> steps) const {
    for (const auto& name : steps) {
        if (lesson_.given.count(name)) return true;
        if (mode_ == Arithmetic::document && lesson_.document_rounding.count(name)) return true;
    }
    return false;
}

const Tensor* Run::value(const std::string& name) const {
    const Step* s = trace_.find(name);
    if (!s || s->source == StepSource::not_computable) return nullptr;
    return &s->value;
}

float* Run::open(const char* name, std::initializer_list<Need> needs, std::initializer_list<Need> optional) {
    const StepDef* def = find_step(name);
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
    s.value = Tensor::uninitialized(s.shape);  // the stage writes every element
    return s.value.ptr();
}

void Run::close() {
    for (Step* step : open_) close_step(*step);
    open_.clear();
}

void Run::close_step(Step& s) {
    if (auto it = lesson_.given.find(s.name); it != lesson_.given.end()) {
        if (s.source == StepSource::computed) s.formula = std::move(s.value);
        s.value = it->second;
        s.source = StepSource::given;
        s.note = s.formula ? "given by the lesson (the article's values replace the formula's from here on)"
                           : "given by the lesson; " + s.note;
    }
    if (mode_ == Arithmetic::document && s.source != StepSource::not_computable) {
        if (auto r = lesson_.document_rounding.find(s.name); r != lesson_.document_rounding.end()) {
            for (float& x : s.value.data) x = round_decimals(x, r->second);
            s.rounded_to = r->second;
        }
    }
}

}  // namespace attntrace

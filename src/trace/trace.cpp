#include "trace/trace.hpp"

namespace attntrace {

std::string_view source_name(StepSource s) {
    switch (s) {
        case StepSource::computed: return "computed";
        case StepSource::given: return "given";
        case StepSource::not_computable: return "not-computable";
    }
    return "?";
}

const Tensor* Step::checked_value() const {
    if (formula) return &*formula;
    if (source == StepSource::not_computable) return nullptr;
    return &value;
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

}  // namespace attntrace

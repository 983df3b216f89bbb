#include "lesson/lesson.hpp"

#include <array>

namespace attntrace {

namespace {
constexpr std::array<std::string_view, 4> kVerdicts = {"agrees", "agrees-when-rounded", "disagrees",
                                                       "not-checkable"};
}

std::string_view verdict_name(Verdict v) { return kVerdicts[static_cast<int>(v)]; }

std::optional<Verdict> verdict_from_name(std::string_view s) {
    for (std::size_t i = 0; i < kVerdicts.size(); ++i)
        if (kVerdicts[i] == s) return static_cast<Verdict>(i);
    return std::nullopt;
}

std::string_view mask_name(MaskKind m) { return m == MaskKind::causal ? "causal" : "none"; }
std::string_view activation_name(Activation a) {
    switch (a) {
        case Activation::relu: return "relu";
        case Activation::gelu: return "gelu";
        case Activation::gelu_tanh: return "gelu_tanh";
        case Activation::swiglu: return "swiglu";
    }
    return "relu";
}
std::string_view norm_name(NormKind n) { return n == NormKind::rmsnorm ? "rmsnorm" : "layernorm"; }

bool config_records(const Config& c, std::string_view step) {
    auto ends = [&](std::string_view tail) {
        return step.size() >= tail.size() && step.substr(step.size() - tail.size()) == tail;
    };
    const bool ln = step.find(".ln1.") != std::string_view::npos || step.find(".ln2.") != std::string_view::npos;
    if (ln && (ends(".hook_mean") || ends(".hook_var"))) return c.norm == NormKind::layernorm;
    if (ln && ends(".hook_mean_square")) return c.norm == NormKind::rmsnorm;
    if (ends("mlp.hook_pre_linear")) return c.activation == Activation::swiglu;
    return true;
}

}  // namespace attntrace

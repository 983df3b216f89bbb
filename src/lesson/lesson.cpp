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

std::string_view mask_name(MaskKind m) {
    switch (m) {
        case MaskKind::causal: return "causal";
        case MaskKind::window: return "window";
        case MaskKind::global_local: return "global_local";
        case MaskKind::block_sparse: return "block_sparse";
        case MaskKind::padding: return "padding";
        case MaskKind::custom: return "custom";
        case MaskKind::none: break;
    }
    return "none";
}
std::string_view activation_name(Activation a) { return a == Activation::gelu ? "gelu" : "relu"; }

}  // namespace attntrace

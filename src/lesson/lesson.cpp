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
std::string_view activation_name(Activation a) { return a == Activation::gelu ? "gelu" : "relu"; }

}  // namespace attntrace

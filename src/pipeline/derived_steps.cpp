#include "pipeline/derived_steps.hpp"

namespace attntrace {

std::vector<DerivedStep> derived_steps(const Config& c) {
    std::vector<Leaf> from{Leaf::scores_raw};
    if (c.scale.recorded) from.push_back(Leaf::scale_factor);
    std::vector<DerivedStep> out{{Leaf::scores_scaled, from}};
    from.push_back(Leaf::mask);
    out.push_back({Leaf::attn_scores, from});
    from.push_back(Leaf::row_max);
    out.push_back({Leaf::shifted, from});
    out.push_back({Leaf::exp, from});
    return out;
}

}  // namespace attntrace

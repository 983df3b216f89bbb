// The steps a run derives (plan.derive_attention; trace/derived.hpp): each
// with the recorded steps its values are computed from. The plan asks this
// to decide what it keeps, and the stages build the same chains:
//
//   hook_scores_scaled = op(S)               scale.cpp   (÷ or · s, per head when hook_scale_factor is recorded)
//   hook_attn_scores   = S̃ + M               mask.cpp    (M broadcast over heads)
//   hook_shifted       = (S̃ + M) - m_i       softmax.cpp (m: hook_row_max; a blocked row stays -inf)
//   hook_exp           = exp(shifted)        softmax.cpp (the lanes and tail of the softmax kernel)
#pragma once

#include <vector>

#include "lesson/lesson.hpp"
#include "trace/steps.hpp"

namespace attntrace {

struct DerivedStep {
    Leaf leaf;
    std::vector<Leaf> sources;  // the recorded steps of the same attention it is computed from
};

// In pipeline order, each derived from the one before it.
std::vector<DerivedStep> derived_steps(const Config& c);

}  // namespace attntrace

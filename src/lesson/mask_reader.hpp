// config.mask as the lesson gives it: "none", "causal", or an object with a
// "kind" and only that kind's fields (docs/lesson-format.md, Masks).
#pragma once

#include <string>
#include <vector>

#include "core/json_field.hpp"
#include "lesson/lesson.hpp"

namespace attntrace {

// Reads config.mask into cfg.mask and cfg.mask_spec. `tokens` name positions
// (a string in "global" or "pad" must name exactly one of them); `queries` is
// Tq, the rows of a custom mask. Throws InputError naming the field's path.
void read_mask(const Fields& f, const json& v, const std::vector<std::string>& tokens, std::size_t queries,
               Config& cfg);

}  // namespace attntrace

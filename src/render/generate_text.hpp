// Greedy generation (decode/generate.hpp), shown: each generated token with
// its logit, probability and the top-k alternatives, then the whole text; and
// the same as JSON (format attntrace-generate, docs/decode.md).
#pragma once

#include <cstddef>
#include <ostream>

#include "decode/generate.hpp"
#include "trace/json_text.hpp"

namespace attntrace {

// A sampled token's distribution in the JSON lists at most this many of its kept tokens (the whole
// vocabulary may be kept: 50,257 entries a token for GPT-2); the mass of the others is written beside.
inline constexpr std::size_t kDrawnJsonTokens = 1000;

// Wrapped to `width` display columns (0: not wrapped).
void render_generation(std::ostream& out, const HfModel& m, const Generation& g, std::size_t width = 0);
OrderedJson generation_json(const HfModel& m, const Generation& g);

}  // namespace attntrace

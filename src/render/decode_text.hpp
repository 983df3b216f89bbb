// KV-cache decoding (decode/decode.hpp), shown: each token's step for
// `attntrace decode`, the one-line verdict `attntrace check` prints, and the
// JSON of both.
#pragma once

#include <cstddef>
#include <ostream>

#include "decode/decode.hpp"
#include "trace/json_text.hpp"

namespace attntrace {

// Step by step: the new token's q, k, v, the cache, its weights and z, and
// their distance from row t of the causal run.
// Wrapped to `width` display columns (0: not wrapped).
void render_decode(std::ostream& out, const Lesson& lesson, const DecodeReport& report, int precision,
                   std::size_t width = 0);
// "  ✓ kv-cache decode: ..." (one line; a second with the reason when it does not apply).
void render_decode_check(std::ostream& out, const DecodeReport& report, std::size_t width = 0);
OrderedJson decode_json(const Lesson& lesson, const DecodeReport& report, bool with_values);

}  // namespace attntrace

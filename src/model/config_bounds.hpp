// The sizes a checkpoint's config.json may state, for every family: past
// them a config is refused before anything is allocated for it.
#pragma once

#include <cstdint>

namespace attntrace {

inline constexpr std::int64_t kMaxDModel = 1 << 16;
inline constexpr std::int64_t kMaxPositions = 1 << 20;        // a learned table of positions (GPT-2, BERT)
inline constexpr std::int64_t kMaxRotaryPositions = 1 << 24;  // a rotary model's context: a length, not a table
inline constexpr std::int64_t kMaxVocabSize = 1 << 24;

}  // namespace attntrace

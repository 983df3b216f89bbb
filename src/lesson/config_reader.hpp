// config: the model a lesson describes (docs/lesson-format.md, "config").
// Internal to the lesson reader.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/json_field.hpp"
#include "lesson/lesson.hpp"

namespace attntrace {

// Dimension bounds, checked before anything is sized by them. Generous for
// real models (BERT-base: C 768, F 3072; long contexts: T 32768+) and far
// below what would overflow the products the pipeline forms.
inline constexpr std::int64_t kMaxTokens = 1 << 20;
inline constexpr std::int64_t kMaxDModel = 1 << 16;
inline constexpr std::int64_t kMaxDff = 1 << 18;
inline constexpr std::int64_t kMaxHeads = 1 << 12;
// config.scale's number: positive, and far enough from float32's ends that
// a score of float32's typical size stays finite and non-zero once scaled.
inline constexpr double kMinScaleFactor = 1e-6;
inline constexpr double kMaxScaleFactor = 1e6;

// Reads and validates `config` (its mask and positions with mask_reader and
// positions_reader). `tokens` and `queries` are the lesson's, for the mask.
Config read_config(const Fields& f, const json& c, const std::vector<std::string>& tokens, std::size_t queries);

}  // namespace attntrace

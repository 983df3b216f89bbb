// config.positions: the positional encoding a lesson uses (docs/lesson-format.md).
// Internal to the lesson reader.
#pragma once

#include "core/json_field.hpp"
#include "lesson/lesson.hpp"

namespace attntrace {

// Reads config.positions: "none", "sinusoidal", "learned",
// {"kind": "rope", "layout": "half" | "interleaved", "base": 10000} or
// {"kind": "alibi", "slopes": [...]}. Refuses (naming the field path) an
// unknown kind or field, a missing RoPE layout, an odd head size with RoPE,
// and ALiBi slopes that are not one number from 0 to kMaxAlibiSlope per head.
Positions read_positions(const Fields& f, const json& v, const Dims& dims);

// Bounds: a slope or base outside them is a mistake, and keeps every bias and
// angle far from float32 overflow (1e6 x 2^20 positions = 1e12 < 3.4e38).
inline constexpr double kMaxAlibiSlope = 1e6;
inline constexpr double kMaxRopeBase = 1e12;

}  // namespace attntrace

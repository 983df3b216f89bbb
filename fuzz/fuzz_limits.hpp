// Bounds shared by the fuzz targets, so that each input runs in milliseconds
// and a slow input is a real finding, not a big valid model.
#pragma once

#include <cstddef>

#include "core/memory.hpp"
#include "lesson/lesson.hpp"

namespace attntrace::fuzz {

// A fuzz input may declare a valid but large model; the run's memory check
// must refuse it above this (64 MiB), as it would above --max-memory.
inline constexpr std::size_t kFuzzMaxMemory = std::size_t{64} << 20;

// Lessons are evaluated only when this small: T·C and T·T·NH under 2^16 cells
// keep one evaluation around a millisecond.
inline constexpr std::size_t kFuzzMaxCells = std::size_t{1} << 16;

inline void apply_limits() { set_max_memory(kFuzzMaxMemory); }

inline bool small_enough_to_run(const Lesson& lesson) {
    const std::size_t t = lesson.tokens.size(), c = lesson.config.d_model, f = lesson.config.d_ff;
    const std::size_t h = lesson.config.heads;
    return t * c <= kFuzzMaxCells && t * t * h <= kFuzzMaxCells && c * f <= kFuzzMaxCells && c * c <= kFuzzMaxCells;
}

}  // namespace attntrace::fuzz

// Non-temporal stores for the element-wise kernels' big outputs.
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <type_traits>
#include <xsimd/xsimd.hpp>

#include "kernels/tuning.hpp"  // kStreamBytes

namespace attntrace::simd {

// Stores that bypass the caches, for outputs far larger than L3: a plain
// store first reads the line it writes (read for ownership), doubling the
// traffic of a write-only stream. p must be aligned to the register width.
// Scale stage at n = 2048 (a 200 MiB step), one thread: 62 ms streamed
// against 80 ms for the mask stage's plain stores of the same size, same run.
template <class Arch>
void store_stream(xsimd::batch<float, Arch> v, float* p) {
    if constexpr (std::is_base_of_v<xsimd::avx512f, Arch>) _mm512_stream_ps(p, v);
    else if constexpr (std::is_base_of_v<xsimd::avx, Arch>) _mm256_stream_ps(p, v);
    else _mm_stream_ps(p, v);
}

}  // namespace attntrace::simd

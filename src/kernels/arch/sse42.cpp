// The SIMD kernels for SSE4.2 (any x86-64 of the last 15 years). Built with -msse4.2 only here.
#include "kernels/simd/instantiate.hpp"

ATTNTRACE_INSTANTIATE_KERNELS(xsimd::sse4_2)

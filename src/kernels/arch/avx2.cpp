// The SIMD kernels for AVX2 with FMA. Built with -mavx2 -mfma only here.
#include "kernels/simd/instantiate.hpp"

ATTNTRACE_INSTANTIATE_KERNELS(xsimd::fma3<xsimd::avx2>)

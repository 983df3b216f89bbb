// The SIMD kernels for AVX-512 (F, CD, DQ, BW, VL) with FMA. Built with those
// -m flags only here; nothing else may be defined in this file (an inline
// function compiled with AVX-512 and picked by the linker elsewhere would
// break older CPUs).
#include "kernels/simd/instantiate.hpp"

ATTNTRACE_INSTANTIATE_KERNELS(xsimd::avx512bw)

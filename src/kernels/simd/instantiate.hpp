// Explicit instantiations of every SIMD kernel for one Arch; included once by
// each translation unit of arch/, after the kernels' definitions.
#pragma once

#include "kernels/simd/activations_simd.hpp"
#include "kernels/simd/attention_simd.hpp"
#include "kernels/simd/elementwise_simd.hpp"
#include "kernels/simd/gemm_simd.hpp"
#include "kernels/simd/gemv_simd.hpp"
#include "kernels/simd/map_fold_simd.hpp"
#include "kernels/simd/norm_stats_simd.hpp"
#include "kernels/simd/softmax_simd.hpp"

#define ATTNTRACE_INSTANTIATE_KERNELS(ARCH)                                                                       \
    template void attntrace::simd::Gemm::operator()<ARCH>(ARCH, const float*, std::size_t, const float*,          \
                                                          std::size_t, bool, float*, std::size_t, std::size_t,    \
                                                          std::size_t, std::size_t, float* (*)(),                 \
                                                          attntrace::simd::GemmBlocking,                          \
                                                          attntrace::simd::GemmOptions) const;                    \
    template void attntrace::simd::Gemv::operator()<ARCH>(ARCH, const float*, const float*, std::size_t, bool,     \
                                                          const float*, float*, std::size_t, std::size_t,         \
                                                          float* (*)(), attntrace::simd::GemmBlocking) const;     \
    template void attntrace::simd::GemmPackB::operator()<ARCH>(ARCH, const float*, std::size_t, bool, std::size_t,  \
                                                               std::size_t, attntrace::simd::GemmBlocking, float*) \
        const;                                                                                                    \
    template void attntrace::simd::GemmPackBStored::operator()<ARCH>(ARCH, const void*, attntrace::StoredType,     \
                                                                     std::size_t, bool, std::size_t, std::size_t, \
                                                                     attntrace::simd::GemmBlocking, float*) const; \
    template std::size_t attntrace::simd::SoftmaxRows::operator()<ARCH>(                                          \
        ARCH, const float*, std::size_t, std::size_t, float*, float*, float*, float*, float*) const;             \
    template std::size_t attntrace::simd::SoftmaxRowsInPlace::operator()<ARCH>(                                   \
        ARCH, float*, std::size_t, std::size_t, float*, float*) const;                                           \
    template void attntrace::simd::ExpRows::operator()<ARCH>(ARCH, const float*, float*, std::size_t,            \
                                                             std::size_t) const;                                \
    template void attntrace::simd::NormalizeRows::operator()<ARCH>(ARCH, const float*, std::size_t, std::size_t, \
                                                                   const float*, const float*, const float*,    \
                                                                   const float*, float*, float*) const;         \
    template void attntrace::simd::RowMean::operator()<ARCH>(ARCH, const float*, std::size_t, std::size_t, float*) \
        const;                                                                                                    \
    template void attntrace::simd::RowVar::operator()<ARCH>(ARCH, const float*, const float*, std::size_t,        \
                                                            std::size_t, float*, std::size_t) const;             \
    template void attntrace::simd::RowMeanSquare::operator()<ARCH>(ARCH, const float*, std::size_t, std::size_t,  \
                                                                   float*) const;                                \
    template double attntrace::simd::PeakFma::operator()<ARCH>(ARCH, std::size_t) const;                        \
    template double attntrace::simd::GemmMicroKernel::operator()<ARCH>(ARCH, std::size_t, std::size_t, std::size_t, \
                                                                       const float*, const float*, float*,      \
                                                                       std::size_t) const;                      \
    template void attntrace::simd::Relu::operator()<ARCH>(ARCH, const float*, float*, std::size_t) const;        \
    template void attntrace::simd::Gelu::operator()<ARCH>(ARCH, const float*, float*, std::size_t) const;        \
    template void attntrace::simd::GeluTanh::operator()<ARCH>(ARCH, const float*, float*, std::size_t) const;    \
    template void attntrace::simd::Swiglu::operator()<ARCH>(ARCH, const float*, const float*, float*,            \
                                                            std::size_t) const;                                  \
    template void attntrace::simd::DivideRows::operator()<ARCH>(ARCH, const float*, const float*, std::size_t,    \
                                                                std::size_t, float*) const;                      \
    template void attntrace::simd::Gain::operator()<ARCH>(ARCH, const float*, const float*, std::size_t,          \
                                                          std::size_t, float*) const;                            \
    template void attntrace::simd::DytTanh::operator()<ARCH>(ARCH, const float*, float, float*, std::size_t) const; \
    template void attntrace::simd::RotatePairs::operator()<ARCH>(ARCH, const float*, float*, std::size_t,         \
                                                                 std::size_t, const float*, const float*,        \
                                                                 const int*) const;                              \
    template attntrace::FloatBitsMax attntrace::simd::BitsMax::operator()<ARCH>(ARCH, const float*, std::size_t)   \
        const;                                                                                                    \
    template void attntrace::simd::CopyStreamed::operator()<ARCH>(ARCH, const float*, float*, std::size_t) const; \
    template void attntrace::simd::MapFoldRow::operator()<ARCH>(ARCH, const float*, std::size_t, std::size_t,     \
                                                                const attntrace::MapMask&, attntrace::MapFold*)  \
        const;                                                                                                    \
    template void attntrace::simd::Add::operator()<ARCH>(ARCH, const float*, const float*, float*, std::size_t)  \
        const;                                                                                                    \
    template void attntrace::simd::ScaleDiv::operator()<ARCH>(ARCH, const float*, float, float*, std::size_t)    \
        const;                                                                                                    \
    template void attntrace::simd::ScaleMul::operator()<ARCH>(ARCH, const float*, float, float*, std::size_t)    \
        const;                                                                                                    \
    template void attntrace::simd::AddMaskHeads::operator()<ARCH>(ARCH, const float*, const float*, float*,      \
                                                                  std::size_t, std::size_t) const;               \
    template void attntrace::simd::AttentionStreaming::operator()<ARCH>(                                          \
        ARCH, const float*, const float*, const float*, float*, std::size_t, std::size_t, std::size_t,            \
        std::size_t, std::size_t, float, KeyWindow, float*, int) const;

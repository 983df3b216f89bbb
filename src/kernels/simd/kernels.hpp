// The SIMD kernels, declared once for every instruction set.
//
// Each kernel is a functor whose operator() is templated on an xsimd Arch.
// Its definition lives in simd/<kernel>_simd.hpp and is compiled only in the
// three small translation units of arch/ (avx512.cpp, avx2.cpp, sse42.cpp),
// each built with its own -m flags; dispatch.cpp picks one at run time with
// xsimd::dispatch. Every kernel has the same math as its scalar *_ref twin in
// the parent folder; only the loops are vectorised. Shapes and strides are
// those of the _ref twin.
#pragma once

#include <cassert>  // xsimd 8.1's xsimd_arch.hpp uses assert() without including it
#include <cstddef>
#include <xsimd/config/xsimd_arch.hpp>

namespace attntrace::simd {

// Best first: xsimd::dispatch takes the first one the CPU supports.
using Archs = xsimd::arch_list<xsimd::avx512bw, xsimd::fma3<xsimd::avx2>, xsimd::sse4_2>;

// GEMM cache blocking (see simd/gemm_simd.hpp for the loops), sized for the
// caches measured here (Cascade Lake: L1d 32 KiB, L2 1 MiB per core, L3 35 MiB):
// K block: the A micro-panel (MR x kc, broadcast from) stays in L1 while the
// micro-kernel sweeps the B block: 14·384·4 = 21 KiB with AVX-512.
inline constexpr std::size_t kGemmKC = 384;
// N block: the packed B block (kc x kNC) stays in L2: 384·480·4 = 720 KiB.
// A multiple of every NR (32, 16, 8).
inline constexpr std::size_t kGemmNC = 480;
// M block: the packed A block (kMC x kc) stays in L3: 1680·384·4 = 2.5 MiB.
// A multiple of both MR values (14 and 6).
inline constexpr std::size_t kGemmMC = 1680;
inline constexpr std::size_t gemm_workspace_floats() { return kGemmMC * kGemmKC + kGemmKC * kGemmNC; }

// c = a·b or a·bᵀ (b_transposed): see matmul_ref / matmul_nt_ref.
// `work` is scratch for the packed panels: gemm_workspace_floats() floats,
// 64-byte aligned, owned by the caller, so that no allocator is instantiated
// in the translation units built with ISA flags (see arch/avx512.cpp).
struct Gemm {
    template <class Arch>
    void operator()(Arch, const float* a, std::size_t lda, const float* b, std::size_t ldb, bool b_transposed,
                    float* c, std::size_t ldc, std::size_t M, std::size_t K, std::size_t N, float* work) const;
};

// See softmax_rows_ref. Returns the number of rows with every cell -inf.
struct SoftmaxRows {
    template <class Arch>
    std::size_t operator()(Arch, const float* x, std::size_t rows, std::size_t cols, float* row_max, float* shifted,
                           float* e, float* row_sum, float* out) const;
};

// x̂ = (x - μ)/σ and out = γ ⊙ x̂ + β for rows whose μ and σ are given
// (LayerNorm's statistics stay in the scalar double loop: see layernorm.hpp).
struct NormalizeRows {
    template <class Arch>
    void operator()(Arch, const float* x, std::size_t rows, std::size_t C, const float* mean, const float* sigma,
                    const float* gamma, const float* beta, float* xhat, float* out) const;
};

// Runs `iterations` rounds of independent FMAs on registers and returns the
// floating-point operations done: the machine's peak, for bench's "% of peak".
struct PeakFma {
    template <class Arch>
    double operator()(Arch, std::size_t iterations) const;
};

struct Relu {
    template <class Arch>
    void operator()(Arch, const float* x, float* y, std::size_t n) const;
};
struct Gelu {
    template <class Arch>
    void operator()(Arch, const float* x, float* y, std::size_t n) const;
};
struct Add {
    template <class Arch>
    void operator()(Arch, const float* a, const float* b, float* y, std::size_t n) const;
};
struct AddBiasRows {
    template <class Arch>
    void operator()(Arch, float* c, std::size_t ldc, const float* bias, std::size_t M, std::size_t N) const;
};

}  // namespace attntrace::simd

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
#include <cmath>
#include <cstddef>
#include <xsimd/config/xsimd_arch.hpp>

#include "kernels/activations.hpp"  // FloatBitsMax
#include "kernels/map_fold.hpp"     // MapFold, MapMask
#include "kernels/matmul.hpp"       // StoredType
#include "kernels/attention.hpp"  // kAttnBr, kAttnBc
#include "kernels/tuning.hpp"     // blocking and when to use threads

namespace attntrace::simd {

// Best first: xsimd::dispatch takes the first one the CPU supports.
using Archs = xsimd::arch_list<xsimd::avx512bw, xsimd::fma3<xsimd::avx2>, xsimd::sse4_2>;

// c = a·b or a·bᵀ (b_transposed): see matmul_ref / matmul_nt_ref, blocked
// by `blk` (kernels/blocking.hpp; one that does not suit this Arch's tile is
// replaced by kGemmMeasured). `workspace()` returns the calling thread's
// scratch for the packed panels: gemm_workspace_floats() floats, 64-byte
// aligned, owned by the caller, so that no allocator is instantiated in the
// translation units built with ISA flags (see arch/avx512.cpp). Each thread
// of the product's parallel region asks for its own. The options change
// where values go, never the numbers:
//   stream_c: C's final values are stored past the caches (stream_store.hpp)
//     where C's rows are aligned to the register width;
//   b_packed: all of B as GemmPackB packed it with the same blk, K and N (b
//     is then not read): one packing for many products of row blocks of A;
//   bias: (N) added to every row of C as each tile's final values are
//     stored, after its last K block: the sum C + bias of the product then a
//     bias pass (add_bias_rows_ref's order: the same bits), without reading
//     C back;
//   b_stored: B read from here as b_type (kernels/matmul.hpp's StoredMatrix,
//     ldb and b_transposed in its elements; b is then not read), widened to
//     float32 as its panels are packed: the same panels, so the same numbers,
//     as a float32 copy of it would give. With b_not_finite, *b_not_finite
//     is set (never cleared) when a packed value of it is an infinity or a
//     NaN: every value of B is packed by some thread, so the product checks
//     all of B as it reads it, with no pass of its own.
struct GemmOptions {
    bool stream_c = false;
    const float* b_packed = nullptr;
    const float* bias = nullptr;
    const void* b_stored = nullptr;
    StoredType b_type = StoredType::f32;
    bool* b_not_finite = nullptr;
};
struct Gemm {
    template <class Arch>
    void operator()(Arch, const float* a, std::size_t lda, const float* b, std::size_t ldb, bool b_transposed,
                    float* c, std::size_t ldc, std::size_t M, std::size_t K, std::size_t N, float* (*workspace)(),
                    GemmBlocking blk, GemmOptions opt = {}) const;
};
// B (K, N), or bᵀ's (N, K) with b_transposed, packed whole into `out` in the
// layout Gemm's micro-kernels read for blocking blk: K·round_up(N, NR)
// floats, at most K·round_up(N, 32) (gemm_packed_b_floats), `out` 64-byte aligned.
struct GemmPackB {
    template <class Arch>
    void operator()(Arch, const float* b, std::size_t ldb, bool b_transposed, std::size_t K, std::size_t N,
                    GemmBlocking blk, float* out) const;
};
// GemmPackB of a B stored as `type` (GemmOptions::b_stored), widened as packed:
// the floats GemmPackB gives for B widened first, bit for bit.
struct GemmPackBStored {
    template <class Arch>
    void operator()(Arch, const void* b, StoredType type, std::size_t ldb, bool b_transposed, std::size_t K,
                    std::size_t N, GemmBlocking blk, float* out) const;
};

// One row by a matrix, y = x·W + b or x·Wᵀ + b (w_transposed): see gemv_ref,
// with the GEMM's order of the sums for blocking blk (its kc blocks), so
// that y is Gemm's row bit for bit (gemv_simd.hpp). W is read in place,
// never packed whole; `workspace()` as Gemm's (a chunk of y's sums, or one
// NR-row panel of a K block), one per thread of the call's parallel region.
//   x: (K)   W: (K, N) ld ldw, or (N, K) ld ldw transposed   bias: (N) or null   y: (N)
struct Gemv {
    template <class Arch>
    void operator()(Arch, const float* x, const float* W, std::size_t ldw, bool w_transposed, const float* bias,
                    float* y, std::size_t K, std::size_t N, float* (*workspace)(), GemmBlocking blk) const;
};

// See softmax_rows_ref. Returns the number of rows with every cell -inf.
struct SoftmaxRows {
    template <class Arch>
    std::size_t operator()(Arch, const float* x, std::size_t rows, std::size_t cols, float* row_max, float* shifted,
                           float* e, float* row_sum, float* out) const;
};

// x̂ = (x - μ)/σ and out = γ ⊙ x̂ + β for rows whose μ and σ are given
// (LayerNorm's statistics stay in the scalar double loop: see layernorm.hpp).
// See softmax_rows_inplace_ref: the weights over x, only m and s beside them.
struct SoftmaxRowsInPlace {
    template <class Arch>
    std::size_t operator()(Arch, float* x, std::size_t rows, std::size_t cols, float* row_max, float* row_sum) const;
};

// See exp_rows_ref: the exps SoftmaxRows writes, from the shifted scores.
struct ExpRows {
    template <class Arch>
    void operator()(Arch, const float* x, float* e, std::size_t rows, std::size_t cols) const;
};

struct NormalizeRows {
    template <class Arch>
    void operator()(Arch, const float* x, std::size_t rows, std::size_t C, const float* mean, const float* sigma,
                    const float* gamma, const float* beta, float* xhat, float* out) const;
};

// LayerNorm's and RMSNorm's statistics, bit for bit their _ref (row_mean_ref,
// row_var_ref, row_mean_square_ref): rows side by side, each summed in double
// over c ascending (simd/norm_stats_simd.hpp).
struct RowMean {
    template <class Arch>
    void operator()(Arch, const float* x, std::size_t rows, std::size_t C, float* mean) const;
};
struct RowVar {
    template <class Arch>
    void operator()(Arch, const float* x, const float* mean, std::size_t rows, std::size_t C, float* var,
                    std::size_t ddof) const;
};
struct RowMeanSquare {
    template <class Arch>
    void operator()(Arch, const float* x, std::size_t rows, std::size_t C, float* ms) const;
};

// Streaming attention (see attention_streaming_ref; loops in
// simd/attention_simd.hpp). Per thread it needs attention_workspace_floats(hs)
// floats of scratch, independent of Tq and T; `work` holds `threads` of them
// back to back, 64-byte aligned, owned by the caller (no allocator in the ISA
// translation units), and thread t of the parallel region uses the t-th.
// The V block and Oᵀ are padded to hs rounded up to kAttnPad, a multiple of
// every micro-tile height (8 with AVX-512, 4 otherwise).
inline constexpr std::size_t kAttnPad = 8;
inline constexpr std::size_t attention_hs_pad(std::size_t hs) { return (hs + kAttnPad - 1) / kAttnPad * kAttnPad; }
// Row stride of Qᵀ, Sᵀ and Oᵀ (rows of Br queries): one cache line more than
// Br. With a stride of exactly Br floats (1 KiB), a micro-kernel's panel of 32
// queries over 64 rows fell into 8 of L1d's 64 sets, 16 lines to an 8-way set,
// and was re-read from L2: 181 ms against 160 padded (n = 2048, one thread).
inline constexpr std::size_t kAttnLd = kAttnBr + 16;
//   Qᵀ (hs, Ld) + a partial K tile (2·kAttnPad, hs) + V block (Bc, hp) + Sᵀ (Bc, Ld) + Oᵀ (hp, Ld)
//   + m, m', l, α (Br each). With hs = 64: 58 K floats = 228 KiB.
// Every part is a multiple of 16 floats, so each stays 64-byte aligned.
inline constexpr std::size_t attention_workspace_floats(std::size_t hs) {
    return hs * kAttnLd + 2 * kAttnPad * hs + kAttnBc * attention_hs_pad(hs) + kAttnBc * kAttnLd +
           attention_hs_pad(hs) * kAttnLd + 4 * kAttnBr;
}
static_assert(kAttnBr % 16 == 0 && kAttnBc % 16 == 0, "scratch parts stay 64-byte aligned");
struct AttentionStreaming {
    template <class Arch>
    void operator()(Arch, const float* q, const float* k, const float* v, float* z, std::size_t Tq, std::size_t T,
                    std::size_t NH, std::size_t KVH, std::size_t hs, float divisor, KeyWindow keys, float* work,
                    int threads) const;
};

// The GEMM's micro-kernel alone, as the product's two inner loops run it over
// packed blocks (simd/gemm_simd.hpp: ir over mc by MR, jr over nc by NR, each
// call kc deep): c = ap·bp, ap MR-row panels of an (mc, kc) block, bp
// NR-column panels of a (kc, nc) block, k-major (pack_a and pack_b's layouts),
// c row-major (mc, nc) with stride ldc; mc a multiple of MR and nc of NR
// (this Arch's tile: GemmTile in tuning.hpp). For bench: what the register
// tile reaches with its operands in cache, between the FMA peak and a whole
// product. Returns the floating-point operations done.
struct GemmMicroKernel {
    template <class Arch>
    double operator()(Arch, std::size_t kc, std::size_t mc, std::size_t nc, const float* ap, const float* bp, float* c,
                      std::size_t ldc) const;
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
// See gelu_tanh_ref and swiglu_ref (activations.hpp): within a few ulp (xsimd::tanh, xsimd::exp).
struct GeluTanh {
    template <class Arch>
    void operator()(Arch, const float* x, float* y, std::size_t n) const;
};
struct Swiglu {
    template <class Arch>
    void operator()(Arch, const float* g, const float* u, float* y, std::size_t n) const;
};
// See divide_rows_ref (softmax.hpp) and gain_ref (layernorm.hpp): the same operations, bit for bit.
struct DivideRows {
    template <class Arch>
    void operator()(Arch, const float* e, const float* s, std::size_t rows, std::size_t cols, float* out) const;
};
struct Gain {
    template <class Arch>
    void operator()(Arch, const float* xhat, const float* gamma, std::size_t rows, std::size_t C, float* out) const;
};
// See dyt_tanh_ref (layernorm.hpp): bit for bit. α·x in registers, tanh std::tanh's lane by lane (xsimd::tanh
// differs from it by a few ulp), the array split over the threads.
struct DytTanh {
    template <class Arch>
    void operator()(Arch, const float* x, float alpha, float* y, std::size_t n) const;
};
// RoPE's rotation of one row (rope_rows in positions.hpp, bit for bit), its
// angles given: x, y: (heads, hs)   cos_d, sin_d, partner: (hs), where for
// dimension d of a head cos_d[d] = cos(p·θ_i), sin_d[d] = -sin for the
// pair's first member and +sin for its second, partner[d] its pair's other dimension.
struct RotatePairs {
    template <class Arch>
    void operator()(Arch, const float* x, float* y, std::size_t heads, std::size_t hs, const float* cos_d,
                    const float* sin_d, const int* partner) const;
};
// float_bits_max_ref's maxima, lane by lane, then across the lanes
struct BitsMax {
    template <class Arch>
    FloatBitsMax operator()(Arch, const float* x, std::size_t n) const;
};
// map_fold_row_ref's folds, a register of cells at a time (float lane sums)
struct MapFoldRow {
    template <class Arch>
    void operator()(Arch, const float* x, std::size_t cols, std::size_t f, const MapMask& mask, MapFold* folds) const;
};
// y = x, stored past the caches (stream_store.hpp) from y's first aligned float
struct CopyStreamed {
    template <class Arch>
    void operator()(Arch, const float* x, float* y, std::size_t n) const;
};
struct Add {
    template <class Arch>
    void operator()(Arch, const float* a, const float* b, float* y, std::size_t n) const;
};
// 1/d when d is a power of two whose reciprocal is a normal float32 (|d| in
// 2^-126 .. 2^126): x·(1/d) and x/d are then the same real number, so they
// round to the same float for every x (±0, subnormals, inf and NaN alike),
// and a kernel may multiply where its _ref divides: a division of 16 floats
// costs several times a multiply's throughput. 0 for any other d (√hs for
// hs = 64, BERT-base's and GPT-2's, qualifies; Llama's √128 does not).
inline float exact_reciprocal(float d) {
    int e = 0;
    const float m = std::frexp(d, &e);  // d = m·2^e, |m| in [0.5, 1): 0, inf and NaN give no 0.5
    if (std::fabs(m) != 0.5f || e - 1 < -126 || e - 1 > 126) return 0.0f;
    return std::ldexp(m > 0 ? 1.0f : -1.0f, 1 - e);  // d = ±2^(e-1)
}

// See scale_div_ref, scale_mul_ref and add_mask_heads_ref: the same operations,
// bit for bit (ScaleDiv multiplies by exact_reciprocal(divisor) when there is one).
struct ScaleDiv {
    template <class Arch>
    void operator()(Arch, const float* x, float divisor, float* y, std::size_t n) const;
};
struct ScaleMul {
    template <class Arch>
    void operator()(Arch, const float* x, float factor, float* y, std::size_t n) const;
};
struct AddMaskHeads {
    template <class Arch>
    void operator()(Arch, const float* s, const float* mask, float* y, std::size_t NH, std::size_t plane) const;
};

}  // namespace attntrace::simd

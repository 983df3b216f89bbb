// The GEMM's packing (simd/gemm_simd.hpp): A's MR-row panels and B's
// NR-column panels, k-major, in the layouts the micro-kernel reads.
// AVX-512 packs through 16 x 16 register transposes; the other instruction
// sets copy float by float. B may be read as a checkpoint stores it
// (bfloat16 or half, kernels/matmul.hpp's StoredMatrix): its values are
// widened to float32 exactly as they are packed, so the panels hold the same
// floats as a float32 B would give, and there is no float32 copy of B but them. Internal linkage, as in gemm_simd.hpp: each
// instruction set's unit keeps its own copy.
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <xsimd/xsimd.hpp>

#include "kernels/matmul.hpp"  // bf16_to_float_ref, half_to_float_ref

namespace attntrace::simd::gemm_detail {
namespace {

inline std::size_t min_sz(std::size_t a, std::size_t b) { return a < b ? a : b; }

// B's element as stored: float32, bfloat16 or half (distinct types, so that
// pointer arithmetic counts their 2-byte elements), and its float32 value.
struct Bf16 {
    std::uint16_t bits;
};
struct Half {
    std::uint16_t bits;
};
inline float widen(float x) { return x; }
inline float widen(Bf16 x) { return bf16_to_float_ref(x.bits); }
inline float widen(Half x) { return half_to_float_ref(x.bits); }

// 16 consecutive elements widened to float32 (AVX-512), the same bits as
// widen's. Templates, so that only the AVX-512 unit instantiates them (an
// __m512 return elsewhere changes the ABI).
template <int = 0>
__m512 load16(const float* p) { return _mm512_loadu_ps(p); }
template <int = 0>
__m512 load16(const Bf16* p) {
    const __m512i w = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
    return _mm512_castsi512_ps(_mm512_slli_epi32(w, 16));
}
// vcvtph2ps quiets a signalling NaN; half_to_float_ref keeps every NaN's bits:
// lanes of exponent 31 (infinities, NaN) are built from the bits instead.
template <int = 0>
__m512 load16(const Half* p) {
    const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    const __m512i w = _mm512_cvtepu16_epi32(h);
    const __m512i exp = _mm512_set1_epi32(0x7c00);
    const __mmask16 special = _mm512_cmpeq_epi32_mask(_mm512_and_si512(w, exp), exp);
    const __m512i sign = _mm512_slli_epi32(_mm512_and_si512(w, _mm512_set1_epi32(0x8000)), 16);
    const __m512i mant = _mm512_slli_epi32(_mm512_and_si512(w, _mm512_set1_epi32(0x3ff)), 13);
    const __m512i bits = _mm512_or_si512(_mm512_or_si512(sign, mant), _mm512_set1_epi32(0x7f800000));
    return _mm512_mask_blend_ps(special, _mm512_cvtph_ps(h), _mm512_castsi512_ps(bits));
}

// W consecutive elements widened into a register of Arch: 16 at once with
// AVX-512, else one by one.
template <class Arch, class S>
xsimd::batch<float, Arch> load_widened(const S* p) {
    using V = xsimd::batch<float, Arch>;
    if constexpr (std::is_same_v<S, float>) {
        return V::load_unaligned(p);
    } else if constexpr (std::is_base_of_v<xsimd::avx512f, Arch>) {
        return V(load16(p));
    } else {
        alignas(64) float tmp[V::size];
        for (std::size_t i = 0; i < V::size; ++i) tmp[i] = widen(p[i]);
        return V::load_aligned(tmp);
    }
}

// 16 x 16 floats transposed in registers (AVX-512): r[i] lane j -> r[j] lane i.
// Pairs of rows interleaved by 32 bits, then by 64 bits (each 128-bit lane
// then holds one column of 4 rows), then the 4 x 4 lanes exchanged.
inline void transpose16(__m512 r[16]) {
    __m512 t[16];
    for (int i = 0; i < 8; ++i) {
        t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    // s[g][c], rows 4g..4g+3: lane L holds column 4L + c.
    __m512 s[4][4];
    for (int g = 0; g < 4; ++g) {
        const __m512d t0 = _mm512_castps_pd(t[4 * g]), t1 = _mm512_castps_pd(t[4 * g + 1]);
        const __m512d t2 = _mm512_castps_pd(t[4 * g + 2]), t3 = _mm512_castps_pd(t[4 * g + 3]);
        s[g][0] = _mm512_castpd_ps(_mm512_unpacklo_pd(t0, t2));
        s[g][1] = _mm512_castpd_ps(_mm512_unpackhi_pd(t0, t2));
        s[g][2] = _mm512_castpd_ps(_mm512_unpacklo_pd(t1, t3));
        s[g][3] = _mm512_castpd_ps(_mm512_unpackhi_pd(t1, t3));
    }
    for (int c = 0; c < 4; ++c) {
        const __m512 x0 = _mm512_shuffle_f32x4(s[0][c], s[1][c], 0x44), x1 = _mm512_shuffle_f32x4(s[0][c], s[1][c], 0xEE);
        const __m512 x2 = _mm512_shuffle_f32x4(s[2][c], s[3][c], 0x44), x3 = _mm512_shuffle_f32x4(s[2][c], s[3][c], 0xEE);
        r[c] = _mm512_shuffle_f32x4(x0, x2, 0x88);
        r[4 + c] = _mm512_shuffle_f32x4(x0, x2, 0xDD);
        r[8 + c] = _mm512_shuffle_f32x4(x1, x3, 0x88);
        r[12 + c] = _mm512_shuffle_f32x4(x1, x3, 0xDD);
    }
}

// dst[k·stride + i] = src[i·ld + k] for i < rows, 0 for rows <= i < lanes
// (rows <= lanes <= 16), k < kc: rows read contiguously, written as columns.
// AVX-512: 16 k at a time through transpose16, each column stored under a
// mask of `lanes`; the last kc % 16 and the other instruction sets, scalar.
template <class Arch, class S = float>
void pack_columns(const S* src, std::size_t ld, std::size_t rows, std::size_t lanes, std::size_t kc, float* dst,
                  std::size_t stride) {
    std::size_t k0 = 0;
    if constexpr (std::is_base_of_v<xsimd::avx512f, Arch>) {
        const __mmask16 mask = static_cast<__mmask16>((1u << lanes) - 1u);
        for (; k0 + 16 <= kc; k0 += 16) {
            __m512 r[16];
            for (std::size_t i = 0; i < 16; ++i) r[i] = i < rows ? load16(src + i * ld + k0) : _mm512_setzero_ps();
            transpose16(r);
            for (std::size_t k = 0; k < 16; ++k) _mm512_mask_storeu_ps(dst + (k0 + k) * stride, mask, r[k]);
        }
    }
    for (std::size_t i = 0; i < rows; ++i)
        for (std::size_t k = k0; k < kc; ++k) dst[k * stride + i] = widen(src[i * ld + k]);
    for (std::size_t i = rows; i < lanes; ++i)
        for (std::size_t k = k0; k < kc; ++k) dst[k * stride + i] = 0.0f;
}

// ap: panels of MR rows, k-major: ap[p][k][i] = a[ic + p·MR + i, pc + k], 0 past M.
// Rows are read contiguously (the writes stride by MR inside an L1-sized
// panel): reading 14 rows at once per k cost 16% of a 2048 x 3072 x 768 GEMM.
template <class Arch, std::size_t MR>
void pack_a(const float* a, std::size_t lda, std::size_t mc, std::size_t kc, float* ap) {
    static_assert(MR <= 16, "an A panel is packed as the columns of one 16 x 16 transpose");
    for (std::size_t p = 0; p < mc; p += MR) {
        pack_columns<Arch>(a + p * lda, lda, min_sz(MR, mc - p), MR, kc, ap, MR);
        ap += MR * kc;
    }
}

// bp: panels of NR columns, k-major: bp[q][k][j] = b[pc + k, q·NR + j] (or bᵀ), 0 past N,
// widened from S.
// b row-major: each k's NR floats copied as whole registers; bᵀ: its rows
// are bp's columns, packed 16 at a time as A's are.
template <class Arch, std::size_t NR, class S = float>
void pack_b(const S* b, std::size_t ldb, bool transposed, std::size_t kc, std::size_t n, float* bp) {
    using V = xsimd::batch<float, Arch>;
    constexpr std::size_t W = V::size;
    for (std::size_t q = 0; q < n; q += NR) {
        const std::size_t cols = min_sz(NR, n - q);
        if (transposed) {
            for (std::size_t h = 0; h < NR; h += 16) {
                const std::size_t rows = cols > h ? min_sz(16, cols - h) : 0;
                pack_columns<Arch>(b + (q + h) * ldb, ldb, rows, min_sz(16, NR - h), kc, bp + h, NR);
            }
        } else if (cols == NR) {
            for (std::size_t k = 0; k < kc; ++k)
                for (std::size_t j = 0; j < NR; j += W) load_widened<Arch>(b + k * ldb + q + j).store_aligned(bp + k * NR + j);
        } else {
            for (std::size_t k = 0; k < kc; ++k) {
                for (std::size_t j = 0; j < cols; ++j) bp[k * NR + j] = widen(b[k * ldb + q + j]);
                for (std::size_t j = cols; j < NR; ++j) bp[k * NR + j] = 0.0f;
            }
        }
        bp += NR * kc;
    }
}

}  // namespace
}  // namespace attntrace::simd::gemm_detail

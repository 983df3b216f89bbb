// Attention's core in one streaming pass (FlashAttention's online softmax),
// and the element-wise scale and mask stages of the materialised pipeline.
//
// Letters as everywhere: Tq queries, T keys, NH heads, hs head size.
#pragma once

#include <cstddef>
#include <cstdint>

namespace attntrace {

// Block sizes of the streaming pass, shared by attention_streaming_ref and
// the SIMD version so both take the same steps (and agree to a few ulp).
// Budget (L1d 32 KiB, L2 1 MiB per core), with hs = 64 (BERT-base):
//   Bc: the mix micro-kernel sweeps a P panel (Bc keys x 32 queries, 8 KiB)
//       and the V block (Bc x hs, 16 KiB) from L1d, with the K tile and Oᵀ
//       tile beside them; Bc = 128 doubles both past L1d.
//   Br: K and V stream from L3 once per query block, Tq/Br times per head,
//       while Qᵀ, Sᵀ and Oᵀ (hs x Br, Bc x Br, hs x Br: 68 KiB each) must stay
//       in L2: 228 KiB of scratch per thread in all.
// Measured (Tq = T = 2048, NH = 12, one thread, best of 4 interleaved runs,
// ms): Br x Bc = 256 x 64: 160; 512 x 64: 163; 256 x 128: 165; 512 x 32: 168;
// 128 x 64: 169; 256 x 32: 170; 128 x 128: 176.
// Multiples of 32 (two AVX-512 registers of queries) and of 16.
inline constexpr std::size_t kAttnBr = 256;  // query rows per block
inline constexpr std::size_t kAttnBc = 64;   // keys per block

// Which keys a query sees in the streaming pass: the query at position p sees
// the keys j with p - before <= j <= p + after, clipped to [0, T) (kAllKeys:
// no bound on that side). Every query sees itself, so every row has a key.
//   none: (kAllKeys, kAllKeys)   causal: (kAllKeys, 0)   (bool converts to these)
//   symmetric window w: ((w-1)/2, (w-1)/2)   causal window w: (w - 1, 0)
inline constexpr std::size_t kAllKeys = SIZE_MAX;
struct KeyWindow {
    std::size_t before = kAllKeys, after = kAllKeys;
    constexpr KeyWindow() = default;
    constexpr KeyWindow(bool causal) : after(causal ? 0 : kAllKeys) {}  // NOLINT: none or causal, as before windows
    constexpr KeyWindow(std::size_t b, std::size_t a) : before(b), after(a) {}
    // the first and last key position p sees, before clipping to T
    constexpr std::size_t first(std::size_t p) const { return p > before ? p - before : 0; }
    constexpr std::size_t last(std::size_t p) const { return after > SIZE_MAX - p ? SIZE_MAX : p + after; }
    constexpr bool sees(std::size_t p, std::size_t j) const { return j >= first(p) && j <= last(p); }
};

// Z_h = softmax(mask(Q_h·K_gᵀ / divisor))·V_g for every head h, one block of
// Br queries against blocks of Bc keys at a time; no (Tq, T) matrix is held.
//   q: (Tq, NH, hs)   k, v: (T, KVH, hs)   z: (Tq, NH, hs)
// row-major, q and z with row stride NH·hs, k and v with KVH·hs; head h is
// columns h·hs .. (h+1)·hs - 1 of q and z. Query head h reads K/V head
// g = h / (NH / KVH) (KVH divides NH): KVH = NH is multi-head attention, 1
// multi-query, in between grouped-query.
// keys: query i sits at position p = i + (T - Tq) (as pipeline/mask_pattern.hpp)
// and sees the keys keys.sees(p, j); requires T >= Tq unless keys is (kAllKeys,
// kAllKeys). T >= 1 always. Key blocks no query of a block sees are skipped.
// For each head and query block, over the key blocks it can see:
//   pass 1: S = Q·Kᵀ / divisor, masked cells -inf      (rows, cols)
//   pass 2: m' = max(m, rowmax S)                       (rows)
//   pass 3: P = exp(S - m');  α = exp(m - m');  l = l·α + rowsum P
//           (while a row has seen only masked keys, m' = -inf: m' is taken
//           as 0 there, so P = 0 and α = 0 instead of exp(-inf + inf) = NaN)
//   pass 4: O = O·α + P·V                               (rows, hs)
// and at the end Z = O / l. m starts at -inf, l and O at 0.
void attention_streaming_ref(const float* q, const float* k, const float* v, float* z, std::size_t Tq,
                             std::size_t T, std::size_t NH, std::size_t KVH, std::size_t hs, float divisor,
                             KeyWindow keys);

// y = x / divisor   (the scale stage)                     x, y: (n)
void scale_div_ref(const float* x, float divisor, float* y, std::size_t n);
// y = x · factor   (the scale stage with config.scale {"multiply_by": f})  x, y: (n)
void scale_mul_ref(const float* x, float factor, float* y, std::size_t n);

// y[h, i] = s[h, i] + mask[i]   (the mask stage)           s, y: (NH, plane)   mask: (plane)
// plane is Tq·T: one (Tq, T) mask broadcast over the heads; -inf + finite = -inf.
void add_mask_heads_ref(const float* s, const float* mask, float* y, std::size_t NH, std::size_t plane);

}  // namespace attntrace

// Streaming attention with xsimd. Same math as attention_streaming_ref (same
// blocks, same passes, every sum over the keys in the same order); only the
// loops are vectorised, with FMA in the two products and xsimd::exp for
// std::exp.
//
// Layout: the score block is held transposed, Sᵀ (keys x queries), so that a
// register holds W queries of one key. Then
//   - Qᵀ is packed once per query block, and K is read in place: no
//     transpose per key block;
//   - every per-query reduction (row max, row sum, the α rescale) is a
//     vertical op across registers: no horizontal sums.
// Two register-tiled micro-kernels, MR x NR accumulators (NR = two registers
// of queries), broadcasting MR scalars from memory per step:
//   scores:  Sᵀ[MR keys][NR queries] = K rows · Qᵀ panel          over d < hs
//   mix:     Oᵀ[MR dims][NR queries] = Oᵀ·α + V blockᵀ · P panel  over keys
// Register budget: MR·2 accumulators + 2 loads + 1 broadcast. AVX-512 (32
// zmm): MR = 8 -> 19; per step 2 loads + 8 broadcasts feed 16 FMAs, so the
// FMA ports, not the loads, bound it. 16-register sets: MR = 4 -> 11.
//
// Measured (Tq = T = 2048, NH = 12, hs = 64, one thread, best of 3-4
// interleaved runs; the two micro-kernels alone run at the FMA peak):
//   these micro-kernels: 166 ms; the two products through the packed
//   simd::Gemm instead (S row-major, which packs Q and transposes K again for
//   every key block): 277 ms at best (Br = Bc = 256), 326 ms at 256 x 64;
//   V copied into a contiguous block, not read in place: 165 ms against 183
//   (in place, its rows 3 KiB apart fall into few L1 sets; K tiles are only
//   8 rows and gain nothing from a copy);
//   Qᵀ, Sᵀ, Oᵀ rows padded to kAttnLd: 160 ms against 181;
//   prefetching the next key block: 177 ms against 190.
#pragma once

#include <omp.h>

#include <cstring>
#include <limits>
#include <xsimd/xsimd.hpp>

#include "kernels/simd/gemm_simd.hpp"  // gemm_detail::fmadd
#include "kernels/simd/kernels.hpp"

namespace attntrace::simd {

// Internal linkage, as in gemm_simd.hpp: compiled once per instruction set.
namespace attn_detail {
namespace {

constexpr std::size_t Br = kAttnBr, Bc = kAttnBc, Ld = kAttnLd;
constexpr float kNegInf = -std::numeric_limits<float>::infinity();

template <class Arch>
struct Tile {
    using B = xsimd::batch<float, Arch>;
    static constexpr std::size_t W = B::size;
    static constexpr std::size_t NR = 2 * W;
    static constexpr std::size_t MR = W == 16 ? 8 : 4;
    static_assert(Br % NR == 0 && kAttnPad % MR == 0, "blocks hold whole tiles");
};

inline std::size_t min_sz(std::size_t a, std::size_t b) { return a < b ? a : b; }
inline std::size_t round_up(std::size_t a, std::size_t m) { return (a + m - 1) / m * m; }

// ld: row stride of q and z (NH·hs); kvld: of k and v (KVH·hs); group = NH / KVH
struct Problem {
    const float *q, *k, *v;
    float* z;
    std::size_t Tq, T, NH, hs, hp, ld, offset;
    float divisor;
    KeyWindow keys;
    std::size_t kvld, group;
    float reciprocal;  // exact_reciprocal(divisor): 0 when the scores must be divided
};

// Per-thread scratch, carved from attention_workspace_floats(hs) floats:
//   Qt (hs, Ld)  Kp (2·kAttnPad, hs)  Vp (Bc, hp)  S (Bc, Ld)  Ot (hp, Ld)  m, mnew, l, alpha (Br)
struct Scratch {
    float *Qt, *Kp, *Vp, *S, *Ot, *m, *mnew, *l, *alpha;
    Scratch(float* w, std::size_t hs, std::size_t hp)
        : Qt(w), Kp(Qt + hs * Ld), Vp(Kp + 2 * kAttnPad * hs), S(Vp + Bc * hp), Ot(S + Bc * Ld), m(Ot + hp * Ld),
          mnew(m + Br), l(mnew + Br), alpha(l + Br) {}
};

// Keys of this key block that queries it .. it + NR - 1 of the query block can
// see: [0, n). Past n every cell of the tile is masked, so none is computed;
// 0 also when the block ends before the tile's first query's first key.
inline std::size_t visible_keys(const Problem& p, std::size_t i0, std::size_t it, std::size_t NR, std::size_t j0,
                                std::size_t cols) {
    if (p.keys.first(i0 + it + p.offset) >= j0 + cols) return 0;
    const std::size_t last = p.keys.last(i0 + it + NR - 1 + p.offset);  // the tile's last query sees keys <= last
    return last < j0 ? 0 : last - j0 >= cols ? cols : last - j0 + 1;  // last may be SIZE_MAX: no + 1 before the test
}

// pass 1: Sᵀ[jt .. jt + MR)[it .. it + NR) = (K rows · Qᵀ) / divisor, masked cells -inf
// pass 2: mnew[it ..] = max(mnew, max over the tile's keys jt + r < nvalid)
// kt: the tile's MR key rows, kld apart (k itself, or the zero-padded copy of a last, partial tile)
template <class Arch>
void scores_tile(const Problem& p, const Scratch& s, std::size_t i0, std::size_t it, std::size_t j0, std::size_t jt,
                 std::size_t nvalid, const float* kt, std::size_t kld) {
    using T = Tile<Arch>;
    using B = typename T::B;
    constexpr std::size_t MR = T::MR, W = T::W, NR = T::NR;
    B acc0[MR], acc1[MR];
    for (std::size_t r = 0; r < MR; ++r) acc0[r] = acc1[r] = B(0.0f);
    const float* qt = s.Qt + it;
    for (std::size_t d = 0; d < p.hs; ++d) {
        const B b0 = B::load_unaligned(qt + d * Ld), b1 = B::load_unaligned(qt + d * Ld + W);
#pragma GCC unroll 8
        for (std::size_t r = 0; r < MR; ++r) {
            const B a(kt[r * kld + d]);
            acc0[r] = gemm_detail::fmadd<Arch>(a, b0, acc0[r]);
            acc1[r] = gemm_detail::fmadd<Arch>(a, b1, acc1[r]);
        }
    }
    float* st = s.S + jt * Ld + it;
    // a true division, as the _ref, but where 1/divisor is exact (√hs a power of two: kernels.hpp,
    // exact_reciprocal), a product with the same bits
    if (p.reciprocal != 0.0f) {
        const B rec(p.reciprocal);
        for (std::size_t r = 0; r < MR; ++r) {
            (acc0[r] * rec).store_unaligned(st + r * Ld);
            (acc1[r] * rec).store_unaligned(st + r * Ld + W);
        }
    } else {
        const B div(p.divisor);
        for (std::size_t r = 0; r < MR; ++r) {
            (acc0[r] / div).store_unaligned(st + r * Ld);
            (acc1[r] / div).store_unaligned(st + r * Ld + W);
        }
    }
    // key j is masked for the queries whose window it is outside: a prefix of the
    // tile's row (j after them) and a suffix (j before them)
    const std::size_t pfirst = i0 + it + p.offset, plast = pfirst + NR - 1;
    if (j0 + jt + MR - 1 > p.keys.last(pfirst) || p.keys.first(plast) > j0 + jt)
        for (std::size_t r = 0; r < MR; ++r) {
            const std::size_t j = j0 + jt + r;
            for (std::size_t c = 0; c < NR; ++c)
                if (!p.keys.sees(pfirst + c, j)) st[r * Ld + c] = kNegInf;
        }
    B mx0 = B::load_unaligned(s.mnew + it), mx1 = B::load_unaligned(s.mnew + it + W);
    for (std::size_t r = 0; r < MR && jt + r < nvalid; ++r) {
        mx0 = xsimd::max(mx0, B::load_unaligned(st + r * Ld));
        mx1 = xsimd::max(mx1, B::load_unaligned(st + r * Ld + W));
    }
    mx0.store_unaligned(s.mnew + it);
    mx1.store_unaligned(s.mnew + it + W);
}

// pass 3 for queries iv .. iv + W - 1: P = exp(Sᵀ - m'), α = exp(m - m'), l = l·α + Σ_{j < nkeys} P
template <class Arch>
void exp_columns(const Scratch& s, std::size_t iv, std::size_t nkeys) {
    using B = typename Tile<Arch>::B;
    const B m_old = B::load_unaligned(s.m + iv), m_new = B::load_unaligned(s.mnew + iv);
    // a query that has seen only masked keys has m' = -inf: shift by 0 there (P = 0, α = 0), as the _ref
    const B shift = xsimd::select(m_new == B(kNegInf), B(0.0f), m_new);
    const B alpha = xsimd::exp(m_old - shift);  // 0 on the first block (m = -inf)
    B sum(0.0f);
    for (std::size_t j = 0; j < nkeys; ++j) {
        float* sj = s.S + j * Ld + iv;
        const B e = xsimd::exp(B::load_unaligned(sj) - shift);  // masked: exp(-inf) = 0
        e.store_unaligned(sj);
        sum += e;
    }
    alpha.store_unaligned(s.alpha + iv);
    (B::load_unaligned(s.l + iv) * alpha + sum).store_unaligned(s.l + iv);
    m_new.store_unaligned(s.m + iv);
}

// pass 4: Oᵀ[dt .. dt + MR)[it .. it + NR) = Oᵀ·α + Σ_{j < nkeys} Vp[j, dt ..]ᵀ · P[j, it ..]
template <class Arch>
void mix_tile(const Problem& p, const Scratch& s, std::size_t it, std::size_t dt, std::size_t nkeys) {
    using T = Tile<Arch>;
    using B = typename T::B;
    constexpr std::size_t MR = T::MR, W = T::W;
    const B a0 = B::load_unaligned(s.alpha + it), a1 = B::load_unaligned(s.alpha + it + W);
    float* ot = s.Ot + dt * Ld + it;
    B acc0[MR], acc1[MR];
    for (std::size_t r = 0; r < MR; ++r) {
        acc0[r] = B::load_unaligned(ot + r * Ld) * a0;
        acc1[r] = B::load_unaligned(ot + r * Ld + W) * a1;
    }
    const float* pt = s.S + it;
    const float* vp = s.Vp + dt;
    for (std::size_t j = 0; j < nkeys; ++j) {
        const B p0 = B::load_unaligned(pt + j * Ld), p1 = B::load_unaligned(pt + j * Ld + W);
#pragma GCC unroll 8
        for (std::size_t r = 0; r < MR; ++r) {
            const B b(vp[j * p.hp + r]);
            acc0[r] = gemm_detail::fmadd<Arch>(b, p0, acc0[r]);
            acc1[r] = gemm_detail::fmadd<Arch>(b, p1, acc1[r]);
        }
    }
    for (std::size_t r = 0; r < MR; ++r) {
        acc0[r].store_unaligned(ot + r * Ld);
        acc1[r].store_unaligned(ot + r * Ld + W);
    }
}

// Asks for rows j0 .. j0 + n - 1 of K/V head g of k and v ahead of use, into L2.
// Their rows are hs floats KVH·hs apart (3 KiB for BERT-base), a pattern the
// hardware prefetcher does not follow across pages.
inline void prefetch_rows(const Problem& p, std::size_t g, std::size_t j0, std::size_t n) {
    for (std::size_t j = j0; j < j0 + n; ++j)
        for (std::size_t d = 0; d < p.hs; d += 16) {  // one per 64-byte line
            __builtin_prefetch(p.k + j * p.kvld + g * p.hs + d, 0, 2);
            __builtin_prefetch(p.v + j * p.kvld + g * p.hs + d, 0, 2);
        }
}

// One head h and query rows i0 .. i0 + rows - 1, over the key blocks they can see.
template <class Arch>
void attention_block(const Problem& p, const Scratch& s, std::size_t h, std::size_t i0) {
    using T = Tile<Arch>;
    using B = typename T::B;
    constexpr std::size_t MR = T::MR, W = T::W, NR = T::NR;
    const std::size_t rows = min_sz(Br, p.Tq - i0);
    const std::size_t nq = round_up(rows, NR);  // query columns computed; the padding has Q = 0
    // keys some row of the block sees: key blocks kbegin .. kend (as the _ref)
    const std::size_t kbegin = p.keys.first(i0 + p.offset) / Bc * Bc;
    const std::size_t kend = min_sz(p.T - 1, p.keys.last(i0 + rows - 1 + p.offset)) + 1;
    const std::size_t g = h / p.group;  // the K/V head query head h reads
    // Qᵀ (hs, nq), once for all key blocks; m = -inf, l = 0, Oᵀ = 0
    for (std::size_t i = 0; i < rows; ++i) {
        const float* qi = p.q + (i0 + i) * p.ld + h * p.hs;
        for (std::size_t d = 0; d < p.hs; ++d) s.Qt[d * Ld + i] = qi[d];
    }
    for (std::size_t d = 0; d < p.hs; ++d)
        for (std::size_t i = rows; i < nq; ++i) s.Qt[d * Ld + i] = 0.0f;
    for (std::size_t i = 0; i < nq; ++i) s.m[i] = kNegInf, s.l[i] = 0.0f;
    for (std::size_t i = 0; i < p.hp * Ld; ++i) s.Ot[i] = 0.0f;
    for (std::size_t j0 = kbegin; j0 < kend; j0 += Bc) {
        const std::size_t cols = min_sz(Bc, p.T - j0);
        const float* kh = p.k + j0 * p.kvld + g * p.hs;  // K block rows (cols, hs), kvld apart
        const float* vh = p.v + j0 * p.kvld + g * p.hs;
        // a last, partial K tile: its rows copied and zero padded to MR
        const std::size_t kfull = cols / MR * MR;
        for (std::size_t j = kfull; j < round_up(cols, MR); ++j)
            for (std::size_t d = 0; d < p.hs; ++d) s.Kp[(j - kfull) * p.hs + d] = j < cols ? kh[j * p.kvld + d] : 0.0f;
        // V block (cols, hp), contiguous, zero padded to hp columns
        for (std::size_t j = 0; j < cols; ++j)
            for (std::size_t d = 0; d < p.hp; ++d) s.Vp[j * p.hp + d] = d < p.hs ? vh[j * p.kvld + d] : 0.0f;
        // the next key block's rows, a share per query tile, while this block runs
        const std::size_t next = j0 + Bc, nnext = next < kend ? min_sz(Bc, kend - next) : 0;
        const std::size_t share = (nnext + nq / NR - 1) / (nq / NR);
        std::memcpy(s.mnew, s.m, nq * sizeof(float));
        for (std::size_t it = 0; it < nq; it += NR) {
            const std::size_t first = it / NR * share;
            if (first < nnext) prefetch_rows(p, g, next + first, min_sz(share, nnext - first));
            const std::size_t nkeys = visible_keys(p, i0, it, NR, j0, cols);
            if (nkeys == 0) continue;  // all masked: α = 1 and P = 0 would leave m, l and O as they are
            // passes 1, 2 (scores, new max), then 3 (exp, row sums) on this tile's queries
            for (std::size_t jt = 0; jt < nkeys; jt += MR) {
                const bool whole = jt + MR <= cols;
                scores_tile<Arch>(p, s, i0, it, j0, jt, nkeys, whole ? kh + jt * p.kvld : s.Kp, whole ? p.kvld : p.hs);
            }
            for (std::size_t iv = it; iv < it + NR; iv += W) exp_columns<Arch>(s, iv, nkeys);
            // pass 4: O = O·α + P·V
            for (std::size_t dt = 0; dt < p.hp; dt += MR) mix_tile<Arch>(p, s, it, dt, nkeys);
        }
    }
    // Z = O / l, then Oᵀ back to rows of z
    for (std::size_t d = 0; d < p.hs; ++d)
        for (std::size_t iv = 0; iv < nq; iv += W)
            (B::load_unaligned(s.Ot + d * Ld + iv) / B::load_unaligned(s.l + iv)).store_unaligned(s.Ot + d * Ld + iv);
    for (std::size_t i = 0; i < rows; ++i) {
        float* zi = p.z + (i0 + i) * p.ld + h * p.hs;
        for (std::size_t d = 0; d < p.hs; ++d) zi[d] = s.Ot[d * Ld + i];
    }
}

}  // namespace
}  // namespace attn_detail

template <class Arch>
void AttentionStreaming::operator()(Arch, const float* q, const float* k, const float* v, float* z, std::size_t Tq,
                                    std::size_t T, std::size_t NH, std::size_t KVH, std::size_t hs, float divisor,
                                    KeyWindow keys, float* work, int threads) const {
    using namespace attn_detail;
    const std::size_t hp = attention_hs_pad(hs);
    const Problem p{q, k, v, z, Tq, T, NH, hs, hp, NH * hs, T >= Tq ? T - Tq : 0, divisor, keys, KVH * hs, NH / KVH,
                    exact_reciprocal(divisor)};
    const std::size_t blocks = (Tq + Br - 1) / Br, items = NH * blocks;
    // One (head, query block) per item, each computed whole by one thread in
    // the same order whatever the thread count: the result does not depend on
    // it. Round-robin (static, 1): under a causal mask later blocks see more
    // keys, and interleaving evens the threads' shares.
    // Small calls (one query over a short cache) stay on the calling thread (kAttnParallelWork).
    const double size = static_cast<double>(items) * T * hs;
#pragma omp parallel num_threads(threads) if (threads > 1 && items > 1 && size > kAttnParallelWork)
    {
        const Scratch s(work + static_cast<std::size_t>(omp_get_thread_num()) * attention_workspace_floats(hs), hs,
                        hp);
#pragma omp for schedule(static, 1)
        for (std::size_t item = 0; item < items; ++item)
            attention_block<Arch>(p, s, item / blocks, item % blocks * Br);
    }
}

}  // namespace attntrace::simd

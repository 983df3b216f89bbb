#include "kernels/attention.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <vector>

namespace attntrace {

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// One head h, query rows i0 .. i0 + rows - 1: the passes of attention_streaming_ref.
// S: (Br, Bc)   O: (Br, hs)   m, l, alpha: (Br)   scratch owned by the caller
void attention_block_ref(const float* q, const float* k, const float* v, float* z, std::size_t Tq, std::size_t T,
                         std::size_t NH, std::size_t KVH, std::size_t hs, float divisor, KeyWindow keys, std::size_t h,
                         std::size_t i0, float* S, float* O, float* m, float* l, float* alpha) {
    const std::size_t ld = NH * hs;     // q, z
    const std::size_t kvld = KVH * hs;  // k, v
    const std::size_t g = h / (NH / KVH);  // the K/V head query head h reads
    const std::size_t offset = T >= Tq ? T - Tq : 0;  // query i sits at position i + offset
    const std::size_t rows = std::min(kAttnBr, Tq - i0);
    // keys some row of the block can see: [first row's first, last row's last];
    // key blocks before and after are skipped
    const std::size_t kbegin = keys.first(i0 + offset) / kAttnBc * kAttnBc;
    const std::size_t kend = std::min(T - 1, keys.last(i0 + rows - 1 + offset)) + 1;
    const float* qh = q + h * hs;
    const float* kh = k + g * hs;
    const float* vh = v + g * hs;
    std::fill(m, m + rows, kNegInf);
    std::fill(l, l + rows, 0.0f);
    std::fill(O, O + rows * hs, 0.0f);
    for (std::size_t j0 = kbegin; j0 < kend; j0 += kAttnBc) {
        const std::size_t cols = std::min(kAttnBc, T - j0);
        // pass 1: S = Q·Kᵀ / divisor, masked cells -inf   (rows, cols)
        for (std::size_t r = 0; r < rows; ++r)
            for (std::size_t c = 0; c < cols; ++c) {
                const float* qi = qh + (i0 + r) * ld;
                const float* kj = kh + (j0 + c) * kvld;
                float acc = 0.0f;  // the order of matmul_nt_ref: the same S, bit for bit
                for (std::size_t d = 0; d < hs; ++d) acc += qi[d] * kj[d];
                const bool masked = !keys.sees(i0 + r + offset, j0 + c);
                S[r * kAttnBc + c] = masked ? kNegInf : acc / divisor;
            }
        for (std::size_t r = 0; r < rows; ++r) {
            float* Sr = S + r * kAttnBc;
            // pass 2: m' = max(m, rowmax S); -inf while the row has seen only masked keys
            float mnew = m[r];
            for (std::size_t c = 0; c < cols; ++c) mnew = Sr[c] > mnew ? Sr[c] : mnew;
            // pass 3: P = exp(S - m');  α = exp(m - m') rescales what was summed under the old max
            //         (α = 0 on the first block, where m = -inf); l = l·α + rowsum P.
            // With m' = -inf, m' is taken as 0: P = 0 and α = 0, not exp(-inf + inf) = NaN.
            const float shift = mnew == kNegInf ? 0.0f : mnew;
            alpha[r] = std::exp(m[r] - shift);
            float sum = 0.0f;
            for (std::size_t c = 0; c < cols; ++c) {
                Sr[c] = std::exp(Sr[c] - shift);  // masked: exp(-inf) = 0
                sum += Sr[c];
            }
            l[r] = l[r] * alpha[r] + sum;
            m[r] = mnew;
        }
        // pass 4: O = O·α + P·V   (rows, hs)
        for (std::size_t r = 0; r < rows; ++r) {
            float* Or = O + r * hs;
            for (std::size_t d = 0; d < hs; ++d) Or[d] *= alpha[r];
            for (std::size_t c = 0; c < cols; ++c) {
                const float p = S[r * kAttnBc + c];
                const float* vj = vh + (j0 + c) * kvld;
                for (std::size_t d = 0; d < hs; ++d) Or[d] += p * vj[d];
            }
        }
    }
    // Z = O / l
    for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t d = 0; d < hs; ++d) z[(i0 + r) * ld + h * hs + d] = O[r * hs + d] / l[r];
}

}  // namespace

void attention_streaming_ref(const float* q, const float* k, const float* v, float* z, std::size_t Tq,
                             std::size_t T, std::size_t NH, std::size_t KVH, std::size_t hs, float divisor,
                             KeyWindow keys) {
    assert(T >= 1 && ((keys.before == kAllKeys && keys.after == kAllKeys) || T >= Tq) && KVH >= 1 && NH % KVH == 0);
    std::vector<float> S(kAttnBr * kAttnBc), O(kAttnBr * hs), m(kAttnBr), l(kAttnBr), alpha(kAttnBr);
    for (std::size_t h = 0; h < NH; ++h)
        for (std::size_t i0 = 0; i0 < Tq; i0 += kAttnBr)
            attention_block_ref(q, k, v, z, Tq, T, NH, KVH, hs, divisor, keys, h, i0, S.data(), O.data(), m.data(),
                                l.data(), alpha.data());
}

void scale_div_ref(const float* x, float divisor, float* y, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) y[i] = x[i] / divisor;
}
void scale_mul_ref(const float* x, float factor, float* y, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) y[i] = x[i] * factor;
}

void add_mask_heads_ref(const float* s, const float* mask, float* y, std::size_t NH, std::size_t plane) {
    for (std::size_t h = 0; h < NH; ++h)
        for (std::size_t i = 0; i < plane; ++i) y[h * plane + i] = s[h * plane + i] + mask[i];
}

}  // namespace attntrace

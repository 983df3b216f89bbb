// The arithmetic of positional encodings. One definition that the pipeline,
// `explain` and the tests all use, so the three cannot disagree. The angles
// are scalar (in double); RoPE's rotation has a SIMD twin (kernels.hpp:
// rope_rotate_rows, from rope_row_tables below) equal to rope_rows bit for
// bit, and the sinusoidal table is added with kernels.hpp's add.
//
// Letters as everywhere: T tokens, Tq queries, C d_model, NH heads, hs head size.
// A position is a token's index in the sequence; queries, when fewer than
// the tokens (Tq < T), are the last Tq positions (query r at T - Tq + r).
#pragma once

#include <cstddef>
#include <vector>

namespace attntrace {

// Sinusoidal encoding (Vaswani et al. 2017, §3.5). Interleaved as the paper
// writes it: dimension d = 2i holds sin, d = 2i+1 cos, of the same angle
//   angle(p, i) = p / 10000^(2i/C)
// or in halves, as some libraries lay it out (C even): d = i holds sin and
// d = C/2 + i cos of that angle. Computed in double, rounded once to float32.
std::size_t sinusoidal_pair(std::size_t d, std::size_t C, bool interleaved);  // i
bool sinusoidal_is_sin(std::size_t d, std::size_t C, bool interleaved);
double sinusoidal_angle(std::size_t p, std::size_t d, std::size_t C, bool interleaved);
float sinusoidal_value(std::size_t p, std::size_t d, std::size_t C, bool interleaved);
// pe: (T, C)
void sinusoidal_table(float* pe, std::size_t T, std::size_t C, bool interleaved);

// RoPE (Su et al. 2021). Dimension d of a head belongs to pair i with partner
// dimension `partner`; `first` says whether d is the pair's first member a
// (y_a = x_a·cos - x_b·sin) or its second b (y_b = x_b·cos + x_a·sin).
//   half:        pairs (i, i + hs/2)   (GPT-NeoX, Hugging Face Llama's rotate_half)
//   interleaved: pairs (2i, 2i + 1)    (RoFormer, GPT-J, Meta's Llama)
struct RopePair {
    std::size_t i = 0;
    std::size_t partner = 0;
    bool first = true;
};
RopePair rope_pair(std::size_t d, std::size_t hs, bool interleaved);
// θ_i = base^(-2i/hs) and the angle p·θ_i, in double; cos and sin of it
// rounded to float32 (the rotation itself is float32, as PyTorch's
// q·cos + rotate_half(q)·sin).
double rope_theta(std::size_t i, std::size_t hs, double base);
struct CosSin {
    float cos = 1.0f;
    float sin = 0.0f;
};
CosSin rope_cos_sin(std::size_t p, std::size_t i, std::size_t hs, double base);
// One rotated element from the pair's two inputs: x_d and x_partner.
inline float rope_rotate(float x_d, float x_partner, CosSin cs, bool first) {
    return first ? x_d * cs.cos - x_partner * cs.sin : x_d * cs.cos + x_partner * cs.sin;
}
// x, y: (rows, heads, hs), row r at position pos0 + r. The head count comes
// from the tensor (K may have fewer heads than Q). y must not alias x.
// Partial rotation (GPT-NeoX's rotary_pct): the first `rotary` dimensions of
// each head are rotated as a head of that size would be (θ_i =
// base^(-2i/rotary), pairs within them), the others copied; rotary = hs: all.
void rope_rows(const float* x, float* y, std::size_t rows, std::size_t heads, std::size_t hs, std::size_t rotary,
               std::size_t pos0, double base, bool interleaved);

// One row's angles spread to its dimensions, for a vectorised rotation
// (kernels.hpp: rope_rotate_rows): for dimension d of a head, cos_d[d] = cos(p·θ_i),
// sin_d[d] = -sin(p·θ_i) when d is its pair's first member and +sin when the
// second, partner[d] its pair's other dimension, so that
//   y[d] = x[d]·cos_d[d] + x[partner[d]]·sin_d[d]
// equals rope_rotate() above bit for bit (a - b is a + (-b) exactly); a
// dimension past `rotary` is its own partner with cos 1 and sin 0 (x·1 + x·0 = x,
// for every finite x).   cos_d, sin_d, partner: (hs)
void rope_row_tables(std::size_t p, std::size_t hs, std::size_t rotary, double base, bool interleaved, float* cos_d,
                     float* sin_d, int* partner);

// ALiBi's default slopes (Press et al. 2022): for NH a power of two the
// geometric sequence 2^(-8(h+1)/NH); otherwise those of the closest lower
// power of two n, then every other slope of 2n (0th, 2nd, ...) until NH.
std::vector<double> alibi_default_slopes(std::size_t NH);
// bias[h,i,j] = -m_h·|p_i - j|, with p_i = i + (T - Tq); in double, rounded to float32.
float alibi_bias(float slope, std::size_t p, std::size_t j);

}  // namespace attntrace

#include "kernels/positions.hpp"

#include <cmath>

namespace attntrace {

// The pair i dimension d belongs to: interleaved (the paper's), d = 2i (sin) and 2i + 1 (cos); in halves, d = i
// (sin) and C/2 + i (cos) (C even).
std::size_t sinusoidal_pair(std::size_t d, std::size_t C, bool interleaved) { return interleaved ? d / 2 : d % (C / 2); }

bool sinusoidal_is_sin(std::size_t d, std::size_t C, bool interleaved) { return interleaved ? d % 2 == 0 : d < C / 2; }

double sinusoidal_angle(std::size_t p, std::size_t d, std::size_t C, bool interleaved) {
    const double two_i = 2.0 * static_cast<double>(sinusoidal_pair(d, C, interleaved));  // a pair's dimensions share an angle
    return static_cast<double>(p) / std::pow(10000.0, two_i / static_cast<double>(C));
}

float sinusoidal_value(std::size_t p, std::size_t d, std::size_t C, bool interleaved) {
    const double a = sinusoidal_angle(p, d, C, interleaved);
    return static_cast<float>(sinusoidal_is_sin(d, C, interleaved) ? std::sin(a) : std::cos(a));
}

void sinusoidal_table(float* pe, std::size_t T, std::size_t C, bool interleaved) {
    for (std::size_t p = 0; p < T; ++p)
        for (std::size_t d = 0; d < C; ++d) pe[p * C + d] = sinusoidal_value(p, d, C, interleaved);
}

RopePair rope_pair(std::size_t d, std::size_t hs, bool interleaved) {
    if (interleaved) return {d / 2, d ^ 1u, d % 2 == 0};
    const std::size_t half = hs / 2;
    return d < half ? RopePair{d, d + half, true} : RopePair{d - half, d - half, false};
}

double rope_theta(std::size_t i, std::size_t hs, double base) {
    return std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(hs));
}

CosSin rope_cos_sin(std::size_t p, std::size_t i, std::size_t hs, double base) {
    const double angle = static_cast<double>(p) * rope_theta(i, hs, base);
    return {static_cast<float>(std::cos(angle)), static_cast<float>(std::sin(angle))};
}

void rope_rows(const float* x, float* y, std::size_t rows, std::size_t heads, std::size_t hs, std::size_t rotary,
               std::size_t pos0, double base, bool interleaved) {
    std::vector<CosSin> cs(rotary / 2);
    std::vector<RopePair> pairs(rotary);
    for (std::size_t d = 0; d < rotary; ++d) pairs[d] = rope_pair(d, rotary, interleaved);
    for (std::size_t r = 0; r < rows; ++r) {
        // pass 1: cos and sin of p·θ_i for this row's position   (rotary/2)
        for (std::size_t i = 0; i < rotary / 2; ++i) cs[i] = rope_cos_sin(pos0 + r, i, rotary, base);
        // pass 2: rotate each head's pairs, copy its dimensions past `rotary`   (heads, hs)
        for (std::size_t h = 0; h < heads; ++h) {
            const float* xh = x + (r * heads + h) * hs;
            float* yh = y + (r * heads + h) * hs;
            for (std::size_t d = 0; d < rotary; ++d) {
                const RopePair& pr = pairs[d];
                yh[d] = rope_rotate(xh[d], xh[pr.partner], cs[pr.i], pr.first);
            }
            for (std::size_t d = rotary; d < hs; ++d) yh[d] = xh[d];
        }
    }
}

void rope_row_tables(std::size_t p, std::size_t hs, std::size_t rotary, double base, bool interleaved, float* cos_d,
                     float* sin_d, int* partner) {
    std::vector<CosSin> cs(rotary / 2);
    for (std::size_t i = 0; i < rotary / 2; ++i) cs[i] = rope_cos_sin(p, i, rotary, base);  // as rope_rows' pass 1
    for (std::size_t d = 0; d < rotary; ++d) {
        const RopePair pr = rope_pair(d, rotary, interleaved);
        cos_d[d] = cs[pr.i].cos;
        sin_d[d] = pr.first ? -cs[pr.i].sin : cs[pr.i].sin;
        partner[d] = static_cast<int>(pr.partner);
    }
    for (std::size_t d = rotary; d < hs; ++d) {  // passed through: x·1 + x·0
        cos_d[d] = 1.0f;
        sin_d[d] = 0.0f;
        partner[d] = static_cast<int>(d);
    }
}

std::vector<double> alibi_default_slopes(std::size_t NH) {
    std::vector<double> out;
    if (NH == 0) return out;
    std::size_t n = 1;
    while (n * 2 <= NH) n *= 2;  // the closest power of two at or below NH
    for (std::size_t h = 0; h < n; ++h) out.push_back(std::exp2(-8.0 * static_cast<double>(h + 1) / n));
    // The rest: slopes 0, 2, 4, ... of the sequence for 2n heads, 2^(-8(k+1)/(2n)).
    for (std::size_t k = 0; out.size() < NH; k += 2)
        out.push_back(std::exp2(-8.0 * static_cast<double>(k + 1) / static_cast<double>(2 * n)));
    return out;
}

float alibi_bias(float slope, std::size_t p, std::size_t j) {
    const double dist = p >= j ? static_cast<double>(p - j) : static_cast<double>(j - p);
    const float b = static_cast<float>(-static_cast<double>(slope) * dist);
    return b == 0.0f ? 0.0f : b;  // no -0 (a zero slope, or the query's own position)
}

}  // namespace attntrace

#include "decode/sample.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace attntrace {

SamplingRefusal sampling_refusal(const Sampling& s) {
    if (!std::isfinite(s.temperature) || s.temperature < 0)
        return {"--temperature", "a number from 0 (greedy) up", fmt::format("{}", s.temperature)};
    if (!(s.top_p > 0 && s.top_p <= 1)) return {"--top-p", "a number in (0, 1]", fmt::format("{}", s.top_p)};
    return {};
}

std::vector<NextToken> sampling_distribution(const float* logits, std::size_t V, const Sampling& s) {
    if (V == 0) return {};
    if (s.greedy()) {
        const std::size_t top = top_token(logits, V);  // next_tokens(logits, V, 1)'s entry, without its softmax
        return {NextToken{static_cast<std::int64_t>(top), logits[top], 1.0}};
    }
    // p = softmax(logits / T), shifted by the max: every exponent <= 0
    const double mx = *std::max_element(logits, logits + V);
    std::vector<double> p(V);
    for (std::size_t v = 0; v < V; ++v) p[v] = std::exp((static_cast<double>(logits[v]) - mx) / s.temperature);
    std::vector<std::size_t> order(V);
    std::iota(order.begin(), order.end(), std::size_t{0});
    // most likely first, ties (equal logits) the lower id first, as next_tokens ranks
    std::sort(order.begin(), order.end(),
              [&](std::size_t a, std::size_t b) { return logits[a] != logits[b] ? logits[a] > logits[b] : a < b; });
    std::size_t kept = s.top_k ? std::min(s.top_k, V) : V;
    double mass = 0;
    for (std::size_t i = 0; i < kept; ++i) mass += p[order[i]];
    if (s.top_p < 1) {
        // token i kept while the (renormalised) mass before it is below P: the first always
        double before = 0;
        std::size_t n = 0;
        while (n < kept && before < s.top_p * mass) before += p[order[n++]];
        kept = n;
        mass = before;
    }
    std::vector<NextToken> out;
    out.reserve(kept);
    for (std::size_t i = 0; i < kept; ++i)
        out.push_back({static_cast<std::int64_t>(order[i]), logits[order[i]], p[order[i]] / mass});
    return out;
}

double TokenSampler::uniform() {
    // SplitMix64 (Steele, Lea, Flood 2014): the state advances by the golden-ratio increment, the
    // output is its mix; u is the top 53 bits over 2^53, in [0, 1)
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return static_cast<double>(z >> 11) * 0x1.0p-53;
}

TokenSampler::Draw TokenSampler::draw(const float* logits, std::size_t V) {
    Draw d;
    d.kept = sampling_distribution(logits, V, s_);
    if (s_.greedy() || d.kept.size() <= 1) {
        if (!s_.greedy()) d.u = uniform();  // one number a draw, whatever was kept: a seed's sequence does not shift
        return d;
    }
    d.u = uniform();
    double cum = 0;
    d.index = d.kept.size() - 1;  // u at the very top of [0, 1) past the sums' rounding: the last kept
    for (std::size_t i = 0; i < d.kept.size(); ++i)
        if ((cum += d.kept[i].probability) > d.u) {
            d.index = i;
            break;
        }
    return d;
}

}  // namespace attntrace

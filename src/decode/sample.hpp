// Sampling the next token (decode --generate --temperature T): the
// distribution a token is drawn from, and the draw, reproducible for a seed.
//
// In the order Hugging Face's generate applies them (its temperature, top-k
// and top-p warpers, then multinomial):
//   p      = softmax(logits / T)                      over the vocabulary (V), in double
//   top-k  : the K most likely kept (ties: the lower id), renormalised
//   top-p  : most likely first, token j kept while the mass before it is < P
//            (the smallest prefix whose mass reaches P; the first is always kept), renormalised
//   u      = the next uniform number in [0, 1) of the seeded generator
//   drawn  : the first kept token whose cumulative mass exceeds u
// T = 0 is greedy: the argmax, the other fields unused. The generator is
// SplitMix64 (a fixed sequence of 64-bit integer operations: the same seed
// draws the same tokens on every machine and compiler), u its top 53 bits.
// torch.multinomial's generator is another one: a seed here and there draw
// different sequences; the distributions are the same.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/next_token.hpp"

namespace attntrace {

struct Sampling {
    double temperature = 0;  // 0: greedy
    std::size_t top_k = 0;   // 0: no cut
    double top_p = 1;        // 1: no cut
    std::uint64_t seed = 0;
    bool greedy() const { return temperature == 0; }
};

// Why `s` is not a sampling (exit 2 for the CLI, naming the flag), empty when it is:
// a temperature below 0 or not finite, top-p outside (0, 1].
struct SamplingRefusal {
    std::string flag, expected, found;  // flag empty: none
};
SamplingRefusal sampling_refusal(const Sampling& s);

// The distribution a token is drawn from: the kept tokens, most likely first,
// each with its logit and its probability after temperature and truncation
// (they sum to 1). Greedy: the argmax alone, probability 1.
std::vector<NextToken> sampling_distribution(const float* logits, std::size_t V, const Sampling& s);

class TokenSampler {
public:
    explicit TokenSampler(const Sampling& s) : s_(s), state_(s.seed) {}
    struct Draw {
        std::vector<NextToken> kept;  // sampling_distribution
        double u = 0;                 // the uniform number drawn (0 when greedy: no number is drawn)
        std::size_t index = 0;        // kept[index]: the token drawn
    };
    // One token from `logits` (V); advances the generator (not when greedy).
    Draw draw(const float* logits, std::size_t V);
    const Sampling& sampling() const { return s_; }

private:
    double uniform();
    Sampling s_;
    std::uint64_t state_;
};

}  // namespace attntrace

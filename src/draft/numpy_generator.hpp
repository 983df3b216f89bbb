// numpy's random generators, bit for bit, for the weights an article's code draws
// from a seed (scan_seeded): the legacy RandomState of np.random.seed(N) (a
// Mersenne Twister, the polar method's normals) and the Generator of
// np.random.default_rng(N) (PCG64 seeded through SeedSequence, the ziggurat's
// normals). tests/test_draft.cpp holds values numpy printed for both.
#pragma once

#include <cstdint>
#include <optional>
#include <random>

namespace attntrace {

// numpy's legacy generator after np.random.seed(seed): std::mt19937 is its Mersenne Twister and seeding.
class NumpyLegacy {
public:
    explicit NumpyLegacy(std::uint32_t seed) : engine_(seed) {}
    double uniform();  // random_sample: 53 bits from two 32-bit draws, in [0, 1)
    double normal();   // standard_normal: the polar method, its second value kept for the next call

private:
    std::mt19937 engine_;
    std::optional<double> gauss_;
};

// numpy's Generator over PCG64 after np.random.default_rng(seed) (or Generator(PCG64(seed))), for an
// integer seed >= 0: SeedSequence hashes the seed's 32-bit words into a pool of four and draws four
// 64-bit words from it, the 128-bit state and increment; each draw is one step of the 128-bit LCG and
// its XSL-RR output.
class NumpyPcg64 {
public:
    explicit NumpyPcg64(std::uint64_t seed);
    std::uint64_t next64();
    double uniform();  // random(): the draw's top 53 bits times 2^-53, in [0, 1)
    double normal();   // standard_normal in float64: the ziggurat of 256 layers numpy uses

private:
    std::uint64_t state_hi_ = 0, state_lo_ = 0, inc_hi_ = 0, inc_lo_ = 0;
};

}  // namespace attntrace

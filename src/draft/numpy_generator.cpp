#include "draft/numpy_generator.hpp"

#include <array>
#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

namespace attntrace {

// This file's own names (the unity build puts several files in one translation unit).
namespace numpy_generator {

__extension__ typedef unsigned __int128 U128;

// SeedSequence's hashing constants (numpy's, after Melissa O'Neill's seed_seq_fe): a pool of four 32-bit words.
constexpr std::size_t kPoolSize = 4;
constexpr std::uint32_t kInitA = 0x43b0d7e5, kMultA = 0x931e8875, kInitB = 0x8b51f9dd, kMultB = 0x58f38ded;
constexpr std::uint32_t kMixMultL = 0xca01f9dd, kMixMultR = 0x4973f715;
constexpr int kXShift = 16;

// PCG64's multiplier, the 128-bit LCG's (PCG's default for 128 bits).
constexpr U128 kPcgMultiplier = (U128{2549297995355413924ULL} << 64) | 4865540595714422341ULL;

std::uint32_t hashmix(std::uint32_t value, std::uint32_t& hash_const) {
    value ^= hash_const;
    hash_const *= kMultA;
    value *= hash_const;
    return value ^ (value >> kXShift);
}

std::uint32_t mix(std::uint32_t x, std::uint32_t y) {
    const std::uint32_t result = kMixMultL * x - kMixMultR * y;
    return result ^ (result >> kXShift);
}

// SeedSequence(seed).generate_state(4, np.uint64): the seed's 32-bit words (low first; one word for 0) hashed into the
// pool, every word of the pool mixed into every other, then four 64-bit words drawn from the pool (two 32-bit words each,
// the first the low half).
std::array<std::uint64_t, 4> seed_sequence(std::uint64_t seed) {
    std::vector<std::uint32_t> entropy;  // at most 2 words
    do {
        entropy.push_back(static_cast<std::uint32_t>(seed & 0xffffffffu));
        seed >>= 32;
    } while (seed != 0);
    std::array<std::uint32_t, kPoolSize> pool{};
    std::uint32_t hash_const = kInitA;
    for (std::size_t i = 0; i < kPoolSize; ++i) pool[i] = hashmix(i < entropy.size() ? entropy[i] : 0, hash_const);
    for (std::size_t src = 0; src < kPoolSize; ++src)
        for (std::size_t dst = 0; dst < kPoolSize; ++dst)
            if (src != dst) pool[dst] = mix(pool[dst], hashmix(pool[src], hash_const));
    // (words past the pool's four would be mixed in here: a 64-bit seed has at most two)
    std::array<std::uint32_t, 8> words{};
    hash_const = kInitB;
    for (std::size_t i = 0; i < words.size(); ++i) {
        std::uint32_t v = pool[i % kPoolSize] ^ hash_const;
        hash_const *= kMultB;
        v *= hash_const;
        words[i] = v ^ (v >> kXShift);
    }
    std::array<std::uint64_t, 4> out{};
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = (std::uint64_t{words[2 * i + 1]} << 32) | words[2 * i];
    return out;
}

// The ziggurat of 256 layers under f(x) = exp(-x²/2) (Marsaglia and Tsang), as numpy builds its float64 tables: the
// base layer (x from 0 to r, and the tail past r) and 255 rectangles of equal area V, the right edges x[255] = r down
// to x[1], each from the one above it, x[i] = f⁻¹(f(x[i+1]) + V / x[i+1]), and x[0] = 0. A draw's 52 bits times w[i]
// is its x; it is accepted at once when below k[i] (the layer's part under the layer above), by the wedge test
// against f[i] otherwise.
constexpr std::size_t kLayers = 256;
constexpr double kNormalR = 3.6541528853610087963519472518;  // the tail's start, where the ziggurat's area comes out right
constexpr double kLayerArea = 0.0049286732339746519;         // V, each layer's area (the base's with its tail)
constexpr double kMantissa = 4503599627370496.0;              // 2^52: a draw's magnitude has 52 bits
// numpy's tables were computed where exp rounded one value the other way: the exact exp(-x[38]²/2) lies 0.498 ulp above
// the double a correctly rounded exp (glibc's) gives, and numpy's tables hold the next double up, in f[38] and in the
// edges computed from it (x[37] down to x[1]). Found by comparing the computed tables with numpy's own.
constexpr std::size_t kLayerRoundedUp = 38;

struct Ziggurat {
    std::array<std::uint64_t, kLayers> k{};
    std::array<double, kLayers> w{}, f{};
};

// y rounded to the nearest integer, a tie to the even one (numpy's np.round, which built k), for 0 <= y < 2^53.
std::uint64_t round_even(double y) {
    double whole = std::floor(y);
    const double frac = y - whole;
    if (frac > 0.5 || (frac == 0.5 && std::fmod(whole, 2.0) != 0)) whole += 1;
    return static_cast<std::uint64_t>(whole);
}

Ziggurat build_ziggurat() {
    std::array<double, kLayers> x{}, fx{};
    x[kLayers - 1] = kNormalR;
    for (std::size_t i = kLayers - 1; i >= 1; --i) {
        fx[i] = std::exp(-0.5 * x[i] * x[i]);
        if (i == kLayerRoundedUp) fx[i] = std::nextafter(fx[i], 2.0);
        if (i > 1) x[i - 1] = std::sqrt(-2 * std::log(fx[i] + kLayerArea / x[i]));
    }
    fx[0] = 1;  // x[0] = 0
    Ziggurat z;
    const double fr = fx[kLayers - 1];
    z.k[0] = round_even(kNormalR * fr / kLayerArea * kMantissa);
    z.w[0] = kLayerArea / fr / kMantissa;
    z.f[0] = 1;
    for (std::size_t i = 1; i < kLayers; ++i) {
        z.k[i] = round_even(x[i - 1] / x[i] * kMantissa);
        z.w[i] = x[i] / kMantissa;
        z.f[i] = fx[i];
    }
    return z;
}

const Ziggurat& ziggurat() {
    static const Ziggurat z = build_ziggurat();
    return z;
}

// A normal's draws are repeated while rejected (each try is accepted with probability above 0.98): past this many,
// numpy's own loop would go on; the stream is no longer followed (NaN, which the reader refuses).
constexpr int kMaxNormalTries = 1000;

}  // namespace numpy_generator

double NumpyLegacy::uniform() {
    const double a = static_cast<double>(engine_() >> 5), b = static_cast<double>(engine_() >> 6);
    return (a * 67108864.0 + b) / 9007199254740992.0;
}

double NumpyLegacy::normal() {
    if (gauss_) {
        const double g = *gauss_;
        gauss_.reset();
        return g;
    }
    double x1 = 0, x2 = 0, r2 = 0;
    do {  // accepted with probability π/4 a try
        x1 = 2.0 * uniform() - 1.0;
        x2 = 2.0 * uniform() - 1.0;
        r2 = x1 * x1 + x2 * x2;
    } while (r2 >= 1.0 || r2 == 0.0);
    const double f = std::sqrt(-2.0 * std::log(r2) / r2);
    gauss_ = f * x1;
    return f * x2;
}

NumpyPcg64::NumpyPcg64(std::uint64_t seed) {
    using numpy_generator::U128;
    const std::array<std::uint64_t, 4> s = numpy_generator::seed_sequence(seed);
    // pcg64_srandom: the increment (2·initseq + 1), a step from 0, the initial state added, another step
    const U128 initstate = (U128{s[0]} << 64) | s[1], initseq = (U128{s[2]} << 64) | s[3];
    const U128 inc = (initseq << 1) | 1u;
    U128 state = inc;  // 0 · multiplier + inc
    state += initstate;
    state = state * numpy_generator::kPcgMultiplier + inc;
    state_hi_ = static_cast<std::uint64_t>(state >> 64);
    state_lo_ = static_cast<std::uint64_t>(state);
    inc_hi_ = static_cast<std::uint64_t>(inc >> 64);
    inc_lo_ = static_cast<std::uint64_t>(inc);
}

std::uint64_t NumpyPcg64::next64() {
    using numpy_generator::U128;
    const U128 inc = (U128{inc_hi_} << 64) | inc_lo_;
    const U128 state = ((U128{state_hi_} << 64) | state_lo_) * numpy_generator::kPcgMultiplier + inc;
    state_hi_ = static_cast<std::uint64_t>(state >> 64);
    state_lo_ = static_cast<std::uint64_t>(state);
    // XSL-RR: the two halves xor-ed, rotated right by the state's top 6 bits
    const std::uint64_t folded = state_hi_ ^ state_lo_;
    const unsigned rot = static_cast<unsigned>(state_hi_ >> 58);
    return (folded >> rot) | (folded << ((64 - rot) & 63));
}

double NumpyPcg64::uniform() { return static_cast<double>(next64() >> 11) * (1.0 / 9007199254740992.0); }

double NumpyPcg64::normal() {
    using namespace numpy_generator;
    const Ziggurat& z = ziggurat();
    for (int tries = 0; tries < kMaxNormalTries; ++tries) {
        // a draw: its low 8 bits the layer, the next bit the sign, the next 52 the magnitude
        std::uint64_t r = next64();
        const std::size_t layer = static_cast<std::size_t>(r & 0xff);
        r >>= 8;
        const bool negative = r & 1;
        const std::uint64_t rabs = (r >> 1) & 0x000fffffffffffffULL;
        double x = static_cast<double>(rabs) * z.w[layer];
        if (negative) x = -x;
        if (rabs < z.k[layer]) return x;
        if (layer == 0) {  // the tail past r: Marsaglia's exponential tries (1 - U, not U, inside the log)
            for (; tries < kMaxNormalTries; ++tries) {
                const double xx = -(1.0 / kNormalR) * std::log1p(-uniform());
                const double yy = -std::log1p(-uniform());
                if (yy + yy > xx * xx) return (rabs >> 8) & 1 ? -(kNormalR + xx) : kNormalR + xx;
            }
            break;
        }
        if ((z.f[layer - 1] - z.f[layer]) * uniform() + z.f[layer] < std::exp(-0.5 * x * x)) return x;
    }
    return std::numeric_limits<double>::quiet_NaN();
}

}  // namespace attntrace

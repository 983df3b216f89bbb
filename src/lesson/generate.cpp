#include "lesson/generate.hpp"

#include <cmath>
#include <random>

namespace attntrace {

namespace {

std::uint64_t splitmix64(std::uint64_t& state) {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// Uniform in (0, 1]: 53 random bits, never 0 so that log() is finite.
double uniform01(std::uint64_t& state) {
    return (static_cast<double>(splitmix64(state) >> 11) + 1.0) * (1.0 / 9007199254740992.0);
}

}  // namespace

Tensor generate(Fill fill, const Shape& shape, std::uint64_t seed, double std_dev) {
    Tensor t(shape, 0.0f);
    switch (fill) {
        case Fill::zeros: break;
        case Fill::ones:
            for (float& x : t.data) x = 1.0f;
            break;
        case Fill::half:
            for (float& x : t.data) x = 0.5f;
            break;
        case Fill::identity: {
            std::size_t n = shape.empty() ? 0 : shape[0];
            for (std::size_t i = 0; i < n; ++i) t.data[i * n + i] = 1.0f;
            break;
        }
        case Fill::normal: {
            std::uint64_t state = seed;
            const double two_pi = 6.283185307179586;
            for (std::size_t i = 0; i < t.size(); i += 2) {
                // Box-Muller: two independent normals from two uniforms.
                double r = std::sqrt(-2.0 * std::log(uniform01(state)));
                double a = two_pi * uniform01(state);
                t.data[i] = static_cast<float>(std_dev * r * std::cos(a));
                if (i + 1 < t.size()) t.data[i + 1] = static_cast<float>(std_dev * r * std::sin(a));
            }
            break;
        }
    }
    return t;
}

Tensor torch_uniform(const Shape& shape, std::uint64_t seed, std::uint64_t offset, double low, double high) {
    Tensor t(shape, 0.0f);
    std::mt19937 engine(static_cast<std::uint32_t>(seed & 0xffffffffu));
    engine.discard(offset);
    const double lo = static_cast<float>(low), hi = static_cast<float>(high);
    for (float& x : t.data) {
        const double u = static_cast<double>(engine() & 0xffffffu) * (1.0 / 16777216.0);
        x = static_cast<float>(u * (hi - lo) + lo);
    }
    return t;
}

std::uint64_t derive_seed(std::uint64_t seed, const char* name) {
    std::uint64_t h = 1469598103934665603ull;  // FNV-1a of the name, mixed with the seed
    for (const char* p = name; *p; ++p) h = (h ^ static_cast<unsigned char>(*p)) * 1099511628211ull;
    std::uint64_t state = seed ^ h;
    return splitmix64(state);
}

}  // namespace attntrace

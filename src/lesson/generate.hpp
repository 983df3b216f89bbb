// Deterministic tensors from a seed: splitmix64 for the bits (exact on every
// platform) and our own Box-Muller for the normals (std::normal_distribution
// is implementation-defined, so it cannot back a golden file). The normals go
// through libm's log, sin and cos, so another libm may move the last bit: the
// golden tolerance covers that.
#pragma once

#include <cstdint>

#include "core/tensor.hpp"

namespace attntrace {

// half: 0.5 everywhere, DyT's α₀ (the value its paper and code start α at).
enum class Fill { normal, zeros, ones, identity, half };

// normal: N(0, std^2) from `seed`; identity: square matrices only (checked by the caller).
Tensor generate(Fill fill, const Shape& shape, std::uint64_t seed, double std_dev);

// The most draws torch_uniform skips: each is one step of the generator.
inline constexpr std::uint64_t kMaxTorchOffset = std::uint64_t{1} << 26;

// PyTorch's CPU uniform_ after torch.manual_seed(seed), from its `offset`-th draw
// on (torch.rand: low 0, high 1; nn.Linear's initial weight and bias: ±bound):
// a 32-bit Mersenne Twister seeded with seed's low 32 bits (std::mt19937, the
// generator and seeding torch's CPUGeneratorImpl uses), each value from one draw's
// low 24 bits times 2^-24, then x·(high - low) + low in double with low and high
// as float32, rounded to float32. Row-major, as torch fills a contiguous tensor;
// bit-exact with PyTorch (tests/test_generate.cpp holds values it printed).
// `offset` at most kMaxTorchOffset (checked by the caller).
Tensor torch_uniform(const Shape& shape, std::uint64_t seed, std::uint64_t offset, double low, double high);

// Seeds for the weights a lesson generates from one `weights_seed`: one
// independent stream per weight name.
std::uint64_t derive_seed(std::uint64_t seed, const char* name);

}  // namespace attntrace

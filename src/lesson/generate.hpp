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

// Seeds for the weights a lesson generates from one `weights_seed`: one
// independent stream per weight name.
std::uint64_t derive_seed(std::uint64_t seed, const char* name);

}  // namespace attntrace

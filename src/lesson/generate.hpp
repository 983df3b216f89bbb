// Deterministic tensors from a seed, identical on every platform and compiler:
// splitmix64 for the bits and our own Box-Muller for the normals
// (std::normal_distribution is implementation-defined, so it cannot back a
// golden file).
#pragma once

#include <cstdint>

#include "core/tensor.hpp"

namespace attntrace {

enum class Fill { normal, zeros, ones, identity };

// normal: N(0, std^2) from `seed`; identity: square matrices only (checked by the caller).
Tensor generate(Fill fill, const Shape& shape, std::uint64_t seed, double std_dev);

// Seeds for the weights a lesson generates from one `weights_seed`: one
// independent stream per weight name.
std::uint64_t derive_seed(std::uint64_t seed, const char* name);

}  // namespace attntrace

// A lesson of any size made from a seed: `attntrace random` writes it, and
// `attntrace bench` runs it. Inputs and weights are generators, so the file
// stays a few hundred bytes whatever the size.
#pragma once

#include <cstdint>
#include <optional>
#include <nlohmann/json.hpp>
#include <string>

#include "lesson/lesson.hpp"

namespace attntrace {

struct RandomSpec {
    std::size_t tokens = 8;
    std::size_t d_model = 16;
    std::size_t heads = 2;
    std::size_t kv_heads = 0;  // 0: as many as heads (MHA); else config.kv_heads (GQA, MQA)
    std::size_t d_ff = 64;
    std::uint64_t seed = 1;
    std::optional<MaskKind> mask;  // unset: causal for a decoder (its self-attention), none for an encoder
    Activation activation = Activation::relu;
    NormKind norm = NormKind::layernorm;
    Arch arch;  // blocks, norm_first, decoder (a decoder's memory: as many tokens as X, seed + 1)
    MaskKind mask_kind() const { return mask.value_or(arch.decoder ? MaskKind::causal : MaskKind::none); }
};

// X ~ N(0, 1) as a LayerNorm'd residual stream is; weights N(0, 1/d_in)
// (LeCun), so that Q·K has variance ~d_head before the scaling and the
// softmax rows are not saturated; biases 0, LayerNorm gains 1 and shifts 0.
nlohmann::ordered_json random_lesson_json(const RandomSpec& spec);

}  // namespace attntrace

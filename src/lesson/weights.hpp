// The weights a lesson may give, their shapes and how they are generated.
//
//   W_Q (C, NH·hs)   W_K (C, KVH·hs)   W_V (C, KVH·hv)   W_O (NH·hv, C)
//                                row-vector convention: Q = X·W_Q, W is d_in x d_out;
//                                all (C, C) in MHA with hs = hv = C / NH
//   b_Q (NH·hs)  b_K (KVH·hs)  b_V (KVH·hv)  b_O (C)   absent: zero (the articles write Q = X·W^Q)
//   ln1_gamma, ln1_beta (C)      absent: LayerNorm's output is not computable
//   W_1 (C, F), b_1 (F), W_2 (F, C), b_2 (C)
//   ln2_gamma, ln2_beta (C)      (no β with RMSNorm; none with config.shared_norm: the FFN reads LN1)
//   ln1_alpha, ln2_alpha (1)     DyT's α (config.norm "dyt" only; each norm has its own, embed_ln_alpha, ...)
//   W_3 (C, F), b_3 (F)          SwiGLU's second (linear) branch
//   cross.W_Q ... cross.b_O, ln3_gamma, ln3_beta   a decoder block's cross-attention and third norm
//   embed_ln_gamma, embed_ln_beta (C)   ln_final_gamma, ln_final_beta (C)   W_U (C, V)   b_U (V)
//                                the model's, never prefixed: the embeddings' norm, the final norm, the unembedding
//                                and its bias (absent: none, as GPT-2's and Llama's heads)
//   in a stack of N > 1 blocks each is named per block: blocks.1.W_Q, blocks.1.cross.W_K, ...
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lesson/generate.hpp"
#include "lesson/lesson.hpp"
#include "trace/steps.hpp"

namespace attntrace {

struct WeightSpec {
    const char* name;
    Stage stage;             // the stage that reads it
    std::vector<Axis> axes;  // (d_in, d_out) for a matrix, (d_out) for a vector
    Fill init;               // what weights_seed generates: normal for matrices (std 1/√d_in), else 0 or 1 (DyT's α: 0.5)
    // Which projection's heads an extent counts: Q's output NH·hs, K's KVH·hs,
    // V's KVH·hv (the last extent), W_O's input NH·hv (the first); none: the axes'.
    enum class Heads : std::uint8_t { none, q, k, v, o };
    Heads heads = Heads::none;

    Shape shape(const Dims& d) const;
    std::string shape_text() const;  // "d_model x d_ff"
    // With the numbers when heads do not split d_model evenly in MHA (GQA, config.d_k, d_v):
    // "d_model x kv_heads·head_size = 16 x 2·2", "d_model x heads·d_k = 3 x 1·2"; else shape_text()
    std::string shape_text(const Dims& d) const;
    // As a lesson writes it: a matrix's two extents swapped under
    // config.weight_layout "out_in" ("d_ff x d_model" for W_1); vectors as they are.
    bool swapped(WeightLayout layout) const { return layout == WeightLayout::out_in && axes.size() == 2; }
    Shape shape(const Dims& d, WeightLayout layout) const;
    std::string shape_text(const Dims& d, WeightLayout layout) const;
    bool uses_d_ff() const;
    double default_std(const Dims& d) const;  // 1/√d_in for matrices, 0 for vectors
};

const std::vector<WeightSpec>& weight_specs();

// A weight of a lesson's model: the spec's name, prefixed "blocks.i." in a
// stack of more than one block (cross-attention's are "cross.W_Q", ...).
struct WeightUse {
    std::string name;
    const WeightSpec* spec;
};
// Every weight the model has, applicable to the config or not, block by block.
std::vector<WeightUse> weight_uses(const Config& c);
// Whether a config reads this weight (W_3, b_3: SwiGLU only; ln*_beta:
// not RMSNorm; ln*_alpha: DyT only; ln2_*: not with a shared norm), and in words when it does
// (or, for a weight the config's shared norm leaves out, why not).
bool weight_applies(const WeightSpec& w, const Config& c);
const char* weight_use(const WeightSpec& w, const Config& c);
const WeightSpec* find_weight(const std::string& name);
std::string weight_list();

}  // namespace attntrace

// The GPT-2 family (model_type "gpt2"), mapped from its published definition
// (Hugging Face's modeling_gpt2.py, OpenAI's model.py): learned positions,
// pre-norm blocks, causal self-attention, an FFN of GELU (tanh), a final
// LayerNorm and an unembedding tied to the embedding. Its linear layers are
// Conv1D: the weight is stored d_in x d_out and applied as x·W + b, the
// lesson's own layout, so the matrices are taken as they are; c_attn's one
// (C, 3C) matrix is Q, K and V side by side. docs/models.md gives the table.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/json_field.hpp"

namespace attntrace {

class Checkpoint;
struct HfModel;

struct Gpt2Config {
    std::size_t d_model = 0;    // n_embd
    std::size_t heads = 0;      // n_head
    std::size_t layers = 0;     // n_layer
    std::size_t positions = 0;  // n_positions
    std::size_t vocab = 0;      // vocab_size
    std::size_t d_ff = 0;       // n_inner, null: 4·n_embd
    double eps = 1e-5;          // layer_norm_epsilon
    std::string activation;     // activation_function as written
};

Gpt2Config read_gpt2_config(const json& config, const std::string& file);

// Fills m.lesson (and the final norm) from the checkpoint's tensors for these ids.
void build_gpt2(HfModel& m, const Gpt2Config& c, const Checkpoint& ckpt, const std::vector<std::int64_t>& ids);

}  // namespace attntrace

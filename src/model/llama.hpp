// The Llama family (model_type "llama", "mistral", "qwen2"), mapped from its
// published definition (Hugging Face's modeling_llama.py, modeling_mistral.py,
// modeling_qwen2.py): token embeddings without learned positions, pre-norm
// blocks with RMSNorm, rotary positions in the half layout (rotate_half:
// pairs (i, i + hs/2)) with the config's rope_theta, grouped-query attention
// (num_key_value_heads), a SwiGLU FFN (gate_proj, up_proj, down_proj), a
// final RMSNorm (model.norm) and an unembedding (lm_head, or the embedding
// when tie_word_embeddings). Its linear layers are nn.Linear: the weight is
// stored d_out x d_in and applied as x·Wᵀ, so each matrix is transposed into
// the lesson's d_in x d_out. Qwen2 adds biases to q_proj, k_proj and v_proj.
// docs/models.md gives the table.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/json_field.hpp"

namespace attntrace {

class Checkpoint;
struct HfModel;

struct LlamaConfig {
    std::string type;           // "llama", "mistral", "qwen2"
    std::size_t d_model = 0;    // hidden_size
    std::size_t heads = 0;      // num_attention_heads
    std::size_t kv_heads = 0;   // num_key_value_heads (absent: num_attention_heads)
    std::size_t head_dim = 0;   // head_dim (absent: hidden_size / num_attention_heads)
    std::size_t layers = 0;     // num_hidden_layers
    std::size_t positions = 0;  // max_position_embeddings
    std::size_t vocab = 0;      // vocab_size
    std::size_t d_ff = 0;       // intermediate_size
    double eps = 1e-6;          // rms_norm_eps
    double rope_theta = 10000;  // rope_theta
    bool tied = false;          // tie_word_embeddings
    bool qkv_bias = false;      // qwen2 always; llama's attention_bias (then o_proj too)
    bool o_bias = false;        // llama's attention_bias
    std::size_t sliding_window = 0;  // mistral / qwen2 with use_sliding_window; 0: none
};

LlamaConfig read_llama_config(const json& config, const std::string& file);

// Fills m.lesson, the final norm and the unembedding from the checkpoint's tensors for these ids.
void build_llama(HfModel& m, const LlamaConfig& c, const Checkpoint& ckpt, const std::vector<std::int64_t>& ids);

}  // namespace attntrace

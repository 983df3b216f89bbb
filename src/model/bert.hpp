// The BERT family (model_type "bert"), mapped from its published definition
// (Devlin et al. 2018; Hugging Face's modeling_bert.py): the embeddings are
// LayerNorm(word + token type + position), then post-norm encoder blocks
// (attention, add & LayerNorm, an FFN of exact GELU, add & LayerNorm), every
// token attending to every token (no mask). Its linear layers are nn.Linear:
// the weight is stored d_out x d_in and applied as x·Wᵀ + b, so every matrix
// is transposed into the lesson's d_in x d_out; Q, K and V are separate
// matrices. The pooler and the masked-LM head are not read: the last block's
// output is the model's output. docs/models.md gives the table.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/json_field.hpp"

namespace attntrace {

class Checkpoint;
struct HfModel;
struct ModelInput;

struct BertConfig {
    std::size_t d_model = 0;     // hidden_size
    std::size_t heads = 0;       // num_attention_heads
    std::size_t layers = 0;      // num_hidden_layers
    std::size_t d_ff = 0;        // intermediate_size
    std::size_t positions = 0;   // max_position_embeddings
    std::size_t vocab = 0;       // vocab_size
    std::size_t type_vocab = 0;  // type_vocab_size
    double eps = 1e-12;          // layer_norm_eps
};

BertConfig read_bert_config(const json& config, const std::string& file);

// Reads the folder's WordPiece tokenizer, tokenizes the input, checks the ids
// against the config and fills m.lesson from the checkpoint's tensors.
void load_bert(HfModel& m, const json& config, const std::string& config_path, const ModelInput& input);

}  // namespace attntrace

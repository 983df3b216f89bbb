// A model family as data: which config.json fields it reads, which checkpoint
// tensors become which of the lesson's weights, its architecture and its
// tokenizer. One loader (model/family_load.cpp) reads any declaration, and
// every family's config is validated by the same code (model/family_config.cpp);
// the declarations themselves are model/families.cpp. Adding a family whose
// arithmetic the pipeline already has is one entry there (docs/contributing.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/json_field.hpp"
#include "lesson/lesson.hpp"

namespace attntrace {

// The sizes a config.json gives, named as the lesson names them; q_width and
// kv_width are derived (heads·head_dim, kv_heads·head_dim).
enum class Size { d_model, heads, kv_heads, head_dim, layers, positions, vocab, d_ff, type_vocab, q_width, kv_width };

// A size read from config.json: `key`, an integer from 1 to `most`. Absent
// (or null), it is `absent`: required, the head count, 4·d_model, or 2.
struct SizeField {
    enum class Absent { required, heads, four_d_model, two };
    Size size;
    const char* key;
    std::int64_t most;
    Absent absent = Absent::required;
};

// config.json's name for the activation, and what each accepted name computes.
struct ActivationField {
    struct Name {
        const char* name;
        Activation computes;
    };
    const char* key;
    const char* absent;          // the name assumed when the key is absent
    std::vector<Name> accepted;
    const char* expected;        // the refusal's "expected ..." for any other name
};

// A boolean config field this mapping computes only one way: absent, or `must`.
struct FlagRule {
    const char* key;
    bool must;
    const char* expected;
};

// A string config field (absent or null allowed) that must be `must`.
struct WordRule {
    const char* key;
    const char* must;
    const char* expected;
};

// An object config field (absent or null allowed) whose kind, under its
// "rope_type" or else "type" key, must be `must` (rope_scaling's "default").
struct KindRule {
    const char* key;
    const char* must;
    const char* expected;
};

// One extent of a stored tensor: `times` x a config size.
struct Extent {
    Size size;
    std::size_t times = 1;
};

// A checkpoint tensor and what the lesson makes of it.
struct TensorUse {
    // How it is stored: the lesson's d_in x d_out (Conv1D, embeddings,
    // vectors: taken as they are) or nn.Linear's d_out x d_in (transposed).
    enum class Layout { as_lesson, linear };
    // When the checkpoint has it: always, or under a config switch.
    enum class When { always, qkv_bias, o_bias, untied };
    // A model tensor: a lesson input, a weight held throughout, or a weight
    // converted when its pass runs (the unembedding, after the blocks).
    enum class Kind { input, weight, later };
    // How a fused tensor's output columns are shared among its names: in
    // equal runs (GPT-2's c_attn: Q | K | V), or head by head (GPT-NeoX's
    // query_key_value: for each head its Q, K and V columns, head_dim each).
    enum class Split { runs, per_head };
    const char* name;            // after the checkpoint's prefix; "{b}" is the block's number
    std::vector<Extent> shape;   // as stored
    const char* role;            // what the model reads it as, for messages ("LN1 γ, n_embd")
    std::vector<const char*> into;  // the lesson's names; several: its output columns split equally among them
    Layout layout = Layout::as_lesson;
    When when = When::always;
    Kind kind = Kind::weight;    // a block's tensors are always converted with their block
    Split split = Split::runs;
};

enum class TokenizerKind {
    pieces,     // tokenizer.json, vocab.json + merges.txt, or tokenizer.model (model/tokenizer.hpp)
    wordpiece,  // BERT's (model/wordpiece.hpp)
};

struct Family {
    const char* model_type;  // config.json's "gpt2"
    const char* title;       // "GPT-2"
    TokenizerKind tokenizer;
    const char* tokenizer_files;  // what the folder needs for a text, for the refusal

    // config.json
    std::vector<SizeField> sizes;
    const char* head_dim_key = nullptr;  // absent from the family, or null: d_model / heads
    const char* eps_key;
    double eps_absent;
    ActivationField activation;
    std::vector<FlagRule> flags;
    std::vector<WordRule> words;
    std::vector<KindRule> kinds;
    const char* rope_theta_key = nullptr;  // rotary families
    const char* rotary_fraction_key = nullptr;  // the share of each head rotated (GPT-NeoX's rotary_pct)
    double rotary_fraction = 1.0;               // what an absent key means
    const char* parallel_key = nullptr;    // a parallel residual or not (GPT-NeoX's use_parallel_residual)
    bool parallel = false;                 // what an absent parallel_key means
    const char* tie_key = nullptr;         // absent from the family: `tied` as declared
    bool tied = false;
    const char* bias_key = nullptr;        // Q, K, V and O with biases or not (Llama's, GPT-NeoX's attention_bias)
    bool biases = false;                   // what an absent bias_key means
    bool qkv_bias = false;                 // Q, K and V always with biases (Qwen2)
    bool sliding = false;                  // a sliding window by default (Mistral)
    const char* sliding_switch_key = nullptr;  // turns it on (Qwen2's use_sliding_window)
    const char* window_key = nullptr;      // the window's width

    // The architecture
    NormKind norm = NormKind::layernorm;
    PositionKind positions = PositionKind::learned;  // learned, or rope in the half layout
    MaskKind mask = MaskKind::causal;
    bool norm_first = true;
    // With the parallel residual, one norm per block read by both the attention and the FFN
    // (Phi's input_layernorm): no ln2 weights, the FFN reads LN1 (config.shared_norm).
    bool shared_norm = false;
    bool embed_norm = false;
    bool lm_head = true;  // a final norm and the logits; false: the output is the last block's

    // The checkpoint: a prefix some classes save the body under, found by a
    // tensor only that prefix has; then the model's and each block's tensors.
    const char* prefix_probe;  // "transformer.wte.weight"
    const char* prefix;        // "transformer."
    std::vector<TensorUse> model_tensors;
    std::vector<TensorUse> block_tensors;
    const char* block_path;  // "h.{b}." before a block's tensors
};

// Every family this attntrace maps, in the order the refusal lists them.
const std::vector<Family>& families();
// The family of config.json's model_type, or null.
const Family* find_family(const std::string& model_type);

// What a config.json says, for a family.
struct ModelSizes {
    std::size_t d_model = 0, heads = 0, kv_heads = 0, head_dim = 0, layers = 0, positions = 0, vocab = 0, d_ff = 0,
                type_vocab = 0;
    double eps = 0;
    Activation activation = Activation::gelu;
    double rope_theta = 10000;
    std::size_t rotary_dims = 0;  // 0: every dimension of a head rotated
    bool parallel = false;
    bool tied = false, qkv_bias = false, o_bias = false;
    std::size_t sliding_window = 0;  // 0: none
    std::size_t of(Size s) const;
};

// config.json read and validated as `family` declares, refusals naming `file` and the field.
ModelSizes read_family_config(const Family& family, const json& config, const std::string& file);

}  // namespace attntrace

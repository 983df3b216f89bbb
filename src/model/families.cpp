// The families this attntrace maps, each declared from its published
// definition (Hugging Face's modeling_<type>.py); docs/models.md gives the
// tables for readers. A declaration's tensor list is in the order the
// checkpoint is checked, so the first missing tensor is the one named.
#include <algorithm>
#include <string>

#include "model/config_bounds.hpp"
#include "model/family.hpp"
#include "trace/catalogue.hpp"  // kMaxBlocks

namespace attntrace {

namespace {

using S = Size;
using A = SizeField::Absent;
using T = TensorUse;
constexpr auto kBlocks = static_cast<std::int64_t>(kMaxBlocks);

// GPT-2 (modeling_gpt2.py, OpenAI's model.py): learned positions, pre-norm
// blocks, GELU (tanh), a final LayerNorm, the unembedding tied to the
// embedding. Conv1D stores d_in x d_out, the lesson's own layout; c_attn's
// (C, 3C) is Q, K and V side by side. Bounds far above GPT-2 XL.
Family gpt2() {
    Family f{};
    f.model_type = "gpt2";
    f.title = "GPT-2";
    f.tokenizer = TokenizerKind::pieces;
    f.tokenizer_files = "tokenizer.model, tokenizer.json, or vocab.json and merges.txt";
    f.sizes = {{S::d_model, "n_embd", kMaxDModel},         {S::heads, "n_head", kMaxDModel},
               {S::layers, "n_layer", kBlocks},            {S::positions, "n_positions", kMaxPositions},
               {S::vocab, "vocab_size", kMaxVocabSize},    {S::d_ff, "n_inner", 4 * kMaxDModel, A::four_d_model}};
    f.eps_key = "layer_norm_epsilon";
    f.eps_absent = 1e-5;
    f.activation = {"activation_function", "gelu_new",
                    {{"gelu_new", Activation::gelu_tanh}, {"gelu_pytorch_tanh", Activation::gelu_tanh},
                     {"gelu", Activation::gelu}, {"relu", Activation::relu}},
                    "gelu_new, gelu_pytorch_tanh, gelu or relu"};
    // Variants of the attention this mapping does not compute: refused rather than run differently.
    f.flags = {{"scale_attn_weights", true, "true (scores divided by √head_size)"},
               {"scale_attn_by_inverse_layer_idx", false, "false (every layer scaled alike)"},
               {"add_cross_attention", false, "false (a decoder-only GPT-2)"}};
    f.tied = true;
    // GPT2LMHeadModel saves its body under "transformer."; GPT2Model (the published "gpt2") without.
    f.prefix_probe = "transformer.wte.weight";
    f.prefix = "transformer.";
    f.model_tensors = {
        {"wte.weight", {{S::vocab}, {S::d_model}}, "token embeddings W_E, vocab_size x n_embd; also the unembedding (tied)",
         {"embedding"}, T::Layout::as_lesson, T::When::always, T::Kind::input},
        {"wpe.weight", {{S::positions}, {S::d_model}}, "learned positions, n_positions x n_embd", {"positions"},
         T::Layout::as_lesson, T::When::always, T::Kind::input},
        {"ln_f.weight", {{S::d_model}}, "the final LayerNorm's γ, n_embd", {"ln_final_gamma"}},
        {"ln_f.bias", {{S::d_model}}, "the final LayerNorm's β, n_embd", {"ln_final_beta"}},
    };
    f.block_path = "h.{b}.";
    f.block_tensors = {
        {"ln_1.weight", {{S::d_model}}, "LN1 γ, n_embd", {"ln1_gamma"}},
        {"ln_1.bias", {{S::d_model}}, "LN1 β, n_embd", {"ln1_beta"}},
        {"attn.c_attn.weight", {{S::d_model}, {S::d_model, 3}}, "Q, K, V side by side (Conv1D: n_embd x 3·n_embd)",
         {"W_Q", "W_K", "W_V"}},
        {"attn.c_attn.bias", {{S::d_model, 3}}, "Q, K, V biases, 3·n_embd", {"b_Q", "b_K", "b_V"}},
        {"attn.c_proj.weight", {{S::d_model}, {S::d_model}}, "W_O (Conv1D: n_embd x n_embd)", {"W_O"}},
        {"attn.c_proj.bias", {{S::d_model}}, "W_O's bias, n_embd", {"b_O"}},
        {"ln_2.weight", {{S::d_model}}, "LN2 γ, n_embd", {"ln2_gamma"}},
        {"ln_2.bias", {{S::d_model}}, "LN2 β, n_embd", {"ln2_beta"}},
        {"mlp.c_fc.weight", {{S::d_model}, {S::d_ff}}, "W_1 (Conv1D: n_embd x n_inner)", {"W_1"}},
        {"mlp.c_fc.bias", {{S::d_ff}}, "W_1's bias, n_inner", {"b_1"}},
        {"mlp.c_proj.weight", {{S::d_ff}, {S::d_model}}, "W_2 (Conv1D: n_inner x n_embd)", {"W_2"}},
        {"mlp.c_proj.bias", {{S::d_model}}, "W_2's bias, n_embd", {"b_2"}},
    };
    return f;
}

// BERT (modeling_bert.py): learned positions and token types added to the
// embeddings, their LayerNorm, post-norm blocks, GELU (erf), no mask and no
// head: the output is the last block's. nn.Linear weights, transposed.
// Bounds far above BERT-large.
Family bert() {
    Family f{};
    f.model_type = "bert";
    f.title = "BERT";
    f.tokenizer = TokenizerKind::wordpiece;
    f.tokenizer_files = "tokenizer.json, or vocab.txt";
    f.sizes = {{S::d_model, "hidden_size", kMaxDModel},
               {S::heads, "num_attention_heads", kMaxDModel},
               {S::layers, "num_hidden_layers", kBlocks},
               {S::d_ff, "intermediate_size", 4 * kMaxDModel},
               {S::positions, "max_position_embeddings", kMaxPositions},
               {S::vocab, "vocab_size", kMaxVocabSize},
               {S::type_vocab, "type_vocab_size", kMaxVocabSize, A::two}};
    f.eps_key = "layer_norm_eps";
    f.eps_absent = 1e-12;
    // "gelu" is GELU with the exact erf (ACT2FN["gelu"]); gelu_new's tanh form, relu, silu would be other numbers.
    f.activation = {"hidden_act", "gelu", {{"gelu", Activation::gelu}},
                    "\"gelu\" (GELU with erf, the activation BERT is published with)"};
    f.words = {{"position_embedding_type", "absolute", "\"absolute\" (learned positions added to the embeddings)"}};
    f.flags = {{"is_decoder", false, "false (BERT's bidirectional encoder)"},
               {"add_cross_attention", false, "false (an encoder without cross-attention)"}};
    f.mask = MaskKind::none;  // bidirectional: every token sees every token
    f.norm_first = false;
    f.embed_norm = true;
    f.lm_head = false;
    // BertForMaskedLM and friends save the body under "bert."; BertModel without.
    f.prefix_probe = "bert.embeddings.word_embeddings.weight";
    f.prefix = "bert.";
    f.model_tensors = {
        {"embeddings.word_embeddings.weight", {{S::vocab}, {S::d_model}}, "token embeddings W_E, vocab_size x hidden_size",
         {"embedding"}, T::Layout::as_lesson, T::When::always, T::Kind::input},
        {"embeddings.position_embeddings.weight", {{S::positions}, {S::d_model}},
         "learned positions, max_position_embeddings x hidden_size", {"positions"}, T::Layout::as_lesson,
         T::When::always, T::Kind::input},
        {"embeddings.token_type_embeddings.weight", {{S::type_vocab}, {S::d_model}},
         "token type embeddings, type_vocab_size x hidden_size", {"token_types"}, T::Layout::as_lesson,
         T::When::always, T::Kind::input},
        {"embeddings.LayerNorm.weight", {{S::d_model}}, "the embeddings' LayerNorm γ, hidden_size", {"embed_ln_gamma"}},
        {"embeddings.LayerNorm.bias", {{S::d_model}}, "the embeddings' LayerNorm β, hidden_size", {"embed_ln_beta"}},
    };
    f.block_path = "encoder.layer.{b}.";
    const auto L = T::Layout::linear;
    f.block_tensors = {
        {"attention.self.query.weight", {{S::d_model}, {S::d_model}}, "query projection (nn.Linear: hidden_size x hidden_size)",
         {"W_Q"}, L},
        {"attention.self.query.bias", {{S::d_model}}, "query bias, hidden_size", {"b_Q"}},
        {"attention.self.key.weight", {{S::d_model}, {S::d_model}}, "key projection (nn.Linear: hidden_size x hidden_size)",
         {"W_K"}, L},
        {"attention.self.key.bias", {{S::d_model}}, "key bias, hidden_size", {"b_K"}},
        {"attention.self.value.weight", {{S::d_model}, {S::d_model}}, "value projection (nn.Linear: hidden_size x hidden_size)",
         {"W_V"}, L},
        {"attention.self.value.bias", {{S::d_model}}, "value bias, hidden_size", {"b_V"}},
        {"attention.output.dense.weight", {{S::d_model}, {S::d_model}}, "W_O (nn.Linear: hidden_size x hidden_size)",
         {"W_O"}, L},
        {"attention.output.dense.bias", {{S::d_model}}, "W_O's bias, hidden_size", {"b_O"}},
        {"attention.output.LayerNorm.weight", {{S::d_model}}, "LN1 γ, hidden_size", {"ln1_gamma"}},
        {"attention.output.LayerNorm.bias", {{S::d_model}}, "LN1 β, hidden_size", {"ln1_beta"}},
        {"intermediate.dense.weight", {{S::d_ff}, {S::d_model}}, "W_1 (nn.Linear: intermediate_size x hidden_size)",
         {"W_1"}, L},
        {"intermediate.dense.bias", {{S::d_ff}}, "W_1's bias, intermediate_size", {"b_1"}},
        {"output.dense.weight", {{S::d_model}, {S::d_ff}}, "W_2 (nn.Linear: hidden_size x intermediate_size)", {"W_2"}, L},
        {"output.dense.bias", {{S::d_model}}, "W_2's bias, hidden_size", {"b_2"}},
        {"output.LayerNorm.weight", {{S::d_model}}, "LN2 γ, hidden_size", {"ln2_gamma"}},
        {"output.LayerNorm.bias", {{S::d_model}}, "LN2 β, hidden_size", {"ln2_beta"}},
    };
    return f;
}

// The Llama family (modeling_llama.py, modeling_mistral.py,
// modeling_qwen2.py): no learned positions, pre-norm blocks with RMSNorm,
// rotary positions in the half layout (rotate_half) with rope_theta,
// grouped-query attention, a SwiGLU FFN (gate_proj, up_proj, down_proj), a
// final RMSNorm and lm_head (or the embedding when tie_word_embeddings).
// nn.Linear weights, transposed. Bounds far above Llama 3 405B.
Family llama_like(const char* type, const char* title) {
    Family f{};
    f.model_type = type;
    f.title = title;
    f.tokenizer = TokenizerKind::pieces;
    f.tokenizer_files = "tokenizer.model, tokenizer.json, or vocab.json and merges.txt";
    f.sizes = {{S::d_model, "hidden_size", kMaxDModel},
               {S::heads, "num_attention_heads", kMaxDModel},
               {S::layers, "num_hidden_layers", kBlocks},
               {S::positions, "max_position_embeddings", kMaxRotaryPositions},
               {S::vocab, "vocab_size", kMaxVocabSize},
               {S::d_ff, "intermediate_size", 16 * kMaxDModel},
               {S::kv_heads, "num_key_value_heads", kMaxDModel, A::heads}};
    f.head_dim_key = "head_dim";
    f.eps_key = "rms_norm_eps";
    f.eps_absent = 1e-6;
    f.activation = {"hidden_act", "silu", {{"silu", Activation::swiglu}}, "\"silu\" (SwiGLU's gate)"};
    f.flags = {{"mlp_bias", false, "false (gate_proj, up_proj and down_proj without biases)"}};
    // Only the plain rotation is computed; a scaled one (linear, dynamic, yarn, longrope, llama3) gives other angles.
    f.kinds = {{"rope_scaling", "default", "\"default\" or rope_scaling null (scaled RoPE is not computed)"}};
    f.rope_theta_key = "rope_theta";
    f.tie_key = "tie_word_embeddings";
    f.bias_key = "attention_bias";
    f.window_key = "sliding_window";
    f.norm = NormKind::rmsnorm;
    f.positions = PositionKind::rope;
    // LlamaForCausalLM saves its body under "model."; LlamaModel (no head) without.
    f.prefix_probe = "model.embed_tokens.weight";
    f.prefix = "model.";
    f.model_tensors = {
        {"embed_tokens.weight", {{S::vocab}, {S::d_model}}, "token embeddings W_E, vocab_size x hidden_size", {"embedding"},
         T::Layout::as_lesson, T::When::always, T::Kind::input},
        {"norm.weight", {{S::d_model}}, "the final RMSNorm's γ, hidden_size", {"ln_final_gamma"}},
        // lm_head sits beside the body, not under its prefix: "/" marks a name taken as written.
        {"/lm_head.weight", {{S::vocab}, {S::d_model}}, "the unembedding, vocab_size x hidden_size (tie_word_embeddings false)",
         {"W_U"}, T::Layout::linear, T::When::untied, T::Kind::later},
    };
    f.block_path = "layers.{b}.";
    const auto L = T::Layout::linear;
    const auto bias = T::Layout::as_lesson;
    f.block_tensors = {
        {"input_layernorm.weight", {{S::d_model}}, "RMSNorm 1 γ, hidden_size", {"ln1_gamma"}},
        {"self_attn.q_proj.weight", {{S::q_width}, {S::d_model}}, "W_Q (nn.Linear: heads·head_dim x hidden_size)", {"W_Q"}, L},
        {"self_attn.k_proj.weight", {{S::kv_width}, {S::d_model}}, "W_K (nn.Linear: kv_heads·head_dim x hidden_size)",
         {"W_K"}, L},
        {"self_attn.v_proj.weight", {{S::kv_width}, {S::d_model}}, "W_V (nn.Linear: kv_heads·head_dim x hidden_size)",
         {"W_V"}, L},
        {"self_attn.q_proj.bias", {{S::q_width}}, "b_Q, heads·head_dim", {"b_Q"}, bias, T::When::qkv_bias},
        {"self_attn.k_proj.bias", {{S::kv_width}}, "b_K, kv_heads·head_dim", {"b_K"}, bias, T::When::qkv_bias},
        {"self_attn.v_proj.bias", {{S::kv_width}}, "b_V, kv_heads·head_dim", {"b_V"}, bias, T::When::qkv_bias},
        {"self_attn.o_proj.weight", {{S::d_model}, {S::q_width}}, "W_O (nn.Linear: hidden_size x heads·head_dim)", {"W_O"}, L},
        {"self_attn.o_proj.bias", {{S::d_model}}, "b_O, hidden_size", {"b_O"}, bias, T::When::o_bias},
        {"post_attention_layernorm.weight", {{S::d_model}}, "RMSNorm 2 γ, hidden_size", {"ln2_gamma"}},
        {"mlp.gate_proj.weight", {{S::d_ff}, {S::d_model}}, "W_1, the gate (nn.Linear: intermediate_size x hidden_size)",
         {"W_1"}, L},
        {"mlp.up_proj.weight", {{S::d_ff}, {S::d_model}},
         "W_3, the linear branch (nn.Linear: intermediate_size x hidden_size)", {"W_3"}, L},
        {"mlp.down_proj.weight", {{S::d_model}, {S::d_ff}}, "W_2 (nn.Linear: hidden_size x intermediate_size)", {"W_2"}, L},
    };
    return f;
}

// GPT-NeoX and Pythia (modeling_gpt_neox.py): pre-norm LayerNorm blocks
// whose FFN reads the block's input beside the attention (use_parallel_residual:
// X + attn(LN1(X)) + FFN(LN2(X))), rotary positions on the first rotary_pct of
// each head in the half layout, Q, K and V fused head by head in
// query_key_value, GELU (erf), a final LayerNorm and embed_out (untied).
// nn.Linear weights, transposed.
Family gpt_neox() {
    Family f{};
    f.model_type = "gpt_neox";
    f.title = "GPT-NeoX";
    f.tokenizer = TokenizerKind::pieces;
    f.tokenizer_files = "tokenizer.json, or vocab.json and merges.txt";
    f.sizes = {{S::d_model, "hidden_size", kMaxDModel},
               {S::heads, "num_attention_heads", kMaxDModel},
               {S::layers, "num_hidden_layers", kBlocks},
               {S::positions, "max_position_embeddings", kMaxRotaryPositions},
               {S::vocab, "vocab_size", kMaxVocabSize},
               {S::d_ff, "intermediate_size", 16 * kMaxDModel}};
    f.eps_key = "layer_norm_eps";
    f.eps_absent = 1e-5;
    f.activation = {"hidden_act", "gelu",
                    {{"gelu", Activation::gelu}, {"gelu_new", Activation::gelu_tanh},
                     {"gelu_pytorch_tanh", Activation::gelu_tanh}},
                    "\"gelu\" (erf), \"gelu_new\" or \"gelu_pytorch_tanh\" (tanh)"};
    f.kinds = {{"rope_scaling", "default", "\"default\" or rope_scaling null (scaled RoPE is not computed)"}};
    f.rope_theta_key = "rotary_emb_base";
    f.rotary_fraction_key = "rotary_pct";
    f.rotary_fraction = 0.25;  // GPTNeoXConfig's default
    f.parallel_key = "use_parallel_residual";
    f.parallel = true;
    f.tie_key = "tie_word_embeddings";
    f.bias_key = "attention_bias";
    f.biases = true;
    f.positions = PositionKind::rope;
    // GPTNeoXForCausalLM saves its body under "gpt_neox."; GPTNeoXModel without.
    f.prefix_probe = "gpt_neox.embed_in.weight";
    f.prefix = "gpt_neox.";
    f.model_tensors = {
        {"embed_in.weight", {{S::vocab}, {S::d_model}}, "token embeddings W_E, vocab_size x hidden_size", {"embedding"},
         T::Layout::as_lesson, T::When::always, T::Kind::input},
        {"final_layer_norm.weight", {{S::d_model}}, "the final LayerNorm's γ, hidden_size", {"ln_final_gamma"}},
        {"final_layer_norm.bias", {{S::d_model}}, "the final LayerNorm's β, hidden_size", {"ln_final_beta"}},
        {"/embed_out.weight", {{S::vocab}, {S::d_model}}, "the unembedding, vocab_size x hidden_size (tie_word_embeddings false)",
         {"W_U"}, T::Layout::linear, T::When::untied, T::Kind::later},
    };
    f.block_path = "layers.{b}.";
    const auto L = T::Layout::linear;
    const auto as = T::Layout::as_lesson;
    const auto always = T::When::always;
    const auto weight = T::Kind::weight;
    f.block_tensors = {
        {"input_layernorm.weight", {{S::d_model}}, "LN1 γ, hidden_size", {"ln1_gamma"}},
        {"input_layernorm.bias", {{S::d_model}}, "LN1 β, hidden_size", {"ln1_beta"}},
        {"post_attention_layernorm.weight", {{S::d_model}}, "LN2 γ, hidden_size", {"ln2_gamma"}},
        {"post_attention_layernorm.bias", {{S::d_model}}, "LN2 β, hidden_size", {"ln2_beta"}},
        {"attention.query_key_value.weight", {{S::d_model, 3}, {S::d_model}},
         "Q, K, V head by head (nn.Linear: 3·hidden_size x hidden_size)", {"W_Q", "W_K", "W_V"}, L, always, weight,
         T::Split::per_head},
        {"attention.query_key_value.bias", {{S::d_model, 3}}, "Q, K, V biases head by head, 3·hidden_size",
         {"b_Q", "b_K", "b_V"}, as, T::When::qkv_bias, weight, T::Split::per_head},
        {"attention.dense.weight", {{S::d_model}, {S::d_model}}, "W_O (nn.Linear: hidden_size x hidden_size)", {"W_O"}, L},
        {"attention.dense.bias", {{S::d_model}}, "W_O's bias, hidden_size", {"b_O"}, as, T::When::o_bias},
        {"mlp.dense_h_to_4h.weight", {{S::d_ff}, {S::d_model}}, "W_1 (nn.Linear: intermediate_size x hidden_size)",
         {"W_1"}, L},
        {"mlp.dense_h_to_4h.bias", {{S::d_ff}}, "W_1's bias, intermediate_size", {"b_1"}},
        {"mlp.dense_4h_to_h.weight", {{S::d_model}, {S::d_ff}}, "W_2 (nn.Linear: hidden_size x intermediate_size)",
         {"W_2"}, L},
        {"mlp.dense_4h_to_h.bias", {{S::d_model}}, "W_2's bias, hidden_size", {"b_2"}},
    };
    return f;
}

// Phi: Phi-1, Phi-1.5 and Phi-2 (modeling_phi.py, PhiForCausalLM): pre-norm
// blocks with ONE LayerNorm whose output both the attention and the MLP read
// beside each other (X + attn(LN1(X)) + FFN(LN1(X)): the parallel residual
// with a shared norm), rotary positions on the first partial_rotary_factor of
// each head in the half layout, Q, K, V and the output projection `dense`
// with biases, grouped-query attention when num_key_value_heads says so,
// fc1 -> gelu_new -> fc2, a final LayerNorm and lm_head with a weight and a
// bias (the bias stays when the weight is tied). nn.Linear weights, transposed.
Family phi() {
    Family f{};
    f.model_type = "phi";
    f.title = "Phi";
    f.tokenizer = TokenizerKind::pieces;
    f.tokenizer_files = "tokenizer.json, or vocab.json and merges.txt";
    f.sizes = {{S::d_model, "hidden_size", kMaxDModel},
               {S::heads, "num_attention_heads", kMaxDModel},
               {S::layers, "num_hidden_layers", kBlocks},
               {S::positions, "max_position_embeddings", kMaxRotaryPositions},
               {S::vocab, "vocab_size", kMaxVocabSize},
               {S::d_ff, "intermediate_size", 16 * kMaxDModel},
               {S::kv_heads, "num_key_value_heads", kMaxDModel, A::heads}};
    f.eps_key = "layer_norm_eps";
    f.eps_absent = 1e-5;
    f.activation = {"hidden_act", "gelu_new",
                    {{"gelu_new", Activation::gelu_tanh}, {"gelu_pytorch_tanh", Activation::gelu_tanh},
                     {"gelu", Activation::gelu}},
                    "\"gelu_new\" or \"gelu_pytorch_tanh\" (tanh), or \"gelu\" (erf)"};
    // Q and K normalised after their projections are not computed.
    f.flags = {{"qk_layernorm", false, "false (no LayerNorm of Q and K after their projections)"}};
    f.kinds = {{"rope_scaling", "default", "\"default\" or rope_scaling null (scaled RoPE is not computed)"}};
    f.rope_theta_key = "rope_theta";
    f.rotary_fraction_key = "partial_rotary_factor";
    f.rotary_fraction = 0.5;  // PhiConfig's default (Phi-2's config says 0.4)
    f.parallel = true;
    f.shared_norm = true;
    f.tie_key = "tie_word_embeddings";
    f.biases = true;  // q_proj, k_proj, v_proj and dense always have theirs
    f.positions = PositionKind::rope;
    // PhiForCausalLM saves its body under "model."; PhiModel without.
    f.prefix_probe = "model.embed_tokens.weight";
    f.prefix = "model.";
    f.model_tensors = {
        {"embed_tokens.weight", {{S::vocab}, {S::d_model}}, "token embeddings W_E, vocab_size x hidden_size", {"embedding"},
         T::Layout::as_lesson, T::When::always, T::Kind::input},
        {"final_layernorm.weight", {{S::d_model}}, "the final LayerNorm's γ, hidden_size", {"ln_final_gamma"}},
        {"final_layernorm.bias", {{S::d_model}}, "the final LayerNorm's β, hidden_size", {"ln_final_beta"}},
        {"/lm_head.weight", {{S::vocab}, {S::d_model}}, "the unembedding, vocab_size x hidden_size (tie_word_embeddings false)",
         {"W_U"}, T::Layout::linear, T::When::untied, T::Kind::later},
        {"/lm_head.bias", {{S::vocab}}, "the logits' bias b_U, vocab_size", {"b_U"}, T::Layout::as_lesson, T::When::always,
         T::Kind::later},
    };
    f.block_path = "layers.{b}.";
    const auto L = T::Layout::linear;
    const auto bias = T::Layout::as_lesson;
    f.block_tensors = {
        {"input_layernorm.weight", {{S::d_model}}, "LN1 γ (the block's one norm), hidden_size", {"ln1_gamma"}},
        {"input_layernorm.bias", {{S::d_model}}, "LN1 β, hidden_size", {"ln1_beta"}},
        {"self_attn.q_proj.weight", {{S::q_width}, {S::d_model}}, "W_Q (nn.Linear: heads·head_dim x hidden_size)", {"W_Q"}, L},
        {"self_attn.q_proj.bias", {{S::q_width}}, "b_Q, heads·head_dim", {"b_Q"}, bias, T::When::qkv_bias},
        {"self_attn.k_proj.weight", {{S::kv_width}, {S::d_model}}, "W_K (nn.Linear: kv_heads·head_dim x hidden_size)",
         {"W_K"}, L},
        {"self_attn.k_proj.bias", {{S::kv_width}}, "b_K, kv_heads·head_dim", {"b_K"}, bias, T::When::qkv_bias},
        {"self_attn.v_proj.weight", {{S::kv_width}, {S::d_model}}, "W_V (nn.Linear: kv_heads·head_dim x hidden_size)",
         {"W_V"}, L},
        {"self_attn.v_proj.bias", {{S::kv_width}}, "b_V, kv_heads·head_dim", {"b_V"}, bias, T::When::qkv_bias},
        {"self_attn.dense.weight", {{S::d_model}, {S::q_width}}, "W_O (nn.Linear: hidden_size x heads·head_dim)", {"W_O"}, L},
        {"self_attn.dense.bias", {{S::d_model}}, "b_O, hidden_size", {"b_O"}, bias, T::When::o_bias},
        {"mlp.fc1.weight", {{S::d_ff}, {S::d_model}}, "W_1 (nn.Linear: intermediate_size x hidden_size)", {"W_1"}, L},
        {"mlp.fc1.bias", {{S::d_ff}}, "W_1's bias, intermediate_size", {"b_1"}},
        {"mlp.fc2.weight", {{S::d_model}, {S::d_ff}}, "W_2 (nn.Linear: hidden_size x intermediate_size)", {"W_2"}, L},
        {"mlp.fc2.bias", {{S::d_model}}, "W_2's bias, hidden_size", {"b_2"}},
    };
    return f;
}

std::vector<Family> declare() {
    std::vector<Family> all = {gpt2(), bert(), llama_like("llama", "Llama"), llama_like("mistral", "Mistral"),
                               llama_like("qwen2", "Qwen2"), gpt_neox(), phi()};
    all[3].sliding = true;  // Mistral: a key further back than sliding_window is masked
    all[4].qkv_bias = true;  // Qwen2: q_proj, k_proj and v_proj with biases
    all[4].sliding_switch_key = "use_sliding_window";
    return all;
}

}  // namespace

const std::vector<Family>& families() {
    static const std::vector<Family> all = declare();
    return all;
}

const Family* find_family(const std::string& model_type) {
    for (const Family& f : families())
        if (model_type == f.model_type) return &f;
    return nullptr;
}

}  // namespace attntrace

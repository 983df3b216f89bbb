// Llama, Mistral, Qwen2: config.json's fields, and each checkpoint tensor to the lesson weight it is.
#include "model/llama.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/memory.hpp"
#include "io/safetensors.hpp"
#include "model/config_bounds.hpp"
#include "model/hf_model.hpp"

namespace attntrace {

namespace {

// config_bounds.hpp's bounds are far above Llama 3 405B (16384, 128 heads, 126 layers, 131072 positions, 128256).

std::string type_title(const std::string& type) {
    return type == "llama" ? "Llama" : type == "mistral" ? "Mistral" : type == "qwen2" ? "Qwen2" : type;
}

}  // namespace

LlamaConfig read_llama_config(const json& config, const std::string& file) {
    Fields f(file);
    LlamaConfig c;
    c.type = f.string(f.member(config, "", "model_type"), "model_type");
    auto size = [&](const char* key, std::int64_t hi) {
        return static_cast<std::size_t>(f.integer(f.member(config, "", key), key, 1, hi));
    };
    c.d_model = size("hidden_size", kMaxDModel);
    c.heads = size("num_attention_heads", kMaxDModel);
    c.layers = size("num_hidden_layers", static_cast<std::int64_t>(kMaxBlocks));
    c.positions = size("max_position_embeddings", kMaxRotaryPositions);
    c.vocab = size("vocab_size", kMaxVocabSize);
    c.d_ff = size("intermediate_size", 16 * kMaxDModel);
    c.kv_heads = c.heads;
    if (auto* k = f.optional(config, "num_key_value_heads"); k && !k->is_null())
        c.kv_heads = static_cast<std::size_t>(f.integer(*k, "num_key_value_heads", 1, kMaxDModel));
    if (c.heads % c.kv_heads != 0)
        f.fail("num_key_value_heads", fmt::format("a divisor of num_attention_heads ({})", c.heads),
               fmt::format("{}", c.kv_heads));
    if (auto* h = f.optional(config, "head_dim"); h && !h->is_null()) {
        c.head_dim = static_cast<std::size_t>(f.integer(*h, "head_dim", 1, kMaxDModel));
    } else {
        if (c.d_model % c.heads != 0)
            f.fail("num_attention_heads", fmt::format("a divisor of hidden_size ({}) when head_dim is not given", c.d_model),
                   fmt::format("{}", c.heads));
        c.head_dim = c.d_model / c.heads;
    }
    if (c.head_dim % 2 != 0)
        f.fail("head_dim", "an even head size (RoPE turns pairs of dimensions)", fmt::format("{}", c.head_dim));
    c.eps = read_norm_eps(f, config, "rms_norm_eps", c.eps);
    if (auto* t = f.optional(config, "rope_theta")) {
        c.rope_theta = f.number(*t, "rope_theta");
        if (!(c.rope_theta > 1 && c.rope_theta <= 1e12)) f.fail("rope_theta", "a number above 1, at most 1e12", describe(*t));
    }
    // rope_scaling: only the plain rotation is computed; a scaled one (linear,
    // dynamic, yarn, longrope, llama3) gives other angles and is refused by name.
    if (auto* s = f.optional(config, "rope_scaling"); s && !s->is_null()) {
        f.object(*s, "rope_scaling");
        const char* key = s->contains("rope_type") ? "rope_type" : "type";
        const std::string path = std::string("rope_scaling.") + key;
        const std::string kind = f.string(f.member(*s, "rope_scaling", key), path);
        if (kind != "default")
            f.fail(path, "\"default\" or rope_scaling null (scaled RoPE is not computed)", describe((*s)[key]));
    }
    std::string act = "silu";
    if (auto* a = f.optional(config, "hidden_act")) act = f.string(*a, "hidden_act");
    if (act != "silu") f.fail("hidden_act", "\"silu\" (SwiGLU's gate)", describe(config["hidden_act"]));
    if (auto* t = f.optional(config, "tie_word_embeddings")) c.tied = f.boolean(*t, "tie_word_embeddings");
    if (c.type == "qwen2") c.qkv_bias = true;
    if (auto* b = f.optional(config, "attention_bias"); b && f.boolean(*b, "attention_bias"))
        c.qkv_bias = c.o_bias = true;
    if (auto* b = f.optional(config, "mlp_bias"); b && f.boolean(*b, "mlp_bias"))
        f.fail("mlp_bias", "false (gate_proj, up_proj and down_proj without biases)", "true");
    // Mistral's sliding window (Qwen2's when use_sliding_window): a key
    // further back than the window is masked; refused only when the text is longer.
    bool sliding = c.type == "mistral";
    if (c.type == "qwen2")
        if (auto* u = f.optional(config, "use_sliding_window")) sliding = f.boolean(*u, "use_sliding_window");
    if (auto* w = f.optional(config, "sliding_window"); sliding && w && !w->is_null())
        c.sliding_window = static_cast<std::size_t>(f.integer(*w, "sliding_window", 1, kMaxRotaryPositions));
    return c;
}

void build_llama(HfModel& m, const LlamaConfig& c, const Checkpoint& ck, const std::vector<std::int64_t>& ids) {
    const std::size_t C = c.d_model, F = c.d_ff, L = c.layers, hs = c.head_dim;
    const std::size_t Nq = c.heads * hs, Nkv = c.kv_heads * hs;
    if (c.sliding_window && ids.size() > c.sliding_window)
        fail_file(ck.where(), fmt::format("at most {} tokens (config.json's sliding_window: a longer text's mask is not computed)",
                                          c.sliding_window),
                  fmt::format("{} tokens", ids.size()));
    // LlamaForCausalLM saves its body under "model."; LlamaModel (no head) without.
    const std::string p = ck.has("model.embed_tokens.weight") ? "model." : "";
    struct Use {
        std::string tensor;
        Shape shape;  // as stored: nn.Linear's d_out x d_in
        std::string role;
        std::string weight;  // the lesson weight ("W_Q"), "" for the model's own
        bool matrix = false;  // transposed into the lesson's d_in x d_out
    };
    std::vector<Use> uses = {
        {p + "embed_tokens.weight", {c.vocab, C}, "token embeddings W_E, vocab_size x hidden_size", "", false},
        {p + "norm.weight", {C}, "the final RMSNorm's γ, hidden_size", "", false},
    };
    if (!c.tied) uses.push_back({"lm_head.weight", {c.vocab, C}, "the unembedding, vocab_size x hidden_size (tie_word_embeddings false)", "", false});
    const std::size_t first_block = uses.size();
    std::size_t per_block = 0;
    for (std::size_t b = 0; b < L; ++b) {
        const std::string h = fmt::format("{}layers.{}.", p, b);
        const std::string blk = fmt::format("block {}'s ", b);
        const std::size_t before = uses.size();
        uses.push_back({h + "input_layernorm.weight", {C}, blk + "RMSNorm 1 γ, hidden_size", "ln1_gamma", false});
        uses.push_back({h + "self_attn.q_proj.weight", {Nq, C}, blk + "W_Q (nn.Linear: heads·head_dim x hidden_size)", "W_Q", true});
        uses.push_back({h + "self_attn.k_proj.weight", {Nkv, C}, blk + "W_K (nn.Linear: kv_heads·head_dim x hidden_size)", "W_K", true});
        uses.push_back({h + "self_attn.v_proj.weight", {Nkv, C}, blk + "W_V (nn.Linear: kv_heads·head_dim x hidden_size)", "W_V", true});
        if (c.qkv_bias) {
            uses.push_back({h + "self_attn.q_proj.bias", {Nq}, blk + "b_Q, heads·head_dim", "b_Q", false});
            uses.push_back({h + "self_attn.k_proj.bias", {Nkv}, blk + "b_K, kv_heads·head_dim", "b_K", false});
            uses.push_back({h + "self_attn.v_proj.bias", {Nkv}, blk + "b_V, kv_heads·head_dim", "b_V", false});
        }
        uses.push_back({h + "self_attn.o_proj.weight", {C, Nq}, blk + "W_O (nn.Linear: hidden_size x heads·head_dim)", "W_O", true});
        if (c.o_bias) uses.push_back({h + "self_attn.o_proj.bias", {C}, blk + "b_O, hidden_size", "b_O", false});
        uses.push_back({h + "post_attention_layernorm.weight", {C}, blk + "RMSNorm 2 γ, hidden_size", "ln2_gamma", false});
        uses.push_back({h + "mlp.gate_proj.weight", {F, C}, blk + "W_1, the gate (nn.Linear: intermediate_size x hidden_size)", "W_1", true});
        uses.push_back({h + "mlp.up_proj.weight", {F, C}, blk + "W_3, the linear branch (nn.Linear: intermediate_size x hidden_size)", "W_3", true});
        uses.push_back({h + "mlp.down_proj.weight", {C, F}, blk + "W_2 (nn.Linear: hidden_size x intermediate_size)", "W_2", true});
        per_block = uses.size() - before;
    }
    // Every tensor present and of its shape, checked before any is converted;
    // then what the run holds at once within --max-memory: the embedding, the
    // final norm and lm_head (held throughout), one block's float32 weights
    // (converted when its passes run, lesson/weight_source.hpp) and the
    // largest matrix once more (each is read, then transposed). The plan adds
    // the trace's bytes to it before the run.
    std::size_t held = 0, largest = 0;
    std::vector<std::size_t> block_floats(L, 0);
    for (std::size_t i = 0; i < uses.size(); ++i) {
        const Use& u = uses[i];
        ck.expect(u.tensor, u.shape, u.role);
        const std::size_t n = numel(u.shape);  // the config's extents, each bounded above
        if (i < first_block) held += n;
        else block_floats[(i - first_block) / per_block] += n;
        if (u.matrix) largest = std::max(largest, n);
    }
    const std::size_t floats = held + *std::max_element(block_floats.begin(), block_floats.end()) + largest;
    require_weight_budget(ck.where(), floats,
                          ": the embeddings and lm_head, one block's weights and one matrix's transpose");

    start_model_lesson(m, c.type, fmt::format("{} from {}: {} blocks, d_model {}, {} heads ({} K/V heads), vocabulary {}",
                                              type_title(c.type), m.dir, L, C, c.heads, c.kv_heads, c.vocab), ids);
    Lesson& l = m.lesson;
    Config& cfg = l.config;
    cfg.d_model = C;
    cfg.heads = c.heads;
    cfg.kv_heads = c.kv_heads;
    if (hs * c.heads != C) cfg.d_k = hs;
    cfg.d_ff = F;
    cfg.mask = MaskKind::causal;
    cfg.activation = Activation::swiglu;
    cfg.norm = NormKind::rmsnorm;
    cfg.eps = c.eps;
    cfg.positions.kind = PositionKind::rope;
    cfg.positions.layout = RopeLayout::half;  // modeling_llama's rotate_half
    cfg.positions.base = c.rope_theta;
    cfg.arch.blocks = L;
    cfg.arch.norm_first = true;
    cfg.arch.final_norm = true;  // model.norm
    cfg.arch.unembed = true;     // lm_head, or the embedding when tied
    cfg.unembed_tied = c.tied;
    l.set_range(Stage::embed, Stage::unembed);

    auto get = [&](const Use& u) {
        Tensor t = ck.get(u.tensor, u.shape, u.role);
        return u.matrix ? transposed(t) : t;  // nn.Linear's (d_out, d_in) as (d_in, d_out)
    };
    l.inputs["embedding"] = get(uses[0]);
    l.weights["ln_final_gamma"] = get(uses[1]);
    // The blocks' weights: converted when their block's passes run.
    auto source = std::make_shared<WeightSource>();
    auto shared = std::make_shared<const Checkpoint>(ck);
    // lm_head (V, C) as W_U (C, V): converted when the unembedding runs, after the blocks.
    if (!c.tied)
        source->add("W_U", numel(uses[2].shape), [shared, u = uses[2]] { return transposed(shared->get(u.tensor, u.shape, u.role)); });
    for (std::size_t b = 0; b < L; ++b) {
        const std::string w = L > 1 ? fmt::format("blocks.{}.", b) : std::string();
        for (std::size_t i = 0; i < per_block; ++i) {
            const Use& u = uses[first_block + b * per_block + i];
            source->add(w + u.weight, numel(u.shape), [shared, u] {
                Tensor t = shared->get(u.tensor, u.shape, u.role);
                return u.matrix ? transposed(t) : t;
            });
        }
    }
    l.weight_source = std::move(source);
}

}  // namespace attntrace

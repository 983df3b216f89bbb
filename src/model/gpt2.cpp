// GPT-2: config.json's fields, and each checkpoint tensor to the lesson weight it is.
#include "model/gpt2.hpp"

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

// config_bounds.hpp's bounds are far above GPT-2 XL (1600, 25 heads, 48 layers, 1024 positions, 50257).

// Columns [c0, c1) of a (rows, cols) matrix: c_attn's Q, K or V block.
Tensor columns(const Tensor& m, std::size_t c0, std::size_t c1) {
    if (m.rank() == 1) {
        Tensor out = Tensor::uninitialized({c1 - c0});
        std::copy(m.ptr() + c0, m.ptr() + c1, out.ptr());
        return out;
    }
    const std::size_t rows = m.shape[0], cols = m.shape[1];
    Tensor out = Tensor::uninitialized({rows, c1 - c0});
    for (std::size_t r = 0; r < rows; ++r)
        std::copy(m.ptr() + r * cols + c0, m.ptr() + r * cols + c1, out.ptr() + r * (c1 - c0));
    return out;
}

}  // namespace

Gpt2Config read_gpt2_config(const json& config, const std::string& file) {
    Fields f(file);
    Gpt2Config c;
    auto size = [&](const char* key, std::int64_t hi) {
        return static_cast<std::size_t>(f.integer(f.member(config, "", key), key, 1, hi));
    };
    c.d_model = size("n_embd", kMaxDModel);
    c.heads = size("n_head", kMaxDModel);
    c.layers = size("n_layer", static_cast<std::int64_t>(kMaxBlocks));
    c.positions = size("n_positions", kMaxPositions);
    c.vocab = size("vocab_size", kMaxVocabSize);
    if (c.d_model % c.heads != 0)
        f.fail("n_head", fmt::format("a divisor of n_embd ({})", c.d_model), fmt::format("{}", c.heads));
    c.d_ff = 4 * c.d_model;
    if (auto* inner = f.optional(config, "n_inner"); inner && !inner->is_null())
        c.d_ff = static_cast<std::size_t>(f.integer(*inner, "n_inner", 1, 4 * kMaxDModel));
    c.eps = read_norm_eps(f, config, "layer_norm_epsilon", c.eps);
    c.activation = "gelu_new";
    if (auto* a = f.optional(config, "activation_function")) c.activation = f.string(*a, "activation_function");
    if (c.activation != "gelu_new" && c.activation != "gelu_pytorch_tanh" && c.activation != "gelu" &&
        c.activation != "relu")
        f.fail("activation_function", "gelu_new, gelu_pytorch_tanh, gelu or relu", describe(config["activation_function"]));
    // Variants of the attention this mapping does not compute: refused rather than run differently.
    if (auto* s = f.optional(config, "scale_attn_weights"); s && !f.boolean(*s, "scale_attn_weights"))
        f.fail("scale_attn_weights", "true (scores divided by √head_size)", "false");
    if (auto* s = f.optional(config, "scale_attn_by_inverse_layer_idx"); s && f.boolean(*s, "scale_attn_by_inverse_layer_idx"))
        f.fail("scale_attn_by_inverse_layer_idx", "false (every layer scaled alike)", "true");
    if (auto* s = f.optional(config, "add_cross_attention"); s && f.boolean(*s, "add_cross_attention"))
        f.fail("add_cross_attention", "false (a decoder-only GPT-2)", "true");
    return c;
}

void build_gpt2(HfModel& m, const Gpt2Config& c, const Checkpoint& ck, const std::vector<std::int64_t>& ids) {
    const std::size_t C = c.d_model, F = c.d_ff, L = c.layers;
    // GPT2LMHeadModel saves its body under "transformer."; GPT2Model (the published "gpt2") without.
    const std::string p = ck.has("transformer.wte.weight") ? "transformer." : "";
    struct Use {
        std::string tensor;
        Shape shape;
        std::string role;
    };
    std::vector<Use> uses = {
        {p + "wte.weight", {c.vocab, C}, "token embeddings W_E, vocab_size x n_embd; also the unembedding (tied)"},
        {p + "wpe.weight", {c.positions, C}, "learned positions, n_positions x n_embd"},
        {p + "ln_f.weight", {C}, "the final LayerNorm's γ, n_embd"},
        {p + "ln_f.bias", {C}, "the final LayerNorm's β, n_embd"},
    };
    for (std::size_t b = 0; b < L; ++b) {
        const std::string h = fmt::format("{}h.{}.", p, b);
        const std::string blk = fmt::format("block {}'s ", b);
        uses.push_back({h + "ln_1.weight", {C}, blk + "LN1 γ, n_embd"});
        uses.push_back({h + "ln_1.bias", {C}, blk + "LN1 β, n_embd"});
        uses.push_back({h + "attn.c_attn.weight", {C, 3 * C}, blk + "Q, K, V side by side (Conv1D: n_embd x 3·n_embd)"});
        uses.push_back({h + "attn.c_attn.bias", {3 * C}, blk + "Q, K, V biases, 3·n_embd"});
        uses.push_back({h + "attn.c_proj.weight", {C, C}, blk + "W_O (Conv1D: n_embd x n_embd)"});
        uses.push_back({h + "attn.c_proj.bias", {C}, blk + "W_O's bias, n_embd"});
        uses.push_back({h + "ln_2.weight", {C}, blk + "LN2 γ, n_embd"});
        uses.push_back({h + "ln_2.bias", {C}, blk + "LN2 β, n_embd"});
        uses.push_back({h + "mlp.c_fc.weight", {C, F}, blk + "W_1 (Conv1D: n_embd x n_inner)"});
        uses.push_back({h + "mlp.c_fc.bias", {F}, blk + "W_1's bias, n_inner"});
        uses.push_back({h + "mlp.c_proj.weight", {F, C}, blk + "W_2 (Conv1D: n_inner x n_embd)"});
        uses.push_back({h + "mlp.c_proj.bias", {C}, blk + "W_2's bias, n_embd"});
    }
    // Every tensor present and of its shape, checked before any is converted;
    // then what the run holds at once within --max-memory: the embeddings and
    // ln_f (held throughout), one block's float32 weights (converted when its
    // passes run, lesson/weight_source.hpp) and c_attn once more (read whole,
    // then split). The plan adds the trace's bytes to it before the run.
    std::size_t held = 0, block = 0, c_attn = 0;
    for (std::size_t i = 0; i < uses.size(); ++i) {
        ck.expect(uses[i].tensor, uses[i].shape, uses[i].role);
        const std::size_t n = numel(uses[i].shape);  // the config's extents, each bounded above
        if (i < 4) held += n;
        else if (i < 4 + 12) block += n;  // every block is the same size
        if (uses[i].tensor.find("c_attn.weight") != std::string::npos) c_attn = n;
    }
    const std::size_t floats = held + block + c_attn;
    require_weight_budget(ck.where(), floats, "");

    start_model_lesson(m, "gpt2", fmt::format("GPT-2 from {}: {} blocks, d_model {}, {} heads, vocabulary {}", m.dir, L, C,
                                              c.heads, c.vocab), ids);
    Lesson& l = m.lesson;
    Config& cfg = l.config;
    cfg.d_model = C;
    cfg.heads = c.heads;
    cfg.d_ff = F;
    cfg.mask = MaskKind::causal;
    cfg.activation = c.activation == "gelu" ? Activation::gelu : c.activation == "relu" ? Activation::relu : Activation::gelu_tanh;
    cfg.eps = c.eps;
    cfg.positions.kind = PositionKind::learned;
    cfg.arch.blocks = L;
    cfg.arch.norm_first = true;
    cfg.arch.final_norm = true;  // ln_f
    cfg.arch.unembed = true;     // the logits, tied to wte
    cfg.unembed_tied = true;
    l.set_range(Stage::embed, Stage::unembed);

    auto get = [&](const Use& u) { return ck.get(u.tensor, u.shape, u.role); };
    l.inputs["embedding"] = get(uses[0]);
    l.inputs["positions"] = get(uses[1]);
    l.weights["ln_final_gamma"] = get(uses[2]);
    l.weights["ln_final_beta"] = get(uses[3]);
    // The blocks' weights: converted when their block's passes run.
    auto source = std::make_shared<WeightSource>();
    auto shared = std::make_shared<const Checkpoint>(ck);
    auto whole = [&](const std::string& name, const Use& u) {
        source->add(name, numel(u.shape), [shared, u] { return shared->get(u.tensor, u.shape, u.role); });
    };
    for (std::size_t b = 0; b < L; ++b) {
        const std::string w = L > 1 ? fmt::format("blocks.{}.", b) : std::string();
        const Use* u = &uses[4 + 12 * b];
        whole(w + "ln1_gamma", u[0]);
        whole(w + "ln1_beta", u[1]);
        // c_attn: x·[W_Q | W_K | W_V] + [b_Q | b_K | b_V]   (C, 3C): each read, then its third taken
        const char* names[] = {"Q", "K", "V"};
        for (std::size_t i = 0; i < 3; ++i) {
            source->add(w + "W_" + names[i], C * C, [shared, qkv = u[2], i, C] {
                return columns(shared->get(qkv.tensor, qkv.shape, qkv.role), i * C, (i + 1) * C);
            });
            source->add(w + "b_" + names[i], C, [shared, bias = u[3], i, C] {
                return columns(shared->get(bias.tensor, bias.shape, bias.role), i * C, (i + 1) * C);
            });
        }
        whole(w + "W_O", u[4]);
        whole(w + "b_O", u[5]);
        whole(w + "ln2_gamma", u[6]);
        whole(w + "ln2_beta", u[7]);
        whole(w + "W_1", u[8]);
        whole(w + "b_1", u[9]);
        whole(w + "W_2", u[10]);
        whole(w + "b_2", u[11]);
    }
    l.weight_source = std::move(source);
}

}  // namespace attntrace

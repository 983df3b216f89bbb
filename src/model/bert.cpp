// BERT: config.json's fields, and each checkpoint tensor to the lesson weight it is.
#include "model/bert.hpp"

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

// config_bounds.hpp's bounds are far above BERT-large (1024, 16 heads, 24 layers, 4096, 512 positions, 30522).

}  // namespace

BertConfig read_bert_config(const json& config, const std::string& file) {
    Fields f(file);
    BertConfig c;
    auto size = [&](const char* key, std::int64_t hi) {
        return static_cast<std::size_t>(f.integer(f.member(config, "", key), key, 1, hi));
    };
    c.d_model = size("hidden_size", kMaxDModel);
    c.heads = size("num_attention_heads", kMaxDModel);
    c.layers = size("num_hidden_layers", static_cast<std::int64_t>(kMaxBlocks));
    c.d_ff = size("intermediate_size", 4 * kMaxDModel);
    c.positions = size("max_position_embeddings", kMaxPositions);
    c.vocab = size("vocab_size", kMaxVocabSize);
    c.type_vocab = 2;  // BertConfig's default
    if (auto* t = f.optional(config, "type_vocab_size"))
        c.type_vocab = static_cast<std::size_t>(f.integer(*t, "type_vocab_size", 1, kMaxVocabSize));
    if (c.d_model % c.heads != 0)
        f.fail("num_attention_heads", fmt::format("a divisor of hidden_size ({})", c.d_model), fmt::format("{}", c.heads));
    c.eps = read_norm_eps(f, config, "layer_norm_eps", c.eps);
    // hidden_act: "gelu" is GELU with the exact erf (ACT2FN["gelu"]); the others
    // (gelu_new's tanh form, relu, silu, ...) would be other numbers: refused, named.
    if (auto* a = f.optional(config, "hidden_act")) {
        if (!a->is_string() || a->get<std::string>() != "gelu")
            f.fail("hidden_act", "\"gelu\" (GELU with erf, the activation BERT is published with)", describe(*a));
    }
    if (auto* p = f.optional(config, "position_embedding_type"); p && !p->is_null()) {
        if (!p->is_string() || p->get<std::string>() != "absolute")
            f.fail("position_embedding_type", "\"absolute\" (learned positions added to the embeddings)", describe(*p));
    }
    // Variants this mapping does not compute: refused rather than run differently.
    if (auto* s = f.optional(config, "is_decoder"); s && f.boolean(*s, "is_decoder"))
        f.fail("is_decoder", "false (BERT's bidirectional encoder)", "true");
    if (auto* s = f.optional(config, "add_cross_attention"); s && f.boolean(*s, "add_cross_attention"))
        f.fail("add_cross_attention", "false (an encoder without cross-attention)", "true");
    return c;
}

namespace {

void build_bert(HfModel& m, const BertConfig& c, const Checkpoint& ck, const std::vector<std::int64_t>& ids) {
    const std::size_t C = c.d_model, F = c.d_ff, L = c.layers;
    // BertForMaskedLM and friends save the body under "bert."; BertModel without.
    const std::string p = ck.has("bert.embeddings.word_embeddings.weight") ? "bert." : "";
    struct Use {
        std::string tensor;
        Shape shape;
        std::string role;
        bool linear = false;  // an nn.Linear weight (d_out x d_in): transposed as it is read
    };
    const std::string e = p + "embeddings.";
    std::vector<Use> uses = {
        {e + "word_embeddings.weight", {c.vocab, C}, "token embeddings W_E, vocab_size x hidden_size"},
        {e + "position_embeddings.weight", {c.positions, C}, "learned positions, max_position_embeddings x hidden_size"},
        {e + "token_type_embeddings.weight", {c.type_vocab, C}, "token type embeddings, type_vocab_size x hidden_size"},
        {e + "LayerNorm.weight", {C}, "the embeddings' LayerNorm γ, hidden_size"},
        {e + "LayerNorm.bias", {C}, "the embeddings' LayerNorm β, hidden_size"},
    };
    for (std::size_t b = 0; b < L; ++b) {
        const std::string h = fmt::format("{}encoder.layer.{}.", p, b);
        const std::string blk = fmt::format("block {}'s ", b);
        for (const char* qkv : {"query", "key", "value"}) {
            uses.push_back({h + "attention.self." + qkv + ".weight", {C, C},
                            blk + qkv + " projection (nn.Linear: hidden_size x hidden_size)", true});
            uses.push_back({h + "attention.self." + qkv + ".bias", {C}, blk + qkv + " bias, hidden_size"});
        }
        uses.push_back({h + "attention.output.dense.weight", {C, C}, blk + "W_O (nn.Linear: hidden_size x hidden_size)", true});
        uses.push_back({h + "attention.output.dense.bias", {C}, blk + "W_O's bias, hidden_size"});
        uses.push_back({h + "attention.output.LayerNorm.weight", {C}, blk + "LN1 γ, hidden_size"});
        uses.push_back({h + "attention.output.LayerNorm.bias", {C}, blk + "LN1 β, hidden_size"});
        uses.push_back({h + "intermediate.dense.weight", {F, C}, blk + "W_1 (nn.Linear: intermediate_size x hidden_size)", true});
        uses.push_back({h + "intermediate.dense.bias", {F}, blk + "W_1's bias, intermediate_size"});
        uses.push_back({h + "output.dense.weight", {C, F}, blk + "W_2 (nn.Linear: hidden_size x intermediate_size)", true});
        uses.push_back({h + "output.dense.bias", {C}, blk + "W_2's bias, hidden_size"});
        uses.push_back({h + "output.LayerNorm.weight", {C}, blk + "LN2 γ, hidden_size"});
        uses.push_back({h + "output.LayerNorm.bias", {C}, blk + "LN2 β, hidden_size"});
    }
    // Every tensor present and of its shape, checked before any is converted;
    // then what the run holds at once within --max-memory: the embeddings and
    // their LayerNorm (held throughout), one block's float32 weights (converted
    // when its passes run, lesson/weight_source.hpp) and the largest matrix
    // once more (each is read, then transposed). The plan adds the trace's
    // bytes to it before the run.
    constexpr std::size_t kEmbeddingUses = 5, kBlockUses = 16;
    std::size_t held = 0, block = 0, largest = 0;
    for (std::size_t i = 0; i < uses.size(); ++i) {
        const Use& u = uses[i];
        ck.expect(u.tensor, u.shape, u.role);
        const std::size_t n = numel(u.shape);  // the config's extents, each bounded above
        if (i < kEmbeddingUses) held += n;
        else if (i < kEmbeddingUses + kBlockUses) block += n;  // every block is the same size
        if (u.linear) largest = std::max(largest, n);
    }
    require_weight_budget(ck.where(), held + block + largest,
                          ": the embeddings, one block's weights and one matrix's transpose");

    start_model_lesson(m, "bert", fmt::format("BERT from {}: {} blocks, d_model {}, {} heads, vocabulary {}", m.dir, L, C,
                                              c.heads, c.vocab), ids);
    Lesson& l = m.lesson;
    Config& cfg = l.config;
    cfg.d_model = C;
    cfg.heads = c.heads;
    cfg.d_ff = F;
    cfg.mask = MaskKind::none;  // bidirectional: every token sees every token
    cfg.activation = Activation::gelu;
    cfg.eps = c.eps;
    cfg.positions.kind = PositionKind::learned;
    cfg.arch.blocks = L;
    cfg.arch.norm_first = false;
    cfg.arch.embed_norm = true;
    l.set_range(Stage::embed, Stage::norm2);

    auto get = [&](const Use& u) { return ck.get(u.tensor, u.shape, u.role); };
    l.inputs["embedding"] = get(uses[0]);
    l.inputs["positions"] = get(uses[1]);
    l.inputs["token_types"] = get(uses[2]);
    l.weights["embed_ln_gamma"] = get(uses[3]);
    l.weights["embed_ln_beta"] = get(uses[4]);
    // The blocks' weights: converted when their block's passes run.
    auto source = std::make_shared<WeightSource>();
    auto shared = std::make_shared<const Checkpoint>(ck);
    const char* names[] = {"W_Q", "b_Q", "W_K", "b_K", "W_V", "b_V", "W_O", "b_O", "ln1_gamma", "ln1_beta",
                           "W_1", "b_1", "W_2", "b_2", "ln2_gamma", "ln2_beta"};  // in the order of `uses`
    for (std::size_t b = 0; b < L; ++b) {
        const std::string w = L > 1 ? fmt::format("blocks.{}.", b) : std::string();
        for (std::size_t i = 0; i < kBlockUses; ++i) {
            const Use& u = uses[kEmbeddingUses + kBlockUses * b + i];
            source->add(w + names[i], numel(u.shape), [shared, u] {
                Tensor t = shared->get(u.tensor, u.shape, u.role);
                // nn.Linear: y = x·Wᵀ + b, W (d_out, d_in) -> the lesson's (d_in, d_out)
                return u.linear ? transposed(t) : t;
            });
        }
    }
    l.weight_source = std::move(source);
}

}  // namespace

void load_bert(HfModel& m, const json& config, const std::string& config_path, const ModelInput& input) {
    m.wordpiece = WordPiece::open(m.dir);
    const BertConfig c = read_bert_config(config, config_path);
    std::vector<std::int64_t> ids = input.ids;
    const std::string source = input.text ? input.text_source : input.ids_source;
    if (input.text) {
        if (!m.wordpiece)
            fail_file(m.dir, "a tokenizer (tokenizer.json, or vocab.txt) to read " + input.text_source,
                      "none in the folder (give --ids instead)");
        ids = m.wordpiece->encode(*input.text, input.text_source);
    }
    if (ids.empty()) fail_file(source, "at least one token id", "none");
    for (std::size_t i = 0; i < ids.size(); ++i)
        if (ids[i] < 0 || ids[i] >= static_cast<std::int64_t>(c.vocab))
            fail_field(source, fmt::format("[{}]", i),
                       fmt::format("a token id below the vocabulary's {} (config.json's vocab_size)", c.vocab),
                       fmt::format("{}", ids[i]));
    if (ids.size() > c.positions)
        fail_file(source, fmt::format("at most {} tokens (config.json's max_position_embeddings)", c.positions),
                  fmt::format("{} tokens", ids.size()));
    const Checkpoint ckpt = Checkpoint::open(m.dir);
    build_bert(m, c, ckpt, ids);
}

}  // namespace attntrace

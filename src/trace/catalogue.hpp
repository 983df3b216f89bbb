// The catalogue a lesson's model records: the template of trace/steps.cpp
// (one post-norm encoder block) generated for any stack of blocks.
//
// A model is N blocks of one kind (encoder, or decoder with a cross-attention
// sub-block over the encoder's output), with the norms after each residual add
// (post-norm, as PyTorch's norm_first=False) or before each sub-block
// (pre-norm, norm_first=True). The catalogue lists its passes, the stage
// instances in run order, each with the names it reads and writes, and its
// steps, named `blocks.i.` as TransformerLens does. The default model (one
// post-norm encoder block) is the template itself, names and texts unchanged.
//
//   encoder, post-norm   x -> attn -> add1 -> norm1 -> ffn -> add2 -> norm2
//   encoder, pre-norm    x -> norm1 -> attn -> add1 -> norm2 -> ffn -> add2
//   decoder, post-norm   x -> attn -> add1 -> norm1 -> cross -> add -> norm(ln2) -> ffn -> add2 -> norm(ln3)
//   decoder, pre-norm    x -> norm1 -> attn -> add1 -> norm(ln2) -> cross -> add -> norm(ln3) -> ffn -> add2
//   encoder, pre-norm, parallel residual (GPT-NeoX, config.parallel_residual):
//                        x -> norm1 -> attn -> add1 (x + attn);  x -> norm2 -> ffn;  add2 (add1 + ffn)
//   the same with one norm per block (Phi-2, config.shared_norm):
//                        x -> norm1 -> attn -> add1 (x + attn);  norm1 -> ffn;  add2 (add1 + ffn)
//
// With an embedding norm (config.embed_norm, BERT) a norm pass runs between the
// embeddings and block 0: embed.ln.* = LN(hook_resid_pre), and block 0 reads it.
//
// The model's end (config.final_norm, config.unembed: GPT-2, the Llama family):
// after the last block a norm pass, ln_final.* = LN_f(the last block's output),
// then the unembedding, unembed = LN_f·W_U (the logits, one row per token; + b_U with weights.b_U).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "trace/steps.hpp"

namespace attntrace {

// config.blocks, config.norm_first, config.block (docs/lesson-format.md, Models).
struct Arch {
    std::size_t blocks = 1;
    bool norm_first = false;  // pre-norm: LN before each sub-block, none after the add
    bool decoder = false;     // causal self-attention, cross-attention over inputs.memory, FFN
    // config.parallel_residual (pre-norm only): the FFN reads LN2 of the block's input, not of
    // X + attn (GPT-NeoX, Pythia): X_post = (X + attn(LN1(X))) + FFN(LN2(X)).
    bool parallel = false;
    // config.shared_norm (with parallel only): one norm per block, the FFN reading LN1's output
    // beside the attention (Phi-2): X_post = (X + attn(LN1(X))) + FFN(LN1(X)); no ln2 pass.
    bool shared_norm = false;
    // config.embed_norm: a LayerNorm of the embeddings' sum before block 0 (BERT's
    // embeddings.LayerNorm): steps embed.ln.*, weights embed_ln_gamma, embed_ln_beta.
    bool embed_norm = false;
    // config.final_norm: a norm after the last block (GPT-2's ln_f, Llama's norm): steps ln_final.*,
    // weights ln_final_gamma, ln_final_beta.
    bool final_norm = false;
    // config.unembed: the logits after the last block (and the final norm): step unembed (pos, vocab).
    bool unembed = false;
    bool is_default() const { return blocks == 1 && !norm_first && !decoder && !parallel && !shared_norm && !embed_norm && !final_norm && !unembed; }
    bool operator<(const Arch& o) const;
};

// Upper bound on config.blocks: every block is a full set of steps and weights.
inline constexpr std::size_t kMaxBlocks = 64;

// Pass::norm_index of the final norm (config.final_norm).
inline constexpr int kFinalNorm = -1;

// A step of a catalogue by its index (Catalogue::at): how a pass names the
// steps it is wired to. Default: none.
struct StepId {
    std::uint32_t index = UINT32_MAX;
    bool valid() const { return index != UINT32_MAX; }
    bool operator==(const StepId&) const = default;
};

// One stage instance: what it computes and the steps it is wired to, resolved
// once when the catalogue is generated.
struct Pass {
    Stage stage;
    int block = -1;        // -1: the embeddings, before the blocks
    bool cross = false;    // qkv..out of a decoder's cross-attention
    StepId x;              // what it reads: qkv the queries' (and, unless cross, the keys') source;
                           // norm and ffn their input
    StepId residual;       // add: out = residual + update
    StepId update;
    StepId out;            // add: the step it writes; norm: its output (ln_normalized)
    std::string weights;   // weight-name prefix: "" with one block, else "blocks.1."; "cross." added in cross
    int norm_index = 0;    // norm: 1, 2 or 3 (its LayerNorm's number in the block, its weights ln{k}_gamma);
                           // 0: the embeddings' norm (block -1, its weights embed_ln_gamma);
                           // kFinalNorm: the final norm after the blocks (block -1, ln_final_gamma)
    std::size_t first = 0, end = 0;  // its steps: catalogue steps [first, end)
};

// What a lesson's config changes in the steps a pass reads (Lesson::reads()).
struct Reads {
    bool rope = false;                // scores (and streamed attention) read the rotated Q and K (self-attention)
    MaskAt mask_at = MaskAt::scaled;  // raw: the mask reads the raw scores (and the factor); weights: softmax reads M
    bool scale_factor = false;        // config.scale records hook_scale_factor
};

class Catalogue {
public:
    explicit Catalogue(const Arch& arch);

    const Arch& arch() const { return arch_; }
    const std::vector<StepDef>& steps() const { return steps_; }
    const std::vector<Pass>& passes() const { return passes_; }
    const StepDef* find(std::string_view name) const;
    const StepDef& at(StepId id) const { return steps_.at(id.index); }
    StepId id_of(const StepDef& def) const { return StepId{static_cast<std::uint32_t>(index_of(def))}; }
    std::size_t index_of(const StepDef& def) const { return static_cast<std::size_t>(&def - steps_.data()); }
    const Pass& pass_of(const StepDef& def) const { return passes_[static_cast<std::size_t>(def.pass)]; }

    // The steps of earlier passes that pass `p` reads (weights and inputs aside),
    // as the lesson's config wires them (Reads).
    std::vector<const StepDef*> consumed_by(const Pass& p, const Reads& reads) const;
    // Step `leaf` as pass `p` reads or writes it: its own, else its sub-block's
    // (block and self or cross), else the embeddings'. logic_error when the
    // model has none (a bug, not an input error).
    const StepDef& step(const Pass& p, Leaf leaf) const;
    // Step `leaf` of block `block` (-1: the embeddings'), its self- or cross-attention's;
    // of a norm's leaves, the block's first norm's.
    const StepDef& step(Leaf leaf, int block = 0, bool cross = false) const;
    // The first and last pass of a stage kind (-1: none).
    int first_pass(Stage s) const;
    int last_pass(Stage s) const;

private:
    Arch arch_;
    std::vector<StepDef> steps_;
    std::vector<Pass> passes_;
    std::unordered_map<std::string, std::size_t> index_;  // name -> step

    // The names a pass is generated with (prefixes its steps' names take);
    // resolved to StepIds once every step exists.
    struct Wiring {
        std::string x, residual, update, out, attn, attn_out, mlp, mlp_out;
    };
    std::vector<Wiring> wiring_;  // per pass, while generating

    void add_pass(Pass p, Wiring w);
    void add_block(int b, const std::string& in);
    StepId id_named(const std::string& name) const;
};

// A norm pass's weights' stem: "ln2" (ln2_gamma, ln2_beta), "embed_ln" for the embeddings' norm,
// "ln_final" for the final norm.
std::string norm_weight_stem(const Pass& p);

// A step's name read back as the catalogue writes it, for a name met without
// its catalogue (a trace from elsewhere, a --trace pattern): its block
// ("blocks.3." -> 3) and a template step computing what it computes
// ("blocks.3.cross_attn.hook_pattern" -> "blocks.0.attn.hook_pattern"), as
// the catalogues themselves name it. A name outside the blocks keeps its own
// name.
struct CatalogueName {
    std::optional<std::size_t> block;
    std::string base;
};
CatalogueName read_catalogue_name(std::string_view name);

// The catalogue of a model, generated once and kept for the program's life
// (StepDef pointers into it stay valid). Thread-safe.
const Catalogue& catalogue_for(const Arch& arch);
const Catalogue& default_catalogue();

}  // namespace attntrace

// The step catalogue: every intermediate the pipeline records, in pipeline
// order, with its stable name, title, formula, axes and one-line explanation.
//
// Letters used in shapes everywhere in attntrace:
//   T  tokens (keys)          Tq  query tokens (= T in self-attention)
//   P  stream rows a run computes (= T; a decode step: its new rows, 1)
//   C  d_model                NH  heads          hs  query/key head size d_k (C / NH unless config.d_k)
//   F  d_ff                   KVH K/V heads (divides NH; NH: MHA, 1: MQA, else GQA)
//   hv value head size d_v (= hs unless config.d_v): V and Z are (.., hv), W^O reads NH·hv
//   query head h reads K/V head g(h) = h / (NH / KVH): contiguous groups of NH/KVH
//
// Names follow TransformerLens hooks where one exists for the same tensor
// (blocks.0.attn.hook_q, hook_pattern, ...) and add the finer steps it fuses
// (raw and scaled scores, the mask, the softmax internals, LayerNorm's mean
// and std). docs/steps.md documents the list; a test keeps the two in step.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/tensor.hpp"

namespace attntrace {

// Coarse pipeline stages: a lesson runs the stages from run.from to run.to.
// rope rotates Q and K (only with config.positions kind rope; otherwise it records nothing).
// unembed: the logits after the last block (config.unembed; with config.final_norm the final
// norm before it is a norm1 pass, ln_final.*).
enum class Stage { embed, qkv, rope, scores, scale, mask, softmax, mix, out, add1, norm1, ffn, add2, norm2, unembed };
inline constexpr int kStageCount = 15;

std::string_view stage_name(Stage s);
std::optional<Stage> stage_from_name(std::string_view name);
std::string stage_list();  // "embed, qkv, ..." for error messages

// What an axis indexes; decides its labels (tokens, heads, dimensions).
// d_head_v is the value heads' width d_v: in traces it is named "d_head" too
// (TransformerLens' name for z's last axis), and equals d_head unless config.d_v differs.
// vocab: the vocabulary (the logits' last axis), labelled by the lesson's pieces when it has them.
// d_out is attn_out's width (W_O's output), written "d_model", and d_model unless config.d_out differs.
enum class Axis { pos, query, key, head, d_model, d_head, d_ff, kv_head, batch, d_head_v, vocab, d_out };
std::string_view axis_name(Axis a);
std::optional<Axis> axis_from_name(std::string_view name);

struct Dims {
    std::size_t T = 0;   // tokens (keys)
    std::size_t Tq = 0;  // query tokens
    std::size_t P = 0;   // rows of the residual stream a run computes: T, or the new rows of a decode step
    std::size_t C = 0;   // d_model
    std::size_t NH = 1;  // heads
    std::size_t hs = 0;  // query/key head size d_k
    std::size_t hv = 0;  // value head size d_v (= hs but under config.d_v)
    std::size_t F = 0;   // d_ff (0 when the lesson has no FFN)
    std::size_t KVH = 1; // K/V heads (= NH in multi-head attention)
    std::size_t B = 1;   // sequences in a batch (the leading `batch` axis of a batched trace; src/batch/)
    std::size_t V = 0;   // the vocabulary: inputs.embedding's rows (0 without one)
    std::size_t O = 0;   // attn_out's width, W_O's output (= C but under config.d_out; 0 read as C)
    std::size_t extent(Axis a) const;
    // The K/V head query head h reads: h / (NH / KVH), as Llama's repeat_kv.
    std::size_t kv_of(std::size_t h) const { return h / (NH / KVH); }
};

// Where a step may hold -inf (a blocked cell). Anywhere else an infinity is
// an overflow, and the run is refused.
enum class NegInf {
    never,
    given,   // only in values a lesson gives (an article's score matrix with -inf)
    masked,  // also when computed: the mask, and what it is added to
};

// What a step computes, whatever its block and sub-block: a typed handle code
// names steps by (a misspelt one does not compile). Every template entry has
// one; a pass resolves it to its own step (Catalogue::step). The ln_* leaves
// are every norm's (ln1, ln2, ln3: the pass says which); resid_mid is every
// residual add's output (the pass's out names it), as resid_post is add2's.
enum class Leaf : std::uint8_t {
    embed, pos_embed, resid_pre,
    q, k, v, kv_head, rot_q, rot_k,
    scores_raw, scale_factor, scores_scaled, mask, alibi_slopes, alibi, scores_masked, attn_scores,
    row_max, shifted, exp, row_sum, score_sum, pattern_unmasked, pattern_zeroed, zeroed_sum, pattern, z, attn_out,
    resid_mid, ln_mean, ln_centred, ln_sq_dev, ln_var, ln_mean_square, ln_scale, ln_standardized, ln_normalized,
    mlp_pre, mlp_pre_linear, mlp_post, mlp_out, resid_post,
    token_type_embed,  // BERT's segment embeddings (inputs.token_types): recorded only when the lesson has them
    logits,            // unembed: the final norm's rows against the vocabulary (config.unembed)
};

// The queries and keys the scores (and streamed attention) read: with RoPE the
// rotated ones. Decided here once; the catalogue, the stages, decode and
// explain all ask.
inline Leaf scores_query(bool rope) { return rope ? Leaf::rot_q : Leaf::q; }
inline Leaf scores_key(bool rope) { return rope ? Leaf::rot_k : Leaf::k; }

// The steps whose explanation writes a dot product's terms (pipeline/cell.hpp's
// write_dot): Q, K and V, the raw scores, the mix Z, the output projection and
// the FFN's linear layers. The steps a claim `of: "terms"` may name
// (docs/lesson-format.md#terms); tests/test_claim_terms.cpp holds this list to
// the operations' explanations.
bool writes_terms(Leaf leaf);

// Where a lesson applies the mask (config.mask_at, docs/lesson-format.md#mask-placement).
enum class MaskAt : std::uint8_t {
    scaled,   // S̃ + M: added to the scaled scores before the normaliser (the default, as PyTorch)
    raw,      // (S + M) / s: added to the raw scores, which are then scaled (hook_scores_masked)
    weights,  // softmax(S̃) ⊙ M: the weights zeroed where a key is blocked (M 1 or 0), renormalised or not
};
// The scores the mask stage reads: the raw ones when the mask comes before the scaling.
inline Leaf mask_input(MaskAt at) { return at == MaskAt::raw ? Leaf::scores_raw : Leaf::scores_scaled; }

// One entry of the template: the steps of a single post-norm encoder block,
// written with the names of block 0. Generated catalogues (trace/catalogue.hpp)
// copy and rename them for every block, norm placement and sub-block.
struct StepTemplate {
    const char* name;  // e.g. "blocks.0.attn.hook_pattern"
    Leaf leaf;
    Stage stage;
    const char* title;
    const char* formula;
    const char* explain;
    std::vector<Axis> axes;
    NegInf neg_inf = NegInf::never;
};

// A step of a lesson's catalogue.
struct StepDef {
    std::string name;   // full name, e.g. "blocks.1.cross_attn.hook_pattern"
    std::string base;   // the template it comes from, e.g. "blocks.0.attn.hook_pattern": what it computes
    Leaf leaf;          // the same, as a handle
    Stage stage;        // the kind of stage that computes it
    int pass = 0;       // its stage instance in the catalogue's run order (Catalogue::passes)
    int block = -1;     // its block (-1: before the blocks: the embeddings)
    bool cross = false; // a step of a decoder block's cross-attention
    std::string title;
    std::string formula;
    std::string explain;
    std::vector<Axis> axes;
    NegInf neg_inf = NegInf::never;
};

// The steps `run` draws as a heatmap beside their table, key by query (the
// weights, the mask, ALiBi's bias, the masked scores): the views
// (render/text.cpp) and what the plan counts for them (pipeline/plan.cpp) ask this.
bool drawn_as_map(Leaf leaf);

// The box a step is drawn in by the report's pipeline view (consecutive
// steps of one label share a box): "Q, K, V", "softmax", "FFN", ... The page
// has no table of its own: the report writes these labels into it
// (render/report.hpp, report_vocabulary). The norm's steps answer "": their
// box is named by the lesson's norm kind (lesson/config_fields.hpp, the
// kind's display name).
std::string_view pipeline_box(Leaf leaf);

// The template, in the order one post-norm encoder block records it.
const std::vector<StepTemplate>& step_templates();
const StepTemplate* find_template(std::string_view name);

// The catalogue of the default model (one post-norm encoder block): the
// template as StepDefs. Lessons with other models use lesson.catalogue().
const std::vector<StepDef>& step_catalogue();
const StepDef* find_step(std::string_view name);
Shape step_shape(const StepDef& def, const Dims& dims);

}  // namespace attntrace

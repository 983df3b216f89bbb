// Lesson: one worked example, as read from lessons/*.json (format documented in
// docs/lesson-format.md). Everything here is validated: shapes agree with the
// config, numbers are finite, claims name real steps. The pipeline trusts it.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/decimal.hpp"
#include "core/json_field.hpp"
#include "core/tensor.hpp"
#include "core/token_span.hpp"
#include "io/data_dir.hpp"
#include "lesson/weight_source.hpp"
#include "trace/catalogue.hpp"
#include "trace/steps.hpp"

namespace attntrace {

inline constexpr int kLessonFormatVersion = 1;

// config.mask: "none", "causal", or an object with a kind (docs/lesson-format.md, Masks;
// pipeline/mask_pattern.hpp builds the pattern).
enum class MaskKind { none, causal, window, global_local, block_sparse, padding, custom };
enum class Activation { relu, gelu, gelu_tanh, swiglu };
// dyt: Dynamic Tanh (Zhu, Chen, He, LeCun and Liu 2025, "Transformers without
// Normalization"): γ ⊙ tanh(α·x) + β, no statistics of the row at all.
enum class NormKind { layernorm, rmsnorm, dyt };
// config.weight_layout: how a lesson writes a projection's matrix. in_out is
// d_in x d_out, applied as x·W (the articles); out_in is d_out x d_in,
// applied as x·Wᵀ (nn.Linear's weight as PyTorch prints it). The reader
// stores every matrix as in_out, so nothing past it knows the difference.
enum class WeightLayout { in_out, out_in };
// config.normalizer: what turns a row of masked scores into weights.
// softmax (exp, then / Σ); sum: plain normalisation s / Σ s, as tutorials do
// before they introduce softmax; none: the masked scores themselves. Blocked
// keys get weight 0 under each.
enum class Normalizer { softmax, sum, none };
// config.variance: LayerNorm's σ² over C (biased, as nn.LayerNorm) or over
// C - 1 (unbiased, Bessel's correction, as torch.var and .std by default).
enum class Variance { biased, unbiased };
// agrees_from_given: agrees with values computed from a step the lesson gives
// and the article got wrong (its formula gives other numbers): the article is
// consistent with its own numbers, not with attention's.
enum class Verdict { agrees, agrees_when_rounded, disagrees, not_checkable, agrees_from_given };
// config.positions (docs/lesson-format.md): how the block knows where each token is.
enum class PositionKind { none, sinusoidal, learned, rope, alibi };
enum class RopeLayout {
    half,         // pairs (i, i + hs/2): GPT-NeoX, Hugging Face Llama's rotate_half
    interleaved,  // pairs (2i, 2i+1): RoFormer, GPT-J, Meta's Llama
};

std::string_view verdict_name(Verdict v);
std::optional<Verdict> verdict_from_name(std::string_view s);
std::string_view mask_name(MaskKind m);
std::string_view activation_name(Activation a);
std::string_view norm_name(NormKind n);
std::string_view position_name(PositionKind k);
std::string_view rope_layout_name(RopeLayout l);

// Whether a step computing `leaf` exists under positions `k`: pos_embed only
// with sinusoidal or learned, rot_q/k only with rope, alibi_slopes/alibi only
// with alibi; every other step always. position_step_kind names what it needs.
bool position_step_applies(PositionKind k, Leaf leaf);
std::string_view position_step_kind(Leaf leaf);

struct Positions {
    PositionKind kind = PositionKind::none;
    RopeLayout layout = RopeLayout::half;  // rope
    double base = 10000.0;                 // rope: θ_i = base^(-2i/hs)
    // rope: the first rotary_dims of each head rotated as a head of that size (θ_i =
    // base^(-2i/rotary_dims)), the rest passed through (GPT-NeoX's rotary_pct); 0: all of them.
    std::size_t rotary_dims = 0;
    std::size_t rotated(std::size_t hs) const { return rotary_dims ? rotary_dims : hs; }
    std::vector<double> slopes;            // alibi: one per head; empty: the paper's defaults
    // Added to the residual stream at the embed stage (hook_pos_embed).
    bool additive() const { return kind == PositionKind::sinusoidal || kind == PositionKind::learned; }
};

// The fields of the object kinds of config.mask (only the kind's own are set).
// Positions are 0-based token indices; query i sits at position i + (T - Tq).
struct MaskSpec {
    std::size_t window = 0;             // window, global_local: w keys (odd when symmetric)
    bool causal = false;                // window: p-w+1..p; padding: also the causal mask
    std::vector<std::size_t> global;    // global_local: global positions, sorted, unique
    std::size_t block = 0;              // block_sparse: b consecutive positions a block
    bool summary_last = false;          // block_sparse: the summary token is a block's last (else its first)
    std::vector<std::size_t> pad;       // padding: pad positions, sorted, unique
    std::vector<std::uint8_t> allowed;  // custom: (Tq, T), 1 where query i may see key j
};

// config.scale: what the scores are scaled by before the mask
// (docs/lesson-format.md#scaling). true is sqrt_dk, false none; an object
// ({"divide_by": 1.732}, {"divide_by": "sqrt_dk"}, {"multiply_by": 0.125})
// also records the number as a step (attn.hook_scale_factor) a claim can check.
enum class ScaleKind : std::uint8_t {
    sqrt_dk,      // S / √d_k, d_k the head size
    none,         // S
    divide_by,    // S / value
    multiply_by,  // S · value (torch's scaled_dot_product_attention(scale=...))
};
struct Scaling {
    ScaleKind kind = ScaleKind::sqrt_dk;
    double value = 0;       // divide_by, multiply_by: the lesson's number as written (the arithmetic rounds it to float32)
    bool recorded = false;  // written as an object: attn.hook_scale_factor is recorded
    bool on() const { return kind != ScaleKind::none; }
    bool operator==(const Scaling&) const = default;
};

// The norms' eps (a lesson's config.eps; a checkpoint's layer_norm_epsilon,
// layer_norm_eps, rms_norm_eps) is added in float32: kMinEps keeps it clear of
// float32's denormals and 0 (below 1.2e-38), kMaxEps is far above any real
// norm's (1e-12 to 1e-5); 1e308 would be infinite in float32.
inline constexpr double kMinEps = 1e-30;
inline constexpr double kMaxEps = 1;

struct Config {
    std::size_t d_model = 0;
    std::size_t heads = 1;
    std::size_t kv_heads = 0;  // K/V heads; 0: as many as heads (MHA). Divides heads; 1 is MQA
    // Projection widths per head (docs/lesson-format.md#projection-widths):
    // W_Q, W_K are C x heads·d_k, W_V C x kv_heads·d_v, W_O heads·d_v x C.
    // 0: d_k = d_model / heads; d_v = d_k.
    std::size_t d_k = 0;
    std::size_t d_v = 0;
    std::size_t dk() const { return d_k ? d_k : (heads ? d_model / heads : 0); }
    std::size_t dv() const { return d_v ? d_v : dk(); }
    // W_O's output width: attn_out is T x d_out (0: d_model). Other than d_model only for a run that ends at
    // "out": the residual adds attn_out to X.
    std::size_t d_out = 0;
    std::size_t dout() const { return d_out ? d_out : d_model; }
    std::size_t d_ff = 0;  // 0: no FFN stage in this lesson
    MaskKind mask = MaskKind::none;
    MaskSpec mask_spec;  // the fields of an object mask
    Scaling scale;  // S / √hs by default; none shows why it exists
    Activation activation = Activation::relu;  // swiglu: a gated FFN with a third matrix W_3
    NormKind norm = NormKind::layernorm;       // rmsnorm: no mean, no β (torch.nn.RMSNorm); dyt: tanh(α·x), no statistics
    double eps = 1e-5;  // LayerNorm's and RMSNorm's, inside the square root, as PyTorch (kMinEps..kMaxEps, or 0)
    WeightLayout weight_layout = WeightLayout::in_out;  // how the lesson wrote its matrices
    Normalizer normalizer = Normalizer::softmax;
    bool max_shift = true;  // softmax subtracts the row max before exp (false: exp(s) as printed)
    MaskAt mask_at = MaskAt::scaled;  // where the mask applies: the scaled scores, the raw ones, or the weights
    bool renormalize = false;         // mask_at weights: the zeroed weights divided by their row sums
    Variance variance = Variance::biased;  // LayerNorm's σ²
    bool norm_steps_all = false;  // config.norm_steps "all": LayerNorm's centred x - μ and squared deviations as steps
    Positions positions;  // none: the block cannot tell the order of the tokens
    Arch arch;            // blocks, norm_first, block kind: the model the catalogue is generated for
    // config.unembed "tied": the logits read the embedding table backwards (x·W_Eᵀ, GPT-2); "W_U": weights.W_U
    bool unembed_tied = false;
};

// The config a cross-attention pass follows: no mask and no positions (every
// decoder token sees every memory token; positions rotate the self-attention).
Config cross_attention_config(Config c);

// Whether a config's stages record a step computing `leaf` at all: RMSNorm
// records a mean square where LayerNorm records a mean and a variance (every
// norm's: ln1, ln2, ln3); only SwiGLU has a linear branch (mlp_pre_linear);
// the scale factor is a step only when config.scale is written as an object;
// softmax's row max and shifted scores only with its max shift, its exp and
// row sum only under softmax, the scores' row sum only under "sum"; the
// scaled scores unless the mask comes first (config.mask_at "raw", which
// records the masked raw scores instead), the weights before and after the
// zeroing only with config.mask_at "weights".
bool config_records(const Config& c, Leaf leaf);
// The config that records `leaf`, for messages: "config.norm \"rmsnorm\"".
std::string_view config_records_when(Leaf leaf);

struct Source {
    std::string document;  // the article: its file name, address or a citation
    std::string title;
    std::string section;
};

// A claim on a reduction of the selected values (docs/lesson-format.md,
// Claims: `of`): "row_sum" (each row sums to 1), "col_max", ... A row is the
// selected region's last axis, a column its axis before that.
struct Reduction {
    // std: population, Σ(x - μ)² / n, as numpy's default; std_unbiased: ÷ (n - 1), Bessel's, torch's .std() default
    enum class Op : std::uint8_t { sum, min, max, mean, std, std_unbiased };
    // all: the whole region to one number; head: across the heads (the average of the heads' patterns
    // nn.MultiheadAttention returns), at `axis`, the head axis's place among the region's axes
    enum class Over : std::uint8_t { row, column, all, head };
    Op op = Op::sum;
    Over over = Over::row;
    std::uint8_t axis = 0;  // Over::head: set by the reader
    bool operator==(const Reduction&) const = default;
};
std::string reduction_name(Reduction r);  // "row_sum", "col_std", "all_max", "row_std_unbiased", "head_mean"
std::optional<Reduction> reduction_from_name(std::string_view s);

// The quantities inside a step's formula that a claim may state (`of`), as the step's explanation
// works them out (pipeline/, Cell::quantities), for a lesson of this config; empty: none.
// hook_pos_embed (sinusoidal): "angle" p·ω_i and "frequency" ω_i = 1/10000^(2i/C); attn.hook_rot_q
// and hook_rot_k (RoPE): "angle" p·θ_i and "frequency" θ_i = base^(-2i/hs).
std::vector<std::string> formula_quantities(Leaf leaf, const Config& config);

// What the article prints for one step, at its printed precision.
struct Claim {
    // terms (`of: "terms"`): one cell's terms as its explanation writes them, then their sum
    // (docs/lesson-format.md#terms): values (n + 1), every axis fixed by `at`.
    // next_token (`of: "next_token"`): at one position of the logits (step unembed), the top next
    // token is `token` (its vocabulary index) with the probability in values (softmax over the row).
    // quantity (`of: "angle"`, `"frequency"`): a quantity inside the step's formula, per selected cell, as
    // its explanation works it out (formula_quantities); `quantity` names it.
    enum class Kind { values, reduced, shape, terms, next_token, quantity };
    std::string id;
    std::string step;
    std::vector<std::pair<Axis, std::size_t>> at;  // fixed indices, e.g. head 0, query 1: those axes are gone
    // Axes kept but narrowed to some of their indices (a list or a range in
    // `at`), increasing: the printed values are that sub-array, axes in the step's order.
    std::vector<std::pair<Axis, std::vector<std::size_t>>> select;
    Kind kind = Kind::values;
    Reduction reduction;  // kind reduced
    std::size_t token = 0;  // kind next_token: the vocabulary entry claimed to come next
    std::string quantity;   // kind quantity: "angle" or "frequency"
    Precision precision;  // "decimals": 2 or "sig": 5 as written, for every printed number (with cell_digits: their largest)
    // "decimals" or "sig" written per row or per cell: one per printed number,
    // in the order of values.data, in precision.unit; empty: precision.digits for all.
    std::vector<int> cell_digits;
    Tensor values;                                       // as printed (kind values/reduced), in the step's axis order
    // `axes`: the order the values were printed in when it is not the step's (Kᵀ: d_head, key); they are
    // held in the step's order all the same
    std::vector<Axis> printed_axes;
    std::vector<std::pair<Axis, std::size_t>> shape;     // kind shape: axis -> extent
    Verdict expect = Verdict::agrees;
    std::string quote;  // the article's words around the number
    std::string note;   // the lesson author's explanation of the verdict

    Precision precision_at(std::size_t i) const {
        return cell_digits.empty() ? precision : Precision{precision.unit, cell_digits[i]};
    }
};

// batch (docs/lesson-format.md, Batches): B sequences of their own lengths,
// padded on the right to the longest (T) with the pad token. src/batch/ runs
// each as a one-sequence lesson with its padding mask and stacks the traces.
struct BatchSequence {
    std::vector<std::string> tokens;      // its own tokens, unpadded: L_b <= T
    std::vector<std::int64_t> token_ids;  // with inputs.embedding: one per token
    Tensor X;                             // without inputs.embedding: (L_b, C)
};

struct Batch {
    std::string pad_token;  // the token string of every pad position
    std::int64_t pad_id = -1;  // with inputs.embedding: the pad token's id
    Tensor pad_x;           // without inputs.embedding: (C), X's row at a pad position (default zeros)
    std::vector<BatchSequence> sequences;  // B >= 1
};

// A step's values the run takes instead of its formula's: the article's (a
// lesson's `given`), or an intervention's (--set, --ablate, patching). The
// run computes the step as always, keeps the formula's values beside, and
// replaces the cells `cells` marks; the steps after it read the result.
struct Given {
    Tensor values;  // the step's shape
    Tensor cells;   // empty: every cell; else the step's shape, 1 where `values` replaces the formula's, 0 where it stays
    std::string by; // empty: the lesson; else what set it, as typed ("--ablate blocks.0.attn.h1")
    // The run without the article's mistakes (evaluate/): a given cell replaces the formula's only where
    // the formula, computed from this run's inputs, agrees with it at the given values' written decimals
    // (wrongly_given_cells). The cells each claim rests on are those whose values this changes.
    bool only_where_formula_agrees = false;
    bool whole() const { return cells.data.empty(); }
};

// The given cells (`cells` as Given's: empty, every cell) whose formula value does not agree with
// the given value at the decimals the given values are written with (written_decimals over the
// given cells): the cells the article got wrong. given, cells (if any) and formula share a shape.
std::vector<bool> wrongly_given_cells(const Tensor& given, const Tensor& cells, const Tensor& formula);

// The flat offsets of the cells a selection reads from a tensor of `shape` with axes named `axes`:
// `at` fixes axes, `select` narrows others to some indices; the rest are whole. In row-major order of
// the axes left (the region's), whose extents go to *region_shape when given.
std::vector<std::size_t> selected_offsets(const std::vector<std::pair<Axis, std::size_t>>& at,
                                          const std::vector<std::pair<Axis, std::vector<std::size_t>>>& select,
                                          const Shape& shape, const std::vector<std::string>& axes,
                                          Shape* region_shape = nullptr);

struct Lesson {
    std::string file;  // path it was read from, for messages
    std::string id;
    std::string title;
    std::string description;
    Source source;
    std::vector<std::string> tokens;
    std::vector<std::string> query_tokens;  // empty: the queries are the tokens
    std::vector<std::int64_t> token_ids;    // with inputs.embedding
    // A checkpoint read a text (model/): the text as typed and each token's bytes in it, one per token; empty otherwise.
    std::string text;
    std::vector<TokenSpan> token_spans;
    std::vector<std::string> memory_tokens; // a decoder's: the encoder's sequence, inputs.memory (S, C)
    std::vector<std::string> vocab;         // the vocabulary's pieces by id (a checkpoint's tokenizer): the vocab axis' labels
    Config config;
    Stage from = Stage::embed;
    Stage to = Stage::norm2;
    int first_pass = 0;   // the passes run.from..run.to name in catalogue() (all, with any model but the default)
    int last_pass = -1;
    std::map<std::string, Tensor> inputs;   // "X" (T, C) or "embedding" (vocab, C); "positions" (P, C), P >= T
    std::map<std::string, Tensor> weights;  // "W_Q" (C, C), ... see docs/lesson-format.md
    // A checkpoint's weights, converted when a pass asks (lesson/weight_source.hpp); null for a lesson file's.
    std::shared_ptr<WeightSource> weight_source;
    std::map<std::string, Given> given;     // step name -> the values that replace the formula's
    std::map<std::string, int> document_rounding;  // step name -> decimals
    // The inputs and weights the article printed rounded from the values it computed with ("inputs.X",
    // "weights.W_Q" -> decimals, as PyTorch prints 4): a claim off by their rounding is judged against
    // runs from values that print the same (evaluate/printed_inputs.cpp).
    std::map<std::string, int> input_decimals;
    std::vector<Claim> claims;
    // Set: a batched lesson. `tokens` then holds T position labels "p0".."p{T-1}"
    // (the sequences' tokens differ), `inputs` has no X and `token_ids` is empty.
    std::optional<Batch> batch;

    Dims dims() const;
    // The extents a pass works in: a cross-attention pass's keys are the memory's S positions.
    Dims dims_of(const Pass& p) const;
    const std::vector<std::string>& query_labels() const {
        return query_tokens.empty() ? tokens : query_tokens;
    }
    // How a step's axis is labelled in a pass of extents `d` (`cross`: a
    // cross-attention step, whose keys are the memory's): tokens, "h0", "kv0",
    // "d0", "f0", "b0" for a batched trace's leading batch axis, and the
    // vocabulary's pieces (else "#id") for the logits' vocab axis.
    std::vector<std::string> axis_labels(Axis a, const Dims& d, bool cross) const;
    const Catalogue& catalogue() const { return catalogue_for(config.arch); }
    // Whether a pass of stage kind s runs.
    bool runs(Stage s) const;
    bool runs_pass(int p) const { return p >= first_pass && p <= last_pass; }
    // Sets run.from and run.to, and the passes they name (the first pass of
    // `f`, the last of `t`; every pass with any model but the default).
    void set_range(Stage f, Stage t);
    // Whether the trace will hold this step: its stage runs (hook_embed only
    // with an embedding table), or it is given as an input before run.from.
    bool records(const StepDef& def) const;
    // The names of the steps the trace will hold (records), in pipeline order.
    std::vector<std::string> recorded_step_names() const;
    // What its config changes in the steps each pass reads (RoPE's rotated Q and K, the mask's placement).
    Reads reads() const;
    const Tensor* weight(const std::string& name) const;
    // A vocabulary entry as the vocab axis labels it: its piece, else "#id".
    std::string vocab_label(std::int64_t id) const;
};

// Reads and validates a lesson file. Throws InputError (one line: file, field
// path, expected, found) on anything wrong.
Lesson read_lesson(const std::string& path);
// A lesson file parsed, before it is read as a lesson.
struct LessonDocument {
    std::shared_ptr<const nlohmann::json> doc;  // (lesson.hpp needs only nlohmann's forward declarations)
    std::string file;
};
LessonDocument load_lesson_document(const std::string& path);
Lesson read_lesson(const LessonDocument& d);
// A lesson on a checkpoint (docs/lesson-format.md#lessons-on-a-checkpoint):
// its "model" field names the folder (relative to the lesson file's) and the
// text or ids the model reads; nullopt for a lesson of its own.
struct ModelRef {
    std::string dir;
    std::optional<std::string> text;
    std::vector<std::int64_t> ids;
};
std::optional<ModelRef> lesson_model_ref(const LessonDocument& d);
// The checkpoint's lesson (model/, which builds it from ModelRef) with the
// file's id, title, source, description and claims: the claims read against
// the model's steps, as any lesson's.
Lesson read_lesson_on_model(const LessonDocument& d, Lesson model);

// Bounds on a lesson's claims, and on the members of its objects keyed by a
// step or weight name (given, document_rounding, weights, inputs): far above
// any real lesson (a 64-block decoder stack records ~6,000 steps and has
// ~1,700 weights), far below what a hostile file could make the reader build.
inline constexpr std::size_t kMaxClaims = std::size_t{1} << 16;
inline constexpr std::size_t kMaxNamedMembers = std::size_t{1} << 16;
// The bounds the lesson format puts on its token lists, claims and named
// members, held while its JSON is parsed (core/json_field.hpp): for a caller
// that parses a lesson file itself (check telling a cost lesson from a pipeline one).
JsonLimits lesson_json_limits();
Lesson parse_lesson(const std::string& text, const std::string& file);

// Where lessons live: lessons_dir() in io/data_dir.hpp ($ATTNTRACE_LESSONS,
// else an installed share/attntrace/lessons, else the source tree's lessons/).
// "003-ring-fell" -> "<lessons_dir>/003-ring-fell.json"; a path is returned as
// is. An id that is no lesson is refused, with the nearest ids.
std::string resolve_lesson(const std::string& name_or_path);
std::vector<std::string> list_lesson_files();

}  // namespace attntrace

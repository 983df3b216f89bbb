// The config field table (config_fields.hpp): names, spellings, defaults, the steps each value adds.
#include "lesson/config_fields.hpp"

#include <fmt/format.h>

#include <array>
#include <cstdlib>

namespace attntrace {

namespace config_table {  // named: the unity build shares anonymous namespaces

template <class E>
constexpr int v(E e) { return static_cast<int>(e); }

constexpr std::array kMaskKinds = {
    Spelling{v(MaskKind::none), "none", "", "every query sees every key"},
    Spelling{v(MaskKind::causal), "causal", "", "query i sees keys 0..i"},
    Spelling{v(MaskKind::window), "window", "", "an object: keys within a window of the query"},
    Spelling{v(MaskKind::global_local), "global_local", "", "an object: a window, and global tokens seen and seeing all"},
    Spelling{v(MaskKind::block_sparse), "block_sparse", "", "an object: keys in the query's block and the blocks' summaries"},
    Spelling{v(MaskKind::padding), "padding", "", "an object: keys that are not padding"},
    Spelling{v(MaskKind::custom), "custom", "", "an object: a queries x tokens pattern of 0/1"},
};
constexpr std::array kActivations = {
    Spelling{v(Activation::relu), "relu", "", "max(0, x)"},
    Spelling{v(Activation::gelu), "gelu", "", "x·Φ(x), the exact erf form (torch.nn.GELU())"},
    Spelling{v(Activation::gelu_tanh), "gelu_tanh", "", "GELU's tanh approximation (GPT-2's)"},
    Spelling{v(Activation::swiglu), "swiglu", "", "a gated FFN: SiLU(x·W_1 + b_1) ⊙ (x·W_3 + b_3) (LLaMA's)"},
};
constexpr std::array kNormKinds = {
    Spelling{v(NormKind::layernorm), "layernorm", "", "(x - μ) / √(σ² + eps) · γ + β (nn.LayerNorm)", "LayerNorm"},
    Spelling{v(NormKind::rmsnorm), "rmsnorm", "", "x / √(mean(x²) + eps) · γ (torch.nn.RMSNorm)", "RMSNorm"},
    Spelling{v(NormKind::dyt), "dyt", "", "γ ⊙ tanh(α·x) + β, α one learned number, no statistics (DyT)", "DyT"},
};
constexpr std::array kWeightLayouts = {
    Spelling{v(WeightLayout::in_out), "in_out", "x·W, d_in x d_out", "matrices as the articles write them, applied as x·W"},
    Spelling{v(WeightLayout::out_in), "out_in", "x·Wᵀ, nn.Linear's d_out x d_in", "matrices as nn.Linear's .weight, applied as x·Wᵀ"},
};
constexpr std::array kNormalizers = {
    Spelling{v(Normalizer::softmax), "softmax", "", "exp, then divided by the row's sum"},
    Spelling{v(Normalizer::sum), "sum", "s / Σ s", "the scores divided by their row's sum, no exp"},
    Spelling{v(Normalizer::none), "none", "", "the masked scores themselves"},
};
constexpr std::array kVariances = {
    Spelling{v(Variance::biased), "biased", "÷ C, nn.LayerNorm's", "Σ(x - μ)² / C"},
    Spelling{v(Variance::unbiased), "unbiased", "÷ (C - 1), torch.var's", "Σ(x - μ)² / (C - 1), Bessel's correction"},
};
constexpr std::array kMaskPlacements = {
    Spelling{v(MaskAt::scaled), "scaled", "S/√d_k + M", "the mask meets the scaled scores, as PyTorch"},
    Spelling{v(MaskAt::raw), "raw", "(S + M)/√d_k", "the mask meets the raw scores, before the scaling"},
    Spelling{v(MaskAt::weights), "weights", "softmax, then zeroed", "a softmax over every key, its blocked weights zeroed"},
};
constexpr std::array kPositionKinds = {
    Spelling{v(PositionKind::none), "none", "", "no positional encoding"},
    Spelling{v(PositionKind::sinusoidal), "sinusoidal", "", "sin/cos rows added to X at the embed stage"},
    Spelling{v(PositionKind::learned), "learned", "", "rows of the lesson's table inputs.positions added to X"},
    Spelling{v(PositionKind::rope), "rope", "", "an object: Q and K rotated by position", "RoPE"},
    Spelling{v(PositionKind::alibi), "alibi", "", "an object: a linear bias on the scaled scores", "ALiBi"},
};
constexpr std::array kNormStepKinds = {
    Spelling{0, "fused", "the default", "LayerNorm's μ, σ², σ and x̂ as steps"},
    Spelling{1, "all", "LayerNorm's x - μ and (x - μ)² as steps too", "every piece of LayerNorm a step"},
};
constexpr std::array kBlockKinds = {
    Spelling{0, "encoder", "", "self-attention and FFN"},
    Spelling{1, "decoder", "", "causal self-attention, cross-attention over inputs.memory, FFN"},
};
constexpr std::array kUnembedKinds = {
    Spelling{0, "W_U", "logits = x·W_U, weights.W_U d_model x vocab", "logits = x·W_U"},
    Spelling{1, "tied", "x·W_Eᵀ, the embedding table inputs.embedding", "logits = x·W_Eᵀ, the embedding table read backwards"},
};

// The steps each field's values add or remove (config_records).
bool layernorm(const Config& c) { return c.norm == NormKind::layernorm; }
bool rmsnorm(const Config& c) { return c.norm == NormKind::rmsnorm; }
bool row_statistics(const Config& c) { return c.norm != NormKind::dyt; }
constexpr std::array kNormSteps = {
    ConfigStep{Leaf::ln_mean, layernorm, "config.norm \"layernorm\""},
    ConfigStep{Leaf::ln_var, layernorm, "config.norm \"layernorm\""},
    ConfigStep{Leaf::ln_mean_square, rmsnorm, "config.norm \"rmsnorm\""},
    ConfigStep{Leaf::ln_scale, row_statistics, "config.norm \"layernorm\" or \"rmsnorm\" (DyT divides by nothing)"},
};
bool all_norm_steps(const Config& c) { return c.norm == NormKind::layernorm && c.norm_steps_all; }
constexpr std::array kNormStepsSteps = {
    ConfigStep{Leaf::ln_centred, all_norm_steps, "config.norm_steps \"all\" (with LayerNorm)"},
    ConfigStep{Leaf::ln_sq_dev, all_norm_steps, "config.norm_steps \"all\" (with LayerNorm)"},
};
bool swiglu(const Config& c) { return c.activation == Activation::swiglu; }
constexpr std::array kActivationSteps = {
    ConfigStep{Leaf::mlp_pre_linear, swiglu, "config.activation \"swiglu\""},
};
bool scale_recorded(const Config& c) { return c.scale.recorded; }
constexpr std::array kScaleSteps = {
    ConfigStep{Leaf::scale_factor, scale_recorded, "config.scale written as an object ({\"divide_by\": \"sqrt_dk\"}, ...)"},
};
bool max_shift(const Config& c) { return c.normalizer == Normalizer::softmax && c.max_shift; }
constexpr std::string_view kMaxShiftWhen = "config.normalizer \"softmax\" with its max shift (config.max_shift true, the default)";
constexpr std::array kMaxShiftSteps = {
    ConfigStep{Leaf::row_max, max_shift, kMaxShiftWhen},
    ConfigStep{Leaf::shifted, max_shift, kMaxShiftWhen},
};
bool softmax(const Config& c) { return c.normalizer == Normalizer::softmax; }
bool sum(const Config& c) { return c.normalizer == Normalizer::sum; }
constexpr std::array kNormalizerSteps = {
    ConfigStep{Leaf::exp, softmax, "config.normalizer \"softmax\" (the default)"},
    ConfigStep{Leaf::row_sum, softmax, "config.normalizer \"softmax\" (the default)"},
    ConfigStep{Leaf::score_sum, sum, "config.normalizer \"sum\""},
};
bool not_raw(const Config& c) { return c.mask_at != MaskAt::raw; }
bool raw(const Config& c) { return c.mask_at == MaskAt::raw; }
bool weights(const Config& c) { return c.mask_at == MaskAt::weights; }
constexpr std::array kMaskAtSteps = {
    ConfigStep{Leaf::scores_scaled, not_raw,
               "config.mask_at \"scaled\" or \"weights\" (with \"raw\" the masked scores are scaled: hook_attn_scores)"},
    ConfigStep{Leaf::scores_masked, raw, "config.mask_at \"raw\""},
    ConfigStep{Leaf::pattern_unmasked, weights, "config.mask_at \"weights\""},
};
bool renormalized(const Config& c) { return c.mask_at == MaskAt::weights && c.renormalize; }
constexpr std::array kRenormalizeSteps = {
    ConfigStep{Leaf::pattern_zeroed, renormalized, "config.mask_at \"weights\" with config.renormalize true"},
    ConfigStep{Leaf::zeroed_sum, renormalized, "config.mask_at \"weights\" with config.renormalize true"},
};

// name, type, spellings, default (as docs/lesson-format.md writes it), steps, doc
const std::array kFields = {
    ConfigField{"d_model", "integer 1..65536", {}, "required", {}, "C, the width of X"},
    ConfigField{"heads", "integer 1..4096", {}, "1", {}, "NH, the query heads"},
    ConfigField{"kv_heads", "integer dividing heads", {}, "heads", {}, "KVH, the K/V heads (MQA, GQA)"},
    ConfigField{"d_k", "integer", {}, "d_model / heads", {}, "each query and key head's width"},
    ConfigField{"d_v", "integer", {}, "d_k", {}, "each value head's width"},
    ConfigField{"d_out", "integer", {}, "d_model", {}, "W_O's output width, attn_out's (a run past out needs d_model)"},
    ConfigField{"d_ff", "integer 1..262144", {}, "none", {}, "F, the FFN's hidden width"},
    ConfigField{"mask", "a spelling or an object with a kind", kMaskKinds, "\"none\"", {}, "which keys each query may see"},
    ConfigField{"scale", "true, false or {\"divide_by\" | \"multiply_by\": x}", {}, "true", kScaleSteps,
                "what divides or multiplies the scores"},
    ConfigField{"activation", "a spelling", kActivations, "\"relu\"", kActivationSteps, "the FFN's non-linearity"},
    ConfigField{"norm", "a spelling", kNormKinds, "\"layernorm\"", kNormSteps, "the norm of every norm pass"},
    ConfigField{"eps", "0 or a number 1e-30..1", {}, "1e-5", {}, "the norms' epsilon, inside the square root"},
    ConfigField{"positions", "a spelling or an object with a kind", kPositionKinds, "\"none\"", {}, "the positional encoding"},
    ConfigField{"blocks", "integer 1..64", {}, "1", {}, "how many blocks are stacked"},
    ConfigField{"norm_first", "boolean", {}, "false", {}, "pre-norm (true) or post-norm"},
    ConfigField{"parallel_residual", "boolean", {}, "false", {}, "the FFN's norm reads the block's input (GPT-NeoX)"},
    ConfigField{"shared_norm", "boolean", {}, "false", {}, "one norm per block, read by attention and FFN (Phi-2)"},
    ConfigField{"embed_norm", "boolean", {}, "false", {}, "a norm of the embeddings before block 0 (BERT)"},
    ConfigField{"final_norm", "boolean", {}, "false", {}, "a norm after the last block (GPT-2's ln_f)"},
    ConfigField{"unembed", "a spelling", kUnembedKinds, "none", {}, "the logits after the last block"},
    ConfigField{"block", "a spelling", kBlockKinds, "\"encoder\"", {}, "the kind of block"},
    ConfigField{"weight_layout", "a spelling", kWeightLayouts, "\"in_out\"", {}, "how the lesson writes its matrices"},
    ConfigField{"normalizer", "a spelling", kNormalizers, "\"softmax\"", kNormalizerSteps,
                "what turns a row of masked scores into weights"},
    ConfigField{"max_shift", "boolean", {}, "true", kMaxShiftSteps, "softmax subtracts the row's max before exp"},
    ConfigField{"variance", "a spelling", kVariances, "\"biased\"", {}, "LayerNorm's σ²"},
    ConfigField{"mask_at", "a spelling", kMaskPlacements, "\"scaled\"", kMaskAtSteps, "where the mask meets the scores"},
    ConfigField{"renormalize", "boolean", {}, "false", kRenormalizeSteps,
                "with mask_at \"weights\": the zeroed weights divided by their row sums"},
    ConfigField{"norm_steps", "a spelling", kNormStepKinds, "\"fused\"", kNormStepsSteps,
                "how many of LayerNorm's pieces are steps"},
};

}  // namespace config_table


std::span<const ConfigField> config_fields() { return config_table::kFields; }

std::vector<std::string> config_field_names() {
    std::vector<std::string> out;
    for (const ConfigField& f : config_table::kFields) out.emplace_back(f.name);
    return out;
}

const ConfigField& config_field(std::string_view name) {
    for (const ConfigField& f : config_table::kFields)
        if (f.name == name) return f;
    std::abort();  // a name not in the table: a programming error
}

std::span<const Spelling> mask_kinds() { return config_table::kMaskKinds; }
std::span<const Spelling> activations() { return config_table::kActivations; }
std::span<const Spelling> norm_kinds() { return config_table::kNormKinds; }
std::span<const Spelling> weight_layouts() { return config_table::kWeightLayouts; }
std::span<const Spelling> normalizers() { return config_table::kNormalizers; }
std::span<const Spelling> variances() { return config_table::kVariances; }
std::span<const Spelling> mask_placements() { return config_table::kMaskPlacements; }
std::span<const Spelling> position_kinds() { return config_table::kPositionKinds; }

std::string spellings_expected(std::span<const Spelling> s) {
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (i) out += i + 1 == s.size() ? " or " : ", ";
        out += fmt::format("\"{}\"", s[i].name);
        if (!s[i].hint.empty()) out += fmt::format(" ({})", s[i].hint);
    }
    return out;
}

std::string_view spelling_name(std::span<const Spelling> s, int value) {
    for (const Spelling& e : s)
        if (e.value == value) return e.name;
    return s.front().name;
}

std::optional<int> spelling_value(std::span<const Spelling> s, std::string_view name) {
    for (const Spelling& e : s)
        if (e.name == name) return e.value;
    return std::nullopt;
}

bool config_records(const Config& c, Leaf leaf) {
    for (const ConfigField& f : config_table::kFields)
        for (const ConfigStep& s : f.steps)
            if (s.leaf == leaf) return s.records(c);
    return true;
}

std::string_view config_records_when(Leaf leaf) {
    for (const ConfigField& f : config_table::kFields)
        for (const ConfigStep& s : f.steps)
            if (s.leaf == leaf) return s.when;
    return "";
}

std::string_view mask_name(MaskKind m) { return spelling_of(config_table::kMaskKinds, m); }
std::string_view activation_name(Activation a) { return spelling_of(config_table::kActivations, a); }
std::string_view norm_name(NormKind n) { return spelling_of(config_table::kNormKinds, n); }
std::string_view norm_display_name(NormKind n) {
    for (const Spelling& s : config_table::kNormKinds)
        if (s.value == static_cast<int>(n)) return s.display.empty() ? s.name : s.display;
    return norm_name(n);
}
std::string_view position_name(PositionKind k) { return spelling_of(config_table::kPositionKinds, k); }

}  // namespace attntrace

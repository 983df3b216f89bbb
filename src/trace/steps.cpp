#include "trace/steps.hpp"

#include <array>
#include <cstdint>

namespace attntrace {

namespace {

constexpr std::array<std::string_view, kStageCount> kStageNames = {
    "embed", "qkv", "rope", "scores", "scale", "mask", "softmax", "mix",
    "out",   "add1", "norm1", "ffn",   "add2", "norm2", "unembed"};

// d_head_v is written "d_head" (see steps.hpp); a name read back is d_head, the first.
constexpr std::array<std::string_view, 12> kAxisNames = {"pos",    "query", "key",     "head",  "d_model", "d_head",
                                                         "d_ff",   "kv_head", "batch", "d_head", "vocab", "d_model"};

using A = Axis;

const std::vector<StepTemplate> kSteps = {
    // stage embed
    {"hook_embed", Leaf::embed, Stage::embed, "Token embeddings",
     "E[t] = W_E[token_id(t)]",
     "Each token id looks up its row of the embedding table: a vector that stands for the token on its own, "
     "before it has seen any context.",
     {A::pos, A::d_model}},
    {"hook_pos_embed", Leaf::pos_embed, Stage::embed, "Positional encodings",
     "sinusoidal: PE[p,2i] = sin(p/10000^(2i/C)), PE[p,2i+1] = cos(p/10000^(2i/C)) (layout half: PE[p,i] = sin, PE[p,C/2+i] = cos); "
     "learned: row p of the table",
     "One vector per position, added to the token embeddings: without it self-attention cannot tell the order of "
     "the tokens (permuting them only permutes its output).",
     {A::pos, A::d_model}},
    {"hook_token_type_embed", Leaf::token_type_embed, Stage::embed, "Token type (segment) embeddings",
     "TT[t] = W_TT[0]: row 0 of the token type table (every token of one sentence is type 0)",
     "BERT's segment embeddings: one vector per sentence of a pair, added to every token's. Only type 0 (a single "
     "sentence) is run here.",
     {A::pos, A::d_model}},
    {"blocks.0.hook_resid_pre", Leaf::resid_pre, Stage::embed, "Input X",
     "X = token embeddings (+ positional encodings when the lesson has them), one row per token",
     "The residual stream entering the block: one row per token, d_model numbers each.",
     {A::pos, A::d_model}},
    // stage qkv
    {"blocks.0.attn.hook_q", Leaf::q, Stage::qkv, "Queries Q",
     "Q = X·W^Q + b^Q, split into heads of hs columns",
     "What each token is looking for. Head h owns columns h·hs to (h+1)·hs-1.",
     {A::query, A::head, A::d_head}},
    {"blocks.0.attn.hook_k", Leaf::k, Stage::qkv, "Keys K",
     "K = X·W^K + b^K, split into KVH K/V heads of hs columns",
     "What each token offers to be found by: queries are matched against these. With fewer K/V heads than "
     "query heads (GQA, MQA) each K head serves a group of query heads.",
     {A::key, A::kv_head, A::d_head}},
    {"blocks.0.attn.hook_v", Leaf::v, Stage::qkv, "Values V",
     "V = X·W^V + b^V, split into KVH K/V heads of hv columns (hv = d_v, = hs unless the lesson sets d_v)",
     "What each token hands over when another token attends to it; shared by a group of query heads like K.",
     {A::key, A::kv_head, A::d_head_v}},
    {"blocks.0.attn.hook_kv_head", Leaf::kv_head, Stage::qkv, "K/V head of each query head",
     "g(h) = ⌊h / (NH / KVH)⌋",
     "Which K/V head each query head reads: contiguous groups of NH/KVH query heads share one (as Llama's "
     "repeat_kv). Every head its own (MHA) when KVH = NH; one for all (MQA) when KVH = 1.",
     {A::head}},
    // stage rope
    {"blocks.0.attn.hook_rot_q", Leaf::rot_q, Stage::rope, "Rotated queries (RoPE)",
     "(q_a, q_b) at position p -> (q_a·cos(p·θ_i) - q_b·sin(p·θ_i), q_b·cos(p·θ_i) + q_a·sin(p·θ_i)), θ_i = base^(-2i/hs)",
     "Each pair of head dimensions is turned by an angle proportional to the token's position, so a query-key "
     "dot product depends on how far apart they are. Pairs are (i, i+hs/2) in the half layout, (2i, 2i+1) in the "
     "interleaved one.",
     {A::query, A::head, A::d_head}},
    {"blocks.0.attn.hook_rot_k", Leaf::rot_k, Stage::rope, "Rotated keys (RoPE)",
     "the same rotation as the queries, at each key's position",
     "Keys turn by their own position's angle: rotating both by the same extra angle leaves every score unchanged.",
     {A::key, A::kv_head, A::d_head}},
    // stage scores
    {"blocks.0.attn.hook_scores_raw", Leaf::scores_raw, Stage::scores, "Raw scores S",
     "S_h = Q_h·K_gᵀ, g = g(h) the K/V head query head h reads",
     "Dot product of every query with every key: how well each token's question matches each token's offer.",
     {A::head, A::query, A::key}, NegInf::given},
    // stage scale
    {"blocks.0.attn.hook_scale_factor", Leaf::scale_factor, Stage::scale, "Scale factor s_h",
     "s_h = √d_k (d_k = hs), or the lesson's config.scale: the number each head's scores are divided (or multiplied) by",
     "The number the scaling uses, as a step a claim can check (√3 = 1.732). Recorded when config.scale is written "
     "as an object; a given value replaces it, as an article that rounds √d_k does.",
     {A::head}},
    {"blocks.0.attn.hook_scores_scaled", Leaf::scores_scaled, Stage::scale, "Scaled scores S/√hs",
     "S̃_h = S_h / √hs",
     "Dividing by √hs keeps the scores' variance near 1 whatever the head size, so softmax does not saturate.",
     {A::head, A::query, A::key}, NegInf::given},
    // stage mask
    {"blocks.0.attn.hook_mask", Leaf::mask, Stage::mask, "Mask M",
     "M[i,j] = 0 where query i may see key j, -inf where it may not",
     "Added to the scores before softmax: a -inf score becomes a weight of exactly 0.",
     {A::query, A::key}, NegInf::masked},
    {"blocks.0.attn.hook_alibi_slopes", Leaf::alibi_slopes, Stage::mask, "ALiBi slopes m_h",
     "m_h = 2^(-8(h+1)/NH) for NH a power of 2 (the paper's interpolation otherwise), or the lesson's",
     "One penalty per head: how fast that head's attention fades with distance.",
     {A::head}},
    {"blocks.0.attn.hook_alibi", Leaf::alibi, Stage::mask, "ALiBi bias",
     "bias[h,i,j] = -m_h·|p_i - j|   (p_i: query i's position)",
     "Added to the scores: the further a key is from the query, the lower its score, more steeply in heads with "
     "larger slopes. No positional vector is added to the tokens.",
     {A::head, A::query, A::key}},
    {"blocks.0.attn.hook_scores_masked", Leaf::scores_masked, Stage::mask, "Masked raw scores S + M",
     "S_h + M   (config.mask_at \"raw\": the mask before the scaling)",
     "The raw scores with blocked cells at -inf, as code that masks before dividing by √d_k prints them; "
     "hook_attn_scores is these scores scaled.",
     {A::head, A::query, A::key}, NegInf::masked},
    {"blocks.0.attn.hook_attn_scores", Leaf::attn_scores, Stage::mask, "Masked scores",
     "S̃_h + M   (with ALiBi: S̃_h + bias_h + M)",
     "The scores softmax sees: blocked cells are -inf.",
     {A::head, A::query, A::key}, NegInf::masked},
    // stage softmax
    {"blocks.0.attn.softmax.hook_row_max", Leaf::row_max, Stage::softmax, "Softmax: row maximum",
     "m_i = max_j (S̃ + M)[i,j]",
     "Subtracted before exp only for numerical safety: softmax(x - m) = softmax(x) exactly.",
     {A::head, A::query}, NegInf::masked},
    {"blocks.0.attn.softmax.hook_shifted", Leaf::shifted, Stage::softmax, "Softmax: shifted scores",
     "(S̃ + M)[i,j] - m_i",
     "Every row now peaks at 0, so exp never overflows.",
     {A::head, A::query, A::key}, NegInf::masked},
    {"blocks.0.attn.softmax.hook_exp", Leaf::exp, Stage::softmax, "Softmax: exponentials",
     "e[i,j] = exp((S̃ + M)[i,j] - m_i)",
     "Exponentials of the shifted scores: all positive, masked cells exactly 0.",
     {A::head, A::query, A::key}},
    {"blocks.0.attn.softmax.hook_row_sum", Leaf::row_sum, Stage::softmax, "Softmax: row sum",
     "s_i = Σ_j e[i,j]",
     "The normaliser: dividing by it makes each row sum to 1.",
     {A::head, A::query}},
    {"blocks.0.attn.hook_score_sum", Leaf::score_sum, Stage::softmax, "Plain normalisation: row sum",
     "s_i = Σ_j (S̃ + M)[i,j] over the keys not blocked",
     "config.normalizer \"sum\": each weight is its score over this sum, without exp (weights can be negative or undefined).",
     {A::head, A::query}},
    {"blocks.0.attn.hook_pattern_unmasked", Leaf::pattern_unmasked, Stage::softmax, "Weights before the mask A⁰",
     "A⁰[i,j] = e[i,j] / s_i over every key   (config.mask_at \"weights\": nothing was added to the scores)",
     "Every key's weight, blocked keys' too: the mask zeroes those next, after the softmax.",
     {A::head, A::query, A::key}},
    {"blocks.0.attn.hook_pattern_zeroed", Leaf::pattern_zeroed, Stage::softmax, "Weights with blocked keys zeroed",
     "A⁰[i,j] · M[i,j]   (M[i,j] = 1 where query i may see key j, else 0)",
     "The blocked keys' weights set to 0: the rows no longer sum to 1.",
     {A::head, A::query, A::key}},
    {"blocks.0.attn.hook_zeroed_sum", Leaf::zeroed_sum, Stage::softmax, "Zeroed weights: row sum",
     "z_i = Σ_j (A⁰ · M)[i,j]",
     "What is left of each row after the zeroing: dividing by it makes every row sum to 1 again.",
     {A::head, A::query}},
    {"blocks.0.attn.hook_pattern", Leaf::pattern, Stage::softmax, "Attention weights A",
     "A[i,j] = e[i,j] / s_i",
     "Row i says how much query token i reads from each key token; every row sums to 1.",
     {A::head, A::query, A::key}},
    // stage mix
    {"blocks.0.attn.hook_z", Leaf::z, Stage::mix, "Mixed values Z = A·V",
     "Z_h = A_h·V_g, g = g(h); side by side, the heads form the concatenation [Z_1 … Z_NH]",
     "Each token's new vector: the values of all tokens, weighted by its attention row.",
     {A::query, A::head, A::d_head_v}},
    // stage out
    {"blocks.0.hook_attn_out", Leaf::attn_out, Stage::out, "Attention output",
     "concat(Z_1 … Z_NH)·W^O + b^O",
     "W^O mixes what the heads found into one d_model vector per token.",
     {A::query, A::d_out}},
    // stage add1
    {"blocks.0.hook_resid_mid", Leaf::resid_mid, Stage::add1, "Residual add",
     "X_mid = X + attn_out",
     "The block adds what attention found to the input instead of replacing it: the original token survives.",
     {A::pos, A::d_model}},
    // stage norm1
    {"blocks.0.ln1.hook_mean", Leaf::ln_mean, Stage::norm1, "LayerNorm 1: row mean μ",
     "μ_i = (1/C) Σ_c X_mid[i,c]", "Each token's average over its d_model numbers.", {A::pos}},
    {"blocks.0.ln1.hook_centred", Leaf::ln_centred, Stage::norm1, "LayerNorm 1: centred x - μ",
     "x[i,c] - μ_i = X_mid[i,c] - μ_i",
     "Each number's distance from its row's mean (config.norm_steps \"all\").", {A::pos, A::d_model}},
    {"blocks.0.ln1.hook_sq_dev", Leaf::ln_sq_dev, Stage::norm1, "LayerNorm 1: squared deviations",
     "(x[i,c] - μ_i)²",
     "The squares the variance averages (config.norm_steps \"all\").", {A::pos, A::d_model}},
    {"blocks.0.ln1.hook_var", Leaf::ln_var, Stage::norm1, "LayerNorm 1: row variance",
     "σ²_i = (1/C) Σ_c (X_mid[i,c] - μ_i)²",
     "Biased variance (divide by C, not C-1), as PyTorch's LayerNorm.", {A::pos}},
    {"blocks.0.ln1.hook_mean_square", Leaf::ln_mean_square, Stage::norm1, "RMSNorm 1: mean square",
     "ms_i = (1/C) Σ_c X_mid[i,c]²",
     "RMSNorm (config.norm \"rmsnorm\") takes no mean: it scales each row by its root mean square alone.", {A::pos}},
    {"blocks.0.ln1.hook_scale", Leaf::ln_scale, Stage::norm1, "LayerNorm 1: std σ",
     "σ_i = √(σ²_i + eps)   (RMSNorm: √(ms_i + eps))",
     "The spread of each row; eps keeps it away from 0.", {A::pos}},
    {"blocks.0.ln1.hook_standardized", Leaf::ln_standardized, Stage::norm1, "LayerNorm 1: normalized rows",
     "x̂[i,c] = (X_mid[i,c] - μ_i) / σ_i   (RMSNorm: X_mid[i,c] / σ_i)",
     "Each row now has mean 0 and variance 1 (before the learned affine).", {A::pos, A::d_model}},
    {"blocks.0.ln1.hook_normalized", Leaf::ln_normalized, Stage::norm1, "LayerNorm 1: output",
     "LN(X_mid) = γ ⊙ x̂ + β   (RMSNorm: γ ⊙ x̂)",
     "The learned gain γ and bias β rescale each dimension.", {A::pos, A::d_model}},
    // stage ffn
    {"blocks.0.mlp.hook_pre", Leaf::mlp_pre, Stage::ffn, "FFN: first linear layer",
     "H = LN1·W_1 + b_1",
     "Each token alone is projected up to d_ff hidden units (with SwiGLU: the gate).", {A::pos, A::d_ff}},
    {"blocks.0.mlp.hook_pre_linear", Leaf::mlp_pre_linear, Stage::ffn, "FFN: linear branch (SwiGLU)",
     "U = LN1·W_3 + b_3",
     "SwiGLU's second projection, left linear: the gate SiLU(H) decides how much of each unit passes.",
     {A::pos, A::d_ff}},
    {"blocks.0.mlp.hook_post", Leaf::mlp_post, Stage::ffn, "FFN: activation",
     "act(H)  (ReLU: max(0, h); GELU: h·Φ(h); GELU tanh: h/2·(1 + tanh(√(2/π)(h + 0.044715h³))); SwiGLU: SiLU(h)·u = h/(1 + e^-h)·u)",
     "The non-linearity: what attention's weighted averages cannot do on their own.", {A::pos, A::d_ff}},
    {"blocks.0.hook_mlp_out", Leaf::mlp_out, Stage::ffn, "FFN output",
     "act(H)·W_2 + b_2",
     "Projected back to d_model: the FFN's update for each token.", {A::pos, A::d_model}},
    // stage add2
    {"blocks.0.hook_resid_post", Leaf::resid_post, Stage::add2, "Second residual add",
     "X_mid2 = LN1 + FFN(LN1)",
     "Again the update is added, not substituted.", {A::pos, A::d_model}},
    // stage norm2
    {"blocks.0.ln2.hook_mean", Leaf::ln_mean, Stage::norm2, "LayerNorm 2: row mean μ",
     "μ_i = (1/C) Σ_c X_mid2[i,c]", "Each token's average over its d_model numbers.", {A::pos}},
    {"blocks.0.ln2.hook_centred", Leaf::ln_centred, Stage::norm2, "LayerNorm 2: centred x - μ",
     "x[i,c] - μ_i = X_mid2[i,c] - μ_i",
     "Each number's distance from its row's mean (config.norm_steps \"all\").", {A::pos, A::d_model}},
    {"blocks.0.ln2.hook_sq_dev", Leaf::ln_sq_dev, Stage::norm2, "LayerNorm 2: squared deviations",
     "(x[i,c] - μ_i)²",
     "The squares the variance averages (config.norm_steps \"all\").", {A::pos, A::d_model}},
    {"blocks.0.ln2.hook_var", Leaf::ln_var, Stage::norm2, "LayerNorm 2: row variance",
     "σ²_i = (1/C) Σ_c (X_mid2[i,c] - μ_i)²",
     "Biased variance (divide by C, not C-1), as PyTorch's LayerNorm.", {A::pos}},
    {"blocks.0.ln2.hook_mean_square", Leaf::ln_mean_square, Stage::norm2, "RMSNorm 2: mean square",
     "ms_i = (1/C) Σ_c X_mid2[i,c]²",
     "RMSNorm (config.norm \"rmsnorm\") takes no mean: it scales each row by its root mean square alone.", {A::pos}},
    {"blocks.0.ln2.hook_scale", Leaf::ln_scale, Stage::norm2, "LayerNorm 2: std σ",
     "σ_i = √(σ²_i + eps)   (RMSNorm: √(ms_i + eps))", "The spread of each row; eps keeps it away from 0.", {A::pos}},
    {"blocks.0.ln2.hook_standardized", Leaf::ln_standardized, Stage::norm2, "LayerNorm 2: normalized rows",
     "x̂[i,c] = (X_mid2[i,c] - μ_i) / σ_i   (RMSNorm: X_mid2[i,c] / σ_i)",
     "Each row now has mean 0 and variance 1 (before the learned affine).", {A::pos, A::d_model}},
    {"blocks.0.ln2.hook_normalized", Leaf::ln_normalized, Stage::norm2, "Block output",
     "X_out = γ₂ ⊙ x̂ + β₂   (RMSNorm: γ₂ ⊙ x̂)",
     "What the block hands to the next one: same shape as its input.", {A::pos, A::d_model}},
    // stage unembed (config.unembed: after the last block and the final norm; no template block has it)
    {"unembed", Leaf::logits, Stage::unembed, "Logits (unembedding)",
     "logits = LN_f·W_U",
     "One score per vocabulary entry for each position: how strongly the model predicts that token comes next. "
     "softmax of a row gives the next token's probabilities.",
     {A::pos, A::vocab}},
};

}  // namespace

bool writes_terms(Leaf leaf) {
    switch (leaf) {
        case Leaf::q: case Leaf::k: case Leaf::v: case Leaf::scores_raw: case Leaf::z: case Leaf::attn_out:
        case Leaf::mlp_pre: case Leaf::mlp_pre_linear: case Leaf::mlp_out: return true;
        default: return false;
    }
}

std::string_view pipeline_box(Leaf leaf) {
    switch (leaf) {
        case Leaf::embed: return "embed";
        case Leaf::pos_embed: return "positions";
        case Leaf::token_type_embed: return "token_type_embed";
        case Leaf::resid_pre: return "input x";
        case Leaf::q: case Leaf::k: case Leaf::v: case Leaf::kv_head: return "Q, K, V";
        case Leaf::rot_q: case Leaf::rot_k: return "RoPE";
        case Leaf::scores_raw: return "scores Q·Kᵀ";
        case Leaf::scale_factor: return "scale_factor";
        case Leaf::scores_scaled: return "scale";
        case Leaf::mask: case Leaf::attn_scores: return "mask";
        case Leaf::alibi_slopes: return "alibi_slopes";
        case Leaf::alibi: return "alibi";
        case Leaf::scores_masked: return "scores_masked";
        case Leaf::row_max: case Leaf::shifted: case Leaf::exp: case Leaf::row_sum: case Leaf::pattern: return "softmax";
        case Leaf::score_sum: return "score_sum";
        case Leaf::pattern_unmasked: return "pattern_unmasked";
        case Leaf::pattern_zeroed: return "pattern_zeroed";
        case Leaf::zeroed_sum: return "zeroed_sum";
        case Leaf::z: return "mix A·V";
        case Leaf::attn_out: return "W^O";
        case Leaf::resid_mid: case Leaf::resid_post: return "add";
        case Leaf::ln_mean: case Leaf::ln_centred: case Leaf::ln_sq_dev: case Leaf::ln_var: case Leaf::ln_mean_square:
        case Leaf::ln_scale: case Leaf::ln_standardized: case Leaf::ln_normalized: return "";
        case Leaf::mlp_pre: case Leaf::mlp_pre_linear: case Leaf::mlp_post: case Leaf::mlp_out: return "FFN";
        case Leaf::logits: return "unembed";
    }
    return "";
}

std::string_view stage_name(Stage s) { return kStageNames[static_cast<int>(s)]; }

std::optional<Stage> stage_from_name(std::string_view name) {
    for (int i = 0; i < kStageCount; ++i)
        if (kStageNames[i] == name) return static_cast<Stage>(i);
    return std::nullopt;
}

std::string stage_list() {
    std::string out;
    for (auto n : kStageNames) {
        if (!out.empty()) out += ", ";
        out += n;
    }
    return out;
}

std::string_view axis_name(Axis a) { return kAxisNames[static_cast<int>(a)]; }

std::optional<Axis> axis_from_name(std::string_view name) {
    for (std::size_t i = 0; i < kAxisNames.size(); ++i)
        if (kAxisNames[i] == name) return static_cast<Axis>(i);
    return std::nullopt;
}

std::size_t Dims::extent(Axis a) const {
    switch (a) {
        case Axis::pos: return P;
        case Axis::query: return Tq;
        case Axis::key: return T;
        case Axis::head: return NH;
        case Axis::d_model: return C;
        case Axis::d_head: return hs;
        case Axis::d_head_v: return hv;
        case Axis::d_ff: return F;
        case Axis::kv_head: return KVH;
        case Axis::batch: return B;
        case Axis::vocab: return V;
        case Axis::d_out: return O ? O : C;
    }
    return 0;
}

const std::vector<StepTemplate>& step_templates() { return kSteps; }

const StepTemplate* find_template(std::string_view name) {
    for (const auto& s : kSteps)
        if (name == s.name) return &s;
    return nullptr;
}

Shape step_shape(const StepDef& def, const Dims& dims) {
    Shape s;
    for (Axis a : def.axes) s.push_back(dims.extent(a));
    return s;
}

bool drawn_as_map(Leaf leaf) {
    return leaf == Leaf::pattern || leaf == Leaf::mask || leaf == Leaf::alibi || leaf == Leaf::attn_scores;
}

}  // namespace attntrace

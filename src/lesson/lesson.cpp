#include "lesson/lesson.hpp"

#include <fmt/format.h>

#include <array>

#include "lesson/batch_reader.hpp"

namespace attntrace {

namespace {
constexpr std::array<std::string_view, 5> kVerdicts = {"agrees", "agrees-when-rounded", "disagrees",
                                                       "not-checkable", "agrees-from-given"};
}

std::string_view verdict_name(Verdict v) { return kVerdicts[static_cast<int>(v)]; }

std::optional<Verdict> verdict_from_name(std::string_view s) {
    for (std::size_t i = 0; i < kVerdicts.size(); ++i)
        if (kVerdicts[i] == s) return static_cast<Verdict>(i);
    return std::nullopt;
}

namespace {
constexpr std::array<std::string_view, 6> kReduceOps = {"sum", "min", "max", "mean", "std", "std_unbiased"};
constexpr std::array<std::string_view, 3> kReduceOver = {"row", "col", "all"};
}  // namespace

std::string reduction_name(Reduction r) {
    return fmt::format("{}_{}", kReduceOver[static_cast<int>(r.over)], kReduceOps[static_cast<int>(r.op)]);
}

std::optional<Reduction> reduction_from_name(std::string_view s) {
    for (std::size_t o = 0; o < kReduceOver.size(); ++o)
        for (std::size_t op = 0; op < kReduceOps.size(); ++op)
            if (Reduction r{static_cast<Reduction::Op>(op), static_cast<Reduction::Over>(o)}; reduction_name(r) == s)
                return r;
    return std::nullopt;
}

std::vector<std::string> Lesson::axis_labels(Axis a, const Dims& d, bool cross) const {
    std::vector<std::string> out;
    auto numbered = [&](const char* prefix, std::size_t n) {
        for (std::size_t i = 0; i < n; ++i) out.push_back(fmt::format("{}{}", prefix, i));
        return out;
    };
    switch (a) {
        case Axis::pos: return tokens;
        case Axis::key: return cross ? memory_tokens : tokens;
        case Axis::query: return cross ? tokens : query_labels();
        case Axis::head: return numbered("h", d.NH);
        case Axis::kv_head: return numbered("kv", d.KVH);
        case Axis::d_model:
        case Axis::d_head:
        case Axis::d_head_v: return numbered("d", d.extent(a));
        case Axis::d_ff: return numbered("f", d.F);
        case Axis::batch: return batch_labels(d.B);  // a batched trace's leading axis (src/batch/), never one run's
        case Axis::vocab:
            if (vocab.size() == d.V) return vocab;
            return numbered("#", d.V);
    }
    return out;
}

std::string Lesson::vocab_label(std::int64_t id) const {
    if (id >= 0 && static_cast<std::size_t>(id) < vocab.size()) return vocab[static_cast<std::size_t>(id)];
    return fmt::format("#{}", id);
}

std::string_view mask_name(MaskKind m) {
    switch (m) {
        case MaskKind::causal: return "causal";
        case MaskKind::window: return "window";
        case MaskKind::global_local: return "global_local";
        case MaskKind::block_sparse: return "block_sparse";
        case MaskKind::padding: return "padding";
        case MaskKind::custom: return "custom";
        case MaskKind::none: break;
    }
    return "none";
}
std::string_view activation_name(Activation a) {
    switch (a) {
        case Activation::relu: return "relu";
        case Activation::gelu: return "gelu";
        case Activation::gelu_tanh: return "gelu_tanh";
        case Activation::swiglu: return "swiglu";
    }
    return "relu";
}
std::string_view norm_name(NormKind n) { return n == NormKind::rmsnorm ? "rmsnorm" : "layernorm"; }

Config cross_attention_config(Config c) {
    c.mask = MaskKind::none;
    c.mask_spec = MaskSpec{};
    c.positions = Positions{};
    return c;
}

bool config_records(const Config& c, Leaf leaf) {
    switch (leaf) {
        case Leaf::ln_mean:
        case Leaf::ln_var: return c.norm == NormKind::layernorm;
        case Leaf::ln_centred:
        case Leaf::ln_sq_dev: return c.norm == NormKind::layernorm && c.norm_steps_all;
        case Leaf::ln_mean_square: return c.norm == NormKind::rmsnorm;
        case Leaf::mlp_pre_linear: return c.activation == Activation::swiglu;
        case Leaf::scale_factor: return c.scale.recorded;
        case Leaf::row_max:
        case Leaf::shifted: return c.normalizer == Normalizer::softmax && c.max_shift;
        case Leaf::exp:
        case Leaf::row_sum: return c.normalizer == Normalizer::softmax;
        case Leaf::score_sum: return c.normalizer == Normalizer::sum;
        case Leaf::scores_scaled: return c.mask_at != MaskAt::raw;
        case Leaf::scores_masked: return c.mask_at == MaskAt::raw;
        case Leaf::pattern_unmasked: return c.mask_at == MaskAt::weights;
        case Leaf::pattern_zeroed:
        case Leaf::zeroed_sum: return c.mask_at == MaskAt::weights && c.renormalize;
        default: return true;
    }
}

std::string_view config_records_when(Leaf leaf) {
    switch (leaf) {
        case Leaf::ln_mean:
        case Leaf::ln_var: return "config.norm \"layernorm\"";
        case Leaf::ln_centred:
        case Leaf::ln_sq_dev: return "config.norm_steps \"all\" (with LayerNorm)";
        case Leaf::ln_mean_square: return "config.norm \"rmsnorm\"";
        case Leaf::mlp_pre_linear: return "config.activation \"swiglu\"";
        case Leaf::scale_factor: return "config.scale written as an object ({\"divide_by\": \"sqrt_dk\"}, ...)";
        case Leaf::row_max:
        case Leaf::shifted: return "config.normalizer \"softmax\" with its max shift (config.max_shift true, the default)";
        case Leaf::exp:
        case Leaf::row_sum: return "config.normalizer \"softmax\" (the default)";
        case Leaf::score_sum: return "config.normalizer \"sum\"";
        case Leaf::scores_scaled: return "config.mask_at \"scaled\" or \"weights\" (with \"raw\" the masked scores are scaled: hook_attn_scores)";
        case Leaf::scores_masked: return "config.mask_at \"raw\"";
        case Leaf::pattern_unmasked: return "config.mask_at \"weights\"";
        case Leaf::pattern_zeroed:
        case Leaf::zeroed_sum: return "config.mask_at \"weights\" with config.renormalize true";
        default: return "";
    }
}

std::string_view position_name(PositionKind k) {
    constexpr std::array<std::string_view, 5> kNames = {"none", "sinusoidal", "learned", "rope", "alibi"};
    return kNames[static_cast<int>(k)];
}
std::string_view position_step_kind(Leaf leaf) {
    switch (leaf) {
        case Leaf::pos_embed: return "sinusoidal or learned";
        case Leaf::rot_q:
        case Leaf::rot_k: return "rope";
        case Leaf::alibi_slopes:
        case Leaf::alibi: return "alibi";
        default: return "";
    }
}

bool position_step_applies(PositionKind k, Leaf leaf) {
    const std::string_view needs = position_step_kind(leaf);
    if (needs.empty()) return true;
    if (needs == "rope") return k == PositionKind::rope;
    if (needs == "alibi") return k == PositionKind::alibi;
    return k == PositionKind::sinusoidal || k == PositionKind::learned;
}

std::string_view rope_layout_name(RopeLayout l) { return l == RopeLayout::half ? "half" : "interleaved"; }

}  // namespace attntrace

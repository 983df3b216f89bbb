#include "lesson/weights.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace attntrace {

namespace {

using A = Axis;
using H = WeightSpec::Heads;

const std::vector<WeightSpec> kWeights = {
    {"W_Q", Stage::qkv, {A::d_model, A::d_model}, Fill::normal, H::q},
    {"W_K", Stage::qkv, {A::d_model, A::d_model}, Fill::normal, H::k},
    {"W_V", Stage::qkv, {A::d_model, A::d_model}, Fill::normal, H::v},
    {"b_Q", Stage::qkv, {A::d_model}, Fill::zeros, H::q},
    {"b_K", Stage::qkv, {A::d_model}, Fill::zeros, H::k},
    {"b_V", Stage::qkv, {A::d_model}, Fill::zeros, H::v},
    {"W_O", Stage::out, {A::d_model, A::d_out}, Fill::normal, H::o},
    {"b_O", Stage::out, {A::d_out}, Fill::zeros},
    {"ln1_gamma", Stage::norm1, {A::d_model}, Fill::ones},
    {"ln1_beta", Stage::norm1, {A::d_model}, Fill::zeros},
    {"ln1_alpha", Stage::norm1, {}, Fill::half},  // DyT's α: one number, shape (1)
    {"W_1", Stage::ffn, {A::d_model, A::d_ff}, Fill::normal},
    {"b_1", Stage::ffn, {A::d_ff}, Fill::zeros},
    {"W_2", Stage::ffn, {A::d_ff, A::d_model}, Fill::normal},
    {"b_2", Stage::ffn, {A::d_model}, Fill::zeros},
    {"W_3", Stage::ffn, {A::d_model, A::d_ff}, Fill::normal},  // SwiGLU's linear (up) branch
    {"b_3", Stage::ffn, {A::d_ff}, Fill::zeros},
    {"ln2_gamma", Stage::norm2, {A::d_model}, Fill::ones},
    {"ln2_beta", Stage::norm2, {A::d_model}, Fill::zeros},
    {"ln2_alpha", Stage::norm2, {}, Fill::half},  // DyT's α: one number, shape (1)
    // A decoder block's cross-attention (K and V project inputs.memory) and its third norm.
    {"cross.W_Q", Stage::qkv, {A::d_model, A::d_model}, Fill::normal, H::q},
    {"cross.W_K", Stage::qkv, {A::d_model, A::d_model}, Fill::normal, H::k},
    {"cross.W_V", Stage::qkv, {A::d_model, A::d_model}, Fill::normal, H::v},
    {"cross.b_Q", Stage::qkv, {A::d_model}, Fill::zeros, H::q},
    {"cross.b_K", Stage::qkv, {A::d_model}, Fill::zeros, H::k},
    {"cross.b_V", Stage::qkv, {A::d_model}, Fill::zeros, H::v},
    {"cross.W_O", Stage::out, {A::d_model, A::d_out}, Fill::normal, H::o},
    {"cross.b_O", Stage::out, {A::d_out}, Fill::zeros},
    {"ln3_gamma", Stage::norm2, {A::d_model}, Fill::ones},
    {"ln3_beta", Stage::norm2, {A::d_model}, Fill::zeros},
    {"ln3_alpha", Stage::norm2, {}, Fill::half},  // DyT's α: one number, shape (1)
};

// The model's weights outside its blocks, never prefixed: the embeddings' norm (config.embed_norm),
// the final norm (config.final_norm) and the unembedding (config.unembed "W_U"; its bias b_U with either kind).
const std::vector<WeightSpec> kModelWeights = {
    {"embed_ln_gamma", Stage::norm1, {A::d_model}, Fill::ones},
    {"embed_ln_beta", Stage::norm1, {A::d_model}, Fill::zeros},
    {"embed_ln_alpha", Stage::norm1, {}, Fill::half},
    {"ln_final_gamma", Stage::norm1, {A::d_model}, Fill::ones},
    {"ln_final_beta", Stage::norm1, {A::d_model}, Fill::zeros},
    {"ln_final_alpha", Stage::norm1, {}, Fill::half},
    {"W_U", Stage::unembed, {A::d_model, A::vocab}, Fill::normal},
    {"b_U", Stage::unembed, {A::vocab}, Fill::zeros},  // the logits' bias (Phi's lm_head.bias)
};
bool embed_only(std::string_view n) { return n.substr(0, 9) == "embed_ln_"; }
bool final_only(std::string_view n) { return n.substr(0, 9) == "ln_final_"; }

bool ends_with(std::string_view s, std::string_view tail) {
    return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}
bool decoder_only(std::string_view n) { return n.substr(0, 6) == "cross." || n.substr(0, 4) == "ln3_"; }
bool second_norm(std::string_view n) { return n.substr(0, 4) == "ln2_"; }


// The extent a projection's heads give, and its names: "kv_heads·head_size"
// keeps GQA's established wording when the widths are d_model / heads.
struct HeadsExtent {
    std::size_t heads, width;
    const char* name;
};
HeadsExtent heads_extent(WeightSpec::Heads h, const Dims& d) {
    const bool even = d.hs == d.hv && d.NH * d.hs == d.C;
    switch (h) {
        case H::q: return {d.NH, d.hs, "heads·d_k"};
        case H::k: return {d.KVH, d.hs, even ? "kv_heads·head_size" : "kv_heads·d_k"};
        case H::v: return {d.KVH, d.hv, even ? "kv_heads·head_size" : "kv_heads·d_v"};
        case H::o: return {d.NH, d.hv, "heads·d_v"};
        case H::none: break;
    }
    return {0, 0, ""};
}
// The axis a projection's heads replace: W_O's first (its input), every other's last.
std::size_t heads_axis(const WeightSpec& w) { return w.heads == H::o && w.axes.size() == 2 ? 0 : w.axes.size() - 1; }

}  // namespace

Shape WeightSpec::shape(const Dims& d) const {
    if (axes.empty()) return {1};  // one number (DyT's α), stored as torch stores it: shape (1)
    Shape s;
    for (Axis a : axes) s.push_back(d.extent(a));
    // b_O is d_model wide: W_O's heads are its input
    if (heads != H::none && !(heads == H::o && axes.size() == 1)) {
        const HeadsExtent e = heads_extent(heads, d);
        s[heads_axis(*this)] = e.heads * e.width;
    }
    return s;
}

Shape WeightSpec::shape(const Dims& d, WeightLayout layout) const {
    Shape s = shape(d);
    if (swapped(layout)) std::swap(s[0], s[1]);
    return s;
}

std::string WeightSpec::shape_text() const { return shape_text(Dims{}, WeightLayout::in_out); }

std::string WeightSpec::shape_text(const Dims& d) const { return shape_text(d, WeightLayout::in_out); }

// Multi-head attention with heads splitting d_model keeps the plain names
// (every extent is d_model); with fewer K/V heads, or widths of their own
// (config.d_k, d_v), the projection's extent is spelled out with its numbers.
std::string WeightSpec::shape_text(const Dims& d, WeightLayout layout) const {
    if (axes.empty()) return "one number";
    const bool even = d.hs == d.hv && d.NH * d.hs == d.C;
    const bool spelt = heads != H::none && !(heads == H::o && axes.size() == 1) &&
                       (!even || ((heads == H::k || heads == H::v) && d.KVH != d.NH));
    std::vector<std::string> names, n;
    for (std::size_t i = 0; i < axes.size(); ++i) {
        const bool h_extent = spelt && i == heads_axis(*this);
        const HeadsExtent e = heads_extent(heads, d);
        names.push_back(h_extent ? std::string(e.name) : std::string(axis_name(axes[i])));
        n.push_back(h_extent ? fmt::format("{}·{}", e.heads, e.width) : fmt::format("{}", spelt ? d.extent(axes[i]) : 0));
    }
    const bool numbers = spelt;
    if (swapped(layout)) {
        std::swap(names[0], names[1]);
        std::swap(n[0], n[1]);
    }
    if (!numbers) return fmt::format("{}", fmt::join(names, " x "));
    return fmt::format("{} = {}", fmt::join(names, " x "), fmt::join(n, " x "));
}

bool WeightSpec::uses_d_ff() const { return std::find(axes.begin(), axes.end(), Axis::d_ff) != axes.end(); }

double WeightSpec::default_std(const Dims& d) const {
    if (axes.size() < 2) return 0.0;  // a vector: zeros or ones, no spread
    return 1.0 / std::sqrt(static_cast<double>(shape(d)[0]));  // LeCun: 1/√d_in (W_O's: heads·d_v)
}

const std::vector<WeightSpec>& weight_specs() { return kWeights; }

bool weight_applies(const WeightSpec& w, const Config& c) {
    const std::string_view n = w.name;
    if (decoder_only(n) && !c.arch.decoder) return false;
    if (embed_only(n) && !c.arch.embed_norm) return false;
    if (final_only(n) && !c.arch.final_norm) return false;
    if (n == "W_U") return c.arch.unembed && !c.unembed_tied;
    if (n == "b_U") return c.arch.unembed;
    if (second_norm(n) && c.arch.shared_norm) return false;  // the block's one norm is LN1
    if (n == "W_3" || n == "b_3") return c.activation == Activation::swiglu;
    if (ends_with(n, "_alpha")) return c.norm == NormKind::dyt;
    if (ends_with(n, "_beta")) return c.norm != NormKind::rmsnorm;
    return true;
}

const char* weight_use(const WeightSpec& w, const Config& c) {
    const std::string_view n = w.name;
    if (second_norm(n) && c.arch.shared_norm) return "not with config.shared_norm: the block's one norm is LN1";
    if (decoder_only(n)) return "only with config.block \"decoder\"";
    if (embed_only(n)) return "only with config.embed_norm (β: and not RMSNorm; α: and config.norm \"dyt\")";
    if (final_only(n)) return "only with config.final_norm (β: and not RMSNorm; α: and config.norm \"dyt\")";
    if (n == "W_U") return "only with config.unembed \"W_U\"";
    if (n == "b_U") return "only with config.unembed";
    if (n == "W_3" || n == "b_3") return "only with config.activation \"swiglu\"";
    if (ends_with(n, "_alpha")) return "only DyT has α: only with config.norm \"dyt\"";
    if (ends_with(n, "_beta")) return "RMSNorm has no β: only with config.norm \"layernorm\" or \"dyt\"";
    return "always";
}

std::vector<WeightUse> weight_uses(const Config& c) {
    std::vector<WeightUse> out;
    for (const auto& w : kModelWeights) out.push_back({w.name, &w});
    for (std::size_t b = 0; b < c.arch.blocks; ++b)
        for (const auto& w : kWeights)
            out.push_back({(c.arch.blocks > 1 ? fmt::format("blocks.{}.", b) : std::string()) + w.name, &w});
    return out;
}

const WeightSpec* find_weight(const std::string& name) {
    for (const auto& w : kWeights)
        if (name == w.name) return &w;
    for (const auto& w : kModelWeights)
        if (name == w.name) return &w;
    return nullptr;
}

std::string weight_list() {
    std::string s;
    for (const auto& w : kWeights) s += (s.empty() ? "" : ", ") + std::string(w.name);
    for (const auto& w : kModelWeights) s += ", " + std::string(w.name);
    return s;
}

}  // namespace attntrace

#include "lesson/weights.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace attntrace {

namespace {

using A = Axis;

const std::vector<WeightSpec> kWeights = {
    {"W_Q", Stage::qkv, {A::d_model, A::d_model}, Fill::normal},
    {"W_K", Stage::qkv, {A::d_model, A::d_model}, Fill::normal, true},
    {"W_V", Stage::qkv, {A::d_model, A::d_model}, Fill::normal, true},
    {"b_Q", Stage::qkv, {A::d_model}, Fill::zeros},
    {"b_K", Stage::qkv, {A::d_model}, Fill::zeros, true},
    {"b_V", Stage::qkv, {A::d_model}, Fill::zeros, true},
    {"W_O", Stage::out, {A::d_model, A::d_model}, Fill::normal},
    {"b_O", Stage::out, {A::d_model}, Fill::zeros},
    {"ln1_gamma", Stage::norm1, {A::d_model}, Fill::ones},
    {"ln1_beta", Stage::norm1, {A::d_model}, Fill::zeros},
    {"W_1", Stage::ffn, {A::d_model, A::d_ff}, Fill::normal},
    {"b_1", Stage::ffn, {A::d_ff}, Fill::zeros},
    {"W_2", Stage::ffn, {A::d_ff, A::d_model}, Fill::normal},
    {"b_2", Stage::ffn, {A::d_model}, Fill::zeros},
    {"W_3", Stage::ffn, {A::d_model, A::d_ff}, Fill::normal},  // SwiGLU's linear (up) branch
    {"b_3", Stage::ffn, {A::d_ff}, Fill::zeros},
    {"ln2_gamma", Stage::norm2, {A::d_model}, Fill::ones},
    {"ln2_beta", Stage::norm2, {A::d_model}, Fill::zeros},
    // A decoder block's cross-attention (K and V project inputs.memory) and its third norm.
    {"cross.W_Q", Stage::qkv, {A::d_model, A::d_model}, Fill::normal},
    {"cross.W_K", Stage::qkv, {A::d_model, A::d_model}, Fill::normal, true},
    {"cross.W_V", Stage::qkv, {A::d_model, A::d_model}, Fill::normal, true},
    {"cross.b_Q", Stage::qkv, {A::d_model}, Fill::zeros},
    {"cross.b_K", Stage::qkv, {A::d_model}, Fill::zeros, true},
    {"cross.b_V", Stage::qkv, {A::d_model}, Fill::zeros, true},
    {"cross.W_O", Stage::out, {A::d_model, A::d_model}, Fill::normal},
    {"cross.b_O", Stage::out, {A::d_model}, Fill::zeros},
    {"ln3_gamma", Stage::norm2, {A::d_model}, Fill::ones},
    {"ln3_beta", Stage::norm2, {A::d_model}, Fill::zeros},
};

bool ends_with(std::string_view s, std::string_view tail) {
    return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}
bool decoder_only(std::string_view n) { return n.substr(0, 6) == "cross." || n.substr(0, 4) == "ln3_"; }

}  // namespace

Shape WeightSpec::shape(const Dims& d) const {
    Shape s;
    for (Axis a : axes) s.push_back(d.extent(a));
    if (kv) s.back() = d.KVH * d.hs;
    return s;
}

Shape WeightSpec::shape(const Dims& d, WeightLayout layout) const {
    Shape s = shape(d);
    if (swapped(layout)) std::swap(s[0], s[1]);
    return s;
}

std::string WeightSpec::shape_text() const { return shape_text(Dims{}, WeightLayout::in_out); }

std::string WeightSpec::shape_text(const Dims& d) const { return shape_text(d, WeightLayout::in_out); }

// Multi-head attention keeps the plain names (K/V's columns are d_model);
// with fewer K/V heads the K/V extent is spelled out with its numbers.
std::string WeightSpec::shape_text(const Dims& d, WeightLayout layout) const {
    const bool numbers = kv && d.KVH != d.NH;
    std::vector<std::string> names, n;
    for (std::size_t i = 0; i < axes.size(); ++i) {
        const bool kv_extent = numbers && i + 1 == axes.size();
        names.push_back(kv_extent ? std::string("kv_heads·head_size") : std::string(axis_name(axes[i])));
        n.push_back(kv_extent ? fmt::format("{}·{}", d.KVH, d.hs) : fmt::format("{}", numbers ? d.extent(axes[i]) : 0));
    }
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
    return 1.0 / std::sqrt(static_cast<double>(d.extent(axes[0])));  // LeCun: 1/√d_in
}

const std::vector<WeightSpec>& weight_specs() { return kWeights; }

bool weight_applies(const WeightSpec& w, const Config& c) {
    const std::string_view n = w.name;
    if (decoder_only(n) && !c.arch.decoder) return false;
    if (n == "W_3" || n == "b_3") return c.activation == Activation::swiglu;
    if (ends_with(n, "_beta")) return c.norm == NormKind::layernorm;
    return true;
}

const char* weight_use(const WeightSpec& w) {
    const std::string_view n = w.name;
    if (decoder_only(n)) return "only with config.block \"decoder\"";
    if (n == "W_3" || n == "b_3") return "only with config.activation \"swiglu\"";
    if (ends_with(n, "_beta")) return "RMSNorm has no β: only with config.norm \"layernorm\"";
    return "always";
}

std::vector<WeightUse> weight_uses(const Config& c) {
    std::vector<WeightUse> out;
    for (std::size_t b = 0; b < c.arch.blocks; ++b)
        for (const auto& w : kWeights)
            out.push_back({(c.arch.blocks > 1 ? fmt::format("blocks.{}.", b) : std::string()) + w.name, &w});
    return out;
}

const WeightSpec* find_weight(const std::string& name) {
    for (const auto& w : kWeights)
        if (name == w.name) return &w;
    return nullptr;
}

std::string weight_list() {
    std::string s;
    for (const auto& w : kWeights) s += (s.empty() ? "" : ", ") + std::string(w.name);
    return s;
}

}  // namespace attntrace

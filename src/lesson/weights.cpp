#include "lesson/weights.hpp"

#include <algorithm>
#include <cmath>

namespace attntrace {

namespace {

using A = Axis;

const std::vector<WeightSpec> kWeights = {
    {"W_Q", Stage::qkv, {A::d_model, A::d_model}, Fill::normal},
    {"W_K", Stage::qkv, {A::d_model, A::d_model}, Fill::normal},
    {"W_V", Stage::qkv, {A::d_model, A::d_model}, Fill::normal},
    {"b_Q", Stage::qkv, {A::d_model}, Fill::zeros},
    {"b_K", Stage::qkv, {A::d_model}, Fill::zeros},
    {"b_V", Stage::qkv, {A::d_model}, Fill::zeros},
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
};

}  // namespace

Shape WeightSpec::shape(const Dims& d) const {
    Shape s;
    for (Axis a : axes) s.push_back(d.extent(a));
    return s;
}

std::string WeightSpec::shape_text() const {
    std::string s;
    for (Axis a : axes) s += (s.empty() ? "" : " x ") + std::string(axis_name(a));
    return s;
}

bool WeightSpec::uses_d_ff() const { return std::find(axes.begin(), axes.end(), Axis::d_ff) != axes.end(); }

double WeightSpec::default_std(const Dims& d) const {
    if (axes.size() < 2) return 0.0;  // a vector: zeros or ones, no spread
    return 1.0 / std::sqrt(static_cast<double>(d.extent(axes[0])));  // LeCun: 1/√d_in
}

const std::vector<WeightSpec>& weight_specs() { return kWeights; }

bool weight_applies(const WeightSpec& w, const Config& c) {
    const std::string_view n = w.name;
    if (n == "W_3" || n == "b_3") return c.activation == Activation::swiglu;
    if (n == "ln1_beta" || n == "ln2_beta") return c.norm == NormKind::layernorm;
    return true;
}

const char* weight_use(const WeightSpec& w) {
    const std::string_view n = w.name;
    if (n == "W_3" || n == "b_3") return "only with config.activation \"swiglu\"";
    if (n == "ln1_beta" || n == "ln2_beta") return "RMSNorm has no β: only with config.norm \"layernorm\"";
    return "always";
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

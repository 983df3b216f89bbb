#include "lesson/weights.hpp"

#include <cmath>

namespace attntrace {

namespace {

const std::vector<WeightSpec> kWeights = {
    {"W_Q", Stage::qkv, "d_model x d_model", false, false, Fill::normal, 0},
    {"W_K", Stage::qkv, "d_model x d_model", false, false, Fill::normal, 0},
    {"W_V", Stage::qkv, "d_model x d_model", false, false, Fill::normal, 0},
    {"b_Q", Stage::qkv, "d_model", true, false, Fill::zeros, -1},
    {"b_K", Stage::qkv, "d_model", true, false, Fill::zeros, -1},
    {"b_V", Stage::qkv, "d_model", true, false, Fill::zeros, -1},
    {"W_O", Stage::out, "d_model x d_model", false, false, Fill::normal, 0},
    {"b_O", Stage::out, "d_model", true, false, Fill::zeros, -1},
    {"ln1_gamma", Stage::norm1, "d_model", false, false, Fill::ones, -1},
    {"ln1_beta", Stage::norm1, "d_model", false, false, Fill::zeros, -1},
    {"W_1", Stage::ffn, "d_model x d_ff", false, true, Fill::normal, 0},
    {"b_1", Stage::ffn, "d_ff", true, true, Fill::zeros, -1},
    {"W_2", Stage::ffn, "d_ff x d_model", false, true, Fill::normal, 0},
    {"b_2", Stage::ffn, "d_model", true, false, Fill::zeros, -1},
    {"ln2_gamma", Stage::norm2, "d_model", false, false, Fill::ones, -1},
    {"ln2_beta", Stage::norm2, "d_model", false, false, Fill::zeros, -1},
};

}  // namespace

double WeightSpec::default_std(const Dims& d) const {
    if (fan_in_axis < 0) return 0.0;
    Shape s = weight_shape(*this, d);
    return 1.0 / std::sqrt(static_cast<double>(s[static_cast<std::size_t>(fan_in_axis)]));
}

const std::vector<WeightSpec>& weight_specs() { return kWeights; }

const WeightSpec* find_weight(const std::string& name) {
    for (const auto& w : kWeights)
        if (name == w.name) return &w;
    return nullptr;
}

Shape weight_shape(const WeightSpec& spec, const Dims& d) {
    std::string n = spec.name;
    if (n == "W_1") return {d.C, d.F};
    if (n == "W_2") return {d.F, d.C};
    if (n == "b_1") return {d.F};
    if (n[0] == 'W') return {d.C, d.C};
    return {d.C};
}

std::string weight_list() {
    std::string s;
    for (const auto& w : kWeights) s += (s.empty() ? "" : ", ") + std::string(w.name);
    return s;
}

}  // namespace attntrace

// The weights a lesson may give, their shapes and how they are generated.
//
//   W_Q, W_K, W_V, W_O  (C, C)   row-vector convention: Q = X·W_Q, W is d_in x d_out
//   b_Q, b_K, b_V, b_O  (C)      absent: zero (the articles write Q = X·W^Q)
//   ln1_gamma, ln1_beta (C)      absent: LayerNorm's output is not computable
//   W_1 (C, F), b_1 (F), W_2 (F, C), b_2 (C)
//   ln2_gamma, ln2_beta (C)
#pragma once

#include <string>
#include <vector>

#include "lesson/generate.hpp"
#include "trace/steps.hpp"

namespace attntrace {

struct WeightSpec {
    const char* name;
    Stage stage;           // the stage that reads it
    const char* shape_text;  // "d_model x d_model"
    bool is_bias;          // absent means zero
    bool uses_d_ff;
    Fill init;             // what weights_seed generates: normal for matrices, zeros/ones for biases/gains
    int fan_in_axis;       // normal std = 1/sqrt(shape[fan_in_axis]) (LeCun), -1 for fills
    double default_std(const Dims& d) const;
};

const std::vector<WeightSpec>& weight_specs();
const WeightSpec* find_weight(const std::string& name);
Shape weight_shape(const WeightSpec& spec, const Dims& d);
std::string weight_list();

}  // namespace attntrace

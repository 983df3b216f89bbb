// The softmax's fast paths, beside the plan that chooses them
// (pipeline/plan.cpp): the weights derived row block by row block from the
// raw scores (plan.derive_attention), and the attention fused per row block
// with the scores' and the mix's products (plan.fuse_attention). The
// reference forward, one pass a step, is pipeline/softmax.cpp's; every number
// these write is the one it writes (tests/test_fused_attention.cpp,
// tests/test_derived_steps.cpp).
#pragma once

#include <cstddef>
#include <string>

#include "pipeline/run.hpp"

namespace attntrace {

// The steps of the pass's attention (self or cross); `pattern` is what the
// normaliser writes: the weights A, or A⁰ when the mask zeroes them afterwards.
struct SoftmaxNames {
    std::string in, max, shifted, exp, sum, pattern;
    explicit SoftmaxNames(const Run& run)
        : in(run.name(Leaf::attn_scores)), max(run.name(Leaf::row_max)),
          shifted(run.name(Leaf::shifted)), exp(run.name(Leaf::exp)), sum(run.name(Leaf::row_sum)),
          pattern(run.name(run.config().mask_at == MaskAt::weights ? Leaf::pattern_unmasked : Leaf::pattern)) {}
};

// plan.derive_attention: m, s and the weights A from the raw scores, the
// shifted scores and exps derived steps of m; fused with the scores and the
// mix when plan.fuse_attention left the raw scores to this pass.
void softmax_derived(Run& run, std::size_t rows, std::size_t cols);

}  // namespace attntrace

#include "pipeline/operation.hpp"

#include <array>

#include "pipeline/stages.hpp"

namespace attntrace {

namespace {

// Indexed by Stage: embed, qkv, rope, scores, scale, mask, softmax, mix, out, add1, norm1, ffn, add2, norm2, unembed.
constexpr std::array<Operation, kStageCount> kOperations = {{
    {embed_forward, embed_explain, no_cost},
    {qkv_forward, qkv_explain, qkv_cost},
    {rope_forward, rope_explain, no_cost},
    {scores_forward, scores_explain, scores_cost},
    {scale_forward, scale_explain, scale_cost},
    {mask_forward, mask_explain, no_cost},
    {softmax_forward, softmax_explain, softmax_cost},
    {mix_forward, mix_explain, mix_cost},
    {out_proj_forward, out_proj_explain, out_proj_cost},
    {add_forward, add_explain, no_cost},
    {norm_forward, norm_explain, no_cost},
    {ffn_forward, ffn_explain, ffn_cost},
    {add_forward, add_explain, no_cost},
    {norm_forward, norm_explain, no_cost},
    {unembed_forward, unembed_explain, unembed_cost},
}};

}  // namespace

const Operation& operation(Stage s) { return kOperations[static_cast<std::size_t>(s)]; }

double product_flops(Stage s, const CostQuery& q) {
    double f = 0;
    for (const CostTerm& t : operation(s).cost(q))
        if (t.product) f += t.flops;
    return f;
}

std::vector<CostTerm> no_cost(const CostQuery&) { return {}; }

}  // namespace attntrace

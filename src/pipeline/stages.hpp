// The operations' functions, one file each (operation.hpp's table). Each
// forward reads the steps it needs from the Run, records its own steps, and
// leaves the rest to the stages after it; each explain recomputes one cell of
// one of its steps from the trace (cell.hpp); each cost says what one pass
// computes (operation.hpp). Shapes use the letters of trace/steps.hpp. A stage
// runs once per pass (trace/catalogue.hpp): the steps it is wired to, and the
// weights' prefix, come from run.pass(); in a cross-attention pass T is the
// memory's S keys and Tq the decoder's tokens.
#pragma once

#include <string>
#include <vector>

#include "pipeline/cell.hpp"
#include "pipeline/operation.hpp"
#include "pipeline/run.hpp"

namespace attntrace {

// embed.cpp     X (T, C)
void embed_forward(Run& run);
float embed_explain(Cell& c);
// qkv.cpp       Q (Tq, NH, hs), K (T, KVH, hs), V (T, KVH, hv), the K/V head of each query head (NH)
void qkv_forward(Run& run);
float qkv_explain(Cell& c);
std::vector<CostTerm> qkv_cost(const CostQuery& q);
// Which K/V head query head h reads, and with whom it shares it (hn, gn: their labels).
std::string kv_group_line(const Dims& d, const std::string& hn, std::size_t h, const std::string& gn);
// rope.cpp      rotated Q (Tq, NH, hs), K (T, KVH, hs); only with RoPE
void rope_forward(Run& run);
float rope_explain(Cell& c);
// scores.cpp    S (NH, Tq, T)
void scores_forward(Run& run);
// The scores' product on queries i0..i0+n of head h (plan().fuse_attention:
// softmax_fast.cpp), the same numbers as scores_forward's: keys is K_g, g = kv_of(h),
// as pack_scores_keys packed it   q: (Tq, NH, hs)   s: (n, T), row stride T
void pack_scores_keys(const Tensor& k, const Dims& d, std::size_t g, float* keys);
void scores_block(const Tensor& q, const float* keys, const Dims& d, std::size_t h, std::size_t i0, std::size_t n,
                  float* s);
float scores_explain(Cell& c);
std::vector<CostTerm> scores_cost(const CostQuery& q);
// scale.cpp     s (NH) when config.scale is an object; S/s or S·s (NH, Tq, T)
void scale_forward(Run& run);
float scale_explain(Cell& c);
std::vector<CostTerm> scale_cost(const CostQuery& q);
// What config.scale does to a score: divide by s (√hs in float, the lesson's
// divide_by, or 1 when scaling is off) or multiply by s (multiply_by).
struct ScaleOp {
    float s = 1;
    bool multiply = false;
    float apply(float x) const { return multiply ? x * s : x / s; }
};
ScaleOp scale_op(const Config& c, const Dims& d);
// y_h = op.apply(x_h) with each head's own factor[h] (the recorded hook_scale_factor),
// or op.s for all when factor is null   x, y: (NH, plane)   factor: (NH)
void apply_scale(const ScaleOp& op, const float* factor, const float* x, float* y, std::size_t NH, std::size_t plane);
// The same as a derived step's op (trace/derived.hpp) over rows of (NH, Tq, T):
// `factor` names hook_scale_factor when it is recorded, else empty.
DerivedOp scale_rows(const ScaleOp& op, const std::string& factor, std::size_t Tq);
// Writes how cell x of head h is scaled and returns op.apply(x) (the factor read as apply_scale reads it).
float explain_scale(Cell& c, float x, std::size_t h, const std::string& what);
// mask.cpp      M (Tq, T), S̃ + M (NH, Tq, T)
void mask_forward(Run& run);
float mask_explain(Cell& c);
// alibi.cpp     slopes (NH), bias (NH, Tq, T); only with ALiBi (forward and explain called by mask's)
void alibi_forward(Run& run);
float alibi_explain(Cell& c);
// S̃ + M as a derived step's op over rows of (NH, Tq, T); `mask` names hook_mask (Tq, T),
// whose rows are all alike when `same_rows`.
DerivedOp mask_rows(const std::string& mask, std::size_t Tq, bool same_rows);
// y = (s + bias) + mask   s, bias, y: (NH, plane)   mask: (plane)
void add_alibi_mask(const float* s, const float* bias, const float* mask, float* y, std::size_t NH, std::size_t plane);
// softmax.cpp   A (NH, Tq, T) and internals
void softmax_forward(Run& run);
// Floats of scratch per thread of the fused attention (plan.fuse_attention, softmax_fast.cpp), for the plan's peak.
std::size_t fused_attention_scratch_floats(const Dims& d);
float softmax_explain(Cell& c);
std::vector<CostTerm> softmax_cost(const CostQuery& q);
// mix.cpp       Z (Tq, NH, hv)
void mix_forward(Run& run);
// Z's rows i0..i0+n of head h from their weights (plan().fuse_attention:
// softmax_fast.cpp), the same numbers as mix_forward's: values is V_g, g = kv_of(h),
// as pack_mix_values packed it   a: (n, T), row stride T   z: (Tq, NH, hv)
void pack_mix_values(const Tensor& v, const Dims& d, std::size_t g, float* values);
void mix_block(const float* a, const float* values, const Dims& d, std::size_t h, std::size_t i0, std::size_t n,
               float* z);
float mix_explain(Cell& c);
std::vector<CostTerm> mix_cost(const CostQuery& q);
// out_proj.cpp  attn_out (Tq, C)
void out_proj_forward(Run& run);
float out_proj_explain(Cell& c);
std::vector<CostTerm> out_proj_cost(const CostQuery& q);
// residual.cpp  residual + update (P, C)
void add_forward(Run& run);
float add_explain(Cell& c);
// layernorm.cpp LN (P, C)
void norm_forward(Run& run);
float norm_explain(Cell& c);
// ffn.cpp       FFN (P, C)
void unembed_forward(Run& run);
float unembed_explain(Cell& c);
std::vector<CostTerm> unembed_cost(const CostQuery& q);

void ffn_forward(Run& run);
float ffn_explain(Cell& c);
std::vector<CostTerm> ffn_cost(const CostQuery& q);
// act(H), or SwiGLU's SiLU(H) ⊙ U   h, u, out: (n); u only with SwiGLU
void ffn_activate(const Config& c, const float* h, const float* u, float* out, std::size_t n);

// The element-wise operations the cost model does not count.
std::vector<CostTerm> no_cost(const CostQuery& q);

}  // namespace attntrace

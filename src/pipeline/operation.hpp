// The operations of a block, each defined once, in the pipeline file named
// after it: its forward over the run's rows (a lesson's run and a decode step
// call the same function; run.hpp's RowWindow), the explanation of one cell
// of any step it records (cell.hpp), and its cost. The run (block.cpp),
// explain (render/explain.cpp), the plan, `cost` and `bench` all ask this
// table; none of them knows an operation's arithmetic. An operation's steps
// (names, formulas, axes, meaning) are its entries of the step table
// (trace/steps.cpp), which it names by Leaf.
//
//   stage(s)        file          steps
//   embed           embed.cpp     hook_embed, hook_pos_embed, hook_token_type_embed, hook_resid_pre
//   qkv             qkv.cpp       hook_q, hook_k, hook_v, hook_kv_head
//   rope            rope.cpp      hook_rot_q, hook_rot_k
//   scores          scores.cpp    hook_scores_raw
//   scale           scale.cpp     hook_scale_factor (config.scale an object), hook_scores_scaled
//   mask            mask.cpp      hook_mask, hook_scores_masked (config.mask_at "raw"), hook_attn_scores
//                                 (and alibi.cpp's slopes and bias)
//   softmax         softmax.cpp   softmax.hook_row_max .. hook_row_sum, hook_pattern (and, with
//                                 config.mask_at "weights", hook_pattern_unmasked .. hook_zeroed_sum)
//   mix             mix.cpp       hook_z
//   out             out_proj.cpp  hook_attn_out
//   add1, add2      residual.cpp  hook_resid_mid, hook_resid_post
//   norm1, norm2    layernorm.cpp ln*.hook_mean .. hook_normalized (LayerNorm, RMSNorm or DyT; embed.ln.* too)
//   ffn             ffn.cpp       mlp.hook_pre .. hook_mlp_out
//   unembed         unembed.cpp   unembed (the logits; the final norm before it is a norm pass, ln_final.*)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lesson/lesson.hpp"
#include "trace/steps.hpp"

namespace attntrace {

class Run;
struct Cell;

// The shapes an operation's cost is asked for.
struct CostQuery {
    Dims d;                   // the pass's extents (in attntrace cost: T = Tq = n)
    double pairs = 0;         // query-key pairs one head computes: Tq·T materialised, fewer with a window
    double stored = 0;        // entries one head's score matrix holds (Tq·T, or the window's pairs)
    std::uint64_t window = 0; // the window's keys per query (0: none), for the shapes' letters
    Activation activation = Activation::relu;
};

// One thing an operation computes, with its size and work.
struct CostTerm {
    std::string what;                   // "scores S = Q·Kᵀ"
    std::string letters;                // its shape in letters: "NH, n, n"
    std::vector<std::uint64_t> shape;   // the same in numbers
    double elements = 0;                // values it holds
    double flops = 0;                   // a multiply and an add are 2
    bool product = false;               // a matrix product (what the GEMM and bench time)
    bool per_pair = false;              // grows with the query-key pairs: the quadratic part
};

struct Operation {
    void (*forward)(Run& run);
    // Writes the explanation of c's cell and returns the value recomputed.
    float (*explain)(Cell& c);
    // What one pass computes; empty for an operation the cost model does not count (docs/cost.md).
    std::vector<CostTerm> (*cost)(const CostQuery& q);
};

// The operation that runs stage `s` (norm1 and norm2 are one, add1 and add2 too).
const Operation& operation(Stage s);

// The sum of an operation's terms: matrix products only (bench, the plan), or all.
double product_flops(Stage s, const CostQuery& q);

}  // namespace attntrace

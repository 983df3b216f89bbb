// KV-cache decoding: a causal lesson's attention run one token at a time, as
// a model generates, and held to the causal run over the whole sequence.
//
// For each position t, the new token's row of X goes through every pass of
// the model by the pipeline's own stages over that one row (run_window,
// pipeline/run.hpp): its q, k and v are projected from its row alone, k and v
// (RoPE's rotated k too) join each attention's cache, its query attends over
// the cache, and its row goes through W^O, the adds, the norms and the FFN
// into the next block. There is no second implementation of the block.
// 002's point, checked: the causal mask is how training does in parallel
// what generation does one token at a time, so step t's weights and Z equal
// row t of the causal run (and the run's weights past t are exactly 0).
//
// Letters: T tokens, NH query heads, KVH key/value heads, hs query/key head size, hv value head size.
#pragma once

#include <string>
#include <vector>

#include "lesson/lesson.hpp"
#include "trace/trace.hpp"

namespace attntrace {

// The decode and the causal run compute the same sums in a different order:
// one row at a time against the whole sequence's blocked (SIMD) products, and
// a norm's statistics of one row against rows summed side by side, so they
// agree to float32 rounding, not bit for bit. Rounding errors scale with the
// values: a deviation is measured in units of its step's scale, max(1,
// max |x|) over the run's compared cells: absolute for steps of magnitude up
// to 1 (weights, the shipped lessons' Z), relative beyond (a pre-norm
// variance near 8679, inputs x100, differs by one float32 ulp, 9.8e-4: 1.1e-7
// of its scale). 1e-5 is ~84 float32 ulps of the scale; measured: 0 on
// 002-causal-decode, 1.8e-7 on a 48-token random lesson (d_model 64, 4 heads),
// 4.2e-7 at 512 tokens, d_model 768, 12 heads; through whole models (every row
// after attention too): 1.9e-6 for 3 pre-norm blocks (40 tokens, d_model 64),
// 3.9e-6 for 4 pre-norm blocks at 128 tokens, d_model 768.
inline constexpr double kDecodeTol = 1e-5;

struct DecodeStep {
    std::size_t t = 0;      // the new token's position
    std::string token;
    Tensor q;               // (NH, hs)   its query (with RoPE: rotated at position t)
    Tensor k, v;            // (KVH, hs), (KVH, hv)  its key (rotated with RoPE) and value, appended to the cache
    Tensor scores;          // (NH, t+1)  masked, scaled scores over the cache
    Tensor pattern;         // (NH, t+1)  its attention weights
    Tensor z;               // (NH, hv)   its mixed values
    // deviations: max |Δ| in units of each step's scale, max(1, max |x|) (kDecodeTol)
    double dev_k = 0;       // max |Δ| of k and v against rows t of the run's K and V
    double dev_pattern = 0; // ... of the weights against row t of the run's pattern (keys <= t)
    double dev_z = 0;       // ... of z against row t of the run's Z (every attention's: each block's, cross too)
    double dev_rows = 0;    // ... of every other row it computes (X, W^O outputs, residual adds, norms, FFN, the attention's
                            // internals) against the run's
    double future_weight = 0;  // the run's largest weight on a key after t (must be exactly 0)
};

struct DecodeReport {
    bool applicable = false;
    std::string why_not;    // when not applicable
    std::vector<DecodeStep> steps;
    std::size_t cache_floats = 0;  // K and V caches at the end: T·KVH·(hs + hv) per self-attention (+ S·KVH·(hs + hv) per cross)
    std::size_t attentions = 1;    // the caches: one per self-attention and cross-attention of the model
    std::string through;           // the last step the decode computes (the run's last, or where a weight is missing)
    double max_dev = 0;            // over every step and every compared value
    bool matches() const;          // every deviation within kDecodeTol and no weight past t
};

// A checkpoint's weights (Lesson::weight_source) held converted across a
// decode's tokens when all of them fit in the memory budget (--max-memory)
// beside `beside` bytes (the window plan's peak, which counts one block's
// weights, and whatever else the decode holds): each token then reads weights
// converted once, where a run converts each block's when its passes start and
// releases them after; with a tied unembedding and room for it too, the
// embedding table transposed (kTiedUnembeddingTransposed). Released at the
// end of the decode. Without a source (a lesson file's weights) or the room,
// nothing changes.
class HeldWeights {
public:
    HeldWeights(const Lesson& lesson, std::size_t beside);
    ~HeldWeights();
    HeldWeights(const HeldWeights&) = delete;
    HeldWeights& operator=(const HeldWeights&) = delete;
    bool held() const { return source_ != nullptr; }

private:
    WeightSource* source_ = nullptr;
};

// Decodes `lesson` token by token and compares with `full`, its exact causal
// trace (the trace must keep every step in full, as the default policy does).
// Every block of a stack, pre-norm or post-norm, and decoder blocks (their
// cross-attention over the memory, projected once) are decoded: each block
// has its own cache, and every row the decode computes is held to the run's.
// Not applicable (with the reason) when the lesson's self-attention is not
// causal, or the run does not go from qkv (or earlier) through mix.
DecodeReport decode_lesson(const Lesson& lesson, const Trace& full);

// Token t's window (run_window's trace, its derived steps materialised) as a
// DecodeStep for display: block 0's q, k, v, scores, weights and z (no deviations).
DecodeStep window_step(const Lesson& lesson, const Trace& window, std::size_t t);

}  // namespace attntrace

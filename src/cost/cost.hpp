// What attention costs, worked out from the shapes alone (no run): elements,
// bytes and FLOPs of every step of one layer, the attention matrices of the
// whole model, and the memory a full attntrace trace needs beside what
// streaming attention (FlashAttention-style, `--trace none`) needs.
// docs/cost.md states every formula; `attntrace cost` prints it.
//
// Letters: n tokens (queries), m keys (n; fewer per query with a window),
// C d_model, NH query heads, KVH key/value heads (GQA/MQA; NH for MHA),
// hs = C / NH, F d_ff, L layers, B batch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lesson/lesson.hpp"

namespace attntrace {

enum class DType { fp32, fp16, bf16 };
std::size_t dtype_bytes(DType d);
const char* dtype_name(DType d);

// Which keys each query sees, for counting the scores that matter.
enum class Window {
    full,       // every key: n per query
    causal,     // keys j <= i: (i + 1) per query
    symmetric,  // keys j in [i - w/2, i + w/2), clipped to the sequence (004's sliding_window_attention)
    causal_window,  // keys j in (i - w, i], clipped
};

struct CostSpec {
    std::uint64_t tokens = 1024;  // n
    std::uint64_t d_model = 768;  // C
    std::uint64_t heads = 12;     // NH
    std::uint64_t kv_heads = 0;   // KVH; 0: as many as heads (MHA)
    std::uint64_t d_ff = 0;       // F; 0: no FFN
    std::uint64_t layers = 1;     // L
    std::uint64_t batch = 1;      // B
    DType dtype = DType::fp32;
    Window window = Window::full;
    std::uint64_t window_size = 0;  // w, for the windowed kinds
    Activation activation = Activation::relu;  // swiglu: the FFN's three matrices (W_1, W_3 gate and value, W_2)
};

// One step of one layer, for one sequence.
struct CostRow {
    std::string step;     // what is computed ("scores S = Q·Kᵀ", ...)
    std::string shape;    // "(NH, n, n)" with the letters, then the numbers
    double elements = 0;  // values it holds
    double flops = 0;     // multiply and add count 2 (a fused multiply-add: 2)
    bool per_pair = false;  // grows with n x m: the quadratic part
};

struct CostReport {
    CostSpec spec;
    std::uint64_t head_size = 0;      // hs
    double scores_per_matrix = 0;     // entries of one head's n x n matrix (all of them, as materialized)
    double scores_needed = 0;         // of those, the ones the window lets a query see
    double matrix_bytes = 0;          // one head's matrix, one layer, at dtype
    double model_scores = 0;          // every head, layer and sequence: NH·L·B·n·n
    double model_scores_needed = 0;   // the same, counting only the window's entries
    double model_matrix_bytes = 0;    // all of them at once, at dtype
    std::vector<CostRow> rows;        // one layer, one sequence
    double layer_flops = 0;           // sum of rows' flops
    double model_flops = 0;           // x L x B
    // Memory of one layer's attention for one sequence at dtype:
    double full_trace_bytes = 0;      // what `attntrace run --trace full` holds: the raw scores and weights (NH, n, n) and the (n, n) mask, in float32
    double derived_trace_bytes = 0;   // its four derived (NH, n, n) steps (scaled, masked, shifted, exp) as buffers: computed when read, never held together
    double materialized_bytes = 0;    // a plain implementation's peak: scores and weights, (NH, n, n) each
    double streaming_bytes = 0;       // online softmax over key blocks: Q, K, V, Z and per-row max and sum
    // The KV cache of generation at dtype: K and V, KVH heads of hs each, per token.
    double kv_token_layer_bytes = 0;  // one token, one layer: 2·KVH·hs·bytes
    double kv_token_bytes = 0;        // one token, every layer: x L
    double kv_context_layer_bytes = 0;  // the whole context (n tokens), one layer, every sequence: x n x B
    double kv_context_bytes = 0;        // the same, every layer: x n x L x B
};

// Throws InputError (naming `origin`) when the spec is inconsistent: heads not
// dividing d_model, kv_heads not dividing heads, a window without a size.
CostReport estimate_cost(const CostSpec& spec, const std::string& origin = "cost");

// Keys the window lets query i of n see.
std::uint64_t keys_seen(Window w, std::uint64_t window_size, std::uint64_t n, std::uint64_t i);

}  // namespace attntrace

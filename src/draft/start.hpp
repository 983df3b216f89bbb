// Where a drafted example's run starts, and the conventions tried from there.
//
// An article's worked example starts wherever it stops giving numbers and
// starts computing them: from the tokens' embeddings and the weights (X and
// W_Q, W_K, W_V), from printed Q, K and V, from a printed score matrix, or
// from printed attention weights (rows that sum to 1). Each is a `Start`:
// the arrays the lesson reads as its inputs (or `given`), its tokens and
// widths. `conventions_for` lists what the search tries from it; the base
// lesson is the start under one convention, before the search adds the
// article's own chain and rounding (draft.cpp).
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "draft/printed.hpp"
#include "trace/json_text.hpp"

namespace attntrace {

enum class StartKind {
    embed,    // X and W_Q, W_K, W_V: the run from the embeddings
    qkv,      // Q, K (and V) printed: the run from the scores
    scores,   // a score matrix, or one row of it: the run from the scaling (or the mask)
    weights,  // attention weights (rows summing to 1): the run from the mixing
    mask,     // a mask printed alone (glyphs, words, or 0 and -inf): the run of the mask stage over zero scores
    positions,  // a table of sinusoidal positional encodings (its first row 0, 1, 0, 1, ...): the embed stage's
                // positions, added to the embeddings printed just before it (else to zeros)
    norm,     // Add & Norm worked by hand: x and z printed with their sum x + z (the run from the residual), or
              // a row printed before its mean, σ or normalized values (the run from the norm)
};

struct Start {
    StartKind kind = StartKind::embed;
    // The arrays the lesson reads, by kind: X, W_Q, W_K, W_V | Q, K, V | S, V | A, V (V absent: npos) | the mask
    // (claimed, not read: the run is the mask of its tokens) | norm: x, z (given as the block's input and the
    // attention's output) or the row alone (given as the residual the norm reads) | positions: the table, and
    // the embeddings it is added to (absent: npos).
    std::vector<std::size_t> inputs;
    std::vector<std::string> tokens;        // one per key
    std::vector<std::string> query_tokens;  // set when the printed rows are not the tokens (one row of a matrix)
    std::size_t d_model = 0, d_k = 0;       // d_k: 0 when it is d_model / heads
    bool out_in = false;                    // embed: W^Q, W^K, W^V printed d_k x d_model (nn.Linear's weight): read as x·Wᵀ
    bool identity = false;                  // embed: no weights printed, attention on X itself (Q = K = V = X): inputs[1..3] npos
    bool pe_halves = false;                 // positions: the table's sines in its first half, its cosines in the second
    bool x_columns = false;                 // embed: X printed a token per column (d_model x T, as q = W_Q x writes it): read transposed
    // embed: the block's later weights printed by name (W^O, W_1, b_1, W_2, b_2, γ, β), their arrays
    // inputs[4...], in this order; the run goes on through Add & Norm (and the FFN when W_1 and W_2 are printed)
    std::vector<std::string> later;
    std::size_t d_ff = 0;                   // W_1's columns, when printed
    std::size_t d_out = 0;                  // W^O's output width when not d_model (a module's out_proj): the run ends at "out"
    std::vector<std::string> reasons;       // why each input was read as it was
    // mask: a sentence's row over every token (masks.hpp's expand_row), and the printed list its tokens are
    std::optional<PrintedArray> drawn;
    std::size_t token_list = static_cast<std::size_t>(-1);

    std::size_t first() const;              // the earliest input
    bool has_v() const;
    void without_v();                       // the run to the weights only
    std::string describe() const;           // "X and the weights", "Q, K and V", ...
};

// One convention of the grid.
struct Conventions {
    bool scale = true;
    std::string mask = "none";
    bool transposed = false;       // embed: the weights as nn.Linear prints them (out_in)
    std::string given_at;          // scores: the step the printed scores are given as ("hook_scores_raw", ...)
    std::size_t heads = 1;         // qkv: the heads Q, K and V are split into
    std::string activation;        // embed with a printed FFN: "relu" or "gelu"
    bool sinusoidal = false;       // embed: sinusoidal positions added to X (X + PE enters the block)
    bool pe_halves = false;        // positions: every sine first, then every cosine (layout "half"), not interleaved
    OrderedJson mask_json;         // mask: config.mask as the lesson writes it (null: `mask` itself)
    std::string hint;              // mask: the word around the printed mask that put this kind first, or ""
    bool max_shift = true;         // scores, qkv: the softmax's exp of s - max (PyTorch's), or of s itself (by hand)
    bool mask_raw = false;         // embed, qkv, raw scores: the mask applied to the raw scores, before the scaling (mask_at raw)
    bool unbiased = false;         // norm: the variance over n - 1 (torch's .var() and .std()), not n (LayerNorm's)
    double eps = 1e-5;             // norm: nn.LayerNorm's, or 0 (by hand)
    std::string describe(StartKind kind) const;

private:
    std::string describe_grid(StartKind kind) const;  // describe() without mask_raw
};

// Every start the article's arrays allow, in the order of the text (the
// earliest input first): at most one from the embeddings and its weights
// and one from X alone (Q = K = V = X, where X is named so), then each Q/K/V
// triple, each score matrix and each matrix of weights.
std::vector<Start> find_starts(const Article& art);

// The conventions tried from `s`, the grid's first the one kept on a tie.
std::vector<Conventions> conventions_for(const Article& art, const Start& s);

// The lesson of `s` under `c`: tokens, config, run, inputs, weights and given.
OrderedJson base_lesson(const Article& art, const Start& s, const Conventions& c);

// Shared with the search.
std::string lesson_id(const std::string& file);       // the article's file name as a lesson id
// A claim id from `base` (letters, digits, '-' and '_' kept; "array" when none), "-2", "-3" ... after its first use.
std::string claim_id(const std::string& base, std::map<std::string, int>& used);
bool is_table(const PrintedArray& a);                 // rows of equal length, not elided, not a product's factor
std::string bare(const std::string& name);            // "W^{Q}" -> "WQ"
std::string without_markup(const std::string& name);  // LaTeX's markup commands left out: "\\text{FFN}" -> "{FFN}"
int weight_role(const std::string& name);
bool names_input(const std::string& name);            // a name of the embeddings: X, E, x, H, "inputs", "embeddings"             // 0, 1, 2 for a name of W_Q, W_K, W_V ("W^Q", "Weights for key"); -1 otherwise
// An input or weight printed with this many decimals or more was printed by code from values of more
// digits (PyTorch prints 4): the drafted lesson's input_decimals names it.
inline constexpr int kInputPrintDecimals = 4;
// A computed step a run starts from (printed Q and K, scores, weights) printed with this many decimals or
// more was rounded from the article's own run (an exact one, by hand, prints 0 or 1): input_decimals names
// it too, so that a number the article computed from its unrounded values is not reported wrong.
inline constexpr int kGivenPrintDecimals = 2;
OrderedJson values_json(const PrintedArray& a);        // a scalar, a vector or rows, as a lesson writes them
OrderedJson input_json(const PrintedArray& a);         // values_json, or the generator of an array the code generates
int decimals_of(const PrintedArray& a);                // the most decimals any of its numbers shows (at most 8)
bool sums_to_one(const PrintedArray& a);               // every row non-negative and summing to 1 within its rounding

}  // namespace attntrace

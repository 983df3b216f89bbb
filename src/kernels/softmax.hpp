// Row softmax that records its internals, as the trace shows them.
#pragma once

#include <cstddef>

namespace attntrace {

// x, shifted, e, out: (rows, cols)   row_max, row_sum: (rows)
// pass 1: m = max_j x[j]
// pass 2: shifted = x - m;  e = exp(shifted);  s = Σ e
// pass 3: out = e / s
// A row whose every cell is -inf (every key masked) has no distribution: it
// gets m = -inf, shifted = -inf, e = 0, s = 0 and out = 0, never NaN.
// Returns the number of such rows, so the caller can warn.
// Defined as the passes below, one after the other.
std::size_t softmax_rows_ref(const float* x, std::size_t rows, std::size_t cols, float* row_max,
                             float* shifted, float* e, float* row_sum, float* out);

// The same m, s and weights, in place: x (rows, cols) becomes the weights, and
// the shifted scores and exps are not kept. Bit for bit softmax_rows_ref's
// row_max, row_sum and out (its passes, in its order): the run of a trace
// that derives the shifted scores and exps (trace/derived.hpp) from m.
std::size_t softmax_rows_inplace_ref(float* x, std::size_t rows, std::size_t cols, float* row_max, float* row_sum);
// e = exp(x), row by row: the exps softmax_rows_ref writes from its shifted
// scores (exp_ref over rows x cols), bit for bit. Its SIMD twin splits each row
// into the lanes and tail of softmax_rows', so that it reproduces those too.
void exp_rows_ref(const float* x, float* e, std::size_t rows, std::size_t cols);

// The passes, one step each. The pipeline runs them one by one when a lesson
// gives or rounds an intermediate (an article that rounds e^x before
// dividing), so that the next pass reads the rounded values.
void row_max_ref(const float* x, std::size_t rows, std::size_t cols, float* m);             // m: (rows)
void shift_rows_ref(const float* x, const float* m, std::size_t rows, std::size_t cols,
                    float* shifted);                                                       // x - m; -inf rows stay -inf
void exp_ref(const float* x, float* y, std::size_t n);                                      // exp(-inf) = 0
void row_sum_ref(const float* e, std::size_t rows, std::size_t cols, float* s);             // s: (rows)
void divide_rows_ref(const float* e, const float* s, std::size_t rows, std::size_t cols,
                     float* out);                                                          // e / s; s = 0 gives 0

// The other normalisers (config.normalizer), scalar only: a row of T weights
// next to the T² of the scores, far from a block's time.
// "sum": s_i = Σ_j x[i,j] over the cells that are not -inf (blocked), j ascending.
void row_sum_unblocked_ref(const float* x, std::size_t rows, std::size_t cols, float* s);  // s: (rows)
// "sum": out = x / s, blocked cells 0. A zero s with cells not blocked gives
// inf or NaN there, which the run refuses naming the cell: no weights exist.
void divide_rows_unblocked_ref(const float* x, const float* s, std::size_t rows, std::size_t cols, float* out);
// "none": out = x, blocked cells 0.
void unblock_ref(const float* x, float* out, std::size_t n);

// config.mask_at "weights": y_h = a_h ⊙ keep, each head's weights times the
// mask of 1 (visible) and 0 (blocked)   a, y: (NH, plane)   keep: (plane)
void zero_blocked_heads_ref(const float* a, const float* keep, float* y, std::size_t NH, std::size_t plane);

}  // namespace attntrace

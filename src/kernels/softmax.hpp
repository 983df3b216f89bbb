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
std::size_t softmax_rows_ref(const float* x, std::size_t rows, std::size_t cols, float* row_max,
                             float* shifted, float* e, float* row_sum, float* out);

}  // namespace attntrace

// Token-labelled tables of a step's values, for the terminal.
#pragma once

#include "core/decimal.hpp"

#include <cstddef>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "core/tensor.hpp"
#include "trace/derived.hpp"

namespace attntrace {

// The cells a mask blocks, for a view of the weights beside it: M's -inf
// cells (M added to the scores), or its 0s when it multiplies the weights
// (config.mask_at "weights"). M is (rows, cols) of the map or table it is
// given to; any other shape, or none, blocks nothing. A blocked weight is
// drawn as "×", not as the 0.00 its softmax gave it.
inline constexpr const char* kBlockedMark = "×";
struct Blocked {
    const Tensor* m = nullptr;
    bool multiplies = false;
    bool at(std::size_t r, std::size_t c) const;
    bool fits(std::size_t rows, std::size_t cols) const {
        return m && m->rank() == 2 && m->shape[0] == rows && m->shape[1] == cols;
    }
};

// Big tensors are summarised as numpy does (np.set_printoptions defaults:
// threshold 1000, edgeitems 3): above `threshold` cells, every axis longer
// than 2·edge_items shows its first and last edge_items entries around
// "...". Independently, columns are dropped from the middle until each line
// fits `width` display columns (0: no limit). `full` turns both off.
struct TableOptions {
    int precision = 4;
    std::size_t threshold = 1000;
    std::size_t edge_items = 3;
    std::size_t width = 0;
    bool full = false;
    std::string indent = "    ";
    Blocked blocked;  // cells shown as "×" (the weights beside their mask)
    bool caption = true;  // the values' format said above the table (notation_caption)
};

// Formats `t` (rank 0..3) with per-axis labels. A rank-3 tensor is shown as
// one table per slice of its `head` axis, captioned "head h0". One format for
// every cell: `precision` decimals, or, when a value shown reaches
// kScientificFrom (core/decimal.hpp), scientific notation for all; the
// caption above the tables says which (notation_caption).
std::string format_tensor(const Tensor& t, const std::vector<std::string>& axes,
                          const std::vector<std::vector<std::string>>& labels, const TableOptions& opt);

// The same, written to `os` a line at a time from `t`'s rows: only the rows
// shown are read (a derived step's computed for those alone), and at most a
// line of text is held, whatever the step's size and --full.
void write_tensor(std::ostream& os, StepRows& t, const std::vector<std::string>& axes,
                  const std::vector<std::vector<std::string>>& labels, const TableOptions& opt);

// format_number (one number as the tables show it): core/decimal.hpp.

// What a table says of its numbers: "values to 4 decimals", or "values in
// scientific notation, 5 significant digits (one reaches 1e8)".
std::string notation_caption(Notation notation, int precision);

// Terminal columns a UTF-8 string takes: one per code point (no wide glyphs
// here), none for ANSI colour escapes.
std::size_t display_width(std::string_view s);

// Indices of an axis of n entries to show: all, or the first and last `edge`
// with kGap between. kGap marks the "..." row or column.
inline constexpr std::size_t kGap = static_cast<std::size_t>(-1);
std::vector<std::size_t> shown_indices(std::size_t n, std::size_t edge, bool summarize);

// Columns to show so that a row of `label_w` + each shown column's
// `sep + cell_w` (and a gap marker of gap_w) fits `width`: starts from
// `wanted` and drops columns from the middle, keeping at least one at each end.
std::vector<std::size_t> fit_columns(std::vector<std::size_t> wanted, std::size_t n, std::size_t label_w,
                                     std::size_t cell_w, std::size_t gap_w, std::size_t width);

}  // namespace attntrace

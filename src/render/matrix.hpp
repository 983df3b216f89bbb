// Token-labelled tables of a step's values, for the terminal.
#pragma once

#include <string>
#include <vector>

#include "core/tensor.hpp"

namespace attntrace {

struct TableOptions {
    int precision = 4;
    std::size_t max_rows = 16;  // more rows are elided in the middle, as numpy does
    std::size_t max_cols = 12;
    std::string indent = "    ";
};

// Formats `t` (rank 0..3) with per-axis labels. A rank-3 tensor is shown as
// one table per slice of its `head` axis, captioned "head h0".
std::string format_tensor(const Tensor& t, const std::vector<std::string>& axes,
                          const std::vector<std::vector<std::string>>& labels, const TableOptions& opt);

// One number as the tables show it ("-inf" for blocked cells).
std::string format_number(float x, int precision);

}  // namespace attntrace

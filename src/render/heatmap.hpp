// Heatmaps of attention weights, masks and scores for the terminal: 24-bit
// ANSI background colours with a legend, or shading characters when colour
// is off. Pure: the caller decides colour and width (the CLI looks at the
// terminal; nothing here does).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/tensor.hpp"

namespace attntrace {

// What the output can show.
struct TermStyle {
    bool color = false;      // 24-bit ANSI escapes allowed
    std::size_t width = 80;  // display columns; 0: no limit
};

// --color=always: on; never: off; auto: on only when standard output is a
// terminal, NO_COLOR is unset or empty (no-color.org) and TERM is not "dumb".
// `no_color` and `term` are the environment's values (null when unset).
bool decide_color(std::string_view choice, bool stdout_is_terminal, const char* no_color, const char* term);

struct HeatmapOptions {
    TermStyle style;
    bool full = false;            // every row and column, whatever the width
    std::size_t threshold = 1000; // as TableOptions: summarise above this many cells
    std::size_t edge_items = 3;
    // The colour scale: weights and masks use [0, 1] (a mask's 0 is "visible");
    // scores scale from their finite minimum to their maximum.
    bool auto_range = false;
    bool mask = false;  // a mask: narrow cells without numbers, 0 (visible) as the top of the scale (█), -inf (blocked) as "×"
    bool keep_mask = false;  // with mask: M multiplies the weights (config.mask_at "weights"): 1 visible, 0 blocked
    std::string indent = "    ";
};

// A (rows, cols) or (NH, rows, cols) tensor as a heatmap: each cell its
// value (2 decimals) on its colour, or after its shading character (a mask's
// cells: █ where visible, no number); -inf cells as "×" (blocked by the
// mask); then one legend line.
std::string format_heatmap(const Tensor& t, const std::vector<std::string>& axes,
                           const std::vector<std::vector<std::string>>& labels, const HeatmapOptions& opt);

}  // namespace attntrace

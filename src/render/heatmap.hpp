// Heatmaps of attention weights, masks and scores for the terminal, in two
// forms: cells (each value printed on its colour, or after a shading
// character) for a few tokens, and dense (one character per cell, two rows
// per line with half blocks, pooled to the width) for many. 24-bit or
// 256-colour ANSI escapes, or shading characters when colour is off. Pure:
// the caller decides colour and width (the CLI looks at the terminal;
// nothing here does).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/tensor.hpp"
#include "render/matrix.hpp"

namespace attntrace {

// What the output can show.
struct TermStyle {
    bool color = false;      // ANSI colour escapes allowed
    bool truecolor = true;   // 24-bit colours; false: the 256-colour palette
    std::size_t width = 80;  // display columns; 0: no limit
};

// --color=always: on; never: off; auto: on only when standard output is a
// terminal, NO_COLOR is unset or empty (no-color.org) and TERM is not "dumb".
// `no_color` and `term` are the environment's values (null when unset).
bool decide_color(std::string_view choice, bool stdout_is_terminal, const char* no_color, const char* term);

// cells: every value printed on its colour (or after its shade); dense: one
// character per cell; automatic: cells when every column fits the width
// with its number, else dense.
enum class HeatmapMode { automatic, cells, dense };
// A dense map wider than the width shows each f x f block of cells as one:
// its largest value (a single strong weight stays visible) or its mean.
enum class Pooling { max, mean };

struct HeatmapOptions {
    TermStyle style;
    HeatmapMode mode = HeatmapMode::automatic;
    Pooling pool = Pooling::max;
    Blocked blocked;  // the weights' mask: its blocked cells drawn as masked, not as 0
    std::vector<std::string> head_captions;  // per head, instead of "head h0" ("head h0 · kv0" under GQA)
    bool full = false;            // every row and column, whatever the width
    std::size_t threshold = 1000; // as TableOptions: summarise above this many cells
    std::size_t edge_items = 3;
    // The colour scale: weights and masks use [0, 1] (a mask's 0 is "visible");
    // scores scale from their finite minimum to their maximum.
    bool auto_range = false;
    bool mask = false;  // a mask: narrow cells without numbers, 0 (visible) as the top of the scale (█), -inf (blocked) as "×"
    bool keep_mask = false;  // with mask: M multiplies the weights (config.mask_at "weights"): 1 visible, 0 blocked
    bool blockable = true;   // the legend names the blocked mark (×); false for a map that has none (a patching map)
    std::string indent = "    ";
};

// A (rows, cols) or (NH, rows, cols) tensor as a heatmap, in the form
// opt.mode picks. Cells: each cell its value (2 decimals) on its colour, or
// after its shading character (a mask's cells: █ where visible, no number);
// -inf cells as "×" (blocked by the mask). Dense: render/dense_map.hpp. Then
// the legend.
std::string format_heatmap(const Tensor& t, const std::vector<std::string>& axes,
                           const std::vector<std::vector<std::string>>& labels, const HeatmapOptions& opt);

// The same from a step's rows (trace/derived.hpp): the values are read a
// block of rows at a time (a derived step's computed as read), never copied
// whole; a map wider than kMaxWholeMapColumns (dense_map.hpp) is summarised
// or pooled even under opt.full.
std::string format_heatmap(StepRows& t, const std::vector<std::string>& axes,
                           const std::vector<std::vector<std::string>>& labels, const HeatmapOptions& opt);

// Whether opt.mode draws a map of `cols` columns, beside row labels up to
// `label_w` wide, dense: asked to, or automatic and the cells would not fit.
bool draws_dense(std::size_t cols, std::size_t label_w, const HeatmapOptions& opt);

}  // namespace attntrace

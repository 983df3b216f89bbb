// The dense heatmap: one character per cell, so that 64 tokens' causal
// triangle fits an 80-column terminal whole. In colour, two rows per line:
// "▀" with the upper row's colour as foreground and the lower row's as
// background (a character cell is about twice as tall as wide, so each cell
// is square). Without colour, one row per line, each cell a shading
// character (" ░▒▓█", fifths of the scale) or "×" when masked. Wider than the
// width, the map is pooled: each f x f block of cells becomes one (its max
// or mean over the cells the mask lets through), f the smallest that fits,
// the same for rows and columns so the shape stays.
#pragma once

#include <cstddef>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "core/tensor.hpp"
#include "pipeline/plan.hpp"
#include "trace/derived.hpp"

#include "render/heat_colour.hpp"

namespace attntrace {

// A map drawn whole (--full, or no width) has at most this many columns;
// wider, it is pooled down to it like a map wider than the terminal. 512
// columns are more than a 4K screen shows at a 7-pixel font (~550), and
// keep a head's map under 512 x 512 characters (a few MB of text with colour
// escapes), where an 8192-token head drawn whole was 67M characters. The
// plan counts the text of such a map (pipeline/plan.hpp: view_bytes).
inline constexpr std::size_t kMaxWholeMapColumns = kViewMaxMapColumns;

struct DenseMap {
    std::string text;     // the lines, each beginning with opt.indent
    std::size_t pool = 1; // f: each character's cells along each axis
};

// One pooled cell: the value shown, or none when the mask blocks all of its cells.
using Pooled = std::optional<float>;
static_assert(sizeof(Pooled) <= kViewPooledCellBytes, "the plan counts a pooled cell at kViewPooledCellBytes");

// A (rows, cols) map's cells pooled f x f: (prows, pcols), row-major.
struct PooledMap {
    std::vector<Pooled> cells;
    std::size_t prows = 0, pcols = 0, pool = 1;
};

// The finite values' range (a score map's colour scale), widened as values are read.
struct FiniteRange {
    float lo = std::numeric_limits<float>::infinity(), hi = -std::numeric_limits<float>::infinity();
    bool empty() const { return lo > hi; }
};

// The pooling factor f of a map `cols` wide: the smallest that fits the
// width (opt.style.width; with --full or no width, kMaxWholeMapColumns).
std::size_t pool_factor(std::size_t rows, std::size_t cols, const HeatmapOptions& opt);

// The (rows, cols) map of v's values from flat index `offset` (row stride
// cols), pooled f x f: each pooled cell the max or the mean (opt.pool) of its
// cells the mask lets through. Every value is read once, f rows at a time,
// the pooled rows shared among the kernels' threads; `range`, when given, is
// widened by every finite value read (masked or not, as the scale has it).
PooledMap pool_map(const StepRows& v, std::size_t offset, std::size_t rows, std::size_t cols, std::size_t f,
                   const HeatmapOptions& opt, FiniteRange* range = nullptr);

// A pooled map drawn: a ruler of key positions, then the lines, each led by
// the position of its first query.
DenseMap draw_dense(const PooledMap& map, std::size_t rows, const Scale& scale, const HeatmapOptions& opt);

// pool_map, then draw_dense, with f from pool_factor.
DenseMap dense_map(const StepRows& v, std::size_t offset, std::size_t rows, std::size_t cols, const Scale& scale,
                   const HeatmapOptions& opt);

// Whether a (NH, rows, cols) tensor's heads fit side by side unpooled
// (dense_heads), captioned so: two or more to a row of maps.
bool heads_side_by_side(std::size_t NH, std::size_t rows, std::size_t cols, const std::vector<std::string>& captions,
                        const HeatmapOptions& opt);

// The heads' maps (pooled by 1: heads_side_by_side holds) side by side,
// captioned, as many to a row of maps as the width holds (two spaces apart),
// so that a lesson's heads are compared at a glance.
std::string dense_heads(const std::vector<PooledMap>& heads, std::size_t rows, const std::vector<std::string>& captions,
                        const Scale& scale, const HeatmapOptions& opt);

// The width row labels take: the digits of the last query position.
std::size_t dense_label_width(std::size_t rows);

// The legend's lines for a dense map pooled by f.
std::string dense_legend(const Scale& scale, const HeatmapOptions& opt, std::size_t pool);

}  // namespace attntrace

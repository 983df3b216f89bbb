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
#include <string>
#include <vector>

#include "core/tensor.hpp"

#include "render/heat_colour.hpp"

namespace attntrace {

struct DenseMap {
    std::string text;     // the lines, each beginning with opt.indent
    std::size_t pool = 1; // f: each character's cells along each axis
};

// The (rows, cols) map at base (row stride rs): a ruler of key positions,
// then the lines, each led by the position of its first query.
DenseMap dense_map(const float* base, std::size_t rows, std::size_t cols, std::size_t rs, const Scale& scale,
                   const HeatmapOptions& opt);

// A (NH, rows, cols) tensor's heads side by side, captioned, as many to a
// row of maps as the width holds unpooled (two spaces apart), so that a
// lesson's heads are compared at a glance; "" when fewer than two fit.
std::string dense_heads(const Tensor& t, const std::vector<std::string>& captions, const Scale& scale,
                        const HeatmapOptions& opt);

// The width row labels take: the digits of the last query position.
std::size_t dense_label_width(std::size_t rows);

// The legend's lines for a dense map pooled by f.
std::string dense_legend(const Scale& scale, const HeatmapOptions& opt, std::size_t pool);

}  // namespace attntrace

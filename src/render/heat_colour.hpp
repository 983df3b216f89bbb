// What the two heatmaps (cells and dense, render/heatmap.cpp and
// render/dense_map.cpp) share: the colour ramp, its scale, ANSI colour escapes
// at 24 bits or in the 256-colour palette, and which cells a mask blocks.
#pragma once

#include <cmath>
#include <cstddef>
#include <string>

#include "render/heatmap.hpp"

namespace attntrace {

struct Rgb {
    int r, g, b;
};

// Dark blue → teal → green → yellow, in the spirit of viridis (our own anchors):
// dark for 0, bright for 1, readable for colour-blind readers. v in [0, 1].
Rgb ramp(double v);

// Masked cells in colour: a neutral grey, no hue of the ramp, so a blocked
// cell never reads as a small weight (the ramp's darkest is (40, 20, 80)).
inline constexpr Rgb kMaskedGrey{70, 70, 70};

// "ESC[48;2;R;G;Bm" (background) or "ESC[38;2;...m" (foreground); with
// style.truecolor false the nearest of the 256-colour palette, "ESC[48;5;Nm".
// For a fixed colour (the masked grey); a place on the scale: scale_escape.
std::string colour_escape(Rgb c, bool background, const TermStyle& style);
// The palette index (16..255) nearest to c: the 6x6x6 cube or the grey ramp.
int palette_256(Rgb c);

// The 256-colour scale: v in [0, 1] to one of ramp_256_steps() palette
// indices in equal shares, each lighter than the one before, along the
// ramp's hues, none a grey (heat_colour.cpp: why not the nearest to ramp(v)).
int ramp_256(double v);
int ramp_256_steps();
// The RGB xterm shows for a palette index (16..255).
Rgb palette_rgb(int index);
// Place v of the scale as the terminal shows it: ramp(v) at 24 bits, else
// the palette's ramp_256(v); and its escape, as colour_escape's.
Rgb scale_colour(double v, const TermStyle& style);
std::string scale_escape(double v, bool background, const TermStyle& style);

// The colour scale of a map: weights and masks [0, 1]; scores their finite range.
struct Scale {
    float lo = 0, hi = 1;
    double norm(float x) const { return hi > lo ? (static_cast<double>(x) - lo) / (static_cast<double>(hi) - lo) : 1.0; }
};

// A legend's bound x, written as every bound of scale s: two decimals
// ("0.20"), or, when the scale reaches beyond what fixed decimals print in a
// few characters (1e5), all in scientific notation with 2 significant digits
// ("3.4e+38", "1.0e+00"): one format for the legend.
std::string legend_number(double x, const Scale& s);
bool legend_scientific(const Scale& s);

// Whether cell (r, c) of a (rows, cols) map is masked: its value -inf, a
// mask's 0 when the mask multiplies the weights, or blocked by opt.blocked.
inline bool masked_cell(float x, std::size_t r, std::size_t c, const HeatmapOptions& opt) {
    return (std::isinf(x) && x < 0) || (opt.mask && opt.keep_mask && x == 0.0f) || opt.blocked.at(r, c);
}

}  // namespace attntrace

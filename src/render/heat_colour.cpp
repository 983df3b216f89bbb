#include "render/heat_colour.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>

namespace attntrace {

namespace {

// xterm's 6x6x6 cube has the levels 0, 95, 135, 175, 215, 255; its grey ramp 8, 18, ..., 238.
constexpr std::array<int, 6> kCubeLevels = {0, 95, 135, 175, 215, 255};

// The 256-colour scale, dark to light along the ramp's hues: navy, blue,
// teal, green, yellow; cube colours only, so that no step is a grey (the
// masked cells' colour). Each is lighter than the one before by relative
// luminance and by luma alike (tests/test_heat_scale.cpp computes it from the
// palette). Rounding ramp(v) to the nearest palette colour instead is not
// monotonic: the blue (50, 80, 140) and its neighbours round to the lilac 60
// (95, 95, 135), lighter than the blues above it and close to the grey.
constexpr std::array<int, 14> kRamp256 = {
    17,   // (0, 0, 95)
    18,   // (0, 0, 135)
    19,   // (0, 0, 175)
    24,   // (0, 95, 135)
    25,   // (0, 95, 175)
    30,   // (0, 135, 135)
    36,   // (0, 175, 135)
    71,   // (95, 175, 95)
    107,  // (135, 175, 95)
    112,  // (135, 215, 0)
    148,  // (175, 215, 0)
    184,  // (215, 215, 0)
    220,  // (255, 215, 0)
    226,  // (255, 255, 0)
};

// A colour whose channels differ by at most this is neutral (a grey).
constexpr int kNeutralSpread = 12;

}  // namespace

Rgb ramp(double v) {
    static constexpr std::array<Rgb, 5> anchors = {{{40, 20, 80}, {50, 80, 140}, {30, 140, 130}, {110, 190, 70}, {245, 225, 40}}};
    v = std::clamp(v, 0.0, 1.0) * (anchors.size() - 1);
    const std::size_t i = std::min<std::size_t>(static_cast<std::size_t>(v), anchors.size() - 2);
    const double f = v - i;
    auto mix = [&](int a, int b) { return static_cast<int>(std::lround(a + (b - a) * f)); };
    return {mix(anchors[i].r, anchors[i + 1].r), mix(anchors[i].g, anchors[i + 1].g), mix(anchors[i].b, anchors[i + 1].b)};
}

int ramp_256(double v) {
    if (std::isnan(v)) v = 0;
    // Equal shares of the scale; 1 (the top) in the last.
    const double at = std::clamp(v, 0.0, 1.0) * kRamp256.size();
    return kRamp256[std::min(static_cast<std::size_t>(at), kRamp256.size() - 1)];
}

int ramp_256_steps() { return static_cast<int>(kRamp256.size()); }

Rgb palette_rgb(int index) {
    if (index >= 232) {
        const int g = 8 + 10 * (std::min(index, 255) - 232);
        return {g, g, g};
    }
    const int i = std::max(index, 16) - 16;
    return {kCubeLevels[i / 36], kCubeLevels[(i / 6) % 6], kCubeLevels[i % 6]};
}

Rgb scale_colour(double v, const TermStyle& style) { return style.truecolor ? ramp(v) : palette_rgb(ramp_256(v)); }

std::string scale_escape(double v, bool background, const TermStyle& style) {
    if (style.truecolor) return colour_escape(ramp(v), background, style);
    return fmt::format("\x1b[{};5;{}m", background ? 48 : 38, ramp_256(v));
}

int palette_256(Rgb c) {
    const auto& levels = kCubeLevels;
    auto nearest_level = [&](int v) {
        std::size_t best = 0;
        for (std::size_t i = 1; i < levels.size(); ++i)
            if (std::abs(levels[i] - v) < std::abs(levels[best] - v)) best = i;
        return best;
    };
    auto dist = [&](int r, int g, int b) { return (r - c.r) * (r - c.r) + (g - c.g) * (g - c.g) + (b - c.b) * (b - c.b); };
    const std::size_t r = nearest_level(c.r), g = nearest_level(c.g), b = nearest_level(c.b);
    const int cube = 16 + static_cast<int>(36 * r + 6 * g + b);
    const int cube_d = dist(levels[r], levels[g], levels[b]);
    // The grey ramp only for a neutral colour: nearer in distance, a grey would
    // take the hue from a dark colour and make it read as a masked cell.
    const int spread = std::max({c.r, c.g, c.b}) - std::min({c.r, c.g, c.b});
    if (spread > kNeutralSpread) return cube;
    const int grey_i = std::clamp(((c.r + c.g + c.b) / 3 - 8 + 5) / 10, 0, 23), grey = 8 + 10 * grey_i;
    return dist(grey, grey, grey) < cube_d ? 232 + grey_i : cube;
}

std::string colour_escape(Rgb c, bool background, const TermStyle& style) {
    if (style.truecolor) return fmt::format("\x1b[{};2;{};{};{}m", background ? 48 : 38, c.r, c.g, c.b);
    return fmt::format("\x1b[{};5;{}m", background ? 48 : 38, palette_256(c));
}

}  // namespace attntrace

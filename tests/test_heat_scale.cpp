// The heat scale in 256 colours (TERM=tmux-256color, no COLORTERM): every
// place on the scale is a palette colour at least as light as the place
// below it's, the steps distinct, none the masked cells' grey. The palette's
// RGB and the lightness are computed here, not asked of the renderer.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "render/heat_colour.hpp"
#include "support.hpp"

using attntrace::test::run_cli;

namespace test_heat_scale {

namespace {

// Places on the scale checked, min to max: far more than the palette has steps.
constexpr int kPlaces = 1000;
// The legend draws 11 swatches (0, 0.1, ..., 1): each must be a colour of its
// own, so the scale needs at least that many.
constexpr std::size_t kMinDistinctColours = 11;

// xterm's 256-colour palette: 16..231 the 6x6x6 cube, 232..255 the grey ramp.
struct Colour {
    double r, g, b;
};
Colour xterm_rgb(int index) {
    static const int levels[6] = {0, 95, 135, 175, 215, 255};
    if (index >= 232) {
        const double g = 8 + 10 * (index - 232);
        return {g, g, g};
    }
    const int i = index - 16;
    return {double(levels[i / 36]), double(levels[(i / 6) % 6]), double(levels[i % 6])};
}

// Relative luminance (sRGB linearised, Rec. 709 weights).
double luminance(int index) {
    auto lin = [](double c) {
        c /= 255;
        return c <= 0.04045 ? c / 12.92 : std::pow((c + 0.055) / 1.055, 2.4);
    };
    const Colour c = xterm_rgb(index);
    return 0.2126 * lin(c.r) + 0.7152 * lin(c.g) + 0.0722 * lin(c.b);
}

// The palette indices of the background escapes in s ("ESC[48;5;Nm"), in order.
std::vector<int> backgrounds(const std::string& s) {
    std::vector<int> out;
    const std::regex bg("\x1b\\[48;5;([0-9]+)m");
    for (std::sregex_iterator it(s.begin(), s.end(), bg), end; it != end; ++it) out.push_back(std::stoi((*it)[1]));
    return out;
}

int index_of(double v) {
    attntrace::TermStyle style;
    style.color = true;
    style.truecolor = false;
    const std::vector<int> bg = backgrounds(attntrace::scale_escape(v, true, style));
    REQUIRE(bg.size() == 1);
    return bg.front();
}

}  // namespace

TEST_CASE("the 256-colour scale grows lighter from min to max, in distinct steps, none the masked grey", "[heatmap]") {
    attntrace::TermStyle style;
    style.color = true;
    style.truecolor = false;
    const std::vector<int> masked = backgrounds(attntrace::colour_escape(attntrace::kMaskedGrey, true, style));
    REQUIRE(masked.size() == 1);
    // A scale as a map of scores has it: from its min to its max.
    const attntrace::Scale scale{-1.5f, 2.25f};
    std::set<int> used;
    int before = -1;
    for (int k = 0; k < kPlaces; ++k) {
        const float x = scale.lo + (scale.hi - scale.lo) * static_cast<float>(k) / (kPlaces - 1);
        const int index = index_of(scale.norm(x));
        INFO("place " << k << " of " << kPlaces << ": index " << index << ", the one before " << before);
        CHECK(index >= 16);
        CHECK(index != masked.front());
        CHECK(index < 232);  // no grey of the palette: a grey reads as masked
        if (before >= 0) CHECK(luminance(index) >= luminance(before));
        before = index;
        used.insert(index);
    }
    CHECK(used.size() >= kMinDistinctColours);
    // Where the colour changes it changes lightness too: no two steps alike in it.
    std::vector<double> levels;
    for (int index : used) levels.push_back(luminance(index));
    std::sort(levels.begin(), levels.end());
    CHECK(std::adjacent_find(levels.begin(), levels.end()) == levels.end());
    // The ends are the ends.
    CHECK(index_of(0.0) == index_of(-0.5));
    CHECK(index_of(1.0) == index_of(7.0));
}

TEST_CASE("in tmux without COLORTERM the legend and the cells of the weights are in order of lightness", "[heatmap][cli]") {
    const auto r = run_cli({"--color", "always", "run", "003-3.1-ring-fell", "--steps", "hook_pattern"},
                           {"COLORTERM=", "TERM=tmux-256color"});
    REQUIRE(r.status == 0);
    REQUIRE(r.out.find("\x1b[48;2;") == std::string::npos);  // 256 colours, not 24 bits
    const std::size_t at = r.out.find("legend:");
    REQUIRE(at != std::string::npos);
    const std::string legend = r.out.substr(at, r.out.find('\n', at) - at);
    const std::vector<int> bar = backgrounds(legend);
    REQUIRE(bar.size() == 11);
    for (std::size_t i = 1; i < bar.size(); ++i) {
        INFO("swatch " << i << ": " << bar[i] << " after " << bar[i - 1]);
        CHECK(luminance(bar[i]) > luminance(bar[i - 1]));
    }
    // Each weight's cell: its number on its colour. Sorted by the number, the colours grow lighter.
    const std::regex cell("\x1b\\[48;5;([0-9]+)m\x1b\\[(?:30|97)m *([0-9.]+)\x1b\\[0m");
    std::vector<std::pair<double, int>> cells;
    const std::string map = r.out.substr(0, at);
    for (std::sregex_iterator it(map.begin(), map.end(), cell), end; it != end; ++it)
        cells.emplace_back(std::stod((*it)[2]), std::stoi((*it)[1]));
    REQUIRE(cells.size() >= 6);  // the visible weights of a 3 x 3 causal pattern
    std::sort(cells.begin(), cells.end());
    for (std::size_t i = 1; i < cells.size(); ++i) {
        INFO(cells[i - 1].first << " on " << cells[i - 1].second << ", " << cells[i].first << " on " << cells[i].second);
        CHECK(luminance(cells[i].second) >= luminance(cells[i - 1].second));
    }
}

}  // namespace test_heat_scale

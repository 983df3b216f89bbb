#include "render/heatmap.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "core/printable.hpp"
#include "render/matrix.hpp"

namespace attntrace {

namespace {

// Shading by fifths of the scale: the lowest fifth is blank.
constexpr std::array<const char*, 5> kShades = {" ", "░", "▒", "▓", "█"};
constexpr const char* kBlocked = "×";
constexpr std::size_t kCellW = 6;  // shade, space, "0.00"; or "  0.00" on a colour
// A mask's cells carry no number (all are 0 or -inf): "   █" / "   ×", so a
// pattern of 12 tokens fits 80 columns and reads as the pattern it is.
constexpr std::size_t kMaskCellW = 4;
std::size_t cell_width(bool mask) { return mask ? kMaskCellW : kCellW; }

struct Rgb {
    int r, g, b;
};

// Dark blue → teal → green → yellow, in the spirit of viridis (our own anchors):
// dark for 0, bright for 1, readable for colour-blind readers.
Rgb ramp(double v) {
    static constexpr std::array<Rgb, 5> anchors = {{{40, 20, 80}, {50, 80, 140}, {30, 140, 130}, {110, 190, 70}, {245, 225, 40}}};
    v = std::clamp(v, 0.0, 1.0) * (anchors.size() - 1);
    const std::size_t i = std::min<std::size_t>(static_cast<std::size_t>(v), anchors.size() - 2);
    const double f = v - i;
    auto mix = [&](int a, int b) { return static_cast<int>(std::lround(a + (b - a) * f)); };
    return {mix(anchors[i].r, anchors[i + 1].r), mix(anchors[i].g, anchors[i + 1].g), mix(anchors[i].b, anchors[i + 1].b)};
}

std::string on_colour(const std::string& text, Rgb c) {
    // black text on bright cells, white on dark ones
    const bool bright = 0.299 * c.r + 0.587 * c.g + 0.114 * c.b > 140;
    return fmt::format("\x1b[48;2;{};{};{}m{}{}\x1b[0m", c.r, c.g, c.b, bright ? "\x1b[30m" : "\x1b[97m", text);
}

// A legend's bound: as a cell shows it ("0.20"), or, beyond what fixed
// decimals print in a few characters, with 3 significant digits ("3.4e+38"):
// a scale near float32's limit reads as one, not as 39 digits.
constexpr double kCompactFrom = 1e5;
std::string legend_number(double x) {
    return std::fabs(x) < kCompactFrom ? fmt::format("{:.2f}", x) : fmt::format("{:.3g}", x);
}

struct Scale {
    float lo = 0, hi = 1;
    double norm(float x) const { return hi > lo ? (static_cast<double>(x) - lo) / (static_cast<double>(hi) - lo) : 1.0; }
};

std::string cell(float x, const Scale& s, const HeatmapOptions& opt) {
    const bool color = opt.style.color;
    const std::size_t w = cell_width(opt.mask);
    if ((std::isinf(x) && x < 0) || (opt.mask && opt.keep_mask && x == 0.0f))
        return fmt::format("{}{:>{}}{}", color ? "\x1b[2m" : "", kBlocked, w, color ? "\x1b[0m" : "");
    if (opt.mask)  // a visible cell (M = 0): the top of the scale
        return color ? on_colour(std::string(w, ' '), ramp(1.0)) : std::string(w - 1, ' ') + kShades[4];
    // Fixed decimals, as the tables; a value too large for them in a cell ("3e+38") fits its six columns.
    std::string num = std::fabs(x) < kCompactFrom ? fmt::format("{:.2f}", x) : fmt::format("{:.0e}", x);
    if (num == "-0.00") num = "0.00";
    const double v = opt.mask ? 1.0 : s.norm(x);
    if (color) {
        const std::size_t n = display_width(num);
        return on_colour(std::string(n < kCellW ? kCellW - n : 0, ' ') + num, ramp(v));
    }
    const std::size_t bin = std::min<std::size_t>(static_cast<std::size_t>(std::clamp(v, 0.0, 1.0) * 5), 4);
    const std::size_t n = display_width(num) + 1;
    return std::string(kShades[bin]) + std::string(n < kCellW ? kCellW - n : 0, ' ') + num;
}

// The legend's items, wrapped to the width.
std::string legend(const Scale& s, const HeatmapOptions& opt) {
    const bool color = opt.style.color;
    std::vector<std::string> items;
    if (opt.mask) {
        items.push_back((color ? on_colour("  ", ramp(1.0)) : std::string(kShades[4])) +
                        (opt.keep_mask ? " 1 (visible)" : " 0 (visible)"));
    } else if (color) {
        std::string bar = legend_number(s.lo) + " ";
        for (int i = 0; i <= 10; ++i) bar += on_colour(" ", ramp(i / 10.0));
        items.push_back(bar + " " + legend_number(s.hi));
    } else {
        // In double: hi - lo of two floats near their limit (3e38 - -3e38) is no float.
        const double lo = s.lo, span = static_cast<double>(s.hi) - lo;
        for (std::size_t i = 0; i < kShades.size(); ++i)
            items.push_back(fmt::format("{}{}{}", i ? kShades[i] : "' '", i + 1 < kShades.size() ? " <" : " ≤",
                                        legend_number(lo + span * static_cast<double>(i + 1) / 5.0)));
    }
    items.push_back(std::string(kBlocked) + (opt.mask && opt.keep_mask ? " 0 (masked: weight zeroed)" : " -inf (masked)"));
    std::string out = opt.indent + "legend:", line = out;
    for (const auto& item : items) {
        const std::size_t w = display_width(line) + 2 + display_width(item);
        if (opt.style.width && w > opt.style.width && line.size() > opt.indent.size() + 8) {
            out += "\n" + opt.indent + "       ";
            line = opt.indent + "       ";
        }
        out += "  " + item;
        line += "  " + item;
    }
    return out + "\n";
}

std::string one_map(const float* base, std::size_t rows, std::size_t cols, std::size_t rs, const std::vector<std::string>* rl,
                    const std::vector<std::string>* cl, const Scale& sc, const HeatmapOptions& opt, bool summarize) {
    // Labels are the lesson's tokens: printable, so that they cannot move the cursor or break a row.
    auto lab = [](const std::vector<std::string>* l, std::size_t i) {
        return l && i < l->size() ? printable((*l)[i]) : std::string();
    };
    auto rix = shown_indices(rows, opt.edge_items, summarize);
    auto cix = shown_indices(cols, opt.edge_items, summarize);
    std::size_t lw = 3;
    for (auto r : rix)
        if (r != kGap) lw = std::max(lw, display_width(lab(rl, r)));
    const std::size_t cw = cell_width(opt.mask);
    if (!opt.full) cix = fit_columns(cix, cols, opt.indent.size() + lw, cw + 1, 4, opt.style.width);
    auto fit = [cw](std::string s) {  // a column label cut to the cell, right-aligned
        std::string out;
        std::size_t n = 0;
        for (std::size_t i = 0; i < s.size() && n < cw; ++i) {
            out += s[i];
            if (i + 1 == s.size() || (static_cast<unsigned char>(s[i + 1]) & 0xC0) != 0x80) ++n;
        }
        return std::string(cw - n, ' ') + out;
    };
    std::string out = opt.indent + std::string(lw, ' ');
    for (auto c : cix) {
        out += ' ';
        out += c == kGap ? std::string("...") : fit(lab(cl, c));
    }
    out += "\n";
    for (auto r : rix) {
        if (r == kGap) {
            out += opt.indent + std::string(lw - 3, ' ') + "...\n";
            continue;
        }
        const std::string l = lab(rl, r);
        out += opt.indent + l + std::string(lw - display_width(l), ' ');
        for (auto c : cix) {
            out += ' ';
            out += c == kGap ? std::string("...") : cell(base[r * rs + c], sc, opt);
        }
        out += "\n";
    }
    return out;
}

}  // namespace

bool decide_color(std::string_view choice, bool stdout_is_terminal, const char* no_color, const char* term) {
    if (choice == "always") return true;
    if (choice == "never") return false;
    return stdout_is_terminal && (!no_color || !*no_color) && !(term && std::string_view(term) == "dumb");
}

std::string format_heatmap(const Tensor& t, const std::vector<std::string>& /*axes: the head axis comes first*/,
                           const std::vector<std::vector<std::string>>& labels, const HeatmapOptions& opt) {
    if (t.size() == 0 || t.rank() < 2) return "";
    Scale sc;
    if (opt.auto_range) {
        sc.lo = std::numeric_limits<float>::infinity();
        sc.hi = -sc.lo;
        for (float x : t.data)
            if (std::isfinite(x)) sc.lo = std::min(sc.lo, x), sc.hi = std::max(sc.hi, x);
        if (sc.lo > sc.hi) sc.lo = 0, sc.hi = 1;
    }
    auto lab = [&](std::size_t k) { return k < labels.size() ? &labels[k] : nullptr; };
    const bool summarize = !opt.full && t.size() > opt.threshold;
    const std::size_t R = t.shape[t.rank() - 2], C = t.shape[t.rank() - 1];
    std::string out;
    if (t.rank() == 2) {
        out = one_map(t.ptr(), R, C, C, lab(0), lab(1), sc, opt, summarize);
    } else {
        // (NH, rows, cols): one map per head, the head axis first as the trace keeps scores and weights
        for (std::size_t h : shown_indices(t.shape[0], opt.edge_items, summarize)) {
            if (h == kGap) {
                out += opt.indent + "... (more heads; --full shows them)\n";
                continue;
            }
            if (t.shape[0] > 1)
                out += opt.indent + "head " + (lab(0) && h < lab(0)->size() ? printable((*lab(0))[h]) : std::to_string(h)) + "\n";
            out += one_map(t.ptr() + h * R * C, R, C, C, lab(1), lab(2), sc, opt, summarize);
        }
    }
    return out + legend(sc, opt);
}

}  // namespace attntrace

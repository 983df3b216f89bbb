#include "render/heatmap.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "core/printable.hpp"
#include "kernels/kernels.hpp"
#include "render/dense_map.hpp"
#include "render/heat_colour.hpp"
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

// Beyond what fixed decimals print in a few characters, numbers are compact ("3.4e+38").
constexpr double kCompactFrom = 1e5;

// Text on the colour of place v on the scale.
std::string on_colour(const std::string& text, double v, const TermStyle& style) {
    // black text on bright cells, white on dark ones: the colour the terminal shows, at its depth
    const Rgb c = scale_colour(v, style);
    const bool bright = 0.299 * c.r + 0.587 * c.g + 0.114 * c.b > 140;
    return scale_escape(v, true, style) + (bright ? "\x1b[30m" : "\x1b[97m") + text + "\x1b[0m";
}

// `compact`: every number of the map in scientific notation (one reaches kCompactFrom).
std::string cell(float x, std::size_t r, std::size_t c, const Scale& s, const HeatmapOptions& opt, bool compact) {
    const bool color = opt.style.color;
    const std::size_t w = cell_width(opt.mask);
    if (masked_cell(x, r, c, opt))
        return fmt::format("{}{:>{}}{}", color ? "\x1b[2m" : "", kBlocked, w, color ? "\x1b[0m" : "");
    if (opt.mask)  // a visible cell (M = 0): the top of the scale
        return color ? on_colour(std::string(w, ' '), 1.0, opt.style) : std::string(w - 1, ' ') + kShades[4];
    // Fixed decimals, as the tables; when a value is too large for them in a cell, every cell in scientific
    // notation ("3e+38", "1e+00"): six columns, one format for the map.
    std::string num = compact ? fmt::format("{:.0e}", x) : fmt::format("{:.2f}", x);
    if (num == "-0.00") num = "0.00";
    const double v = opt.mask ? 1.0 : s.norm(x);
    if (color) {
        const std::size_t n = display_width(num);
        return on_colour(std::string(n < kCellW ? kCellW - n : 0, ' ') + num, v, opt.style);
    }
    const std::size_t bin = std::min<std::size_t>(static_cast<std::size_t>(std::clamp(v, 0.0, 1.0) * 5), 4);
    const std::size_t n = display_width(num) + 1;
    return std::string(kShades[bin]) + std::string(n < kCellW ? kCellW - n : 0, ' ') + num;
}

// The legend's items, wrapped to the width; the last says how the cells write their numbers.
std::string legend(const Scale& s, const HeatmapOptions& opt, bool compact) {
    const bool color = opt.style.color;
    std::vector<std::string> items;
    if (opt.mask) {
        items.push_back((color ? on_colour("  ", 1.0, opt.style) : std::string(kShades[4])) +
                        (opt.keep_mask ? " 1 (visible)" : " 0 (visible)"));
    } else if (color) {
        std::string bar = legend_number(s.lo, s) + " ";
        for (int i = 0; i <= 10; ++i) bar += on_colour(" ", i / 10.0, opt.style);
        items.push_back(bar + " " + legend_number(s.hi, s));
    } else {
        // In double: hi - lo of two floats near their limit (3e38 - -3e38) is no float.
        const double lo = s.lo, span = static_cast<double>(s.hi) - lo;
        for (std::size_t i = 0; i < kShades.size(); ++i)
            items.push_back(fmt::format("{}{}{}", i ? kShades[i] : "' '", i + 1 < kShades.size() ? " <" : " ≤",
                                        legend_number(lo + span * static_cast<double>(i + 1) / 5.0, s)));
    }
    if (opt.blockable)
        items.push_back(std::string(kBlocked) + (opt.mask && opt.keep_mask ? " 0 (masked: weight zeroed)" : " -inf (masked)"));
    if (!opt.mask) items.push_back(compact ? "cells in scientific notation, 1 significant digit" : "cells to 2 decimals");
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

std::string one_map(StepRows& v, std::size_t offset, std::size_t rows, std::size_t cols, const std::vector<std::string>* rl,
                    const std::vector<std::string>* cl, const Scale& sc, const HeatmapOptions& opt, bool summarize,
                    bool compact) {
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
        const float* row = v.span(offset + r * cols, cols);
        for (auto c : cix) {
            out += ' ';
            out += c == kGap ? std::string("...") : cell(row[c], r, c, sc, opt, compact);
        }
        out += "\n";
    }
    return out;
}

}  // namespace

bool legend_scientific(const Scale& s) { return std::max(std::fabs(double(s.lo)), std::fabs(double(s.hi))) >= kCompactFrom; }

std::string legend_number(double x, const Scale& s) {
    if (legend_scientific(s)) return fmt::format("{:.1e}", x);
    const std::string out = fmt::format("{:.2f}", x);
    return out == "-0.00" ? "0.00" : out;
}

bool draws_dense(std::size_t cols, std::size_t label_w, const HeatmapOptions& opt) {
    switch (opt.mode) {
        case HeatmapMode::cells: return false;
        case HeatmapMode::dense: return true;
        case HeatmapMode::automatic: break;
    }
    if (opt.style.width == 0 || opt.full) return false;
    return opt.indent.size() + label_w + cols * (cell_width(opt.mask) + 1) > opt.style.width;
}

bool decide_color(std::string_view choice, bool stdout_is_terminal, const char* no_color, const char* term) {
    if (choice == "always") return true;
    if (choice == "never") return false;
    return stdout_is_terminal && (!no_color || !*no_color) && !(term && std::string_view(term) == "dumb");
}

std::string format_heatmap(const Tensor& t, const std::vector<std::string>& axes,
                           const std::vector<std::vector<std::string>>& labels, const HeatmapOptions& opt) {
    StepRows v(t);
    return format_heatmap(v, axes, labels, opt);
}

namespace {

// The finite values' range of t: every value read once, a block of rows per
// thread, folded as a pooled map folds its rows (map_fold_row, one fold a row).
FiniteRange finite_range(const StepRows& t) {
    FiniteRange total;
    const std::size_t cols = std::max<std::size_t>(t.cols(), 1), rows = t.size() / cols;
    const std::size_t block_rows = std::max<std::size_t>(1, kViewBlockFloats / cols);
    const long blocks = static_cast<long>((rows + block_rows - 1) / block_rows);
#pragma omp parallel if (blocks > 1)
    {
        StepRows reader = t;
        MapFold fold;
#pragma omp for schedule(static)
        for (long b = 0; b < blocks; ++b) {
            const std::size_t r0 = static_cast<std::size_t>(b) * block_rows, n = std::min(block_rows, rows - r0);
            const float* x = reader.span(r0 * cols, n * cols);
            for (std::size_t r = 0; r < n; ++r) map_fold_row(x + r * cols, cols, cols, MapMask{}, &fold);
        }
#pragma omp critical(attntrace_finite_range)
        {
            total.lo = std::min(total.lo, fold.lo);
            total.hi = std::max(total.hi, fold.hi);
        }
    }
    return total;
}

}  // namespace

std::string format_heatmap(StepRows& t, const std::vector<std::string>& /*axes: the head axis comes first*/,
                           const std::vector<std::vector<std::string>>& labels, const HeatmapOptions& opt) {
    if (t.size() == 0 || t.rank() < 2) return "";
    const Shape& shape = t.shape();
    auto lab = [&](std::size_t k) { return k < labels.size() ? &labels[k] : nullptr; };
    const std::size_t R = shape[t.rank() - 2], C = shape[t.rank() - 1];
    const std::size_t NH = t.rank() == 2 ? 1 : shape[0];
    HeatmapOptions o = opt;
    // A map wider than kMaxWholeMapColumns is never drawn whole (--full): its cells summarised, its dense form pooled.
    if (C > kMaxWholeMapColumns) o.full = false;
    const bool summarize = !o.full && t.size() > opt.threshold;
    if (!o.blocked.fits(R, C)) o.blocked = {};  // a mask of another shape says nothing about these cells
    // Dense when asked, or when the cells' numbers would not fit beside the widest row label.
    const std::vector<std::string>* row_labels = lab(t.rank() - 2);
    std::size_t label_w = 3;
    for (std::size_t r = 0; row_labels && r < std::min(R, row_labels->size()); ++r)
        label_w = std::max(label_w, display_width(printable((*row_labels)[r])));
    const bool dense = draws_dense(C, label_w, o);
    std::vector<std::string> captions;  // (NH, rows, cols): one map per head, the head axis first as the trace keeps scores and weights
    for (std::size_t h = 0; t.rank() > 2 && h < NH; ++h)
        captions.push_back(h < o.head_captions.size()
                               ? o.head_captions[h]
                               : "head " + (lab(0) && h < lab(0)->size() ? printable((*lab(0))[h]) : std::to_string(h)));
    // Dense heads side by side when two or more fit the width, each unpooled.
    const bool side_by_side = dense && t.rank() > 2 && heads_side_by_side(NH, R, C, captions, o);
    std::vector<std::size_t> shown = t.rank() == 2 ? std::vector<std::size_t>{0} : shown_indices(NH, o.edge_items, summarize);
    if (side_by_side) {
        shown.clear();
        for (std::size_t h = 0; h < NH; ++h) shown.push_back(h);
    }
    // A dense map pools every head it shows, and with a score's scale every
    // head: the scale's range is read in the same pass (one read of the step).
    FiniteRange range;
    std::vector<PooledMap> pooled(NH);
    if (dense) {
        HeatmapOptions bare = o;
        bare.full = true;
        const std::size_t f = side_by_side ? 1 : pool_factor(R, C, o);
        std::vector<bool> drawn(NH, false);
        for (std::size_t h : shown)
            if (h != kGap) drawn[h] = true;
        for (std::size_t h = 0; h < NH; ++h)
            if (drawn[h] || opt.auto_range) pooled[h] = pool_map(t, h * R * C, R, C, f, side_by_side ? bare : o, &range);
    } else if (opt.auto_range) {
        range = finite_range(t);
    }
    Scale sc;
    if (opt.auto_range) {
        sc.lo = range.empty() ? 0 : range.lo;
        sc.hi = range.empty() ? 1 : range.hi;
    }
    if (side_by_side) return dense_heads(pooled, R, captions, sc, o) + dense_legend(sc, o, 1);
    // The cells' one format: scientific for all when a number shown reaches kCompactFrom.
    bool compact = false;
    for (std::size_t h : shown)
        for (std::size_t r : shown_indices(R, o.edge_items, summarize))
            if (!dense && !o.mask && h != kGap && r != kGap) {
                const float* row = t.span(h * R * C + r * C, C);
                for (std::size_t c = 0; c < C; ++c)
                    compact = compact || (std::isfinite(row[c]) && std::fabs(row[c]) >= kCompactFrom);
            }
    auto map = [&](std::size_t h, const std::vector<std::string>* rl, const std::vector<std::string>* cl) {
        return dense ? draw_dense(pooled[h], R, sc, o).text : one_map(t, h * R * C, R, C, rl, cl, sc, o, summarize, compact);
    };
    std::string out;
    if (t.rank() == 2) {
        out = map(0, lab(0), lab(1));
    } else {
        for (std::size_t h : shown) {
            if (h == kGap) {
                out += o.indent + "... (more heads; --full shows them)\n";
                continue;
            }
            if (NH > 1) out += o.indent + captions[h] + "\n";
            out += map(h, lab(1), lab(2));
        }
    }
    return out + (dense ? dense_legend(sc, o, pooled[0].pool) : legend(sc, o, compact));
}

}  // namespace attntrace

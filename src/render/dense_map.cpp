#include "render/dense_map.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <array>
#include <optional>
#include <vector>

#include "kernels/kernels.hpp"
#include "render/matrix.hpp"
#include "render/wrap.hpp"

namespace attntrace {

namespace {

constexpr std::array<const char*, 5> kShades = {" ", "░", "▒", "▓", "█"};
constexpr const char* kUpperHalf = "▀";
// Without colour a masked cell is "·": distinct from the blank of the lowest
// fifth, and light enough that a causal triangle of them leaves the eye on
// the weights (the cells view and the tables write "×").
constexpr const char* kMaskedDot = "·";
// A ruler mark every this many characters: "0", "10", "20" read at a glance
// and leave room for the positions of a pooled map (a 5-digit key number).
constexpr std::size_t kRulerStep = 10;
// Below this many columns for the cells a map would be unreadable: the width
// is ignored rather than pool 64 tokens into 3 characters.
constexpr std::size_t kMinMapColumns = 16;

// A cell's colour escape: the ramp at its place on the scale; a mask's
// visible cell the top of the ramp; a masked one grey.
std::string colour_of(const Pooled& v, bool background, const Scale& s, const HeatmapOptions& opt) {
    if (!v) return colour_escape(kMaskedGrey, background, opt.style);
    return scale_escape(opt.mask ? 1.0 : s.norm(*v), background, opt.style);
}

const char* shade_of(const Pooled& v, const Scale& s, const HeatmapOptions& opt) {
    if (!v) return kMaskedDot;
    const double x = opt.mask ? 1.0 : std::clamp(s.norm(*v), 0.0, 1.0);
    return kShades[std::min<std::size_t>(static_cast<std::size_t>(x * 5), 4)];
}

// Key positions above the columns: "0", "10", ... at every kRulerStep-th
// character (each character f keys), as far as they fit.
std::string ruler(std::size_t pcols, std::size_t f, std::size_t label_w, const HeatmapOptions& opt) {
    std::string line(pcols, ' ');
    for (std::size_t pc = 0; pc < pcols; pc += kRulerStep) {
        const std::string mark = std::to_string(pc * f);
        if (pc + mark.size() > pcols) break;
        line.replace(pc, mark.size(), mark);
    }
    line.erase(line.find_last_not_of(' ') + 1);
    return opt.indent + std::string(label_w + 1, ' ') + line + "\n";
}

}  // namespace

std::size_t dense_label_width(std::size_t rows) { return std::to_string(rows ? rows - 1 : 0).size(); }

std::size_t pool_factor(std::size_t rows, std::size_t cols, const HeatmapOptions& opt) {
    const std::size_t label_w = dense_label_width(rows);
    const std::size_t used = opt.indent.size() + label_w + 1;
    std::size_t room = opt.style.width > used ? opt.style.width - used : 0;
    room = std::max(room, kMinMapColumns);
    // --full (or no width) draws every cell, up to kMaxWholeMapColumns a side: wider, the map is pooled to that.
    if (opt.full || opt.style.width == 0) room = std::max<std::size_t>(cols <= kMaxWholeMapColumns ? cols : kMaxWholeMapColumns, 1);
    return std::max<std::size_t>((cols + room - 1) / room, 1);
}

PooledMap pool_map(const StepRows& v, std::size_t offset, std::size_t rows, std::size_t cols, std::size_t f,
                   const HeatmapOptions& opt, FiniteRange* range) {
    PooledMap out;
    out.pool = f = std::max<std::size_t>(f, 1);
    out.prows = (rows + f - 1) / f;
    out.pcols = (cols + f - 1) / f;
    out.cells.resize(out.prows * out.pcols);
    if (cols == 0) return out;
    // The cells the mask blocks (map_fold_row): -inf, a multiplying mask's own 0s, the weights' mask's blocked cells.
    MapMask blocks;
    blocks.zero = opt.mask && opt.keep_mask;
    const float* mask = opt.blocked.fits(rows, cols) ? opt.blocked.m->ptr() : nullptr;
    blocks.blocked_value = opt.blocked.multiplies ? 0.0f : -std::numeric_limits<float>::infinity();
    // Rows read a block at a time (a derived step's computed for those rows only): at most kViewBlockFloats values.
    const std::size_t block_rows = std::clamp<std::size_t>(kViewBlockFloats / cols, 1, f);
    FiniteRange total;
    const long prows = static_cast<long>(out.prows);
#pragma omp parallel if (prows > 1 && rows * cols > kViewBlockFloats)
    {
        StepRows reader = v;  // a block of this thread's own
        std::vector<MapFold> folds(out.pcols);
        FiniteRange seen;
        MapMask row_mask = blocks;
#pragma omp for schedule(dynamic, 1)
        for (long pr = 0; pr < prows; ++pr) {
            std::fill(folds.begin(), folds.end(), MapFold{});
            const std::size_t r_end = std::min(rows, static_cast<std::size_t>(pr) * f + f);
            for (std::size_t r0 = static_cast<std::size_t>(pr) * f; r0 < r_end; r0 += block_rows) {
                const std::size_t nr = std::min(block_rows, r_end - r0);
                const float* block = reader.span(offset + r0 * cols, nr * cols);
                for (std::size_t r = 0; r < nr; ++r) {
                    row_mask.blocks = mask ? mask + (r0 + r) * cols : nullptr;
                    map_fold_row(block + r * cols, cols, f, row_mask, folds.data());
                }
            }
            for (std::size_t pc = 0; pc < out.pcols; ++pc) {
                const MapFold& fd = folds[pc];
                seen.lo = std::min(seen.lo, fd.lo);
                seen.hi = std::max(seen.hi, fd.hi);
                if (fd.n)
                    out.cells[static_cast<std::size_t>(pr) * out.pcols + pc] =
                        opt.pool == Pooling::max ? fd.best : static_cast<float>(fd.sum / static_cast<double>(fd.n));
            }
        }
#pragma omp critical(attntrace_pool_map)
        {
            total.lo = std::min(total.lo, seen.lo);
            total.hi = std::max(total.hi, seen.hi);
        }
    }
    if (range) {
        range->lo = std::min(range->lo, total.lo);
        range->hi = std::max(range->hi, total.hi);
    }
    return out;
}

DenseMap draw_dense(const PooledMap& map, std::size_t rows, const Scale& scale, const HeatmapOptions& opt) {
    const std::size_t label_w = dense_label_width(rows);
    const std::size_t f = map.pool, prows = map.prows, pcols = map.pcols;
    const std::vector<Pooled>& cells = map.cells;
    DenseMap out;
    out.pool = f;
    out.text = ruler(pcols, f, label_w, opt);
    const std::size_t per_line = opt.style.color ? 2 : 1;
    for (std::size_t pr = 0; pr < prows; pr += per_line) {
        std::string line = opt.indent + fmt::format("{:>{}} ", pr * f, label_w);
        if (!opt.style.color) {
            for (std::size_t pc = 0; pc < pcols; ++pc) line += shade_of(cells[pr * pcols + pc], scale, opt);
            out.text += line + "\n";
            continue;
        }
        // Escapes only where a colour changes from the character before.
        std::string fg, bg;
        for (std::size_t pc = 0; pc < pcols; ++pc) {
            const std::string up = colour_of(cells[pr * pcols + pc], false, scale, opt);
            // An odd last row has no lower half: the terminal's own background.
            const std::string down = pr + 1 < prows
                                         ? colour_of(cells[(pr + 1) * pcols + pc], true, scale, opt)
                                         : std::string("\x1b[49m");
            if (up != fg) line += fg = up;
            if (down != bg) line += bg = down;
            line += kUpperHalf;
        }
        out.text += line + "\x1b[0m\n";
    }
    return out;
}

DenseMap dense_map(const StepRows& v, std::size_t offset, std::size_t rows, std::size_t cols, const Scale& scale,
                   const HeatmapOptions& opt) {
    return draw_dense(pool_map(v, offset, rows, cols, pool_factor(rows, cols, opt), opt), rows, scale, opt);
}

namespace {

constexpr std::size_t kGapBetween = 2;  // spaces between two heads' maps

// A head's column: its map (labels, a space, a character per key), or its caption when wider.
std::size_t head_block(std::size_t rows, std::size_t cols, const std::vector<std::string>& captions) {
    std::size_t block = dense_label_width(rows) + 1 + cols;
    for (const auto& c : captions) block = std::max(block, display_width(c));
    return block;
}

}  // namespace

bool heads_side_by_side(std::size_t NH, std::size_t rows, std::size_t cols, const std::vector<std::string>& captions,
                        const HeatmapOptions& opt) {
    const std::size_t block = head_block(rows, cols, captions);
    return NH >= 2 && opt.style.width != 0 && opt.style.width >= opt.indent.size() + 2 * block + kGapBetween;
}

std::string dense_heads(const std::vector<PooledMap>& heads, std::size_t rows, const std::vector<std::string>& captions,
                        const Scale& scale, const HeatmapOptions& opt) {
    const std::size_t NH = heads.size(), cols = NH ? heads[0].pcols : 0;
    const std::size_t block = head_block(rows, cols, captions);
    const std::size_t per_row = std::max<std::size_t>((opt.style.width - opt.indent.size() + kGapBetween) / (block + kGapBetween), 1);
    HeatmapOptions bare = opt;
    bare.indent.clear();
    std::string out;
    for (std::size_t first = 0; first < NH; first += per_row) {
        const std::size_t last = std::min(NH, first + per_row);
        std::vector<std::vector<std::string>> maps;  // per head: caption, ruler, lines
        for (std::size_t h = first; h < last; ++h) {
            std::vector<std::string> lines{h < captions.size() ? captions[h] : "head " + std::to_string(h)};
            const std::string text = draw_dense(heads[h], rows, scale, bare).text;
            for (std::size_t a = 0, b; a < text.size(); a = b + 1) {
                b = text.find('\n', a);
                lines.push_back(text.substr(a, b - a));
            }
            maps.push_back(std::move(lines));
        }
        for (std::size_t k = 0; k < maps.front().size(); ++k) {
            std::string line = opt.indent;
            for (std::size_t m = 0; m < maps.size(); ++m) {
                const std::string& piece = k < maps[m].size() ? maps[m][k] : std::string();
                line += piece;
                if (m + 1 < maps.size()) {
                    const std::size_t w = display_width(piece);
                    line += std::string(w < block ? block - w : 0, ' ') + std::string(kGapBetween, ' ');
                }
            }
            line.erase(line.find_last_not_of(' ') + 1);
            out += line + "\n";
        }
    }
    return out;
}

std::string dense_legend(const Scale& s, const HeatmapOptions& opt, std::size_t pool) {
    const std::string pad = opt.indent + "        ";
    std::vector<std::string> items;  // each a mark and what it stands for, wrapped between items
    if (opt.mask) {
        items.push_back(opt.style.color ? scale_escape(1.0, true, opt.style) + "  \x1b[0m visible"
                                        : std::string(kShades[4]) + " visible");
    } else if (opt.style.color) {
        std::string bar = legend_number(s.lo, s) + " ";
        for (int i = 0; i <= 10; ++i) bar += scale_escape(i / 10.0, true, opt.style) + " ";
        items.push_back(bar + "\x1b[0m " + legend_number(s.hi, s));
    } else {
        const double lo = s.lo, span = static_cast<double>(s.hi) - lo;
        for (std::size_t i = 0; i < kShades.size(); ++i)
            items.push_back(fmt::format("{}{}{}", i ? kShades[i] : "' '", i + 1 < kShades.size() ? " <" : " ≤",
                                        legend_number(lo + span * static_cast<double>(i + 1) / 5.0, s)));
    }
    items.push_back(opt.style.color ? colour_escape(kMaskedGrey, true, opt.style) + "  \x1b[0m masked"
                                    : std::string(kMaskedDot) + " masked");
    const std::string first = opt.indent + "legend:  ";
    std::string out = wrap_items(items, "  ", opt.style.width, first, std::string(display_width(first), ' '));
    std::string layout;
    if (pool > 1)
        layout = fmt::format("pooled to the width: each character the {} of {} x {} cells{}", opt.pool == Pooling::max ? "max" : "mean",
                             pool, pool, opt.mask ? "" : " (masked ones left out)");
    else
        layout = opt.style.color ? "each character ▀ is 2 queries (upper, lower) x 1 key" : "each character is 1 query x 1 key";
    out += wrap_hanging(layout + "; rows by query position, columns by key position", opt.style.width, pad);
    return out;
}

}  // namespace attntrace

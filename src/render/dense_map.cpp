#include "render/dense_map.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <optional>
#include <vector>

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

// One pooled cell: the value shown, or none when the mask blocks all of its cells.
using Pooled = std::optional<float>;

std::vector<Pooled> pool_map(const float* base, std::size_t rows, std::size_t cols, std::size_t rs, std::size_t f,
                             const HeatmapOptions& opt, std::size_t& prows, std::size_t& pcols) {
    prows = (rows + f - 1) / f;
    pcols = (cols + f - 1) / f;
    std::vector<Pooled> out(prows * pcols);
    for (std::size_t pr = 0; pr < prows; ++pr)
        for (std::size_t pc = 0; pc < pcols; ++pc) {
            double sum = 0, best = 0;
            std::size_t n = 0;
            for (std::size_t r = pr * f; r < std::min(rows, pr * f + f); ++r)
                for (std::size_t c = pc * f; c < std::min(cols, pc * f + f); ++c) {
                    const float x = base[r * rs + c];
                    if (masked_cell(x, r, c, opt)) continue;
                    best = n ? std::max(best, static_cast<double>(x)) : x;
                    sum += x;
                    ++n;
                }
            if (n) out[pr * pcols + pc] = static_cast<float>(opt.pool == Pooling::max ? best : sum / n);
        }
    return out;
}

// A cell's colour: the ramp at its place on the scale; a mask's visible cell
// the top of the ramp; a masked one grey.
Rgb colour_of(const Pooled& v, const Scale& s, const HeatmapOptions& opt) {
    if (!v) return kMaskedGrey;
    return ramp(opt.mask ? 1.0 : s.norm(*v));
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

DenseMap dense_map(const float* base, std::size_t rows, std::size_t cols, std::size_t rs, const Scale& scale,
                   const HeatmapOptions& opt) {
    const std::size_t label_w = dense_label_width(rows);
    const std::size_t used = opt.indent.size() + label_w + 1;
    std::size_t room = opt.style.width > used ? opt.style.width - used : 0;
    room = std::max(room, kMinMapColumns);
    std::size_t f = opt.full || opt.style.width == 0 ? 1 : (cols + room - 1) / room;
    f = std::max<std::size_t>(f, 1);
    std::size_t prows = 0, pcols = 0;
    const std::vector<Pooled> cells = pool_map(base, rows, cols, rs, f, opt, prows, pcols);
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
            const std::string up = colour_escape(colour_of(cells[pr * pcols + pc], scale, opt), false, opt.style);
            // An odd last row has no lower half: the terminal's own background.
            const std::string down = pr + 1 < prows
                                         ? colour_escape(colour_of(cells[(pr + 1) * pcols + pc], scale, opt), true, opt.style)
                                         : std::string("\x1b[49m");
            if (up != fg) line += fg = up;
            if (down != bg) line += bg = down;
            line += kUpperHalf;
        }
        out.text += line + "\x1b[0m\n";
    }
    return out;
}

std::string dense_heads(const Tensor& t, const std::vector<std::string>& captions, const Scale& scale,
                        const HeatmapOptions& opt) {
    const std::size_t NH = t.shape[0], R = t.shape[1], C = t.shape[2];
    // A head's column: its map (labels, a space, a character per key), or its caption when wider.
    std::size_t block = dense_label_width(R) + 1 + C;
    for (std::size_t h = 0; h < NH && h < captions.size(); ++h) block = std::max(block, display_width(captions[h]));
    constexpr std::size_t kGapBetween = 2;
    if (NH < 2 || opt.style.width == 0 || opt.style.width < opt.indent.size() + 2 * block + kGapBetween) return "";
    const std::size_t per_row = (opt.style.width - opt.indent.size() + kGapBetween) / (block + kGapBetween);
    HeatmapOptions bare = opt;
    bare.indent.clear();
    bare.full = true;  // unpooled: each map is narrower than the width by construction
    std::string out;
    for (std::size_t first = 0; first < NH; first += per_row) {
        const std::size_t last = std::min(NH, first + per_row);
        std::vector<std::vector<std::string>> maps;  // per head: caption, ruler, lines
        for (std::size_t h = first; h < last; ++h) {
            std::vector<std::string> lines{h < captions.size() ? captions[h] : "head " + std::to_string(h)};
            const std::string text = dense_map(t.ptr() + h * R * C, R, C, C, scale, bare).text;
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
    std::string scale_text;
    if (opt.mask) {
        scale_text = opt.style.color ? colour_escape(ramp(1.0), true, opt.style) + "  \x1b[0m visible"
                                     : std::string(kShades[4]) + " visible";
    } else if (opt.style.color) {
        scale_text = legend_number(s.lo) + " ";
        for (int i = 0; i <= 10; ++i) scale_text += colour_escape(ramp(i / 10.0), true, opt.style) + " ";
        scale_text += "\x1b[0m " + legend_number(s.hi);
    } else {
        const double lo = s.lo, span = static_cast<double>(s.hi) - lo;
        for (std::size_t i = 0; i < kShades.size(); ++i)
            scale_text += fmt::format("{}{}{}{}", i ? "  " : "", i ? kShades[i] : "' '", i + 1 < kShades.size() ? " <" : " ≤",
                                      legend_number(lo + span * static_cast<double>(i + 1) / 5.0));
    }
    const std::string masked = opt.style.color ? colour_escape(kMaskedGrey, true, opt.style) + "  \x1b[0m masked"
                                               : std::string(kMaskedDot) + " masked";
    std::string out = opt.indent + "legend:  " + scale_text + "  " + masked + "\n";
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

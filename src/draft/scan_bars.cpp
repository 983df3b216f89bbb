// Bar charts drawn in text: a line per key, its label, a bar of block
// glyphs and its share ("The: ███░░░░░░░ (15%)", "cat ██████ 0.30"). Two
// lines or more in a row are one printed row of attention weights: the
// shares (a percentage as its fraction, as read_number reads it), the labels its
// columns, the caption above it (a line ending in ':') its name. Read
// before the mask scanners, which would take the bars' glyphs for a mask's
// visible and blocked cells.
#include <cctype>
#include <optional>
#include <string>
#include <vector>

#include "draft/numbers.hpp"
#include "draft/scan.hpp"

namespace attntrace {

// This file's own names (the unity build puts several files in one translation unit).
namespace bars_code {

// A bar line is short: a label, a bar, a number.
constexpr std::size_t kMaxBarLine = 200;
// A chart of more bars than this is no worked example's row.
constexpr std::size_t kMaxBars = 64;

// The length of the block glyph at s[i] (U+2580..U+259F, ■ □), or 0.
std::size_t glyph_at(std::string_view s, std::size_t i) {
    if (s.size() - i < 3 || static_cast<unsigned char>(s[i]) != 0xE2) return 0;
    const auto b1 = static_cast<unsigned char>(s[i + 1]), b2 = static_cast<unsigned char>(s[i + 2]);
    if (b1 == 0x96 && b2 >= 0x80 && b2 <= 0xA1) return 3;  // ▀ .. ▟, ■, □
    return 0;
}

struct Bar {
    std::string label;
    PrintedNumber share;
};

// One line read as a bar: LABEL[:] BAR (N%) or LABEL[:] BAR N, or none.
std::optional<Bar> read_bar(std::string_view line) {
    std::size_t i = 0;
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    const std::size_t label_begin = i;
    while (i < line.size() && line[i] != ':' && line[i] != ' ' && !glyph_at(line, i)) ++i;
    std::string label = clean_label(line.substr(label_begin, i - label_begin));
    if (label.empty() || label.size() > 32) return std::nullopt;
    if (i < line.size() && line[i] == ':') ++i;
    while (i < line.size() && line[i] == ' ') ++i;
    std::size_t glyphs = 0;
    for (std::size_t g; i < line.size() && (g = glyph_at(line, i)); i += g) ++glyphs;
    if (glyphs == 0) return std::nullopt;
    while (i < line.size() && line[i] == ' ') ++i;
    const bool paren = i < line.size() && line[i] == '(';
    if (paren) ++i;
    const auto t = i < line.size() ? read_number(line, i) : std::nullopt;
    if (!t) return std::nullopt;
    std::size_t e = t->end;
    if (paren) {
        if (e >= line.size() || line[e] != ')') return std::nullopt;
        ++e;
    }
    while (e < line.size() && (line[e] == ' ' || line[e] == '\r')) ++e;
    if (e != line.size()) return std::nullopt;  // a bar and its share, nothing after them
    const bool percent = line[t->end - 1] == '%';
    PrintedNumber n = t->number;
    if (!percent && (n.value < 0 || n.value > 1)) return std::nullopt;  // a share, not a count
    return Bar{label, n};
}

}  // namespace bars_code

void scan_bars(Scan& scan) {
    using namespace bars_code;
    const std::string_view s = scan.s();
    std::vector<std::pair<std::size_t, std::size_t>> lines;  // the run's lines [begin, end)
    std::vector<Bar> bars;
    std::size_t prev_end = std::string_view::npos;            // the end of the line before the current one
    auto flush = [&] {
        if (bars.size() >= 2 && bars.size() <= kMaxBars && !scan.taken(lines.front().first, lines.back().second)) {
            PrintedArray a;
            a.form = PrintedForm::table;
            a.rows.emplace_back();
            for (const Bar& b : bars) {
                a.rows.back().push_back(b.share);
                a.col_labels.push_back(b.label);
            }
            // the caption on the nearest non-empty line above, when it ends in ':' ("Attention weights:")
            std::size_t e = lines.front().first;
            for (int up = 0; up < 3 && e > 0; ++up) {
                const std::size_t b = s.rfind('\n', e - 2) == std::string_view::npos ? 0 : s.rfind('\n', e - 2) + 1;
                const std::string above = trim(s.substr(b, e - 1 - b));
                e = b;
                if (above.empty()) continue;
                if (above.back() == ':' && above.size() <= 41) a.name = trim(std::string_view(above).substr(0, above.size() - 1));
                break;
            }
            set_shape(a, 1);
            scan.add(lines.front().first, lines.back().second, std::move(a));
        }
        lines.clear();
        bars.clear();
    };
    for (std::size_t b = 0; b < s.size();) {
        const std::size_t e = std::min(s.find('\n', b), s.size());
        std::optional<Bar> bar;
        if (e - b <= kMaxBarLine && s.substr(b, e - b).find("\xE2\x96") != std::string_view::npos) bar = read_bar(s.substr(b, e - b));
        if (bar) {
            const bool percent = s.substr(b, e - b).find('%') != std::string_view::npos;
            const bool same_kind = bars.empty() || percent == (s.substr(lines.back().first, lines.back().second - lines.back().first).find('%') !=
                                                               std::string_view::npos);
            if (!same_kind || (!lines.empty() && prev_end + 1 != b)) flush();  // a run is consecutive lines of one kind
            lines.emplace_back(b, e);
            bars.push_back(std::move(*bar));
        } else {
            flush();
        }
        prev_end = e;
        b = e + 1;
    }
    flush();
}

}  // namespace attntrace

#include "render/text_table.hpp"

#include <algorithm>

#include "render/matrix.hpp"
#include "render/wrap.hpp"

namespace attntrace {

namespace text_table_impl {

// How a table is laid out at a width: the columns kept on the row's line, their
// widths, and whether the last of them wraps under itself.
struct Layout {
    std::vector<std::size_t> kept;  // indices into the columns, in order
    std::vector<std::size_t> widths;
    bool folded = false;
    bool wraps_last = false;
};

bool has_header(const std::vector<TextColumn>& columns) {
    return std::any_of(columns.begin(), columns.end(), [](const TextColumn& c) { return !c.header.empty(); });
}

std::size_t longest_word(std::string_view s) {
    std::size_t best = 0, start = 0;
    while (start <= s.size()) {
        std::size_t end = s.find(' ', start);
        if (end == std::string_view::npos) end = s.size();
        best = std::max(best, display_width(s.substr(start, end - start)));
        start = end + 1;
    }
    return best;
}

// The columns kept: their widths, and the width of a line (the last column unpadded).
Layout measure(const std::vector<TextColumn>& columns, const std::vector<std::vector<std::string>>& rows, bool fold) {
    Layout l;
    l.folded = fold;
    for (std::size_t c = 0; c < columns.size(); ++c)
        if (!fold || !columns[c].folds) l.kept.push_back(c);
    const bool header = has_header(columns);
    for (std::size_t c : l.kept) {
        std::size_t w = header ? display_width(columns[c].header) : 0;
        for (const auto& row : rows) w = std::max(w, display_width(row[c]));
        l.widths.push_back(w);
    }
    return l;
}

// Where the last kept column starts, and the widest line of the table.
std::size_t last_start(const Layout& l, std::string_view indent, std::size_t gap) {
    std::size_t at = display_width(indent);
    for (std::size_t k = 0; k + 1 < l.widths.size(); ++k) at += l.widths[k] + gap;
    return at;
}

bool fits_in(const Layout& l, std::string_view indent, std::size_t gap, std::size_t width) {
    return width == 0 || l.widths.empty() || last_start(l, indent, gap) + l.widths.back() <= width;
}

// Whether the last kept column may wrap under itself at `width`.
bool last_wraps(const Layout& l, const std::vector<TextColumn>& columns, const std::vector<std::vector<std::string>>& rows,
                std::string_view indent, std::size_t gap, std::size_t width) {
    if (l.kept.empty()) return false;
    const std::size_t start = last_start(l, indent, gap);
    if (start + kLeastLastColumn > width) return false;
    const std::size_t c = l.kept.back();
    std::size_t word = display_width(columns[c].header);
    for (const auto& row : rows) word = std::max(word, longest_word(row[c]));
    if (start + word > width) return false;
    // A table that may fold instead does so rather than stack a cell on more than kMostWrappedLines lines.
    if (std::none_of(columns.begin(), columns.end(), [](const TextColumn& col) { return col.folds; })) return true;
    return std::all_of(rows.begin(), rows.end(), [&](const std::vector<std::string>& row) {
        const std::string lines = wrap_text(row[c], width - start, "", "");
        return static_cast<std::size_t>(std::count(lines.begin(), lines.end(), '\n')) <= kMostWrappedLines;
    });
}

Layout layout(const std::vector<TextColumn>& columns, const std::vector<std::vector<std::string>>& rows, std::size_t width,
              std::string_view indent, std::size_t gap) {
    Layout l = measure(columns, rows, false);
    if (fits_in(l, indent, gap, width)) return l;
    if (last_wraps(l, columns, rows, indent, gap, width)) {
        l.wraps_last = true;
        return l;
    }
    if (std::none_of(columns.begin(), columns.end(), [](const TextColumn& c) { return c.folds; })) return l;
    l = measure(columns, rows, true);
    l.wraps_last = !fits_in(l, indent, gap, width) && last_wraps(l, columns, rows, indent, gap, width);
    return l;
}

std::string padded(const std::string& s, std::size_t w, bool right) {
    const std::size_t n = display_width(s);
    if (n >= w) return s;
    return right ? std::string(w - n, ' ') + s : s + std::string(w - n, ' ');
}

std::string unglued(std::string s) {
    std::replace(s.begin(), s.end(), kNoBreak, ' ');
    return s;
}

// One line of the table (the header or a row), its last cell wrapped under its column when the layout says so.
std::string table_line(const Layout& l, const std::vector<TextColumn>& columns, const std::vector<std::string>& cells,
                       std::string_view indent, std::size_t gap, std::size_t width) {
    std::string line(indent);
    for (std::size_t k = 0; k + 1 < l.kept.size(); ++k) {
        const std::size_t c = l.kept[k];
        line += padded(cells[c], l.widths[k], columns[c].right) + std::string(gap, ' ');
    }
    if (l.kept.empty()) return line + "\n";
    const std::size_t c = l.kept.back();
    const std::string last = columns[c].right ? padded(cells[c], l.widths.back(), true) : cells[c];
    if (!l.wraps_last || display_width(line) + display_width(last) <= width) {
        line += last;
        while (!line.empty() && line.back() == ' ') line.pop_back();
        return unglued(line) + "\n";
    }
    return wrap_text(last, width, line, std::string(last_start(l, indent, gap), ' '));
}

}  // namespace text_table_impl

bool table_fits(const std::vector<TextColumn>& columns, const std::vector<std::vector<std::string>>& rows,
                std::size_t width, std::string_view indent, std::size_t gap) {
    return text_table_impl::fits_in(text_table_impl::measure(columns, rows, false), indent, gap, width);
}

std::string format_text_table(const std::vector<TextColumn>& columns, const std::vector<std::vector<std::string>>& rows,
                              std::size_t width, std::string_view indent, std::size_t gap) {
    const text_table_impl::Layout l = text_table_impl::layout(columns, rows, width, indent, gap);
    std::string out;
    if (text_table_impl::has_header(columns)) {
        std::vector<std::string> headers;
        for (const auto& c : columns) headers.push_back(c.header);
        out += text_table_impl::table_line(l, columns, headers, indent, gap, width);
    }
    const std::string under = std::string(indent) + "    ";
    for (const auto& row : rows) {
        out += text_table_impl::table_line(l, columns, row, indent, gap, width);
        if (!l.folded) continue;
        // "label value" items, broken between items; an item longer than a line at its own spaces too
        std::vector<std::string> items;
        std::string text;
        bool long_item = false;
        for (std::size_t c = 0; c < columns.size(); ++c) {
            if (!columns[c].folds || row[c].empty()) continue;
            const std::string& label = columns[c].fold_label;
            items.push_back(unbroken(label.empty() ? row[c] : label + " " + row[c]));
            long_item = long_item || (width && display_width(items.back()) + under.size() > width);
            text += (text.empty() ? "" : ", ") + (label.empty() ? row[c] : unbroken(label) + kNoBreak + row[c]);
        }
        if (long_item) out += wrap_text(text, width, under, under);
        else if (!items.empty()) out += wrap_items(items, ", ", width, under, under);
    }
    return out;
}

}  // namespace attntrace

#include "render/matrix.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <sstream>

#include "core/printable.hpp"
#include "render/wrap.hpp"

namespace attntrace {

namespace {

// A (rows, cols) slice of a tensor's values: element (r, c) at flat index
// offset + r·row_stride + c·col_stride, read a row at a time.
struct Slice {
    std::size_t offset, rows, cols, row_stride, col_stride;
    const std::vector<std::string>* row_labels;  // may be null
    const std::vector<std::string>* col_labels;
};

// A row or column label (a token from the lesson, a step's axis label from a
// trace): printable, so that it can neither move the cursor nor break the table.
std::string label(const std::vector<std::string>* l, std::size_t i) {
    return l && i < l->size() ? printable((*l)[i]) : std::string();
}

// s right-aligned in w display columns
std::string pad_left(const std::string& s, std::size_t w) {
    const std::size_t n = display_width(s);
    return n >= w ? s : std::string(w - n, ' ') + s;
}

// Row r of a slice's values, cell c at [c · col_stride]; valid until the next row is read.
const float* slice_row(StepRows& v, const Slice& s, std::size_t r) {
    return v.span(s.offset + r * s.row_stride, (s.cols - 1) * s.col_stride + 1);
}

// Scientific when a value of the rows shown reaches kScientificFrom (core/decimal.hpp), as numpy has it.
Notation slice_notation(StepRows& v, const Slice& s, const TableOptions& opt, bool summarize) {
    for (auto r : shown_indices(s.rows, opt.edge_items, summarize)) {
        if (r == kGap) continue;
        const float* p = slice_row(v, s, r);
        for (std::size_t c = 0; c < s.cols; ++c)
            if (notation_for(&p[c * s.col_stride], 1) == Notation::scientific) return Notation::scientific;
    }
    return Notation::fixed;
}

// The slice's table, a line at a time: only the rows shown are read (a
// derived step's computed for those rows alone), and no more than a line of
// text is held, so that --full writes a table of any size in bounded memory.
// Every cell in `notation`, the whole table's.
void write_slice(std::ostream& os, StepRows& v, const Slice& s, const TableOptions& opt, bool summarize, Notation notation) {
    auto rows = shown_indices(s.rows, opt.edge_items, summarize);
    auto cols = shown_indices(s.cols, opt.edge_items, summarize);
    auto row = [&](std::size_t r) { return slice_row(v, s, r); };
    std::size_t label_w = 3;  // room for the "..." row
    for (auto r : rows)
        if (r != kGap) label_w = std::max(label_w, display_width(label(s.row_labels, r)));
    const bool blocks = opt.blocked.fits(s.rows, s.cols);
    const auto cell = [&](const float* p, std::size_t r, std::size_t c) {
        if (blocks && opt.blocked.at(r, c)) return std::string(kBlockedMark);
        return format_number(p[c * s.col_stride], opt.precision, notation);
    };
    // One width for every column: the widest label or number of the whole slice
    // (over the shown rows), so dropping columns to fit cannot widen the rest.
    std::size_t w = 0;
    for (std::size_t c = 0; c < s.cols; ++c) w = std::max(w, display_width(label(s.col_labels, c)));
    for (auto r : rows) {
        if (r == kGap) continue;
        const float* p = row(r);
        for (std::size_t c = 0; c < s.cols; ++c) w = std::max(w, display_width(cell(p, r, c)));
    }
    if (!opt.full) cols = fit_columns(cols, s.cols, opt.indent.size() + label_w, w + 2, 5, opt.width);
    std::string line = opt.indent + std::string(label_w, ' ');
    for (auto c : cols) line += c == kGap ? std::string("  ...") : std::string("  ") + pad_left(label(s.col_labels, c), w);
    os << line << '\n';
    for (auto r : rows) {
        if (r == kGap) {
            os << opt.indent << pad_left("...", label_w) << '\n';
            continue;
        }
        const std::string l = label(s.row_labels, r);
        line = opt.indent + l + std::string(label_w - std::min(label_w, display_width(l)), ' ');
        const float* p = row(r);
        for (auto c : cols) line += c == kGap ? std::string("  ...") : std::string("  ") + pad_left(cell(p, r, c), w);
        os << line << '\n';
    }
}

}  // namespace

bool Blocked::at(std::size_t r, std::size_t c) const {
    if (!m) return false;
    const float x = m->data[r * m->shape[1] + c];
    return multiplies ? x == 0.0f : (std::isinf(x) && x < 0);
}

std::size_t display_width(std::string_view s) {
    std::size_t n = 0;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '\x1b') {  // an ANSI escape "ESC [ ... m" takes no column
            while (i < s.size() && s[i] != 'm') ++i;
            continue;
        }
        n += (static_cast<unsigned char>(s[i]) & 0xC0) != 0x80;  // count lead bytes, not continuation bytes
    }
    return n;
}

std::vector<std::size_t> shown_indices(std::size_t n, std::size_t edge, bool summarize) {
    std::vector<std::size_t> out;
    const bool gap = summarize && n > 2 * edge;
    for (std::size_t i = 0; i < n; ++i) {
        if (gap && i == edge) {
            out.push_back(kGap);
            i = n - edge - 1;
            continue;
        }
        out.push_back(i);
    }
    return out;
}

std::vector<std::size_t> fit_columns(std::vector<std::size_t> wanted, std::size_t n, std::size_t label_w,
                                     std::size_t cell_w, std::size_t gap_w, std::size_t width) {
    if (width == 0) return wanted;
    auto line_w = [&](const std::vector<std::size_t>& cols) {
        std::size_t w = label_w;
        for (auto c : cols) w += c == kGap ? gap_w : cell_w;
        return w;
    };
    // Fewer and fewer columns from each end, down to one at each end.
    std::size_t head = std::count_if(wanted.begin(), wanted.end(), [](std::size_t c) { return c != kGap; });
    while (line_w(wanted) > width && head > 2) {
        --head;
        const std::size_t left = (head + 1) / 2, right = head - left;
        wanted.clear();
        for (std::size_t i = 0; i < left; ++i) wanted.push_back(i);
        wanted.push_back(kGap);
        for (std::size_t i = n - right; i < n; ++i) wanted.push_back(i);
    }
    return wanted;
}

std::string format_tensor(const Tensor& t, const std::vector<std::string>& axes,
                          const std::vector<std::vector<std::string>>& labels, const TableOptions& opt) {
    StepRows v(t);
    std::ostringstream os;
    write_tensor(os, v, axes, labels, opt);
    return os.str();
}

void write_tensor(std::ostream& os, StepRows& t, const std::vector<std::string>& axes,
                  const std::vector<std::vector<std::string>>& labels, const TableOptions& opt) {
    auto lab = [&](std::size_t k) { return k < labels.size() ? &labels[k] : nullptr; };
    if (t.size() == 0) {
        os << opt.indent << "(empty)\n";
        return;
    }
    const bool summarize = !opt.full && t.size() > opt.threshold;
    const Shape& shape = t.shape();
    // The tables to draw: one, or (rank 3) one per head shown, each with its caption ("head h0").
    std::vector<std::pair<std::string, Slice>> tables;
    static const std::vector<std::string> none{""};
    switch (t.rank()) {
        case 0: os << opt.indent << format_number(*t.span(0, 1), opt.precision) << '\n'; return;
        case 1: tables.push_back({"", {0, 1, shape[0], 0, 1, &none, lab(0)}}); break;
        case 2: tables.push_back({"", {0, shape[0], shape[1], shape[1], 1, lab(0), lab(1)}}); break;
        default: {
            // Rank 3: one table per head. Axis k is the head axis; the other two, in order, are rows and columns.
            std::size_t k = std::find(axes.begin(), axes.end(), "head") - axes.begin();
            if (k >= 3) k = std::find(axes.begin(), axes.end(), "kv_head") - axes.begin();  // K and V
            if (k >= 3) k = 0;
            const std::size_t stride[3] = {shape[1] * shape[2], shape[2], 1};
            std::size_t r = k == 0 ? 1 : 0, c = k == 2 ? 1 : 2;
            for (std::size_t h : shown_indices(shape[k], opt.edge_items, summarize)) {
                if (h == kGap) {
                    tables.push_back({fmt::format("... ({} heads not shown; --full shows them)",
                                                  shape[k] - 2 * opt.edge_items),
                                      {0, 0, 0, 0, 0, nullptr, nullptr}});
                    continue;
                }
                tables.push_back({shape[k] > 1 ? (k < axes.size() && axes[k] == "kv_head" ? "kv_head " : "head ") +
                                                     (lab(k) ? label(lab(k), h) : std::to_string(h))
                                               : "",
                                  {h * stride[k], shape[r], shape[c], stride[r], stride[c], lab(r), lab(c)}});
            }
        }
    }
    // One notation for the step's every table, said above them.
    Notation notation = Notation::fixed;
    for (const auto& [caption, slice] : tables)
        if (slice.rows && notation == Notation::fixed) notation = slice_notation(t, slice, opt, summarize);
    if (opt.caption) os << wrap_text(notation_caption(notation, opt.precision), opt.width, opt.indent, opt.indent + "  ");
    for (const auto& [caption, slice] : tables) {
        if (!caption.empty()) os << opt.indent << caption << '\n';
        if (slice.rows) write_slice(os, t, slice, opt, summarize, notation);
    }
}

std::string notation_caption(Notation notation, int precision) {
    if (notation == Notation::scientific)
        return fmt::format("values in scientific notation, {} significant digits (one reaches 1e8)", precision + 1);
    return precision == 0 ? "values rounded to whole numbers"
                          : fmt::format("values to {} decimal{}", precision, precision == 1 ? "" : "s");
}

}  // namespace attntrace

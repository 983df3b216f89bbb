#include "render/matrix.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace attntrace {

namespace {

struct Slice {
    const float* base;
    std::size_t rows, cols, row_stride, col_stride;
    const std::vector<std::string>* row_labels;  // may be null
    const std::vector<std::string>* col_labels;
};

// Indices to show: all, or the first and last few with a gap (SIZE_MAX) between.
std::vector<std::size_t> shown(std::size_t n, std::size_t max) {
    std::vector<std::size_t> out;
    if (n <= max) {
        for (std::size_t i = 0; i < n; ++i) out.push_back(i);
        return out;
    }
    std::size_t head = max / 2, tail = max - head;
    for (std::size_t i = 0; i < head; ++i) out.push_back(i);
    out.push_back(SIZE_MAX);
    for (std::size_t i = n - tail; i < n; ++i) out.push_back(i);
    return out;
}

std::string format_slice(const Slice& s, const TableOptions& opt) {
    auto rows = shown(s.rows, opt.max_rows);
    auto cols = shown(s.cols, opt.max_cols);
    auto label = [](const std::vector<std::string>* l, std::size_t i) {
        return l && i < l->size() ? (*l)[i] : std::string();
    };
    std::size_t label_w = 0;
    for (auto r : rows)
        if (r != SIZE_MAX) label_w = std::max(label_w, label(s.row_labels, r).size());
    std::size_t w = 0;
    for (auto c : cols) {
        if (c == SIZE_MAX) continue;
        w = std::max(w, label(s.col_labels, c).size());
        for (auto r : rows)
            if (r != SIZE_MAX) w = std::max(w, format_number(s.base[r * s.row_stride + c * s.col_stride], opt.precision).size());
    }
    std::string out = opt.indent + std::string(label_w, ' ');
    for (auto c : cols) out += c == SIZE_MAX ? "  …" : fmt::format("  {:>{}}", label(s.col_labels, c), w);
    out += "\n";
    for (auto r : rows) {
        if (r == SIZE_MAX) {
            out += opt.indent + fmt::format("{:>{}}", "⋮", label_w) + "\n";
            continue;
        }
        out += opt.indent + fmt::format("{:<{}}", label(s.row_labels, r), label_w);
        for (auto c : cols)
            out += c == SIZE_MAX ? "  …"
                                 : fmt::format("  {:>{}}", format_number(s.base[r * s.row_stride + c * s.col_stride], opt.precision), w);
        out += "\n";
    }
    return out;
}

}  // namespace

std::string format_number(float x, int precision) {
    if (std::isinf(x)) return x < 0 ? "-inf" : "inf";
    if (std::isnan(x)) return "nan";
    std::string s = fmt::format("{:.{}f}", x, precision);
    if (s[0] == '-' && s.find_first_not_of("-0.") == std::string::npos) s.erase(0, 1);  // "-0.0000" -> "0.0000"
    return s;
}

std::string format_tensor(const Tensor& t, const std::vector<std::string>& axes,
                          const std::vector<std::vector<std::string>>& labels, const TableOptions& opt) {
    auto lab = [&](std::size_t k) { return k < labels.size() ? &labels[k] : nullptr; };
    if (t.size() == 0) return opt.indent + "(empty)\n";
    switch (t.rank()) {
        case 0: return opt.indent + format_number(t.data[0], opt.precision) + "\n";
        case 1: {
            static const std::vector<std::string> none{""};
            return format_slice({t.ptr(), 1, t.shape[0], 0, 1, &none, lab(0)}, opt);
        }
        case 2: return format_slice({t.ptr(), t.shape[0], t.shape[1], t.shape[1], 1, lab(0), lab(1)}, opt);
        default: break;
    }
    // Rank 3: one table per head. Axis k is the head axis; the other two, in order, are rows and columns.
    std::size_t k = std::find(axes.begin(), axes.end(), "head") - axes.begin();
    if (k >= 3) k = 0;
    const std::size_t stride[3] = {t.shape[1] * t.shape[2], t.shape[2], 1};
    std::size_t r = k == 0 ? 1 : 0, c = k == 2 ? 1 : 2;
    std::string out;
    for (std::size_t h = 0; h < t.shape[k]; ++h) {
        if (t.shape[k] > 1) out += opt.indent + "head " + (lab(k) ? (*lab(k))[h] : std::to_string(h)) + "\n";
        out += format_slice({t.ptr() + h * stride[k], t.shape[r], t.shape[c], stride[r], stride[c], lab(r), lab(c)}, opt);
    }
    return out;
}

}  // namespace attntrace

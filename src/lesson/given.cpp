// Given values in part, and which of them the article got wrong
// (docs/lesson-format.md, Given values).
#include <algorithm>
#include <cmath>

#include "core/decimal.hpp"
#include "lesson/lesson.hpp"

namespace attntrace {

namespace {

bool is_given(const Tensor& cells, std::size_t i) { return cells.data.empty() || cells.data[i] != 0; }

// The fewest decimals (up to kMaxDecimals) at which every given value is its
// own rounding: how many the article wrote them with (1.4 as float32 is
// 1.39999998: it rounds to itself at 1 decimal).
int written_decimals(const Tensor& given, const Tensor& cells) {
    for (int d = 0; d < kMaxDecimals; ++d) {
        bool all = true;
        for (std::size_t i = 0; all && i < given.size(); ++i) {
            const float x = given.data[i];
            all = !is_given(cells, i) || !std::isfinite(x) || round_decimals(x, d) == x;
        }
        if (all) return d;
    }
    return kMaxDecimals;
}

}  // namespace

std::vector<bool> wrongly_given_cells(const Tensor& given, const Tensor& cells, const Tensor& formula) {
    const int d = written_decimals(given, cells);
    std::vector<bool> wrong(given.size(), false);
    for (std::size_t i = 0; i < given.size(); ++i)
        wrong[i] = is_given(cells, i) && !agrees_at_precision(formula.data[i], given.data[i], d);
    return wrong;
}

std::vector<std::size_t> selected_offsets(const std::vector<std::pair<Axis, std::size_t>>& at,
                                          const std::vector<std::pair<Axis, std::vector<std::size_t>>>& select,
                                          const Shape& shape, const std::vector<std::string>& axes,
                                          Shape* region_shape) {
    const std::size_t rank = shape.size();
    std::vector<std::size_t> stride(rank, 1);
    for (std::size_t k = rank; k-- > 1;) stride[k - 1] = stride[k] * shape[k];
    std::size_t base = 0;
    std::vector<std::size_t> free;                 // the axes left, in the tensor's order
    std::vector<std::vector<std::size_t>> along;   // the indices read along each
    for (std::size_t k = 0; k < rank; ++k) {
        auto fixed = std::find_if(at.begin(), at.end(), [&](const auto& p) { return axis_name(p.first) == axes[k]; });
        if (fixed != at.end()) {
            base += fixed->second * stride[k];
            continue;
        }
        free.push_back(k);
        auto narrowed =
            std::find_if(select.begin(), select.end(), [&](const auto& p) { return axis_name(p.first) == axes[k]; });
        if (narrowed != select.end()) {
            along.push_back(narrowed->second);
        } else {
            along.emplace_back(shape[k]);
            for (std::size_t i = 0; i < shape[k]; ++i) along.back()[i] = i;
        }
    }
    std::size_t n = 1;
    for (const auto& a : along) n *= a.size();
    if (region_shape) {
        region_shape->clear();
        for (const auto& a : along) region_shape->push_back(a.size());
    }
    std::vector<std::size_t> offsets;
    offsets.reserve(n);
    std::vector<std::size_t> idx(free.size(), 0);
    for (std::size_t c = 0; c < n; ++c) {
        std::size_t off = base;
        for (std::size_t f = 0; f < free.size(); ++f) off += along[f][idx[f]] * stride[free[f]];
        offsets.push_back(off);
        for (std::size_t f = free.size(); f-- > 0;) {
            if (++idx[f] < along[f].size()) break;
            idx[f] = 0;
        }
    }
    return offsets;
}

}  // namespace attntrace

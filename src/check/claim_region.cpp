#include "check/claim_region.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

namespace attntrace {

namespace {

// The indices a claim reads along step axis k: its selection, or all of them.
std::vector<std::size_t> indices_along(const Claim& claim, const Step& step, std::size_t k) {
    for (const auto& [axis, indices] : claim.select)
        if (axis_name(axis) == step.axes[k]) return indices;
    std::vector<std::size_t> all(step.shape[k]);
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
    return all;
}

// One reduction of n cells spaced `stride` apart, from `first`.
double reduce_cells(const float* first, std::size_t n, std::size_t stride, Reduction::Op op) {
    double acc = op == Reduction::Op::min ? INFINITY : op == Reduction::Op::max ? -INFINITY : 0.0;
    bool finite = true;
    for (std::size_t j = 0; j < n; ++j) {
        const double x = first[j * stride];
        finite = finite && std::isfinite(x);
        if (op == Reduction::Op::min) acc = std::min(acc, x);
        else if (op == Reduction::Op::max) acc = std::max(acc, x);
        else acc += x;  // sum, and the mean's and std's sum
    }
    if (op == Reduction::Op::sum || op == Reduction::Op::min || op == Reduction::Op::max) return acc;
    const double mean = acc / static_cast<double>(n);
    if (op == Reduction::Op::mean) return mean;
    if (!finite) return INFINITY;  // std of a row with -inf: unbounded (as the limit of ever larger spreads)
    double squares = 0.0;
    for (std::size_t j = 0; j < n; ++j) squares += (first[j * stride] - mean) * (first[j * stride] - mean);
    // population ÷ n (numpy's default), or Bessel's ÷ (n - 1) (torch's .std() default; n >= 2, the reader's rule)
    return std::sqrt(squares / static_cast<double>(op == Reduction::Op::std_unbiased ? n - 1 : n));
}

}  // namespace

Tensor claimed_region(const Claim& claim, const Step& step, const Tensor& values) {
    // Strides of the step's tensor, then walk the free axes in order, each over its indices.
    const std::size_t rank = step.shape.size();
    std::vector<std::size_t> stride(rank, 1);
    for (std::size_t k = rank; k-- > 1;) stride[k - 1] = stride[k] * step.shape[k];
    std::size_t base = 0;
    std::vector<std::size_t> free;
    std::vector<std::vector<std::size_t>> along;
    for (std::size_t k = 0; k < rank; ++k) {
        auto it = std::find_if(claim.at.begin(), claim.at.end(),
                               [&](const auto& p) { return axis_name(p.first) == step.axes[k]; });
        if (it != claim.at.end()) {
            base += it->second * stride[k];
        } else {
            free.push_back(k);
            along.push_back(indices_along(claim, step, k));
        }
    }
    Shape out_shape;
    for (const auto& a : along) out_shape.push_back(a.size());
    Tensor region(out_shape);
    std::vector<std::size_t> idx(free.size(), 0);
    for (std::size_t n = 0; n < region.size(); ++n) {
        std::size_t off = base;
        for (std::size_t f = 0; f < free.size(); ++f) off += along[f][idx[f]] * stride[free[f]];
        region.data[n] = values.data[off];
        for (std::size_t f = free.size(); f-- > 0;) {
            if (++idx[f] < out_shape[f]) break;
            idx[f] = 0;
        }
    }
    return region;
}

Tensor reduce(const Tensor& region, Reduction r, std::optional<std::size_t>* overflow) {
    if (r.over == Reduction::Over::all) {  // every cell of the region, one number (shape ())
        Tensor out(Shape{});
        const double v = reduce_cells(region.data.data(), region.size(), 1, r.op);
        out.data[0] = static_cast<float>(v);
        if (overflow && !*overflow && std::isfinite(v) && !std::isfinite(out.data[0])) *overflow = 0;
        return out;
    }
    // region as (outer, n, inner): n cells reduced, inner = 1 for rows.
    const std::size_t axis = region.rank() - (r.over == Reduction::Over::row ? 1 : 2);
    const std::size_t n = region.shape[axis];
    std::size_t inner = 1;
    for (std::size_t k = axis + 1; k < region.rank(); ++k) inner *= region.shape[k];
    Shape out_shape = region.shape;
    out_shape.erase(out_shape.begin() + static_cast<std::ptrdiff_t>(axis));
    Tensor out(out_shape);
    for (std::size_t o = 0; o < out.size(); ++o) {
        const double v = reduce_cells(region.data.data() + (o / inner) * n * inner + o % inner, n, inner, r.op);
        out.data[o] = static_cast<float>(v);
        // A finite double that is no float: the values are finite, their sum is not (a -inf cell gives a -inf
        // sum in double too, and is not an overflow).
        if (overflow && !*overflow && std::isfinite(v) && !std::isfinite(out.data[o])) *overflow = o;
    }
    return out;
}

std::string reduction_words(Reduction r) {
    constexpr std::array<const char*, 6> kPlural = {"sums", "minima", "maxima", "means", "standard deviations",
                                                     "standard deviations (÷ n - 1)"};
    constexpr std::array<const char*, 6> kOne = {"sum", "minimum", "maximum", "mean", "standard deviation",
                                                 "standard deviation (÷ n - 1)"};
    if (r.over == Reduction::Over::all) return fmt::format("the region's {}", kOne[static_cast<int>(r.op)]);
    return fmt::format("{} {}", r.over == Reduction::Over::row ? "row" : "column", kPlural[static_cast<int>(r.op)]);
}

}  // namespace attntrace

#include "check/claim_region.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

namespace attntrace {

namespace {

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
    Shape out_shape;
    const std::vector<std::size_t> offsets = selected_offsets(claim.at, claim.select, step.shape, step.axes, &out_shape);
    Tensor region(out_shape);
    for (std::size_t n = 0; n < region.size(); ++n) region.data[n] = values.data[offsets[n]];
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
    const std::size_t axis = r.over == Reduction::Over::head ? r.axis : region.rank() - (r.over == Reduction::Over::row ? 1 : 2);
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
    if (r.over == Reduction::Over::head) return fmt::format("{} across the heads", kPlural[static_cast<int>(r.op)]);
    return fmt::format("{} {}", r.over == Reduction::Over::row ? "row" : "column", kPlural[static_cast<int>(r.op)]);
}

}  // namespace attntrace

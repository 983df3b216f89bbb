// A recorded step as an xtensor expression: a zero-copy `xt::adapt` view over
// the step's own buffer, with its shape. The trace keeps owning the values
// (core/tensor.hpp's Tensor); a view reads and writes them in place, so it
// lives only as long as the Tensor or Step it was made from.
//
//   Trace trace = run_lesson(lesson);
//   const Step& A = *trace.find(lesson.catalogue().step(Leaf::pattern).name);
//   auto a = as_xtensor<3>(A);                  // (NH, Tq, T); batched: as_xtensor<4>, (B, NH, Tq, T)
//   xt::xtensor<float, 2> row_sums = xt::sum(a, {2});   // evaluate reductions (see below)
//
// Header-only, and included by no translation unit of the library: only a
// program that includes it needs xtensor's headers (CMake: link
// attntrace::xtensor instead of attntrace::attntrace). Ranks 0..4 occur in a
// trace (a batched trace adds a leading `batch` axis).
//
// xtensor 0.24 evaluates an expression lazily: evaluate a reduction into a
// concrete xt::xtensor before broadcasting it against the view, and keep no
// lazy expression over a view in `auto` past the statement that builds it.
#pragma once

#include <array>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include <xtensor/xadapt.hpp>

#include "core/tensor.hpp"
#include "trace/trace.hpp"

namespace attntrace {

namespace xview_detail {

// The buffer must hold exactly the shape's cells: an empty Tensor (a step not
// computable, or kept as a summary) has shape () and no cell, not one.
inline void check_whole(const Tensor& t, std::size_t rank, const char* what) {
    if (t.rank() != rank)
        throw std::invalid_argument(std::string("attntrace: ") + what + ": expected a tensor of rank " +
                                    std::to_string(rank) + ", found rank " + std::to_string(t.rank()) + " (" +
                                    shape_str(t.shape) + ")");
    if (t.size() != numel(t.shape))
        throw std::invalid_argument(std::string("attntrace: ") + what + ": expected " +
                                    std::to_string(numel(t.shape)) + " values for shape " + shape_str(t.shape) +
                                    ", found " + std::to_string(t.size()));
}

template <std::size_t N>
std::array<std::size_t, N> fixed_shape(const Shape& s) {
    std::array<std::size_t, N> out{};
    for (std::size_t i = 0; i < N; ++i) out[i] = s[i];
    return out;
}

// The values of a step, refused when the trace did not keep them.
template <class S>
auto& step_values(S& step) {
    if (step.recorded != Record::full || step.source == StepSource::not_computable)
        throw std::invalid_argument("attntrace: step " + step.name + " holds no values (" +
                                    (step.source == StepSource::not_computable ? std::string("not computable")
                                                                               : std::string("not kept in full")) +
                                    ")");
    if (is_derived(step))  // trace/derived.hpp: computed when read, no buffer to view
        throw std::invalid_argument("attntrace: step " + step.name +
                                    " is derived (computed when read): view it after materialise(trace), "
                                    "or read values_of(trace, step)");
    if constexpr (std::is_const_v<S>) return step.held();
    else return step.buffer();  // a view to write through, of a step that holds its values
}

}  // namespace xview_detail

// Fixed rank N (the rank must be the tensor's: std::invalid_argument otherwise).
// A view of a non-const Tensor writes through to it; of a const one, reads only.
template <std::size_t N>
auto as_xtensor(Tensor& t) {
    xview_detail::check_whole(t, N, "as_xtensor");
    return xt::adapt(t.ptr(), t.size(), xt::no_ownership(), xview_detail::fixed_shape<N>(t.shape));
}
template <std::size_t N>
auto as_xtensor(const Tensor& t) {
    xview_detail::check_whole(t, N, "as_xtensor");
    return xt::adapt(t.ptr(), t.size(), xt::no_ownership(), xview_detail::fixed_shape<N>(t.shape));
}

// Any rank (xt::xarray_adaptor): for code that walks every step of a trace.
inline auto as_xarray(Tensor& t) {
    xview_detail::check_whole(t, t.rank(), "as_xarray");
    return xt::adapt(t.ptr(), t.size(), xt::no_ownership(), std::vector<std::size_t>(t.shape.begin(), t.shape.end()));
}
inline auto as_xarray(const Tensor& t) {
    xview_detail::check_whole(t, t.rank(), "as_xarray");
    return xt::adapt(t.ptr(), t.size(), xt::no_ownership(), std::vector<std::size_t>(t.shape.begin(), t.shape.end()));
}

// A step's values (what flows downstream: the given values where the lesson
// gave some). std::invalid_argument when the step is not computable or the
// trace kept it only as a summary or not at all.
template <std::size_t N>
auto as_xtensor(Step& s) {
    return as_xtensor<N>(xview_detail::step_values(s));
}
template <std::size_t N>
auto as_xtensor(const Step& s) {
    return as_xtensor<N>(xview_detail::step_values(s));
}
inline auto as_xarray(Step& s) { return as_xarray(xview_detail::step_values(s)); }
inline auto as_xarray(const Step& s) { return as_xarray(xview_detail::step_values(s)); }

}  // namespace attntrace

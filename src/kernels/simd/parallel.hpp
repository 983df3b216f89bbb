// Splitting an element-wise or row pass over the threads.
#pragma once

#include <omp.h>

#include <cstddef>

#include "kernels/tuning.hpp"  // kParallelFloats

namespace attntrace::simd {

namespace {  // internal linkage: compiled once per instruction set (see gemm_simd.hpp)

// f(begin, end) over [0, n): one contiguous range per thread, each begin a
// multiple of `grain` (a register of floats, or a group of rows), when the
// pass touches more than kParallelFloats floats (`work`) and the caller is
// not already inside a parallel region (the fused softmax pass calls the
// same kernels on each thread's row block); otherwise f(0, n) on the
// calling thread. Only for passes whose every element, or every row, is
// computed on its own: any split then gives the same bits. Only the last
// range ends off a grain, so a kernel's tail stays where it was.
template <class F>
void split_ranges(std::size_t n, std::size_t grain, std::size_t work, F&& f) {
    if (work <= kParallelFloats || n <= grain || omp_in_parallel() || omp_get_max_threads() == 1) {
        f(std::size_t{0}, n);
        return;
    }
    const std::size_t units = (n + grain - 1) / grain;
#pragma omp parallel
    {
        const auto t = static_cast<std::size_t>(omp_get_thread_num()), nt = static_cast<std::size_t>(omp_get_num_threads());
        const std::size_t begin = units * t / nt * grain, end = units * (t + 1) / nt * grain;
        if (begin < end && begin < n) f(begin, end < n ? end : n);
    }
}

}  // namespace

}  // namespace attntrace::simd

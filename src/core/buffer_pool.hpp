// BufferPool: a run's step buffers, handed back when freed and handed out
// again to the next step of the same size, so that a stack of blocks writes
// each block's steps into the pages the block before faulted in.
//
// Without it every block's buffers were fresh memory: glibc returns a buffer
// of more than its mmap threshold to the kernel when it is freed, and the
// next one of that size is faulted in again, each page zeroed by the kernel
// first. A Llama-1B-sized forward (16 blocks, 256 tokens, --trace summary,
// one thread) spent 5.3% of `run` zeroing the pages of its steps' buffers
// (`perf record`, 2026-12-08, docs/performance.md).
//
// The pool holds at most `bound` bytes counting the buffers it has handed out
// and not had back: a run bounds it by its plan's estimate of the steps'
// memory, so that reuse never makes the run hold more than the plan said it
// would. A buffer that would pass the bound is freed as before. Not
// thread-safe: the run takes and gives on its own thread.
#pragma once

#include <cstddef>
#include <map>

#include "core/tensor.hpp"

namespace attntrace {

class BufferPool {
public:
    explicit BufferPool(std::size_t bound_bytes = 0) : bound_(bound_bytes) {}
    BufferPool(const BufferPool&) = delete;
    BufferPool& operator=(const BufferPool&) = delete;

    // A tensor of `shape`, its elements unset: a kept buffer of exactly its
    // numel(shape) floats when there is one, else a fresh one (Tensor::uninitialized).
    Tensor take(Shape shape);
    // t's buffer back (t is left empty): kept for a later take() of its size
    // when what is out and kept stays within the bound, else freed.
    void give(Tensor&& t);
    // Frees every kept buffer (the buffers out are not the pool's to free).
    void clear();

    std::size_t bound() const { return bound_; }
    std::size_t kept_bytes() const { return kept_bytes_; }
    // Bytes handed out by take() and not given back (a buffer given that the
    // pool did not hand out lowers it to no less than 0).
    std::size_t out_bytes() const { return out_bytes_; }
    std::size_t kept_count() const { return kept_.size(); }

private:
    std::size_t bound_;
    std::size_t kept_bytes_ = 0, out_bytes_ = 0;
    std::multimap<std::size_t, FloatBuffer> kept_;  // floats -> a buffer of that many
};

}  // namespace attntrace

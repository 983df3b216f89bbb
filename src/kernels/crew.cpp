#include "kernels/crew.hpp"

#include <immintrin.h>
#include <omp.h>
#include <sched.h>

#include <exception>

#include "kernels/tuning.hpp"  // kGemvSpinPauses

namespace attntrace {

namespace {

thread_local Crew* tl_leading = nullptr;

// Spins (then yields the core) until ready() holds.
template <class Ready>
void spin_until(Ready&& ready) {
    for (std::size_t spins = 0; !ready(); ++spins) {
        if (spins < simd::kGemvSpinPauses) _mm_pause();
        else sched_yield();  // the thread waited for may be waiting for this core
    }
}

}  // namespace

Crew::Crew(int threads) : size_(threads), acks_(new Ack[static_cast<std::size_t>(threads > 0 ? threads : 1)]) {}

Crew* Crew::leading() { return tl_leading; }

void Crew::run(int threads, const std::function<void()>& body) {
    if (threads <= 1 || omp_in_parallel()) return body();
    Crew crew(threads);
    std::exception_ptr error;
#pragma omp parallel num_threads(threads)
    {
        const int id = omp_get_thread_num();
        if (id == 0) {
            crew.size_ = omp_get_num_threads();  // (the runtime may give fewer)
            tl_leading = crew.size_ > 1 ? &crew : nullptr;
            try {
                body();
            } catch (...) {
                error = std::current_exception();
            }
            tl_leading = nullptr;
            crew.stop_.store(true, std::memory_order_release);
        } else {
            crew.serve(id);
        }
    }
    if (error) std::rethrow_exception(error);
}

void Crew::all(void (*job)(void*), void* ctx) {
    job_ = job;
    ctx_ = ctx;
    const std::uint64_t s = seq_.fetch_add(1, std::memory_order_acq_rel) + 1;  // publishes job_ and ctx_
    job(ctx);
    for (int id = 1; id < size_; ++id) spin_until([&] { return acks_[static_cast<std::size_t>(id)].seq.load(std::memory_order_acquire) == s; });
}

void Crew::serve(int id) {
    std::uint64_t seen = 0;
    for (;;) {
        std::uint64_t s = 0;
        spin_until([&] {
            s = seq_.load(std::memory_order_acquire);
            return s != seen || stop_.load(std::memory_order_acquire);
        });
        if (s == seen) return;  // stopped, every job left
        seen = s;
        job_(ctx_);
        acks_[static_cast<std::size_t>(id)].seq.store(s, std::memory_order_release);
    }
}

}  // namespace attntrace

// A crew: the OpenMP threads kept awake across a run of small parallel passes.
//
// A decode step is ~73 one-row products (GEMVs) of 0.1-3 ms each. Under
// OMP_WAIT_POLICY=PASSIVE (the benchmarks' setting) libgomp puts its threads
// to sleep between parallel regions, and waking one costs ~30 us in a KVM
// guest whose idle vCPUs halt: each GEMV then ran its first tens of
// microseconds on one thread (docs/performance.md, 2026-12-07). Crew::run
// keeps one parallel region open for a whole decode: its body runs on the
// calling thread (the leader), the other threads spin waiting for the jobs
// the leader posts, and a GEMV inside posts its units as a job (Crew::all)
// instead of opening a region. The units and their sums are the GEMV's own:
// a crew changes who computes a unit, never a bit of the result.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>

namespace attntrace {

class Crew {
public:
    // body() on the calling thread, the other `threads` - 1 serving the jobs it posts until it returns. With
    // one thread, or inside a parallel region, body() alone. An exception from body() is rethrown here,
    // after the helpers have stopped.
    static void run(int threads, const std::function<void()>& body);
    // The crew this thread leads (inside Crew::run's body), else null.
    static Crew* leading();
    // job(ctx) on every thread of the crew, this one included; returns once every helper has left it.
    void all(void (*job)(void*), void* ctx);
    int size() const { return size_; }

private:
    explicit Crew(int threads);
    void serve(int id);

    struct alignas(64) Ack {
        std::atomic<std::uint64_t> seq{0};  // the last job this helper left
    };
    alignas(64) std::atomic<std::uint64_t> seq_{0};  // the jobs posted
    std::atomic<bool> stop_{false};
    void (*job_)(void*) = nullptr;
    void* ctx_ = nullptr;
    int size_ = 1;
    std::unique_ptr<Ack[]> acks_;
};

}  // namespace attntrace

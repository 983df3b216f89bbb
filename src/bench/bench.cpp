#include "bench/bench.hpp"

#include <malloc.h>
#include <omp.h>

#include <algorithm>

#include "kernels/kernels.hpp"
#include "pipeline/run.hpp"

namespace attntrace {

namespace {

// FLOPs of the matrix products of a stage (2 per multiply-add).
double stage_flops(Stage s, const Dims& d) {
    const double T = d.T, Tq = d.Tq, C = d.C, F = d.F;
    switch (s) {
        case Stage::qkv: return 3 * 2 * T * C * C;
        case Stage::scores: return 2 * Tq * T * C;  // NH heads of Tq x hs x T
        case Stage::mix: return 2 * Tq * T * C;
        case Stage::out: return 2 * Tq * C * C;
        case Stage::ffn: return 2 * 2 * T * C * F;
        default: return 0;
    }
}

void summarize(StageTiming& t, std::vector<double> samples) {
    std::sort(samples.begin(), samples.end());
    t.min = samples.front();
    t.max = samples.back();
    t.median = samples[samples.size() / 2];
}

}  // namespace

BenchReport run_bench(const RandomSpec& spec, int repeat, int threads) {
    // Keep freed buffers in the heap so that each run reuses the last run's
    // pages instead of faulting in fresh ones: with glibc's defaults every
    // buffer over 128 KiB is unmapped on free, and the page faults took ~3/4 of
    // the softmax stage (27 ms against 6 ms). Buffers over 32 MiB (glibc's
    // ceiling for this setting) are still mapped fresh each run.
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    BenchReport r;
    r.spec = spec;
    r.repeat = repeat;
    r.threads = threads;
    omp_set_num_threads(threads);
    r.kernels = std::string(kernel_isa());
    r.peak_gflops = measure_fma_peak(threads, 0.3);
    r.have_blas = have_openblas();

    Lesson lesson = parse_lesson(random_lesson_json(spec).dump(), "(bench)");
    const Dims d = lesson.dims();
    std::vector<std::array<double, kStageCount>> per_stage;
    std::vector<double> whole;
    run_lesson(lesson);  // warm-up: page faults, thread start-up
    for (int i = 0; i < repeat; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        Trace t = run_lesson(lesson);
        whole.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        per_stage.push_back(t.stage_seconds);
    }
    for (int s = 0; s < kStageCount; ++s) {
        StageTiming t;
        t.name = std::string(stage_name(static_cast<Stage>(s)));
        std::vector<double> samples;
        for (const auto& p : per_stage) samples.push_back(p[s]);
        summarize(t, samples);
        t.flops = stage_flops(static_cast<Stage>(s), d);
        if (t.flops > 0) {
            t.kernel_median = products_seconds(Backend::ours, static_cast<Stage>(s), d, repeat, threads);
            t.blas_median = products_seconds(Backend::openblas, static_cast<Stage>(s), d, repeat, threads);
        }
        r.stages.push_back(t);
    }
    StageTiming block;
    block.name = "block";
    summarize(block, whole);
    for (const auto& t : r.stages) block.flops += t.flops;
    r.stages.push_back(block);
    return r;
}

}  // namespace attntrace

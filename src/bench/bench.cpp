#include "bench/bench.hpp"

#include <malloc.h>
#include <omp.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "core/memory.hpp"
#include "decode/generate.hpp"
#include "kernels/kernels.hpp"
#include "pipeline/run.hpp"

namespace attntrace {

namespace {

void summarize(StageTiming& t, std::vector<double> samples) {
    std::sort(samples.begin(), samples.end());
    t.min = samples.front();
    t.max = samples.back();
    t.median = samples[samples.size() / 2];
}

// The lesson's shape as a random block's spec would give it (what the report prints).
RandomSpec spec_of(const Lesson& lesson) {
    const Config& c = lesson.config;
    RandomSpec s;
    s.tokens = lesson.dims().T;
    s.d_model = c.d_model;
    s.heads = c.heads;
    s.kv_heads = c.kv_heads == c.heads ? 0 : c.kv_heads;
    s.d_ff = c.d_ff;
    s.mask = c.mask;
    s.activation = c.activation;
    s.norm = c.norm;
    s.arch = c.arch;
    return s;
}

// Passes of `stage` the run makes (one per block, two per decoder block for
// attention's): the products timed alone are one pass's, the stage's timing all of them.
int passes_of(const Lesson& lesson, Stage stage) {
    const auto& passes = lesson.catalogue().passes();
    int n = 0;
    for (int p = lesson.first_pass; p <= lesson.last_pass; ++p) n += passes[static_cast<std::size_t>(p)].stage == stage;
    return n;
}

}  // namespace

BenchReport run_bench(const RandomSpec& spec, int repeat, int threads, const std::vector<TracePolicy>& policies,
                      const ProgressFn& progress) {
    const Lesson lesson = parse_lesson(random_lesson_json(spec).dump(), "(bench)");
    BenchReport r = run_bench(lesson, repeat, threads, policies, progress);
    r.spec = spec;
    return r;
}

BenchReport run_bench(const Lesson& lesson, int repeat, int threads, const std::vector<TracePolicy>& policies,
                      const ProgressFn& progress) {
    // --trace's names, held to this lesson's steps (as run's and export's)
    for (const TracePolicy& p : policies) require_policy_steps(p, lesson.recorded_step_names(), "--trace");
    // Keep freed buffers in the heap so that each run reuses the last run's
    // pages instead of faulting in fresh ones: with glibc's defaults every
    // buffer over 128 KiB is unmapped on free, and the page faults took ~3/4 of
    // the softmax stage (27 ms against 6 ms). Buffers over 32 MiB (glibc's
    // ceiling for this setting) are still mapped fresh each run.
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    // Bigger buffers (n x n steps at n = 2048 are 200 MiB) likewise, through
    // the Tensor allocator's cache: at n = 2048 with the full trace, faulting
    // in 1.2 GiB of fresh pages took ~0.6 s of each ~1.5 s run.
    set_big_buffer_reuse(true);
    BenchReport r;
    r.spec = spec_of(lesson);
    r.repeat = repeat;
    r.threads = threads;
    omp_set_num_threads(threads);
    r.kernels = std::string(kernel_isa());
    r.blocking = gemm_blocking_in_use();
    r.have_blas = have_openblas();

    const Dims d = lesson.dims();
    std::vector<Plan> plans;
    for (const auto& policy : policies) {
        plans.push_back(make_plan(lesson, policy, Arithmetic::exact, threads));
        require_memory(plans.back(), lesson, Arithmetic::exact, threads, max_memory_bytes());
    }
    // Progress, one item at a time: the FMA peak, each run (warm-ups
    // included), the products of each stage timed alone. Reported between
    // timed regions only, so it costs the timings nothing.
    auto fused = [&](const Plan& p, Stage s) {
        return p.stream_attention && (s == Stage::scores || s == Stage::mix);
    };
    int products = 0;
    for (int s = 0; s < kStageCount; ++s)
        products += stage_flops(static_cast<Stage>(s), d) > 0 && !fused(plans[0], static_cast<Stage>(s)) ? 1 : 0;
    const int total = 1 + static_cast<int>(plans.size()) * (1 + repeat) + products;
    int done = 0;
    auto report = [&](const std::string& item) {
        if (progress) progress({"bench", item, done++, total});
    };

    report("FMA peak");
    r.peak_gflops = measure_fma_peak(threads, 0.3);
    r.micro_kernel_gflops = measure_micro_kernel(0.2);
    std::vector<std::vector<std::array<double, kStageCount>>> per_stage(plans.size());
    std::vector<std::vector<double>> whole(plans.size());
    for (const Plan& p : plans) {  // warm-up: page faults, thread start-up
        report("warm-up, trace " + p.policy.describe());
        run_planned(lesson, Arithmetic::exact, p);
    }
    for (int i = 0; i < repeat; ++i)
        for (std::size_t k = 0; k < plans.size(); ++k) {
            report(fmt::format("run {}/{}, trace {}", i + 1, repeat, plans[k].policy.describe()));
            const auto t0 = std::chrono::steady_clock::now();
            Trace t = run_planned(lesson, Arithmetic::exact, plans[k]);
            whole[k].push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
            per_stage[k].push_back(t.stage_seconds);
        }
    for (std::size_t k = 0; k < plans.size(); ++k) {
        PolicyTimings pt;
        pt.policy = plans[k].policy;
        pt.streamed_attention = plans[k].stream_attention;
        pt.estimated_peak = plans[k].peak_bytes;
        for (int s = 0; s < kStageCount; ++s) {
            const Stage stage = static_cast<Stage>(s);
            // The rope stage records nothing without RoPE; the unembedding runs only with config.unembed.
            if (!lesson.runs(stage) || (stage == Stage::rope && lesson.config.positions.kind != PositionKind::rope)) continue;
            StageTiming t;
            t.name = std::string(stage_name(stage));
            std::vector<double> samples;
            for (const auto& p : per_stage[k]) samples.push_back(p[s]);
            summarize(t, samples);
            // Every pass of the stage (each block's): the timings sum over them too.
            t.flops = stage_kind_flops(lesson, stage);
            // Streamed attention runs the scores' products inside the mix stage.
            if (pt.streamed_attention && stage == Stage::scores) t.flops = 0;
            if (pt.streamed_attention && stage == Stage::mix) t.flops += stage_kind_flops(lesson, Stage::scores);
            if (k == 0 && t.flops > 0 && !fused(plans[k], stage)) {
                report(fmt::format("{} products alone", stage_name(stage)));
                // one pass's products, timed alone, times the passes: as t.flops counts them
                const Activation act = lesson.config.activation;
                const int n = passes_of(lesson, stage);
                t.kernel_median = n * products_seconds(Backend::ours, stage, d, repeat, threads, act);
                t.blas_median = n * products_seconds(Backend::openblas, stage, d, repeat, threads, act);
            }
            pt.stages.push_back(t);
        }
        StageTiming block;
        block.name = "block";
        summarize(block, whole[k]);
        for (const auto& t : pt.stages) block.flops += t.flops;
        pt.stages.push_back(block);
        r.runs.push_back(std::move(pt));
    }
    set_big_buffer_reuse(false);
    if (progress) progress({"bench", {}, total, total});
    return r;
}

GenerateBench bench_generate(HfModel& m, std::size_t n, int threads) {
    GenerateBench b;
    b.model_type = m.model_type;
    b.model_dir = m.dir;
    b.threads = threads;
    b.kernels = std::string(kernel_isa());
    b.prompt = m.lesson.token_ids.size();
    using Clock = std::chrono::steady_clock;
    const Clock::time_point start = Clock::now();
    Clock::time_point last = start;
    generate(m, static_cast<std::int64_t>(n), 1, Sampling{}, [&](std::size_t) {
        const Clock::time_point now = Clock::now();
        b.window_s.push_back(std::chrono::duration<double>(now - last).count());
        last = now;
    });
    b.total_s = std::chrono::duration<double>(Clock::now() - start).count();
    return b;
}

}  // namespace attntrace

// attntrace bench: times each stage of the encoder block on a random lesson
// (or of a checkpoint's stack, bench --model), against the machine's FMA peak
// and, when the build found OpenBLAS, against cblas_sgemm on the same matrix
// shapes in the same run.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "core/progress.hpp"
#include "kernels/blocking.hpp"
#include "lesson/random_lesson.hpp"
#include "model/hf_model.hpp"
#include "trace/policy.hpp"
#include "trace/steps.hpp"

namespace attntrace {

struct StageTiming {
    std::string name;            // a stage name, or "block" for the whole
    double median = 0, min = 0, max = 0;  // seconds over the repeats
    double flops = 0;            // floating-point operations of its matrix products (0: element-wise only)
    double kernel_median = 0;    // our GEMM alone on the same shapes, warm buffers (0: no products)
    double blas_median = 0;      // cblas_sgemm likewise (0: no OpenBLAS, or no products)
};

// One trace policy's timings: each stage, then "block" for the whole.
struct PolicyTimings {
    TracePolicy policy;
    bool streamed_attention = false;  // scores..softmax ran inside "mix", over key blocks
    std::size_t estimated_peak = 0;   // the plan's memory estimate (bytes)
    std::vector<StageTiming> stages;  // in pipeline order, then "block"
};

struct BenchReport {
    RandomSpec spec;  // the block's shape: the random block's, or the checkpoint's as a spec would give it
    // A checkpoint's stack (bench --model): its model_type ("bert"), its
    // folder and the lesson's title; empty for a random block.
    std::string model_type, model_dir, model_title;
    int threads = 1;
    int repeat = 5;
    std::string kernels;          // avx512, avx2, sse4.2, ref
    GemmBlockingInUse blocking;   // the GEMM's cache blocks and where they came from
    double peak_gflops = 0;       // measured at start, on `threads` threads
    double micro_kernel_gflops = 0;  // the GEMM's micro-kernel alone, one thread, after the peak (0: scalar kernels)
    bool have_blas = false;
    std::vector<PolicyTimings> runs;  // one per policy, in the order asked; products on the first's stages
};

// Runs the block `repeat` times (after one warm-up run) on `threads` threads
// under each policy, the policies interleaved run by run so that a noisy
// neighbour slows them alike. `progress` hears of each run as it starts.
BenchReport run_bench(const RandomSpec& spec, int repeat, int threads, const std::vector<TracePolicy>& policies,
                      const ProgressFn& progress = {});
// The same for a lesson already built (a checkpoint's stack from its folder);
// the report's spec describes the lesson's shape. A checkpoint's weights are
// converted when their block's passes run, in every run, so each stage's
// time includes converting its weights, as a run's does.
BenchReport run_bench(const Lesson& lesson, int repeat, int threads, const std::vector<TracePolicy>& policies,
                      const ProgressFn& progress = {});

// bench --model DIR --generate N: the checkpoint's prompt and N generated
// tokens as decode --generate runs them (decode/generate.hpp: every window
// one row against the KV caches, greedy), each window timed: what a token
// costs. The first window also converts the weights the decode holds across
// its tokens (HeldWeights).
struct GenerateBench {
    std::string model_type, model_dir;
    int threads = 1;
    std::string kernels;
    std::size_t prompt = 0;         // the prompt's tokens (its windows come first)
    std::vector<double> window_s;   // each window's seconds: the prompt's, then the generated tokens'
    double total_s = 0;             // generate() whole, sampling and the report included
};
GenerateBench bench_generate(HfModel& m, std::size_t n, int threads);

enum class Backend { ours, openblas };
// The matrix products of `stage`, in the pipeline's shapes and layouts, timed
// alone on warm buffers: the median over `repeat` runs in seconds (0 for
// OpenBLAS when the build has none).
// `activation`: SwiGLU's FFN has a third product (X·W_3).
double products_seconds(Backend backend, Stage stage, const Dims& d, int repeat, int threads,
                        Activation activation = Activation::relu);
bool have_openblas();

}  // namespace attntrace

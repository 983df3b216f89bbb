// `attntrace bench`'s report for people (stage timings against the FMA peak
// and OpenBLAS) and as JSON (format "attntrace-bench").
#include "render/bench_view.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "core/memory.hpp"
#include "lesson/lesson.hpp"

namespace attntrace {

namespace {

void print_stages(std::ostream& out, const BenchReport& r, const PolicyTimings& run, bool products) {
    out << fmt::format("{:<8} {:>10} {:>8} {:>8} {:>8} {:>7} {:>7}", "stage", "median ms", "min ms", "max ms",
                       "GFLOP/s", "% peak", "GFLOP");
    if (products) out << fmt::format(" | {:>8} {:>9} {:>9}", "kernel", "OpenBLAS", "BLAS/ours");
    out << "\n";
    for (const auto& t : run.stages) {
        if (t.median == 0 && t.name != "block") continue;
        std::string gf = "-", pk = "-", gflop = "-", kern = "-", blas = "-", ratio = "-";
        if (t.flops > 0) {
            const double g = t.flops / t.median / 1e9;
            gf = fmt::format("{:.1f}", g);
            gflop = fmt::format("{:.2f}", t.flops / 1e9);
            if (r.peak_gflops > 0) pk = fmt::format("{:.0f}%", 100 * g / r.peak_gflops);
        }
        if (t.kernel_median > 0) kern = fmt::format("{:.1f}", t.flops / t.kernel_median / 1e9);
        if (t.blas_median > 0) {
            blas = fmt::format("{:.1f}", t.flops / t.blas_median / 1e9);
            ratio = fmt::format("{:.2f}", t.blas_median / t.kernel_median);  // 1: as fast as OpenBLAS
        }
        const std::string name = t.name == "mix" && run.streamed_attention ? "attn*" : t.name;
        out << fmt::format("{:<8} {:>10.2f} {:>8.2f} {:>8.2f} {:>8} {:>7} {:>7}", name, 1e3 * t.median,
                           1e3 * t.min, 1e3 * t.max, gf, pk, gflop);
        if (products) out << fmt::format(" | {:>8} {:>9} {:>9}", kern, blas, ratio);
        out << "\n";
    }
}

}  // namespace

void render_bench(std::ostream& out, const BenchReport& r, bool passive_wait) {
    const auto& s = r.spec;
    const std::string model = fmt::format("{}{}{}", s.arch.blocks > 1 ? fmt::format(" blocks={}", s.arch.blocks) : "",
                                          s.arch.norm_first ? " pre-norm" : "", s.arch.decoder ? " decoder" : "");
    const std::string shape = fmt::format("d_model={} heads={}{} d_ff={} mask {} {}", s.d_model, s.heads,
                                          s.kv_heads ? fmt::format(" kv_heads={}", s.kv_heads) : "", s.d_ff,
                                          mask_name(s.mask_kind()), activation_name(s.activation));
    if (r.model_type.empty())
        out << fmt::format("attntrace bench: T={} {}{}", s.tokens, shape, model);
    else  // what was benched: the checkpoint's type, its blocks and the tokens it read
        out << fmt::format("attntrace bench --model {}: model {}, {} blocks, {} tokens, {}{}", r.model_dir, r.model_type,
                           s.arch.blocks, s.tokens, shape, s.arch.norm_first ? " pre-norm" : " post-norm");
    out << fmt::format(" | threads {} | kernels {} | {} repeats after a warm-up (median, min, max), freed buffers reused "
                       "between runs\n",
                       r.threads, r.kernels, r.repeat);
    if (r.threads > 1 && r.have_blas && !passive_wait)
        out << "note: OpenMP's and OpenBLAS's threads spin against each other on busy cores (docs/performance.md): for the "
               "comparison, run with OMP_WAIT_POLICY=PASSIVE\n";
    out << fmt::format("FMA peak measured now: {:.1f} GFLOP/s on {} thread(s){}\n", r.peak_gflops, r.threads,
                       r.have_blas ? "" : "   (no OpenBLAS in this build: install libopenblas-dev and rebuild to "
                                          "compare)");
    out << "GEMM blocking: " << describe_blocking(r.blocking) << "\n";
    if (r.micro_kernel_gflops > 0) {
        // The peak was measured on r.threads threads, the micro-kernel on one: compare with one thread's share.
        const double one = r.peak_gflops / std::max(1, r.threads);
        out << fmt::format("GEMM micro-kernel alone ({}x{} tile, kc {}, packed blocks in cache, 1 thread): {:.1f} GFLOP/s{}\n",
                           r.blocking.tile.mr, r.blocking.tile.nr, r.blocking.blocking.kc, r.micro_kernel_gflops,
                           one > 0 ? fmt::format(", {:.0f}% of one thread's peak", 100 * r.micro_kernel_gflops / one) : "");
    }
    for (std::size_t k = 0; k < r.runs.size(); ++k) {
        const auto& run = r.runs[k];
        out << fmt::format("\ntrace {}{} (estimated peak memory {})\n", run.policy.describe(),
                           run.streamed_attention ? ", attention streamed over key blocks" : "",
                           human_bytes(run.estimated_peak));
        print_stages(out, r, run, k == 0);
    }
    if (r.runs.size() > 1) {
        const double base = r.runs[0].stages.back().median;
        out << "\nblock median against trace " << r.runs[0].policy.describe() << ":";
        for (std::size_t k = 1; k < r.runs.size(); ++k)
            out << fmt::format("  {} {:.3f}", r.runs[k].policy.describe(), r.runs[k].stages.back().median / base);
        out << "\n";
    }
    if (!r.model_type.empty())
        out << "\nEach stage summed over the blocks (row block: the whole stack), converting its weights from the\n"
               "checkpoint as a run does.";
    out << "\nTimes in ms to 2 decimals, GFLOP/s to 1, GFLOP and BLAS/ours to 2 (every column one fixed format).\n"
           "Left: each stage inside the block (fresh buffers: page faults count); attn*: scores, scale, mask,\n"
           "softmax and mix fused, streamed over key blocks. Right (first policy): the stage's matrix products\n"
           "alone on warm buffers, GFLOP/s of our kernels and of OpenBLAS; BLAS/ours is OpenBLAS's time over\n"
           "ours (1.00: as fast; above: faster than OpenBLAS).\n";
}

OrderedJson bench_json(const BenchReport& r) {
    OrderedJson j;
    j["format"] = "attntrace-bench";
    j["version"] = 2;  // 2: "runs", one per trace policy
    if (!r.model_type.empty())  // bench --model: the checkpoint benched (its shape below, as a random block's)
        j["model"] = {{"type", r.model_type}, {"dir", r.model_dir}, {"title", r.model_title}};
    j["tokens"] = r.spec.tokens;
    j["d_model"] = r.spec.d_model;
    j["heads"] = r.spec.heads;
    j["kv_heads"] = r.spec.kv_heads ? r.spec.kv_heads : r.spec.heads;
    j["d_ff"] = r.spec.d_ff;
    j["mask"] = std::string(mask_name(r.spec.mask_kind()));
    j["blocks"] = r.spec.arch.blocks;
    j["norm_first"] = r.spec.arch.norm_first;
    j["block"] = r.spec.arch.decoder ? "decoder" : "encoder";
    j["threads"] = r.threads;
    j["repeat"] = r.repeat;
    j["kernels"] = r.kernels;
    j["trace"] = r.runs[0].policy.describe();
    j["fma_peak_gflops"] = r.peak_gflops;
    j["micro_kernel_gflops"] = r.micro_kernel_gflops;
    j["openblas"] = r.have_blas;
    if (r.blocking.tile.mr) {
        const auto& b = r.blocking;
        j["gemm_blocking"] = {{"kc", b.blocking.kc}, {"mc", b.blocking.mc}, {"nc", b.blocking.nc},
                              {"mr", b.tile.mr}, {"nr", b.tile.nr},
                              {"source", b.derived ? b.caches.source : std::string("measured fallback")},
                              {"l1d_bytes", b.caches.l1d.bytes}, {"l2_bytes", b.caches.l2.bytes},
                              {"l3_bytes_per_core", b.caches.l3.bytes / std::max<std::size_t>(1, b.caches.l3.sharing)}};
    }
    auto stages_json = [](const PolicyTimings& run) {
        OrderedJson stages = OrderedJson::array();
        for (const auto& t : run.stages) {
            OrderedJson s;
            s["stage"] = t.name;
            s["median_s"] = t.median;
            s["min_s"] = t.min;
            s["max_s"] = t.max;
            s["flops"] = t.flops;
            if (t.kernel_median > 0) s["kernel_median_s"] = t.kernel_median;
            if (t.blas_median > 0) s["openblas_median_s"] = t.blas_median;
            stages.push_back(std::move(s));
        }
        return stages;
    };
    j["stages"] = stages_json(r.runs[0]);  // the first policy's, as in version 1
    OrderedJson runs = OrderedJson::array();
    for (const auto& run : r.runs)
        runs.push_back({{"trace", run.policy.describe()},
                        {"streamed_attention", run.streamed_attention},
                        {"estimated_peak_bytes", run.estimated_peak},
                        {"stages", stages_json(run)}});
    j["runs"] = std::move(runs);
    return j;
}

}  // namespace attntrace

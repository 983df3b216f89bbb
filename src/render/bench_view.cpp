// `attntrace bench`'s report for people (stage timings against the FMA peak
// and OpenBLAS) and as JSON (format "attntrace-bench").
#include "render/bench_view.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/memory.hpp"
#include "lesson/lesson.hpp"
#include "render/text_table.hpp"
#include "render/wrap.hpp"

namespace attntrace {

namespace {

// The stages' columns, then, for the first policy, the products' behind a "|".
const std::vector<TextColumn> kStageColumns{{"stage"},          {"median ms", true}, {"min ms", true}, {"max ms", true},
                                            {"GFLOP/s", true},  {"% peak", true},    {"GFLOP", true}};
const std::vector<TextColumn> kProductColumns{{"kernel", true}, {"OpenBLAS", true}, {"BLAS/ours", true}};

// Each stage's row: its timings, then the products' cells.
std::vector<std::vector<std::string>> stage_rows(const BenchReport& r, const PolicyTimings& run) {
    std::vector<std::vector<std::string>> rows;
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
        rows.push_back({name, fmt::format("{:.2f}", 1e3 * t.median), fmt::format("{:.2f}", 1e3 * t.min),
                        fmt::format("{:.2f}", 1e3 * t.max), gf, pk, gflop, "|", kern, blas, ratio});
    }
    return rows;
}

// The stages' table; with `products`, their columns beside it behind a "|", or when that is wider than
// `width` a table of their own below (the stages with products: name, then the products' columns). Returns whether
// they were put below.
bool print_stages(std::ostream& out, const BenchReport& r, const PolicyTimings& run, bool products, std::size_t width) {
    const auto rows = stage_rows(r, run);
    auto pick = [&](std::size_t from, std::size_t to) {
        std::vector<std::vector<std::string>> picked;
        for (const auto& row : rows) {
            if (std::all_of(row.begin() + from, row.begin() + to, [](const std::string& c) { return c == "-"; })) continue;
            picked.push_back({row[0]});
            picked.back().insert(picked.back().end(), row.begin() + from, row.begin() + to);
        }
        return picked;
    };
    std::vector<TextColumn> all = kStageColumns;
    all.push_back({"|"});
    all.insert(all.end(), kProductColumns.begin(), kProductColumns.end());
    std::vector<std::vector<std::string>> stage_only;
    for (const auto& row : rows) stage_only.emplace_back(row.begin(), row.begin() + 7);
    if (!products) {
        out << format_text_table(kStageColumns, stage_only, width, "", 2);
        return false;
    }
    if (table_fits(all, rows, width, "", 2)) {
        out << format_text_table(all, rows, width, "", 2);
        return false;
    }
    out << format_text_table(kStageColumns, stage_only, width, "", 2);
    std::vector<TextColumn> below{{"stage"}};
    below.insert(below.end(), kProductColumns.begin(), kProductColumns.end());
    out << "the stages' matrix products alone (GFLOP/s):\n" << format_text_table(below, pick(8, 11), width, "", 2);
    return true;
}

}  // namespace

void render_bench(std::ostream& out, const BenchReport& r, bool passive_wait, std::size_t width) {
    const auto& s = r.spec;
    // "mask causal", "threads 2", "kc 1024": a name stays on the line of its value
    const std::string model = fmt::format("{}{}{}", s.arch.blocks > 1 ? fmt::format(" blocks={}", s.arch.blocks) : "",
                                          s.arch.norm_first ? " pre-norm" : "", s.arch.decoder ? " decoder" : "");
    const std::string shape = fmt::format("d_model={} heads={}{} d_ff={} {} {}", s.d_model, s.heads,
                                          s.kv_heads ? fmt::format(" kv_heads={}", s.kv_heads) : "", s.d_ff,
                                          unbroken(fmt::format("mask {}", mask_name(s.mask_kind()))),
                                          activation_name(s.activation));
    std::string head;
    if (r.model_type.empty())
        head = fmt::format("attntrace bench: T={} {}{}", s.tokens, shape, model);
    else  // what was benched: the checkpoint's type, its blocks and the tokens it read
        head = fmt::format("attntrace bench --model {}: {}, {}, {}, {}{}", r.model_dir, unbroken("model " + r.model_type),
                           unbroken(fmt::format("{} blocks", s.arch.blocks)), unbroken(fmt::format("{} tokens", s.tokens)),
                           shape, s.arch.norm_first ? " pre-norm" : " post-norm");
    out << wrap_text(fmt::format("{} | {} | {} | {} after a warm-up (median, min, max), freed buffers reused between runs",
                                 head, unbroken(fmt::format("threads {}", r.threads)),
                                 unbroken(fmt::format("kernels {}", r.kernels)),
                                 unbroken(fmt::format("{} repeats", r.repeat))),
                     width, "", "    ");
    if (r.threads > 1 && r.have_blas && !passive_wait)
        out << wrap_text("note: OpenMP's and OpenBLAS's threads spin against each other on busy cores "
                         "(docs/performance.md): for the comparison, run with OMP_WAIT_POLICY=PASSIVE",
                         width, "", "      ");
    out << wrap_text(fmt::format("FMA peak measured now: {} on {}{}", unbroken(fmt::format("{:.1f} GFLOP/s", r.peak_gflops)),
                                 unbroken(fmt::format("{} thread(s)", r.threads)),
                                 r.have_blas ? "" : "   (no OpenBLAS in this build: install libopenblas-dev and rebuild to "
                                                    "compare)"),
                     width, "", "    ");
    out << wrap_text("GEMM blocking: " + unbroken_items(describe_blocking(r.blocking)), width, "", "    ");
    if (r.micro_kernel_gflops > 0) {
        // The peak was measured on r.threads threads, the micro-kernel on one: compare with one thread's share.
        const double one = r.peak_gflops / std::max(1, r.threads);
        out << wrap_text(fmt::format("GEMM micro-kernel alone ({}x{} tile, {}, packed blocks in cache, {}: {}{}",
                                     r.blocking.tile.mr, r.blocking.tile.nr,
                                     unbroken(fmt::format("kc {}", r.blocking.blocking.kc)), unbroken("1 thread)"),
                                     unbroken(fmt::format("{:.1f} GFLOP/s", r.micro_kernel_gflops)),
                                     one > 0 ? fmt::format(", {:.0f}% of one thread's peak", 100 * r.micro_kernel_gflops / one)
                                             : ""),
                         width, "", "    ");
    }
    bool below = false;
    for (std::size_t k = 0; k < r.runs.size(); ++k) {
        const auto& run = r.runs[k];
        out << "\n"
            << wrap_text(fmt::format("trace {}{} (estimated peak memory {})", run.policy.describe(),
                                     run.streamed_attention ? ", attention streamed over key blocks" : "",
                                     unbroken(human_bytes(run.estimated_peak))),
                         width, "", "    ");
        below = print_stages(out, r, run, k == 0, width) || below;
    }
    if (r.runs.size() > 1) {
        const double base = r.runs[0].stages.back().median;
        std::string ratios;
        for (std::size_t k = 1; k < r.runs.size(); ++k)
            ratios += fmt::format("  {}", unbroken(fmt::format("{} {:.3f}", r.runs[k].policy.describe(),
                                                                r.runs[k].stages.back().median / base)));
        out << "\n" << wrap_text("block median against trace " + r.runs[0].policy.describe() + ":" + ratios, width, "", "    ");
    }
    out << "\n";
    if (!r.model_type.empty())
        out << wrap_text("Each stage summed over the blocks (row block: the whole stack), converting its weights from the "
                         "checkpoint as a run does.",
                         width, "", "");
    out << wrap_text("Times in ms to 2 decimals, GFLOP/s to 1, GFLOP and BLAS/ours to 2 (every column one fixed format).",
                     width, "", "")
        << wrap_text(std::string(below ? "The stages' tables" : "Left") +
                         ": each stage inside the block (fresh buffers: page faults count); attn*: scores, scale, mask, "
                         "softmax and mix fused, streamed over key blocks. " +
                         (below ? "The products' table" : "Right") +
                         " (first policy): the stage's matrix products alone on warm buffers, GFLOP/s of our kernels and "
                         "of OpenBLAS; BLAS/ours is OpenBLAS's time over ours (1.00: as fast; above: faster than "
                         "OpenBLAS).",
                     width, "", "");
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

namespace {

struct Spread {
    double median = 0, min = 0, max = 0;
};
// Over windows [from, to) of b.window_s (none: zeros).
Spread spread(const GenerateBench& b, std::size_t from, std::size_t to) {
    std::vector<double> xs(b.window_s.begin() + static_cast<std::ptrdiff_t>(std::min(from, b.window_s.size())),
                           b.window_s.begin() + static_cast<std::ptrdiff_t>(std::min(to, b.window_s.size())));
    if (xs.empty()) return {};
    std::sort(xs.begin(), xs.end());
    const std::size_t h = xs.size() / 2;
    return {xs.size() % 2 ? xs[h] : (xs[h - 1] + xs[h]) / 2, xs.front(), xs.back()};
}

}  // namespace

void render_generate_bench(std::ostream& out, const GenerateBench& b) {
    const std::size_t generated = b.window_s.size() > b.prompt ? b.window_s.size() - b.prompt : 0;
    out << fmt::format("{} ({}), {} thread{}, kernels {}: {} prompt tokens, {} generated, one row against the KV caches each\n",
                       b.model_dir, b.model_type, b.threads, b.threads == 1 ? "" : "s", b.kernels, b.prompt, generated);
    const auto line = [&](const char* what, const Spread& s, std::size_t n) {
        if (n) out << fmt::format("  {:<28} {:8.2f} ms a token (min {:.2f}, max {:.2f}; {} tokens)\n", what, 1e3 * s.median,
                                  1e3 * s.min, 1e3 * s.max, n);
    };
    if (!b.window_s.empty()) out << fmt::format("  {:<28} {:8.2f} ms (converts the weights it holds)\n", "first window", 1e3 * b.window_s.front());
    line("the prompt's other windows", spread(b, 1, b.prompt), b.prompt > 1 ? b.prompt - 1 : 0);
    line("generated tokens", spread(b, b.prompt, b.window_s.size()), generated);
    out << fmt::format("  {:<28} {:8.3f} s\n", "in all", b.total_s);
}

OrderedJson generate_bench_json(const GenerateBench& b) {
    OrderedJson j;
    j["format"] = "attntrace-bench-generate";
    j["version"] = 1;
    j["model_dir"] = b.model_dir;
    j["model_type"] = b.model_type;
    j["threads"] = b.threads;
    j["kernels"] = b.kernels;
    j["prompt_tokens"] = b.prompt;
    j["generated_tokens"] = b.window_s.size() > b.prompt ? b.window_s.size() - b.prompt : 0;
    const Spread g = spread(b, b.prompt, b.window_s.size());
    j["generated_median_s"] = g.median;
    j["generated_min_s"] = g.min;
    j["generated_max_s"] = g.max;
    j["window_s"] = b.window_s;
    j["total_s"] = b.total_s;
    return j;
}

}  // namespace attntrace

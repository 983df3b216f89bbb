// attntrace bench: stage timings of a random block against the FMA peak and OpenBLAS.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <omp.h>

#include <cstdlib>
#include <ostream>

#include "bench/bench.hpp"
#include "core/memory.hpp"
#include "cli/commands.hpp"
#include "cli/progress.hpp"
#include "render/bench_view.hpp"
#include "trace/json_text.hpp"

namespace attntrace {

void add_bench_command(CLI::App& app, CliContext& cli) {
    struct Opts {
        RandomSpec spec;
        int repeat = 5;
        bool json = false;
        std::vector<std::string> traces{"full"};
    };
    auto opts = std::make_shared<Opts>();
    opts->spec.tokens = 512;
    opts->spec.d_model = 768;
    opts->spec.heads = 12;
    opts->spec.d_ff = 3072;
    auto* cmd = app.add_subcommand("bench", "Time each stage of a random encoder block (defaults: BERT-base, 512 "
                                            "tokens) with a trace policy (default full): median, min and max over repeated "
                                            "runs, GFLOP/s, the share of the FMA peak measured at start, and, when "
                                            "built with OpenBLAS, cblas_sgemm on the same shapes in the same run.");
    add_random_options(*cmd, opts->spec);
    cmd->add_option("--repeat", opts->repeat, "Timed runs (after one warm-up)")->capture_default_str()->check(CLI::Range(1, 1000));
    cmd->add_option("--trace", opts->traces,
                    "Trace policy: full (default), summary, none, or step names/globs. Repeat it to time several "
                    "policies in one run, interleaved (e.g. --trace full --trace none)");
    cmd->add_flag("--json", opts->json, "Machine-readable output");
    cmd->footer("Examples:\n  attntrace bench\n  attntrace --threads 2 bench --tokens 2048 --repeat 3\n"
                "  attntrace --threads 1 bench --tokens 2048 --trace full --trace none\n"
                "  attntrace bench --tokens 128 --d-model 64 --heads 4 --d-ff 256 --json\n"
                "  attntrace --threads 1 bench --tokens 2048 --kv-heads 4 --trace none");
    cmd->callback([opts, &cli] {
        if (opts->spec.d_model % opts->spec.heads != 0) throw CLI::ValidationError("--heads", "must divide --d-model");
        if (opts->spec.kv_heads && opts->spec.heads % opts->spec.kv_heads != 0)
            throw CLI::ValidationError("--kv-heads", "must divide --heads");
        std::vector<TracePolicy> policies;
        for (const auto& t : opts->traces) policies.push_back(parse_trace_policy(t, "--trace"));
        // Always a long run (an FMA peak measurement, a warm-up and the repeats).
        ProgressLine progress(cli, true);
        BenchReport r = run_bench(opts->spec, opts->repeat, omp_get_max_threads(), policies, progress.callback());
        progress.clear();
        if (opts->json) {
            cli.out << dump_readable(bench_json(r));
        } else {
            const char* wait = std::getenv("OMP_WAIT_POLICY");
            render_bench(cli.out, r, wait && std::string(wait) == "PASSIVE");
        }
        cli.status = 0;
    });
}

}  // namespace attntrace

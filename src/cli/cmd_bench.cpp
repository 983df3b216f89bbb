// attntrace bench: stage timings of a random block, or of a checkpoint's stack
// (--model DIR), against the FMA peak and OpenBLAS; a checkpoint's decode,
// ms per token (--model DIR --generate N).
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <omp.h>

#include <cstdlib>
#include <optional>
#include <ostream>

#include "bench/bench.hpp"
#include "decode/generate.hpp"
#include "model/hf_model.hpp"
#include "core/error.hpp"
#include "core/memory.hpp"
#include "cli/commands.hpp"
#include "cli/count_flags.hpp"
#include "cli/progress.hpp"
#include "cli/terminal.hpp"
#include "render/bench_view.hpp"
#include "trace/json_text.hpp"

namespace attntrace {

namespace {

void print_bench(CliContext& cli, const BenchReport& r, bool json) {
    if (json) {
        cli.out << dump_readable(bench_json(r));
    } else {
        const char* wait = std::getenv("OMP_WAIT_POLICY");
        render_bench(cli.out, r, wait && std::string(wait) == "PASSIVE", terminal_style(cli.color, cli.host).width);
    }
    cli.status = 0;
}

}  // namespace

void add_bench_command(CLI::App& app, CliContext& cli) {
    struct Opts {
        RandomSpec spec;
        ModelOptions model;
        int repeat = 5;
        bool json = false;
        std::vector<std::string> traces{"full"};
        std::optional<std::int64_t> generate;
    };
    auto opts = std::make_shared<Opts>();
    opts->spec.tokens = 512;
    opts->spec.d_model = 768;
    opts->spec.heads = 12;
    opts->spec.d_ff = 3072;
    auto* cmd = app.add_subcommand("bench", "Time each stage of a random encoder block (defaults: BERT-base, 512 "
                                            "tokens) with a trace policy (default full): median, min and max over repeated "
                                            "runs, GFLOP/s, the share of the FMA peak measured at start, and, when "
                                            "built with OpenBLAS, cblas_sgemm on the same shapes in the same run. With --model DIR and "
                                            "--text or --ids: the checkpoint's stack instead, stage by stage over its blocks.");
    add_random_options(*cmd, opts->spec);
    add_model_options(*cmd, opts->model, false);
    cmd->add_option("--repeat", opts->repeat, "Timed runs (after one warm-up)")->capture_default_str()->check(CLI::Range(1, 1000));
    cmd->add_option("--trace", opts->traces,
                    "Trace policy: full (default), summary, none, or step names/globs. Repeat it to time several "
                    "policies in one run, interleaved (e.g. --trace full --trace none)");
    cmd->add_option("--generate", opts->generate,
                    "With --model: time decode --generate instead, the prompt then N tokens (1..1024), each one row "
                    "against the KV caches: ms per token (the windows' median, min and max)")
        ->check(non_negative());
    cmd->add_flag("--json", opts->json, "Machine-readable output");
    cmd->footer("Examples:\n  attntrace bench\n  attntrace --threads 2 bench --tokens 2048 --repeat 3\n"
                "  attntrace --threads 1 bench --tokens 2048 --trace full --trace none\n"
                "  attntrace bench --tokens 128 --d-model 64 --heads 4 --d-ff 256 --json\n"
                "  attntrace --threads 1 bench --tokens 2048 --kv-heads 4 --trace none\n"
                "  attntrace --threads 1 bench --model tests/models/tiny-bert --text \"the ring fell\" --trace full --trace none\n"
                "  attntrace --threads 1 bench --model tests/models/tiny-gpt2 --text \"the ring fell\" --generate 16");
    // The random block's options: its shape and seed; a checkpoint's come from config.json and its input.
    static const char* const kRandomOptions[] = {"--tokens", "--d-model", "--heads", "--kv-heads",   "--d-ff",   "--seed",
                                                 "--mask",   "--activation", "--norm", "--blocks", "--norm-first", "--decoder"};
    cmd->callback([opts, &cli, cmd] {
        std::vector<TracePolicy> policies;
        for (const auto& t : opts->traces) policies.push_back(parse_trace_policy(t, "--trace"));
        const ModelOptions& m = opts->model;
        if (m.given() || m.text || !m.ids.empty()) {
            std::vector<std::string> given;
            for (const char* name : kRandomOptions)
                if (cmd->get_option(name)->count() > 0) given.push_back(name);
            if (!given.empty())
                fail_file("--model", "none of a random block's options beside it (config.json and --text or --ids give the "
                                     "stack's shape)",
                          fmt::format("{}", fmt::join(given, ", ")));
            HfModel model = load_model_option(m);
            if (opts->generate) {
                if (cmd->get_option("--trace")->count() > 0 || cmd->get_option("--repeat")->count() > 0)
                    fail_file("--generate", "no --trace or --repeat beside it (each window is timed once)",
                              cmd->get_option("--trace")->count() > 0 ? "--trace" : "--repeat");
                if (const GenerateRefusal g = generate_refusal(model, *opts->generate); !g.expected.empty())
                    fail_file("--generate", g.expected, g.found);
                const GenerateBench b = bench_generate(model, static_cast<std::size_t>(*opts->generate), omp_get_max_threads());
                if (opts->json) cli.out << dump_readable(generate_bench_json(b));
                else render_generate_bench(cli.out, b);
                cli.status = 0;
                return;
            }
            ProgressLine progress(cli, true);
            BenchReport r = run_bench(model.lesson, opts->repeat, omp_get_max_threads(), policies, progress.callback());
            progress.clear();
            r.model_type = model.model_type;
            r.model_dir = model.dir;
            r.model_title = model.lesson.title;
            print_bench(cli, r, opts->json);
            return;
        }
        if (opts->generate) fail_file("--generate", "--model DIR beside it (a random block has no next token)", "no --model");
        if (opts->spec.d_model % opts->spec.heads != 0) throw CLI::ValidationError("--heads", "must divide --d-model");
        if (opts->spec.kv_heads && opts->spec.heads % opts->spec.kv_heads != 0)
            throw CLI::ValidationError("--kv-heads", "must divide --heads");
        // Always a long run (an FMA peak measurement, a warm-up and the repeats).
        ProgressLine progress(cli, true);
        BenchReport r = run_bench(opts->spec, opts->repeat, omp_get_max_threads(), policies, progress.callback());
        progress.clear();
        print_bench(cli, r, opts->json);
    });
}

}  // namespace attntrace

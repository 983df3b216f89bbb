// attntrace cost: memory and FLOPs of attention from the shapes alone.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cmath>
#include <ostream>
#include <map>

#include "cli/commands.hpp"
#include "cli/count_flags.hpp"
#include "cli/terminal.hpp"
#include "core/error.hpp"
#include "cost/cost.hpp"
#include "render/cost_view.hpp"

namespace attntrace {

namespace {

// "32K" = 32768: K, M and G count in powers of 1024, as the articles' "1K
// tokens" and "128K context" do.
std::uint64_t parse_count(const std::string& text, const std::string& flag) {
    std::size_t used = 0;
    unsigned long long v = 0;
    try {
        v = std::stoull(text, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    std::uint64_t unit = 1;
    if (used + 1 == text.size()) {
        const char u = static_cast<char>(std::toupper(static_cast<unsigned char>(text.back())));
        unit = u == 'K' ? 1ull << 10 : u == 'M' ? 1ull << 20 : u == 'G' ? 1ull << 30 : 0;
    } else if (used != text.size()) {
        unit = 0;
    }
    if (used == 0 || unit == 0 || text[0] == '-' || v == 0 || v > (1ull << 30) / unit)
        fail_file(flag, "a count from 1 to 2^30, such as 4096 or 32K", fmt::format("\"{}\"", text));
    return v * unit;
}

}  // namespace

void add_cost_command(CLI::App& app, CliContext& cli) {
    struct Opts {
        CostSpec spec;
        std::string tokens = "1K", window = "full";
        bool json = false;
    };
    auto opts = std::make_shared<Opts>();
    auto* cmd = app.add_subcommand("cost", "Memory and FLOPs of attention for a model's shapes, step by step, without "
                                           "running it: the n x n matrices, the whole model's scores, and what a full "
                                           "trace needs beside streaming attention (docs/cost.md).");
    cmd->add_option("--tokens,-n", opts->tokens, "Tokens n; K, M, G count in 1024s (32K = 32768)")->capture_default_str();
    cmd->add_option("--d-model", opts->spec.d_model, "Model width C")->capture_default_str()->check(non_negative())->check(CLI::Range(1, 1 << 20));
    cmd->add_option("--heads", opts->spec.heads, "Query heads NH")->capture_default_str()->check(non_negative())->check(CLI::Range(1, 1 << 16));
    cmd->add_option("--kv-heads", opts->spec.kv_heads, "K/V heads (GQA; 1 is MQA; default: as many as --heads)")
        ->check(non_negative())
        ->check(CLI::Range(1, 1 << 16));
    cmd->add_option("--d-ff", opts->spec.d_ff, "FFN width F (default: no FFN row)")->check(non_negative())->check(CLI::Range(1, 1 << 22));
    cmd->add_option("--activation", opts->spec.activation,
                    "The FFN's activation: relu (default), gelu, gelu_tanh (two matrices, W_1 and W_2), or swiglu "
                    "(three: W_1, the gate W_3 and W_2, as Llama's)")
        ->option_text("relu|gelu|gelu_tanh|swiglu")
        ->transform(CLI::CheckedTransformer(std::map<std::string, Activation>{{"relu", Activation::relu},
                                                                              {"gelu", Activation::gelu},
                                                                              {"gelu_tanh", Activation::gelu_tanh},
                                                                              {"swiglu", Activation::swiglu}}));
    cmd->add_option("--layers", opts->spec.layers, "Layers L")->capture_default_str()->check(non_negative())->check(CLI::Range(1, 1 << 16));
    cmd->add_option("--batch", opts->spec.batch, "Sequences B")->capture_default_str()->check(non_negative())->check(CLI::Range(1, 1 << 20));
    cmd->add_option("--dtype", opts->spec.dtype, "fp32 (default), fp16 or bf16")
        ->option_text("fp32|fp16|bf16")
        ->transform(CLI::CheckedTransformer(
            std::map<std::string, DType>{{"fp32", DType::fp32}, {"fp16", DType::fp16}, {"bf16", DType::bf16}}));
    cmd->add_option("--attention", opts->window, "full (default), causal, window or causal-window")
        ->check(CLI::IsMember({"full", "causal", "window", "causal-window"}));
    cmd->add_option("--window", opts->spec.window_size, "Keys each query sees with --attention window / causal-window")
        ->check(non_negative())
        ->check(CLI::Range(1, 1 << 30));
    cmd->add_flag("--json", opts->json, "Print the numbers as JSON (format attntrace-cost, version 1)");
    cmd->footer("Examples:\n  attntrace cost --tokens 128K --heads 1 --d-model 64\n"
                "  attntrace cost --tokens 32K --dtype fp16 --heads 1 --d-model 64\n"
                "  attntrace cost --tokens 4K --heads 32 --layers 32 --d-model 4096\n"
                "  attntrace cost --tokens 4K --d-model 4096 --heads 32 --kv-heads 8 --layers 32 --d-ff 14336 "
                "--activation swiglu --dtype bf16\n"
                "  attntrace cost --tokens 200000 --attention window --window 512 --heads 1 --d-model 64");
    cmd->callback([opts, &cli] {
        CostSpec spec = opts->spec;
        spec.tokens = parse_count(opts->tokens, "--tokens");
        const std::map<std::string, Window> kinds{{"full", Window::full},
                                                  {"causal", Window::causal},
                                                  {"window", Window::symmetric},
                                                  {"causal-window", Window::causal_window}};
        spec.window = kinds.at(opts->window);
        const bool windowed = spec.window == Window::symmetric || spec.window == Window::causal_window;
        if (windowed != (spec.window_size > 0))
            fail_file("--window",
                      windowed ? "a window size with --attention " + opts->window : "--attention window or causal-window with --window",
                      windowed ? "none" : "--attention " + opts->window);
        CostReport r = estimate_cost(spec, "attntrace cost");
        // nlohmann's own text: these are counts past float32's exact range.
        if (opts->json) {
            cli.out << dump_terminal_safe(cost_json(r), 2) << "\n";
        } else {
            render_cost(cli.out, r, terminal_style(cli.color, cli.host).width);
        }
        cli.status = 0;
    });
}

}  // namespace attntrace

// attntrace cost: memory and FLOPs of attention from the shapes alone.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cmath>
#include <ostream>
#include <map>

#include "cli/commands.hpp"
#include "core/error.hpp"
#include "cost/cost.hpp"
#include "trace/json_text.hpp"  // OrderedJson

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

// 1073741824 -> "1,073,741,824"
std::string grouped(double x) {
    std::string digits = fmt::format("{:.0f}", x), out;
    for (std::size_t i = 0; i < digits.size(); ++i) {
        if (i && (digits.size() - i) % 3 == 0) out += ',';
        out += digits[i];
    }
    return out;
}

// Bytes in both unit systems: articles mean either ("4 GB" for 2^32 bytes).
std::string both_units(double bytes) {
    const char* bin[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    const char* dec[] = {"B", "KB", "MB", "GB", "TB", "PB"};
    int b = 0, d = 0;
    double vb = bytes, vd = bytes;
    while (vb >= 1024 && b < 5) vb /= 1024, ++b;
    while (vd >= 1000 && d < 5) vd /= 1000, ++d;
    if (b == 0) return fmt::format("{:.0f} B", bytes);
    return fmt::format("{:.3g} {} ({:.3g} {})", vb, bin[b], vd, dec[d]);
}

const char* window_text(const CostSpec& s) {
    switch (s.window) {
        case Window::full: return "full attention";
        case Window::causal: return "causal attention (n x n stored, n(n+1)/2 needed)";
        case Window::symmetric: return "sliding window (w keys centred on each query)";
        case Window::causal_window: return "causal sliding window (the w latest keys)";
    }
    return "";
}

void print_report(std::ostream& out, const CostReport& r) {
    const CostSpec& s = r.spec;
    const char* dt = dtype_name(s.dtype);
    out << fmt::format("attention cost · n = {} tokens · d_model {} · {} head(s) (hs {}){} · {} layer(s) · batch {} · "
                       "{} · {}{}\n\n",
                       s.tokens, s.d_model, s.heads, r.head_size,
                       s.kv_heads && s.kv_heads != s.heads ? fmt::format(", {} K/V heads", s.kv_heads) : "",
                       s.layers, s.batch, dt, window_text(s),
                       s.window_size ? fmt::format(", w = {}", s.window_size) : "");
    out << "one layer, one sequence\n";
    out << fmt::format("  {:<36} {:<32} {:>18} {:>10}\n", "step", "shape", "elements", "FLOPs");
    for (const auto& row : r.rows)
        out << fmt::format("  {:<36} {:<32} {:>18} {:>10.3g}\n", row.step, row.shape, grouped(row.elements), row.flops);
    const double full_bytes = r.scores_per_matrix * double(dtype_bytes(s.dtype));
    out << fmt::format("\nattention matrix, one head, one layer: {} x {} = {} entries ({:.3g}); {} at {}\n", s.tokens,
                       s.tokens, grouped(r.scores_per_matrix), r.scores_per_matrix, both_units(full_bytes), dt);
    if (r.scores_needed != r.scores_per_matrix)
        out << fmt::format("  of which queries see {} ({:.3g}): {:.4g}x fewer{}\n", grouped(r.scores_needed),
                           r.scores_needed, r.scores_per_matrix / r.scores_needed,
                           r.matrix_bytes < full_bytes ? "; stored as (n, w): " + both_units(r.matrix_bytes)
                                                       : std::string("; still stored n x n"));
    const bool windowed = r.matrix_bytes < full_bytes;
    const double model = windowed ? r.model_scores_needed : r.model_scores;
    out << fmt::format("every head, layer and sequence: {} x {} x {} matrices = {} scores ({:.3g}){}; {} at {}\n",
                       s.heads, s.layers, s.batch, grouped(model), model,
                       !windowed && r.model_scores_needed != r.model_scores
                           ? fmt::format(", {:.3g} of them seen", r.model_scores_needed)
                           : "",
                       both_units(r.model_matrix_bytes), dt);
    out << fmt::format("\nmemory of one layer's attention, one sequence, at {}:\n", dt);
    out << fmt::format("  {:<58} {}\n", "attntrace --trace full (float32: 6 (NH, n, n) steps, mask)",
                       both_units(r.full_trace_bytes));
    out << fmt::format("  {:<58} {}\n", "scores and weights materialized (a plain implementation)",
                       both_units(r.materialized_bytes));
    out << fmt::format("  {:<58} {}\n", "streamed: online softmax over key blocks (--trace none)",
                       both_units(r.streaming_bytes));
    out << fmt::format("\nFLOPs: {:.3g} per layer and sequence, {:.3g} for the model\n", r.layer_flops,
                       r.model_flops);
}

OrderedJson report_json(const CostReport& r) {
    OrderedJson j;
    j["format"] = "attntrace-cost";
    j["version"] = 1;
    const CostSpec& s = r.spec;
    j["spec"] = {{"tokens", s.tokens},     {"d_model", s.d_model}, {"heads", s.heads},
                 {"kv_heads", s.kv_heads ? s.kv_heads : s.heads}, {"d_ff", s.d_ff}, {"layers", s.layers},
                 {"batch", s.batch},       {"dtype", dtype_name(s.dtype)}, {"window_size", s.window_size}};
    j["head_size"] = r.head_size;
    for (const auto& [key, v] :
         std::vector<std::pair<const char*, double>>{{"scores_per_matrix", r.scores_per_matrix},
                                                     {"scores_needed", r.scores_needed},
                                                     {"matrix_bytes", r.matrix_bytes},
                                                     {"model_scores", r.model_scores},
                                                     {"model_scores_needed", r.model_scores_needed},
                                                     {"model_matrix_bytes", r.model_matrix_bytes},
                                                     {"full_trace_bytes", r.full_trace_bytes},
                                                     {"materialized_bytes", r.materialized_bytes},
                                                     {"streaming_bytes", r.streaming_bytes},
                                                     {"layer_flops", r.layer_flops},
                                                     {"model_flops", r.model_flops}})
        j[key] = v;
    OrderedJson rows = OrderedJson::array();
    for (const auto& row : r.rows)
        rows.push_back({{"step", row.step}, {"shape", row.shape}, {"elements", row.elements}, {"flops", row.flops},
                        {"quadratic", row.per_pair}});
    j["steps"] = rows;
    return j;
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
    cmd->add_option("--d-model", opts->spec.d_model, "Model width C")->capture_default_str()->check(CLI::Range(1, 1 << 20));
    cmd->add_option("--heads", opts->spec.heads, "Query heads NH")->capture_default_str()->check(CLI::Range(1, 1 << 16));
    cmd->add_option("--kv-heads", opts->spec.kv_heads, "K/V heads (GQA; 1 is MQA; default: as many as --heads)")
        ->check(CLI::Range(1, 1 << 16));
    cmd->add_option("--d-ff", opts->spec.d_ff, "FFN width F (default: no FFN row)")->check(CLI::Range(1, 1 << 22));
    cmd->add_option("--layers", opts->spec.layers, "Layers L")->capture_default_str()->check(CLI::Range(1, 1 << 16));
    cmd->add_option("--batch", opts->spec.batch, "Sequences B")->capture_default_str()->check(CLI::Range(1, 1 << 20));
    cmd->add_option("--dtype", opts->spec.dtype, "fp32 (default), fp16 or bf16")
        ->option_text("fp32|fp16|bf16")
        ->transform(CLI::CheckedTransformer(
            std::map<std::string, DType>{{"fp32", DType::fp32}, {"fp16", DType::fp16}, {"bf16", DType::bf16}}));
    cmd->add_option("--attention", opts->window, "full (default), causal, window or causal-window")
        ->check(CLI::IsMember({"full", "causal", "window", "causal-window"}));
    cmd->add_option("--window", opts->spec.window_size, "Keys each query sees with --attention window / causal-window")
        ->check(CLI::Range(1, 1 << 30));
    cmd->add_flag("--json", opts->json, "Print the numbers as JSON (format attntrace-cost, version 1)");
    cmd->footer("Examples:\n  attntrace cost --tokens 128K --heads 1 --d-model 64\n"
                "  attntrace cost --tokens 32K --dtype fp16 --heads 1 --d-model 64\n"
                "  attntrace cost --tokens 4K --heads 32 --layers 32 --d-model 4096\n"
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
            cli.out << report_json(r).dump(2) << "\n";
        } else {
            print_report(cli.out, r);
        }
        cli.status = 0;
    });
}

}  // namespace attntrace

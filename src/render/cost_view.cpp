// `attntrace cost`'s report for people and as JSON (docs/cost.md).
#include "render/cost_view.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "render/text_table.hpp"
#include "render/wrap.hpp"

namespace attntrace {

namespace {

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

// Display columns of UTF-8 text (one per code point: ᵀ, √, ⊙ are one each).
std::size_t columns_of(const std::string& s) {
    std::size_t n = 0;
    for (unsigned char c : s) n += (c & 0xC0) != 0x80;
    return n;
}

// s padded with spaces to `w` display columns.
std::string left(const std::string& s, std::size_t w) {
    const std::size_t n = columns_of(s);
    return n >= w ? s : s + std::string(w - n, ' ');
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

}  // namespace

void render_cost(std::ostream& out, const CostReport& r, std::size_t width) {
    const CostSpec& s = r.spec;
    const char* dt = dtype_name(s.dtype);
    std::vector<std::string> spec{
        fmt::format("n = {} tokens", s.tokens), fmt::format("d_model {}", s.d_model),
        fmt::format("{} head(s) (hs {}){}", s.heads, r.head_size,
                    s.kv_heads && s.kv_heads != s.heads ? fmt::format(", {} K/V heads", s.kv_heads) : "")};
    if (s.d_ff) spec.push_back(fmt::format("d_ff {} ({})", s.d_ff, activation_name(s.activation)));
    spec.push_back(fmt::format("{} layer(s)", s.layers));
    spec.push_back(fmt::format("batch {}", s.batch));
    spec.push_back(dt);
    spec.push_back(fmt::format("{}{}", window_text(s), s.window_size ? fmt::format(", w = {}", s.window_size) : ""));
    for (auto& item : spec) item = unbroken_items(item);  // lines break only between items, or after a comma
    out << wrap_items(spec, " · ", width, "attention cost · ", "    ") << "\n";
    // The FLOPs in one format: whole numbers (grouped, as the elements) while every one is below 1e8, else
    // every one in scientific notation.
    constexpr double kFlopsFixedBelow = 1e8;
    bool flops_scientific = false;
    for (const auto& row : r.rows) flops_scientific = flops_scientific || row.flops >= kFlopsFixedBelow;
    auto flops_text = [&](double f) { return flops_scientific ? fmt::format("{:.2e}", f) : grouped(f); };
    out << fmt::format("one layer, one sequence (FLOPs {})\n",
                       flops_scientific ? "in scientific notation, 3 significant digits" : "exact");
    // Each step's shape under it when the table is wider than the width.
    const std::vector<TextColumn> columns{{"step"}, {"shape", false, true, "shape"}, {"elements", true}, {"FLOPs", true}};
    std::vector<std::vector<std::string>> rows;
    for (const auto& row : r.rows) rows.push_back({row.step, row.shape, grouped(row.elements), flops_text(row.flops)});
    out << format_text_table(columns, rows, width, "  ");
    const double full_bytes = r.scores_per_matrix * double(dtype_bytes(s.dtype));
    out << "\n"
        << wrap_text(fmt::format("attention matrix, one head, one layer: {} x {} = {} entries ({:.3g}); {} at {}", s.tokens,
                                 s.tokens, grouped(r.scores_per_matrix), r.scores_per_matrix, unbroken(both_units(full_bytes)), dt),
                     width, "", "    ");
    if (r.scores_needed != r.scores_per_matrix)
        out << wrap_text(fmt::format("of which queries see {} ({:.3g}): {:.4g}x fewer{}", grouped(r.scores_needed),
                                     r.scores_needed, r.scores_per_matrix / r.scores_needed,
                                     r.matrix_bytes < full_bytes ? "; stored as (n, w): " + unbroken(both_units(r.matrix_bytes))
                                                                 : std::string("; still stored n x n")),
                         width, "  ", "    ");
    const bool windowed = r.matrix_bytes < full_bytes;
    const double model = windowed ? r.model_scores_needed : r.model_scores;
    out << wrap_text(fmt::format("every head, layer and sequence: {} x {} x {} matrices = {} scores ({:.3g}){}; {} at {}",
                                 s.heads, s.layers, s.batch, grouped(model), model,
                                 !windowed && r.model_scores_needed != r.model_scores
                                     ? fmt::format(", {:.3g} of them seen", r.model_scores_needed)
                                     : "",
                                 unbroken(both_units(r.model_matrix_bytes)), dt),
                     width, "", "    ");
    out << fmt::format("\nmemory of one layer's attention, one sequence, at {}:\n", dt);
    const std::vector<std::pair<std::string, double>> memory = {
        {"attntrace --trace full (float32: scores, weights, mask)", r.full_trace_bytes},
        {"  + its 4 derived (NH, n, n) steps, each computed when read", r.derived_trace_bytes},
        {"scores and weights materialized (a plain implementation)", r.materialized_bytes},
        {"streamed: online softmax over key blocks (--trace none)", r.streaming_bytes}};
    std::size_t label_w = 0;  // one column for both lists, so their sizes line up
    for (const auto& [what, bytes] : memory) label_w = std::max(label_w, columns_of(what));
    for (const auto& [what, bytes] : memory) out << "  " << left(what, label_w) << " " << both_units(bytes) << "\n";
    const std::uint64_t kvh = s.kv_heads ? s.kv_heads : s.heads;
    out << "\n"
        << wrap_text(fmt::format("KV cache (generation: K and V of every earlier token), {}:",
                                 unbroken(fmt::format("2 x {} K/V head(s) x {} x {} bytes", kvh, r.head_size,
                                                      dtype_bytes(s.dtype)))),
                     width, "", "    ");
    const std::vector<std::pair<std::string, double>> kv = {
        {"per token, one layer", r.kv_token_layer_bytes},
        {fmt::format("per token, {} layer(s)", s.layers), r.kv_token_bytes},
        {fmt::format("{} tokens{}, one layer", s.tokens, s.batch > 1 ? fmt::format(" x {} sequences", s.batch) : ""),
         r.kv_context_layer_bytes},
        {fmt::format("{} tokens{}, {} layer(s)", s.tokens, s.batch > 1 ? fmt::format(" x {} sequences", s.batch) : "",
                     s.layers),
         r.kv_context_bytes}};
    for (const auto& [what, bytes] : kv) out << "  " << left(what, label_w) << " " << both_units(bytes) << "\n";
    out << fmt::format("\nFLOPs: {:.3g} per layer and sequence, {:.3g} for the model\n", r.layer_flops,
                       r.model_flops);
}

OrderedJson cost_json(const CostReport& r) {
    OrderedJson j;
    j["format"] = "attntrace-cost";
    j["version"] = 1;
    const CostSpec& s = r.spec;
    j["spec"] = {{"tokens", s.tokens},     {"d_model", s.d_model}, {"heads", s.heads},
                 {"kv_heads", s.kv_heads ? s.kv_heads : s.heads}, {"d_ff", s.d_ff},
                 {"activation", std::string(activation_name(s.activation))}, {"layers", s.layers},
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
                                                     {"derived_trace_bytes", r.derived_trace_bytes},
                                                     {"materialized_bytes", r.materialized_bytes},
                                                     {"streaming_bytes", r.streaming_bytes},
                                                     {"kv_cache_token_layer_bytes", r.kv_token_layer_bytes},
                                                     {"kv_cache_token_bytes", r.kv_token_bytes},
                                                     {"kv_cache_context_layer_bytes", r.kv_context_layer_bytes},
                                                     {"kv_cache_context_bytes", r.kv_context_bytes},
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

}  // namespace attntrace

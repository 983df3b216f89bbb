#include "cost/cost.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.hpp"
#include "pipeline/operation.hpp"

namespace attntrace {

namespace {

__extension__ typedef unsigned __int128 u128;  // n x n of n up to 2^30, summed exactly

// Σ_{i<n} min(n, i + b): queries whose window runs past the last key see up to n.
u128 sum_min_end(u128 n, u128 b) {
    if (b >= n) return n * n;
    return (n - b) * (n - b - 1) / 2 + b * (n - b) + b * n;
}

// Σ_{i<n} max(0, i - a): keys cut off before the first one.
u128 sum_max_start(u128 n, u128 a) {
    if (n <= a + 1) return 0;
    return (n - 1 - a) * (n - a) / 2;
}

// Σ_i keys_seen(i), in closed form (tests hold it to the sum of keys_seen).
u128 keys_total(Window w, std::uint64_t size, std::uint64_t n) {
    const u128 N = n, W = size;
    switch (w) {
        case Window::full: return N * N;
        case Window::causal: return N * (N + 1) / 2;
        case Window::symmetric: {
            const u128 a = W / 2, b = W - a;  // keys [i - a, i + b)
            return sum_min_end(N, b) - sum_max_start(N, a);
        }
        case Window::causal_window: return N <= W ? N * (N + 1) / 2 : W * (W + 1) / 2 + (N - W) * W;
    }
    return 0;
}

}  // namespace

std::size_t dtype_bytes(DType d) { return d == DType::fp32 ? 4 : 2; }
const char* dtype_name(DType d) { return d == DType::fp32 ? "fp32" : d == DType::fp16 ? "fp16" : "bf16"; }

std::uint64_t keys_seen(Window w, std::uint64_t size, std::uint64_t n, std::uint64_t i) {
    switch (w) {
        case Window::full: return n;
        case Window::causal: return i + 1;
        case Window::symmetric: {
            // The w keys centred on the query as 004's code places them,
            // [i - w/2, i - w/2 + w); for odd w its `i + w//2` end would give w - 1.
            const std::uint64_t a = size / 2, lo = i >= a ? i - a : 0, hi = std::min<std::uint64_t>(n, i + (size - a));
            return hi - lo;
        }
        case Window::causal_window: return std::min<std::uint64_t>(i + 1, size);
    }
    return 0;
}

CostReport estimate_cost(const CostSpec& s, const std::string& origin) {
    if (s.tokens == 0 || s.d_model == 0 || s.heads == 0 || s.layers == 0 || s.batch == 0)
        fail_file(origin, "tokens, d_model, heads, layers and batch of at least 1", "a 0");
    if (s.d_model % s.heads != 0)
        fail_file(origin, "heads dividing d_model", fmt::format("{} heads for d_model {}", s.heads, s.d_model));
    const std::uint64_t kvh = s.kv_heads ? s.kv_heads : s.heads;
    if (kvh > s.heads || s.heads % kvh != 0)
        fail_file(origin, "kv-heads dividing heads (each K/V head serves heads/kv-heads query heads)",
                  fmt::format("{} kv-heads for {} heads", kvh, s.heads));
    const bool windowed = s.window == Window::symmetric || s.window == Window::causal_window;
    if (windowed && s.window_size == 0) fail_file(origin, "a window size of at least 1", "0");

    CostReport r;
    r.spec = s;
    const double n = double(s.tokens), C = double(s.d_model), NH = double(s.heads);
    const std::uint64_t hs = s.d_model / s.heads;
    r.head_size = hs;
    const double kv_width = double(kvh * hs), bytes = double(dtype_bytes(s.dtype));
    const double pairs = double(keys_total(s.window, s.window_size, s.tokens));  // query-key pairs per head
    const double stored = windowed ? pairs : n * n;  // a full or causal mask still stores n x n
    r.scores_per_matrix = n * n;
    r.scores_needed = pairs;
    r.matrix_bytes = stored * bytes;
    const double copies = NH * double(s.layers) * double(s.batch);
    r.model_scores = n * n * copies;
    r.model_scores_needed = pairs * copies;
    r.model_matrix_bytes = stored * bytes * copies;

    // pass by pass, one layer, one sequence: what each operation says it computes (pipeline/operation.hpp)
    Dims d;
    d.T = d.Tq = d.P = s.tokens;
    d.C = s.d_model;
    d.NH = s.heads;
    d.hs = hs;
    d.hv = hs;  // attntrace cost prices heads that split d_model: d_k = d_v = d_model / heads
    d.KVH = kvh;
    d.F = s.d_ff;
    const CostQuery q{d, pairs, stored, windowed ? s.window_size : 0, s.activation};
    std::vector<Stage> stages = {Stage::qkv, Stage::scores, Stage::scale, Stage::softmax, Stage::mix, Stage::out};
    if (s.d_ff) stages.push_back(Stage::ffn);
    for (Stage st : stages)
        for (const CostTerm& t : operation(st).cost(q)) {
            std::string nums;
            for (auto v : t.shape) nums += (nums.empty() ? "" : ", ") + fmt::format("{}", v);
            r.rows.push_back({t.what, fmt::format("({}) = ({})", t.letters, nums), t.elements, t.flops, t.per_pair});
        }
    for (const auto& row : r.rows) r.layer_flops += row.flops;
    r.model_flops = r.layer_flops * double(s.layers) * double(s.batch);

    // Memory of one layer's attention, one sequence, at dtype.
    const double qkvz = (2 * n * C + 2 * n * kv_width) * bytes;  // Q, Z: (n, C); K, V: (n, KVH·hs)
    // attntrace computes in float32 whatever the dtype asked about.
    // Its masks are dense: a windowed mask is still an (n, n) matrix of 0 and -inf.
    // A full trace holds the raw scores and the weights; the scaled, masked, shifted and exp'd scores are
    // derived steps (trace/derived.hpp), computed when read: what reading them all at once would add.
    r.full_trace_bytes = (qkvz / bytes + 2 * NH * n * n + n * n) * 4;
    r.derived_trace_bytes = 4 * NH * n * n * 4;
    r.materialized_bytes = qkvz + 2 * NH * stored * bytes;
    r.streaming_bytes = qkvz + 2 * NH * n * bytes;  // running max and sum per (head, query)

    // KV cache: every token's K and V row (KVH·hs each) kept for the tokens after it.
    r.kv_token_layer_bytes = 2 * kv_width * bytes;
    r.kv_token_bytes = r.kv_token_layer_bytes * double(s.layers);
    r.kv_context_layer_bytes = r.kv_token_layer_bytes * n * double(s.batch);
    r.kv_context_bytes = r.kv_context_layer_bytes * double(s.layers);
    return r;
}

}  // namespace attntrace

// attntrace cost: the closed-form counts against brute force, and the numbers
// the articles print about attention's cost (000's memory table and its 32K /
// 64K fp16 question, 002's "16 billion attention scores", 004's sliding-window
// saving), computed exactly, with where each article rounds.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <sstream>

#include "core/error.hpp"
#include "cost/cost.hpp"
#include "pipeline/plan.hpp"
#include "render/matrix.hpp"
#include "support.hpp"

using namespace attntrace;

namespace test_cost {

namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024, kMiB = 1024.0 * 1024;

CostReport one_matrix(std::uint64_t n, DType dtype) {
    CostSpec s;
    s.tokens = n;
    s.d_model = 64;
    s.heads = 1;
    s.dtype = dtype;
    return estimate_cost(s);
}

}  // namespace

TEST_CASE("the closed-form count of query-key pairs equals the sum over queries, for every window kind", "[cost]") {
    for (Window w : {Window::full, Window::causal, Window::symmetric, Window::causal_window})
        for (std::uint64_t n = 1; n <= 40; ++n)
            for (std::uint64_t size = 1; size <= 12; ++size) {
                CostSpec s;
                s.tokens = n;
                s.d_model = 8;
                s.heads = 2;
                s.window = w;
                s.window_size = size;
                std::uint64_t brute = 0;
                for (std::uint64_t i = 0; i < n; ++i) brute += keys_seen(w, size, n, i);
                INFO("window kind " << int(w) << ", n " << n << ", w " << size);
                CHECK(estimate_cost(s).scores_needed == double(brute));
            }
}

TEST_CASE("a window of w keys: w keys for an interior query, centred on it, fewer at the ends", "[cost]") {
    // 004's sliding_window_attention takes K[i - w//2 : i + w//2]: 512 keys for w = 512.
    CHECK(keys_seen(Window::symmetric, 512, 200000, 1000) == 512);
    CHECK(keys_seen(Window::symmetric, 512, 200000, 0) == 256);  // keys 0..255: nothing before the first
    // An odd w keeps w keys (its code's end, i + w//2, would keep w - 1: 2 keys for w = 3).
    CHECK(keys_seen(Window::symmetric, 3, 8, 4) == 3);
    CHECK(keys_seen(Window::causal_window, 3, 8, 4) == 3);
    CHECK(keys_seen(Window::causal_window, 3, 8, 1) == 2);
    CHECK(keys_seen(Window::causal, 0, 8, 4) == 5);
}

TEST_CASE("000's table: 1K to 128K tokens, one fp32 n x n matrix, in binary units", "[cost]") {
    // | 1K | 1M entries | ~4 MB |, | 4K | 16M | ~64 MB |, | 32K | 1B | ~4 GB |, | 128K | 16B | ~64 GB |
    struct Row {
        std::uint64_t n;
        double entries, bytes;
    };
    for (const Row& r : {Row{1024, 1ull << 20, 4 * kMiB}, Row{4096, 1ull << 24, 64 * kMiB},
                         Row{32768, 1ull << 30, 4 * kGiB}, Row{131072, 1ull << 34, 64 * kGiB}}) {
        CostReport c = one_matrix(r.n, DType::fp32);
        CHECK(c.scores_per_matrix == r.entries);
        CHECK(c.matrix_bytes == r.bytes);
    }
    // The table's M, B, MB and GB are powers of 1024: in powers of 1000, 128K
    // tokens give 17.2 billion entries and 68.7 GB, not 16 and 64.
    CostReport big = one_matrix(131072, DType::fp32);
    CHECK(big.scores_per_matrix / 1e9 == Approx(17.18).epsilon(1e-3));
    CHECK(big.matrix_bytes / 1e9 == Approx(68.72).epsilon(1e-3));
}

TEST_CASE("000's question: full attention at 32K tokens in fp16 is 2 GiB a matrix, at 64K four times that", "[cost]") {
    CostReport k32 = one_matrix(32768, DType::fp16), k64 = one_matrix(65536, DType::fp16);
    CHECK(k32.matrix_bytes == 2 * kGiB);
    CHECK(k64.matrix_bytes == 8 * kGiB);
    CHECK(one_matrix(32768, DType::bf16).matrix_bytes == 2 * kGiB);
}

TEST_CASE("002's 16 billion attention scores: 4K tokens, 32 heads, 32 layers", "[cost]") {
    CostSpec s;
    s.tokens = 4096;
    s.d_model = 4096;
    s.heads = 32;
    s.layers = 32;
    CostReport c = estimate_cost(s);
    CHECK(c.scores_per_matrix == 16777216.0);  // "16 million": 4096² is 16.8 million, rounded down
    CHECK(c.model_scores == 17179869184.0);    // 17.2 billion; 16 million x 32 x 32 is the article's 16.4
    CHECK(16e6 * 32 * 32 / 1e9 == Approx(16.384));
    s.tokens = 8192;  // "Double the context to 8k? You get four times the cost."
    CostReport twice = estimate_cost(s);
    CHECK(twice.model_scores == 4 * c.model_scores);
    CHECK(twice.rows[2].flops == 4 * c.rows[2].flops);  // Q·Kᵀ: four times
    CHECK(twice.rows[0].flops == 2 * c.rows[0].flops);  // the projections: twice, and at d_model 4096 they
    CHECK(twice.layer_flops < 3 * c.layer_flops);       // still dominate the layer's FLOPs at 8K
}

TEST_CASE("004's sliding window: 200K tokens, w = 512, against 40 billion entries", "[cost]") {
    CostSpec s;
    s.tokens = 200000;
    s.d_model = 64;
    s.heads = 1;
    CostReport full = estimate_cost(s);
    CHECK(full.scores_per_matrix == 4e10);  // "200K * 200K = 40 billion elements"
    s.window = Window::symmetric;
    s.window_size = 512;
    CostReport win = estimate_cost(s);
    // "200K * 512 = 102 million": 102.4 million before the ends are clipped;
    // the first and last 256 queries see fewer keys (65,536 fewer in all).
    // Query i < 256 misses 256 - i keys (32,896 in all); query n - k misses 256 - k (32,640).
    CHECK(win.scores_needed == 200000.0 * 512 - 32896 - 32640);
    CHECK(win.scores_needed == 102334464.0);
    CHECK(win.matrix_bytes == 102334464.0 * 4);
    // "Reduction: 390x": 390.6 with the article's 102.4 million, 390.9 counted exactly.
    CHECK(full.scores_per_matrix / (200000.0 * 512) == Approx(390.625));
    CHECK(full.scores_per_matrix / win.scores_needed == Approx(390.87).epsilon(1e-4));
}

TEST_CASE("FLOPs and memory follow the formulas: scores 2·NH·n·m·hs, GQA shrinks K and V, streaming has no n²", "[cost]") {
    CostSpec s;
    s.tokens = 128;
    s.d_model = 64;
    s.heads = 8;
    s.d_ff = 256;
    CostReport mha = estimate_cost(s);
    REQUIRE(mha.rows.size() == 8);
    CHECK(mha.rows[2].flops == 2.0 * 8 * 128 * 128 * 8);       // scores: hs = 8
    CHECK(mha.rows[1].elements == 2.0 * 128 * 64);              // K and V: (n, C) each
    CHECK(mha.rows[7].flops == 2.0 * 2 * 128 * 64 * 256);       // the FFN's two products
    s.kv_heads = 2;  // GQA: 4 query heads per K/V head
    CostReport gqa = estimate_cost(s);
    CHECK(gqa.rows[1].elements == 2.0 * 128 * 16);
    CHECK(gqa.rows[2].flops == mha.rows[2].flops);  // every query head still scores every key
    s.kv_heads = 0;
    // Quadratic against linear: doubling n quadruples the trace's T x T part, not the streamed memory.
    s.tokens = 256;
    CostReport twice = estimate_cost(s);
    CHECK(twice.streaming_bytes == 2 * mha.streaming_bytes);
    CHECK(twice.full_trace_bytes > 3.5 * mha.full_trace_bytes);
    CHECK(mha.full_trace_bytes > mha.materialized_bytes);
    CHECK(mha.materialized_bytes > mha.streaming_bytes);
    // The full trace holds Q, K, V, Z, the raw scores, the weights and the mask; its four derived steps
    // (scaled, masked, shifted, exp: trace/derived.hpp) are counted apart, as buffers they never are at once.
    CHECK(mha.full_trace_bytes == (4.0 * 128 * 64 + 2.0 * 8 * 128 * 128 + 128.0 * 128) * 4);
    CHECK(mha.derived_trace_bytes == 4.0 * 8 * 128 * 128 * 4);
}

TEST_CASE("inconsistent shapes are refused with one message", "[cost]") {
    CostSpec s;
    s.heads = 5;
    CHECK_THROWS_AS(estimate_cost(s), InputError);
    s.heads = 12;
    s.kv_heads = 5;
    CHECK_THROWS_WITH(estimate_cost(s), Catch::Contains("kv-heads dividing heads"));
    s.kv_heads = 0;
    s.window = Window::symmetric;
    CHECK_THROWS_WITH(estimate_cost(s), Catch::Contains("window size"));
}

TEST_CASE("attntrace cost prints the matrix, the model and the memory, and --json the same numbers", "[cost][cli]") {
    using attntrace::test::run_cli;
    auto r = run_cli({"cost", "--tokens", "32K", "--dtype", "fp16", "--heads", "1", "--d-model", "64"});
    REQUIRE(r.status == 0);
    CHECK(r.out.find("32768 x 32768 = 1,073,741,824 entries") != std::string::npos);
    CHECK(r.out.find("2 GiB (2.15 GB) at fp16") != std::string::npos);
    auto j = run_cli({"cost", "--tokens", "4K", "--heads", "32", "--layers", "32", "--d-model", "4096", "--json"});
    REQUIRE(j.status == 0);
    auto doc = nlohmann::json::parse(j.out);
    CHECK(doc["format"] == "attntrace-cost");
    CHECK(doc["model_scores"].get<double>() == 17179869184.0);
    CHECK(doc["steps"].size() == 7);
    auto w = run_cli({"cost", "--tokens", "200000", "--attention", "window", "--window", "512", "--heads", "1",
                      "--d-model", "64"});
    REQUIRE(w.status == 0);
    CHECK(w.out.find("of which queries see 102,334,464") != std::string::npos);
    CHECK(w.out.find("390.9x fewer") != std::string::npos);
    for (const auto& bad : std::vector<std::vector<std::string>>{{"cost", "--tokens", "0"},
                                                                 {"cost", "--tokens", "12Q"},
                                                                 {"cost", "--window", "4"},
                                                                 {"cost", "--attention", "window"},
                                                                 {"cost", "--heads", "5"},
                                                                 {"cost", "--dtype", "fp8"}}) {
        auto e = run_cli(bad);
        INFO(bad[1] << " " << bad[2]);
        CHECK(e.status == 2);
        CHECK(e.out.empty());
        CHECK(std::count(e.err.begin(), e.err.end(), '\n') == 1);
    }
}

TEST_CASE("the plan, bench and cost count an operation's work one way: the operation's own cost", "[cost]") {
    Dims d;
    d.T = d.Tq = d.P = 10;
    d.C = 12;
    d.NH = 3;
    d.hs = 4;
    d.hv = 4;
    d.KVH = 1;  // multi-query: K and V are 4 wide
    d.F = 20;
    // Matrix products only, every query-key pair (a run materialises them all).
    CHECK(stage_flops(Stage::qkv, d) == 2.0 * 10 * 12 * 12 + 2.0 * 2 * 10 * 12 * 4);
    CHECK(stage_flops(Stage::scores, d) == 2.0 * 3 * 10 * 10 * 4);
    CHECK(stage_flops(Stage::scale, d) == 0);    // element-wise
    CHECK(stage_flops(Stage::softmax, d) == 0);
    CHECK(stage_flops(Stage::ffn, d) == 2.0 * 2 * 10 * 12 * 20);
    // SwiGLU's linear branch is a third product of the same size (counted as two before).
    CHECK(stage_flops(Stage::ffn, d, Activation::swiglu) == 3.0 * 2 * 10 * 12 * 20);
    // A decode step's FFN runs its P new rows, not the T keys.
    Dims one = d;
    one.P = one.Tq = 1;
    CHECK(stage_flops(Stage::ffn, one) == 2.0 * 2 * 1 * 12 * 20);
    // attntrace cost's rows are the same terms, with the window's pairs.
    CostSpec s;
    s.tokens = 10;
    s.d_model = 12;
    s.heads = 3;
    s.kv_heads = 1;
    s.d_ff = 20;
    const CostReport r = estimate_cost(s);
    REQUIRE(r.rows.size() == 8);
    CHECK(r.rows[0].flops + r.rows[1].flops == stage_flops(Stage::qkv, d));
    CHECK(r.rows[2].flops == stage_flops(Stage::scores, d));
    CHECK(r.rows[5].flops == stage_flops(Stage::mix, d));
    CHECK(r.rows[6].flops == stage_flops(Stage::out, d));
    CHECK(r.rows[7].flops == stage_flops(Stage::ffn, d));
}

TEST_CASE("the KV cache, per token and for the context, per layer and all layers, with GQA's K/V heads", "[cost]") {
    // Llama-2-7B: 32 layers, 32 heads of 128 (d_model 4096), every head its own K/V, fp16:
    // 2 (K and V) x 32 x 128 x 2 bytes = 16 KiB a layer, x 32 layers = 512 KiB a token.
    CostSpec s;
    s.tokens = 4096;
    s.d_model = 4096;
    s.heads = 32;
    s.layers = 32;
    s.dtype = DType::fp16;
    CostReport r = estimate_cost(s);
    CHECK(r.kv_token_layer_bytes == 16.0 * 1024);
    CHECK(r.kv_token_bytes == 512.0 * 1024);
    CHECK(r.kv_context_layer_bytes == 4096.0 * 16 * 1024);         // 64 MiB
    CHECK(r.kv_context_bytes == 2.0 * 1024 * 1024 * 1024);         // 4096 x 512 KiB = 2 GiB
    // Llama-3-8B's grouped-query attention: 8 K/V heads of 128, bf16, 32 layers: 128 KiB a token;
    // 8192 tokens of context, batch 2: 2 x 8192 x 128 KiB = 2 GiB.
    s.kv_heads = 8;
    s.dtype = DType::bf16;
    s.tokens = 8192;
    s.batch = 2;
    r = estimate_cost(s);
    CHECK(r.kv_token_bytes == 128.0 * 1024);
    CHECK(r.kv_context_layer_bytes == 2.0 * 8192 * 4 * 1024);
    CHECK(r.kv_context_bytes == 2.0 * 1024 * 1024 * 1024);
    // Multi-query attention in fp32, one layer: 2 x 1 x 64 x 4 bytes = 512 bytes a token.
    CostSpec m;
    m.tokens = 10;
    m.d_model = 512;
    m.heads = 8;
    m.kv_heads = 1;
    r = estimate_cost(m);
    CHECK(r.kv_token_layer_bytes == 512.0);
    CHECK(r.kv_context_bytes == 5120.0);
}

TEST_CASE("a SwiGLU FFN counts its three matrices: 3 x 2·n·C·F FLOPs, against 2 x for ReLU", "[cost][cli]") {
    CostSpec s;
    s.tokens = 100;
    s.d_model = 64;
    s.heads = 4;
    s.d_ff = 172;
    auto ffn_flops = [](const CostReport& r) { return r.rows.back().flops; };
    CHECK(ffn_flops(estimate_cost(s)) == 2.0 * 2 * 100 * 64 * 172);
    s.activation = Activation::swiglu;
    CHECK(ffn_flops(estimate_cost(s)) == 3.0 * 2 * 100 * 64 * 172);

    using attntrace::test::run_cli;
    // At 80 columns (each step's shape folded under it) and unwrapped (the shapes a column).
    for (const std::string columns : {"COLUMNS=80", "COLUMNS=99999"}) {
        INFO(columns);
        auto r = run_cli({"cost", "--tokens", "4K", "--d-model", "4096", "--heads", "32", "--kv-heads", "8", "--layers",
                          "32", "--d-ff", "14336", "--activation", "swiglu", "--dtype", "bf16"},
                         {columns});
        REQUIRE(r.status == 0);
        CHECK(r.out.find("FFN (SiLU(X·W_1) ⊙ X·W_3)·W_2") != std::string::npos);
        CHECK(r.out.find("KV cache") != std::string::npos);
        CHECK(r.out.find("128 KiB") != std::string::npos);  // per token, 32 layers
        // The table's columns line up: every row's elements end in the same display column as the header's.
        std::istringstream lines(r.out);
        std::vector<std::size_t> ends;
        for (std::string line; std::getline(lines, line) && line.rfind("attention matrix", 0) != 0;) {
            const auto at = line.find("elements");
            if (line.rfind("      shape ", 0) == 0) continue;  // a shape folded under its step
            if (at != std::string::npos) ends.push_back(attntrace::display_width(line.substr(0, at + 8)));
            else if (!ends.empty() && line.rfind("  ", 0) == 0) {
                const auto last_digit = line.find_last_of("0123456789", line.rfind(' ', line.find_last_not_of(' ') - 1));
                ends.push_back(attntrace::display_width(line.substr(0, last_digit + 1)));
            }
        }
        REQUIRE(ends.size() == 9);  // the header and 8 rows, the K, V row among them
        for (std::size_t e : ends) CHECK(e == ends.front());
    }
    auto j = nlohmann::json::parse(run_cli({"cost", "--d-model", "4096", "--heads", "32", "--layers", "32", "--dtype",
                                            "fp16", "--json"}).out);
    CHECK(j["kv_cache_token_bytes"].get<double>() == 512.0 * 1024);
}

}  // namespace test_cost

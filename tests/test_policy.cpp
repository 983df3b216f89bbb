// Trace policies: what a run keeps, what it streams, the memory it plans for,
// and that streaming changes no number beyond a named tolerance.
#include "trace/catalogue.hpp"
#include "held_trace.hpp"
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstring>
#include <limits>

#include "evaluate/evaluate.hpp"
#include "core/error.hpp"
#include "lesson/random_lesson.hpp"
#include "pipeline/run.hpp"
#include "support.hpp"

using namespace attntrace;

namespace test_policy {
using json = nlohmann::json;

namespace {

// Streamed attention adds the keys' contributions block by block, rescaling
// the running sum by exp(m_old - m_new) when a later block holds a larger
// score; the materialized softmax sums each row once. Each rescale and the
// different summation order cost a few float32 ulp (~6e-8 relative) per key
// block; 2e-5 relative bounds that for the sizes here (<= 10 key blocks)
// after LayerNorm divides by a std near 1, with two orders of magnitude to spare.
constexpr double kStreamedRelTol = 2e-5;
constexpr double kStreamedAbsTol = 1e-6;  // outputs near 0

Lesson random(std::size_t tokens, std::size_t d_model, std::size_t heads, std::size_t d_ff, MaskKind mask,
              std::uint64_t seed = 5) {
    RandomSpec s;
    s.tokens = tokens;
    s.d_model = d_model;
    s.heads = heads;
    s.d_ff = d_ff;
    s.mask = mask;
    s.seed = seed;
    return parse_lesson(random_lesson_json(s).dump(), "random.json");
}

TracePolicy policy(const std::string& text) { return parse_trace_policy(text, "--trace"); }

const Tensor& value(const Trace& t, const char* name) {
    const Step* s = t.find(name);
    REQUIRE(s);
    REQUIRE(s->recorded == Record::full);
    return s->held();
}

void require_close(const Tensor& got, const Tensor& want) {
    REQUIRE(got.shape == want.shape);
    for (std::size_t i = 0; i < got.size(); ++i) {
        const double tol = kStreamedAbsTol + kStreamedRelTol * std::fabs(want.data[i]);
        if (std::fabs(double(got.data[i]) - want.data[i]) > tol) {
            INFO("flat index " << i << ": streamed " << got.data[i] << ", materialized " << want.data[i]);
            REQUIRE(false);
        }
    }
}

}  // namespace

TEST_CASE("trace policies: full keeps every step, none only the output, a subset the steps it names", "[policy]") {
    Lesson lesson = random(12, 16, 2, 32, MaskKind::causal);
    Trace full = run_held(lesson, Arithmetic::exact, policy("full"));
    CHECK(full.steps.size() == 31);  // every step but hook_embed (X is given inline)
    CHECK_FALSE(full.streamed_attention);

    Trace none = run_held(lesson, Arithmetic::exact, policy("none"));
    REQUIRE(none.steps.size() == 1);
    CHECK(none.steps[0].name == "blocks.0.ln2.hook_normalized");
    CHECK(none.streamed_attention);

    Trace subset = run_held(lesson, Arithmetic::exact, policy("hook_pattern,blocks.0.ln1.*"));
    std::vector<std::string> names;
    for (const auto& s : subset.steps) names.push_back(s.name);
    CHECK(names == std::vector<std::string>{"blocks.0.attn.hook_pattern", "blocks.0.ln1.hook_mean",
                                            "blocks.0.ln1.hook_var", "blocks.0.ln1.hook_scale",
                                            "blocks.0.ln1.hook_standardized", "blocks.0.ln1.hook_normalized",
                                            "blocks.0.ln2.hook_normalized"});
    CHECK_FALSE(subset.streamed_attention);  // the weights are kept, so they exist
    // Kept steps hold exactly what the full trace holds.
    for (const auto& s : subset.steps) {
        INFO(s.name);
        const Tensor& f = value(full, s.name.c_str());
        REQUIRE(s.held().size() == f.size());
        CHECK(std::memcmp(s.held().ptr(), f.ptr(), f.size() * sizeof(float)) == 0);
    }
}

TEST_CASE("the summary policy keeps min, max, mean, -inf count, row sums and a corner instead of values",
          "[policy]") {
    Lesson lesson = random(6, 8, 2, 16, MaskKind::causal);
    Trace full = run_held(lesson);
    Trace sum = run_held(lesson, Arithmetic::exact, policy("summary"));
    REQUIRE(sum.steps.size() == full.steps.size());
    for (std::size_t i = 0; i + 1 < sum.steps.size(); ++i) {
        const Step& s = sum.steps[i];
        INFO(s.name);
        CHECK(s.recorded == Record::summary);
        CHECK(s.held().size() == 0);  // freed
        REQUIRE(s.summary);
    }
    CHECK(sum.steps.back().recorded == Record::full);  // the output is the result
    // Independent check on the masked scores: (heads, query, key) with -inf above the diagonal.
    const Tensor& m = value(full, "blocks.0.attn.hook_attn_scores");
    const StepSummary& s = *sum.find("blocks.0.attn.hook_attn_scores")->summary;
    double lo = 1e30, hi = -1e30, total = 0;
    std::size_t finite = 0, neg_inf = 0;
    for (float x : m.data) {
        if (std::isinf(x)) { ++neg_inf; continue; }
        lo = std::min(lo, double(x)), hi = std::max(hi, double(x)), total += x, ++finite;
    }
    CHECK(neg_inf == 2 * 15);  // 2 heads x (6·5/2) cells above the diagonal
    CHECK(s.neg_inf == neg_inf);
    CHECK(s.min == Approx(lo));
    CHECK(s.max == Approx(hi));
    CHECK(s.mean == Approx(total / finite));
    REQUIRE(s.row_sums.shape == Shape{2, 6});
    CHECK(s.row_sums.data[0] == m.data[0]);  // query 0 sees key 0 only
    REQUIRE(s.corner.shape == Shape{4, 4});
    CHECK(s.corner.data[1 * 4 + 1] == m.data[1 * 6 + 1]);
    // Softmax rows sum to one, so do the summaries' row sums.
    for (float r : sum.find("blocks.0.attn.hook_pattern")->summary->row_sums.data) CHECK(r == Approx(1.0).epsilon(1e-6));
}

TEST_CASE("summarize's rows side by side give one row at a time's sums, min and max: ±0 first met, inf and NaN left out",
          "[policy]") {
    // With cells not finite in nearly every block of 8 rows, and with none (each block then all finite: the rows go
    // without a test of each cell).
    // One row at a time, each summed in double over c ascending (summarize before its rows ran side by side).
    auto one_at_a_time = [](const Tensor& t) {
        const std::size_t cols = t.shape.back(), rows = t.size() / cols;
        StepSummary s;
        s.row_sums = Tensor(Shape{rows});
        double lo = std::numeric_limits<double>::infinity(), hi = -lo, total = 0;
        std::size_t finite = 0;
        for (std::size_t r = 0; r < rows; ++r) {
            double row = 0;
            for (std::size_t c = 0; c < cols; ++c) {
                const float x = t.data[r * cols + c];
                if (!std::isfinite(x)) {
                    s.neg_inf += x < 0;
                    continue;
                }
                lo = std::min(lo, double(x)), hi = std::max(hi, double(x));
                row += x, ++finite;
            }
            s.row_sums.data[r] = static_cast<float>(row);
            total += row;
        }
        if (finite) s.min = lo, s.max = hi, s.mean = total / static_cast<double>(finite);
        return s;
    };
    const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
    for (const bool not_finite : {true, false})
    for (const std::size_t rows : {1, 7, 8, 9, 19}) {
        for (const std::size_t cols : {1, 3, 50}) {
            Tensor t(Shape{rows, cols});
            std::uint32_t seed = static_cast<std::uint32_t>(rows * 131 + cols);
            for (auto& x : t.data) {
                seed = seed * 1664525u + 1013904223u;
                const std::uint32_t k = seed >> 24;
                // sums whose order shows (1e8 beside 1), signed zeros, and cells left out
                x = k < 8 ? 0.0f : k < 16 ? -0.0f : k < 20 ? -inf : k < 22 ? inf : k < 24 ? nan : k < 30 ? 1e8f
                    : static_cast<float>(seed >> 8 & 0xffff) / 100.0f - 300.0f;
                if (!not_finite && !std::isfinite(x)) x = k < 20 ? -3e7f : 2.5f;
            }
            INFO(rows << " x " << cols << (not_finite ? ", cells not finite" : ", all finite"));
            const StepSummary got = summarize(t), want = one_at_a_time(t);
            CHECK(std::memcmp(got.row_sums.ptr(), want.row_sums.ptr(), rows * sizeof(float)) == 0);
            CHECK(std::memcmp(&got.min, &want.min, sizeof(double)) == 0);
            CHECK(std::memcmp(&got.max, &want.max, sizeof(double)) == 0);
            CHECK(std::memcmp(&got.mean, &want.mean, sizeof(double)) == 0);
            CHECK(got.neg_inf == want.neg_inf);
        }
    }
}

TEST_CASE("streamed attention and the chunked FFN agree with the materialized block", "[policy][streaming]") {
    // Sizes crossing several key blocks and FFN chunks, with and without the causal mask.
    for (MaskKind mask : {MaskKind::none, MaskKind::causal}) {
        Lesson lesson = random(700, 64, 4, 128, mask, 9);
        Trace full = run_held(lesson);
        Trace streamed = run_ffn_chunks(lesson, policy("hook_z,hook_mlp_out"), 96);  // 8 chunks, the last of 28 rows
        REQUIRE(streamed.streamed_attention);
        INFO("mask " << mask_name(mask));
        require_close(value(streamed, "blocks.0.attn.hook_z"), value(full, "blocks.0.attn.hook_z"));
        require_close(value(streamed, "blocks.0.ln2.hook_normalized"), value(full, "blocks.0.ln2.hook_normalized"));
    }
}

TEST_CASE("the FFN in row chunks gives the whole-matrix FFN bit for bit", "[policy][streaming]") {
    // Keeping the attention weights turns streaming attention off, so the
    // FFN's input is the same in both runs; each row's products are computed
    // in the same order whatever the number of rows (the GEMM blocks K and N,
    // never the sum over one row across M).
    Lesson lesson = random(600, 32, 2, 96, MaskKind::none, 3);
    Trace full = run_held(lesson);
    for (std::size_t rows : {std::size_t{64}, std::size_t{256}, std::size_t{600}, std::size_t{1}}) {
        INFO(rows << " rows a chunk");
        Trace chunked = run_ffn_chunks(lesson, policy("hook_pattern,hook_mlp_out"), rows);
        const Tensor& a = value(full, "blocks.0.hook_mlp_out");
        const Tensor& b = value(chunked, "blocks.0.hook_mlp_out");
        REQUIRE(a.size() == b.size());
        CHECK(std::memcmp(a.ptr(), b.ptr(), a.size() * sizeof(float)) == 0);
    }
}

TEST_CASE("a given or rounded attention step turns streaming off", "[policy][streaming]") {
    Lesson lesson = read_lesson(resolve_lesson("003-3.1-ring-fell"));  // rounds hook_pattern in document arithmetic
    const Plan exact = make_plan(lesson, policy("none"), Arithmetic::exact, 1);
    const Plan document = make_plan(lesson, policy("none"), Arithmetic::document, 1);
    CHECK(exact.stream_attention);
    CHECK_FALSE(document.stream_attention);
}

TEST_CASE("the plan's memory estimate: n x n only when kept, under 1 GiB streamed at n = 32768", "[policy][memory]") {
    // BERT-base sizes, 32768 tokens, X generated from a seed (~100 MiB of input).
    Lesson lesson = random(32768, 768, 12, 3072, MaskKind::none);
    const Plan none = make_plan(lesson, policy("none"), Arithmetic::exact, 2);
    CHECK(none.stream_attention);
    CHECK(none.stream_ffn);
    CHECK(none.peak_bytes < (std::size_t{1} << 30));
    const Plan full = make_plan(lesson, policy("full"), Arithmetic::exact, 2);
    // Two (12, 32768, 32768) float steps held (the raw scores and the weights): 2 · 12 · 32768² · 4 bytes =
    // 96 GiB at least; the four derived from them (scaled, masked, shifted, exp) hold no buffer: 192 GiB.
    const std::size_t plane = std::size_t{12} * 32768 * 32768 * sizeof(float);
    CHECK(full.derive_attention);
    CHECK(full.peak_bytes > 2 * plane);
    CHECK(full.peak_bytes < 3 * plane);
    CHECK(full.derived_bytes == 4 * plane);
    CHECK_THROWS_AS(require_memory(full, lesson, Arithmetic::exact, 2, std::size_t{8} << 30), InputError);
    try {
        require_memory(full, lesson, Arithmetic::exact, 2, std::size_t{8} << 30);
    } catch (const InputError& e) {
        const std::string msg = e.what();
        CHECK(msg.find("random.json: config: expected a run that fits in 8.0 GiB") == 0);
        CHECK(msg.find("with --trace none (run, export, bench) it needs about") != std::string::npos);
    }
}

TEST_CASE("claims about steps the policy does not keep in full are not checkable, with the reason", "[policy]") {
    auto e = evaluate(read_lesson(resolve_lesson("003-3.1-ring-fell")), policy("summary"));
    bool saw = false;
    for (const auto& r : e->report.results)
        if (r.claim.id == "S") {
            saw = true;
            CHECK(r.verdict == Verdict::not_checkable);
            CHECK(r.reason == "the trace policy kept only a summary of this step");
        }
    CHECK(saw);
}

TEST_CASE("bad --trace and --max-memory values, and a run too big, exit 2 with one line", "[policy][cli]") {
    using test::run_cli;
    auto bad = run_cli({"run", "003-3.1-ring-fell", "--trace", "hook_nothing"});
    CHECK(bad.status == 2);
    CHECK(bad.err == "attntrace: error: --trace: expected full, summary, none, or step names or globs separated by "
                     "commas (see docs/steps.md) of this lesson (`attntrace steps LESSON` lists them), found "
                     "\"hook_nothing\"\n");
    auto size = run_cli({"--max-memory", "12X", "run", "003-3.1-ring-fell"});
    CHECK(size.status == 2);
    CHECK(size.err == "attntrace: error: --max-memory: expected a size such as 512M or 8G, found \"12X\"\n");
    test::TempDir dir;
    auto made = run_cli({"random", "--tokens", "4096", "--d-model", "64", "--heads", "4", "--d-ff", "64", "--out",
                         dir.file("big.json")});
    REQUIRE(made.status == 0);
    auto big = run_cli({"--max-memory", "256M", "export", dir.file("big.json"), "-o", dir.file("t.json")});
    CHECK(big.status == 2);
    CHECK(big.err.find("config: expected a run that fits in 256.0 MiB") != std::string::npos);
    CHECK(big.err.find("with --trace none (run, export, bench) it needs about") != std::string::npos);
    CHECK(std::count(big.err.begin(), big.err.end(), '\n') == 1);
    CHECK(dir.entries() == std::vector<std::string>{"big.json"});  // nothing written
    // The suggested policy runs in that budget.
    auto ok = run_cli({"--max-memory", "256M", "export", dir.file("big.json"), "--trace", "none", "-o",
                       dir.file("t.json")});
    CHECK(ok.status == 0);
    json t = json::parse(test::read_text(dir.file("t.json")));
    CHECK(t["trace"]["policy"] == "none");
    CHECK(t["trace"]["streamed_attention"] == true);
    CHECK(t["steps"].size() == 1);
}

TEST_CASE("a step's name read back as the catalogue writes it: its block and the template step it is an instance of",
          "[policy]") {
    using attntrace::read_catalogue_name;
    CHECK(read_catalogue_name("blocks.3.cross_attn.hook_pattern").block == std::optional<std::size_t>(3));
    CHECK(read_catalogue_name("blocks.3.cross_attn.hook_pattern").base == "blocks.0.attn.hook_pattern");
    CHECK(read_catalogue_name("blocks.12.ln2.hook_normalized").base == "blocks.0.ln2.hook_normalized");
    // every step of a two-block decoder's and a pre-norm stack's catalogues read back to its block and a
    // template computing what it computes (its axes, which a trace from elsewhere is drawn with)
    for (bool decoder : {false, true}) {
        attntrace::Arch arch;
        arch.blocks = 2;
        arch.decoder = decoder;
        arch.norm_first = !decoder;
        for (const auto& def : attntrace::catalogue_for(arch).steps()) {
            INFO(def.name);
            const auto read = read_catalogue_name(def.name);
            if (def.block < 0) continue;
            CHECK(read.block == std::optional<std::size_t>(static_cast<std::size_t>(def.block)));
            const attntrace::StepTemplate* t = attntrace::find_template(read.base);
            REQUIRE(t);
            CHECK(t->leaf == def.leaf);
            CHECK(t->axes == def.axes);
        }
    }
    // not the catalogue's: no block, its own name
    CHECK_FALSE(read_catalogue_name("my_kernel.out").block);
    CHECK(read_catalogue_name("my_kernel.out").base == "my_kernel.out");
    CHECK_FALSE(read_catalogue_name("blocks.x.attn").block);
    CHECK_FALSE(read_catalogue_name("blocks.3").block);
}

}  // namespace test_policy

// attntrace explain: every kind of step explained, and the explanation's
// recomputed value equal to the trace's.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <set>

#include "evaluate/evaluate.hpp"
#include "core/error.hpp"
#include "lesson/random_lesson.hpp"
#include "model/hf_model.hpp"
#include "render/explain.hpp"
#include "support.hpp"

using namespace attntrace;
using attntrace::test::run_cli;

namespace test_explain {

namespace {

// The explanation sums term by term in float, k ascending (matmul_ref's
// order); the SIMD GEMM fuses multiply-adds and blocks the sum, and the SIMD
// exp differs from std::exp by an ulp or two. On sums of <= 64 terms of
// magnitude ~1 that is a few 1e-6; 1e-4 absolute leaves room and still
// catches any wrong term, index or formula (those move a value by >= 1e-2).
constexpr double kRecomputeTol = 1e-4;

std::unique_ptr<Evaluation> random_eval(Activation act, NormKind norm = NormKind::layernorm, Arch arch = {},
                                        const nlohmann::ordered_json& config = nlohmann::ordered_json::object()) {
    RandomSpec spec;
    spec.arch = arch;
    spec.tokens = 6;
    spec.d_model = 32;  // > 16 terms: the long-sum elision is exercised too
    spec.heads = 2;
    spec.d_ff = 40;
    spec.mask = MaskKind::causal;
    spec.activation = act;
    spec.norm = norm;
    auto doc = random_lesson_json(spec);
    doc["config"].update(config);
    return evaluate(parse_lesson(doc.dump(), "random.json"));
}

// Explains a sample of cells of every step; returns the steps explained.
std::set<std::string> explain_all(const Evaluation& e) {
    std::set<std::string> names;
    for (const Step& s : e.exact.steps) {
        const StepValues values = values_of(e.exact, s);  // a derived step's too (it held no buffer: skipped before)
        const std::size_t n = values->size();
        std::vector<std::size_t> flat;
        if (n <= 64) for (std::size_t f = 0; f < n; ++f) flat.push_back(f);
        else flat = {0, n / 3, n / 2, n - 1};
        for (std::size_t f : flat) {
            CellRef cell{s.name, std::vector<std::size_t>(s.shape.size())};
            for (std::size_t k = s.shape.size(), r = f; k-- > 0; r /= s.shape[k]) cell.at[k] = r % s.shape[k];
            INFO(e.lesson.id << " " << s.name << " cell " << f);
            Explanation x = explain_cell(e.lesson, e.exact, cell, {});
            CHECK(x.traced == values->data[f]);
            if (s.source == StepSource::given) {
                CHECK(!x.recomputed);
                CHECK(x.text.find("given by the lesson") != std::string::npos);
            } else {
                REQUIRE(x.recomputed);
                if (std::isinf(x.traced)) CHECK(*x.recomputed == x.traced);
                else CHECK(*x.recomputed == Approx(x.traced).margin(kRecomputeTol));
            }
        }
        names.insert(s.name);
    }
    return names;
}

}  // namespace

TEST_CASE("explain recomputes every cell's value as the trace holds it, for every step of the catalogue", "[explain]") {
    std::set<std::string> explained;
    // every lesson (003-3.1-ring-fell among them: given Q, K, V), then random ones with FFN and a causal mask
    for (const auto& file : attntrace::test::lesson_files()) {
        auto e = evaluate(read_lesson(file));
        auto names = explain_all(*e);
        explained.insert(names.begin(), names.end());
    }
    for (Activation act : {Activation::relu, Activation::gelu}) {
        auto names = explain_all(*random_eval(act));
        explained.insert(names.begin(), names.end());
    }
    {  // LayerNorm with every piece a step (config.norm_steps "all"), both norms
        auto names = explain_all(*random_eval(Activation::relu, NormKind::layernorm, {}, {{"norm_steps", "all"}}));
        explained.insert(names.begin(), names.end());
    }
    {  // heads of their own widths: Q, K 3 wide, V and Z 5 wide, W_O reading 2·5 columns, MQA
        auto names = explain_all(
            *random_eval(Activation::relu, NormKind::layernorm, {}, {{"d_k", 3}, {"d_v", 5}, {"kv_heads", 1}}));
        explained.insert(names.begin(), names.end());
    }
    for (Activation act : {Activation::gelu_tanh, Activation::swiglu}) {  // and RMSNorm
        auto names = explain_all(*random_eval(act, NormKind::rmsnorm));
        explained.insert(names.begin(), names.end());
    }
    {  // BERT (tests/models/tiny-bert): the token type table, the embeddings' LayerNorm (embed.ln.*), post-norm blocks
        ModelInput in;
        in.ids = {2, 109, 110, 112, 3};
        auto e = evaluate(std::move(load_hf_model(attntrace::test::source_dir() + "/tests/models/tiny-bert", in).lesson));
        auto names = explain_all(*e);
        for (const auto& def : e->lesson.catalogue().steps()) {
            if (!e->lesson.records(def)) continue;
            INFO(def.name);
            CHECK(names.count(def.name) == 1);
        }
        explained.insert(names.begin(), names.end());
    }
    for (const auto& def : step_catalogue()) {
        INFO(def.name);
        CHECK(explained.count(def.name) == 1);
    }
    // Generated catalogues: pre-norm decoder stacks (cross-attention, ln3, every block), RMSNorm and DyT in them.
    for (NormKind norm : {NormKind::layernorm, NormKind::rmsnorm, NormKind::dyt}) {
        const Arch arch{2, true, true};
        auto e = random_eval(Activation::gelu, norm, arch);
        auto names = explain_all(*e);
        for (const auto& def : catalogue_for(arch).steps()) {
            if (!e->lesson.records(def)) continue;
            INFO(def.name);
            CHECK(names.count(def.name) == 1);
        }
    }
}

TEST_CASE("explain parses short names, numbers and token labels, and refuses what is wrong", "[explain]") {
    auto e = evaluate(read_lesson(resolve_lesson("003-3.1-ring-fell")));
    CellRef a = parse_cell(e->exact, "hook_pattern[0,ring,fell]");
    CHECK(a.step == "blocks.0.attn.hook_pattern");
    CHECK(a.at == std::vector<std::size_t>{0, 1, 2});
    CHECK(parse_cell(e->exact, "blocks.0.attn.hook_pattern[h0, 1, 2]").at == a.at);
    CHECK_THROWS_WITH(parse_cell(e->exact, "hook_mean[0]"), Catch::Contains("does not run in this lesson"));
    auto r = random_eval(Activation::relu);
    CHECK(parse_cell(r->exact, "ln1.hook_mean[t2]").step == "blocks.0.ln1.hook_mean");
    CHECK(parse_cell(r->exact, "ln1.hook_mean[t2]").at == std::vector<std::size_t>{2});
    CHECK_THROWS_WITH(parse_cell(r->exact, "hook_mean[0]"), Catch::Contains("names 2 steps"));
    CHECK_THROWS_WITH(parse_cell(e->exact, "hook_nothing[0]"), Catch::Contains("expected a step name"));
    CHECK_THROWS_WITH(parse_cell(e->exact, "hook_pattern[0,1]"), Catch::Contains("expected 3 indices, found 2"));
    CHECK_THROWS_WITH(parse_cell(e->exact, "hook_pattern[0,1,3]"), Catch::Contains("0..2 on axis key"));
    CHECK_THROWS_WITH(parse_cell(e->exact, "hook_pattern[0,ring,cat]"), Catch::Contains("found \"cat\""));
    CHECK_THROWS_WITH(parse_cell(e->exact, "hook_pattern(0,1,2)"), Catch::Contains("expected STEP[i,j]"));
    CHECK_THROWS_WITH(parse_cell(e->exact, "hook_pattern[0,,2]"), Catch::Contains("empty"));
}

TEST_CASE("explain writes a weight's whole chain and a score's dot product with token names", "[explain][cli]") {
    auto w = run_cli({"explain", "003-3.1-ring-fell", "hook_pattern[0,ring,fell]"});
    REQUIRE(w.status == 0);
    for (const char* part : {"row max", "exp(", "row sum", "A[h0,ring,fell] = ", "key fell", "✓"}) {
        INFO(part);
        CHECK(w.out.find(part) != std::string::npos);
    }
    auto s = run_cli({"explain", "003-3.1-ring-fell", "hook_scores_raw[0,ring,fell]", "hook_scores_scaled[0,ring,fell]"});
    REQUIRE(s.status == 0);
    CHECK(s.out.find("Q[ring,h0,d0]") != std::string::npos);
    CHECK(s.out.find("K[fell,kv0,d3]") != std::string::npos);  // the K/V head query head 0 reads
    CHECK(s.out.find("√4") != std::string::npos);
    attntrace::test::TempDir dir;
    REQUIRE(run_cli({"random", "--tokens", "4", "--out", dir.file("r.json")}).status == 0);
    auto ln = run_cli({"explain", dir.file("r.json"), "ln1.hook_normalized[t2,d0]"});
    REQUIRE(ln.status == 0);
    for (const char* part : {"μ =", "σ² =", "eps", "x̂ =", "γ[d0]", "β[d0]"}) {
        INFO(part);
        CHECK(ln.out.find(part) != std::string::npos);
    }
    auto doc = run_cli({"explain", "003-3.1-ring-fell", "hook_pattern[0,ring,fell]", "--arithmetic", "document"});
    REQUIRE(doc.status == 0);
    CHECK(doc.out.find("rounded to 2 decimals, as the article did: 0.5100") != std::string::npos);
    CHECK(doc.out.find("trace: 0.5100  ✓") != std::string::npos);
    auto q = run_cli({"explain", "003-3.1-ring-fell", "hook_q[ring,h0,d0]"});
    REQUIRE(q.status == 0);
    CHECK(q.out.find("given by the lesson") != std::string::npos);
}

TEST_CASE("explain elides a dot product of more than 16 terms unless --full", "[explain][cli]") {
    attntrace::test::TempDir dir;
    REQUIRE(run_cli({"random", "--tokens", "5", "--d-model", "32", "--out", dir.file("r.json")}).status == 0);
    auto r = run_cli({"explain", dir.file("r.json"), "hook_attn_out[t4,d7]"});
    REQUIRE(r.status == 0);
    CHECK(r.out.find("... (26 more terms") != std::string::npos);
    CHECK(r.out.find("Z[t4,h0,d0]") != std::string::npos);
    CHECK(r.out.find("Z[t4,h1,d15]") != std::string::npos);
    CHECK(r.out.find("Z[t4,h0,d8]") == std::string::npos);
    auto f = run_cli({"explain", dir.file("r.json"), "hook_attn_out[t4,d7]", "--full"});
    CHECK(f.out.find("more terms") == std::string::npos);
    CHECK(f.out.find("Z[t4,h0,d8]") != std::string::npos);
}

TEST_CASE("explain errors exit 2 with one line naming what was expected", "[explain][cli]") {
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"hook_nothing[0,0]", "expected a step name"},
        {"hook_pattern[0,1]", "expected 3 indices"},
        {"hook_pattern[0,1,7]", "0..2 on axis key"},
        {"hook_pattern[0,ring,dog]", "\"dog\""},
        {"hook_pattern", "expected STEP[i,j]"},
        {"hook_mlp_out[0,0]", "does not run in this lesson"},
    };
    for (const auto& [cell, message] : cases) {
        INFO(cell);
        auto r = run_cli({"explain", "003-3.1-ring-fell", cell});
        CHECK(r.status == 2);
        CHECK(r.out.empty());
        CHECK(r.err.rfind("attntrace: error: ", 0) == 0);
        CHECK(r.err.find(message) != std::string::npos);
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    }
}

TEST_CASE("the README's explain capture is what explain prints", "[explain][docs]") {
    std::string readme = attntrace::test::read_text(attntrace::test::source_dir() + "/README.md");
    const std::string marker = "$ attntrace explain ";
    auto at = readme.find(marker);
    REQUIRE(at != std::string::npos);
    const auto eol = readme.find('\n', at);
    std::string command = readme.substr(at + 2, eol - at - 2);
    auto end = readme.find("```", eol);
    std::string shown = readme.substr(eol + 1, end - eol - 1);
    // attntrace explain LESSON 'CELL'
    std::vector<std::string> args;
    for (std::size_t p = 0; p < command.size();) {
        if (command[p] == ' ') { ++p; continue; }
        if (command[p] == '\'') {
            auto q = command.find('\'', p + 1);
            args.push_back(command.substr(p + 1, q - p - 1));
            p = q + 1;
        } else {
            auto q = std::min(command.find(' ', p), command.size());
            args.push_back(command.substr(p, q - p));
            p = q;
        }
    }
    REQUIRE(args.size() >= 3);
    args.erase(args.begin());  // "attntrace"
    auto r = run_cli(args);
    REQUIRE(r.status == 0);
    CHECK(r.out == shown);
}

TEST_CASE("the FFN's explanation names the norm it reads: LN1 after the attention, LN2 before it or beside it",
          "[explain][cli]") {
    // post-norm (the original block): the FFN reads LayerNorm 1's output, in block 1 as in block 0
    const auto post = run_cli({"explain", "003-stacked-blocks", "blocks.1.mlp.hook_pre[ring,f0]"});
    INFO(post.out << post.err);
    REQUIRE(post.status == 0);
    CHECK(post.out.find("Σ_c LN1[ring,c]") != std::string::npos);
    // a parallel (pre-norm) block: LN2 reads the block's input and the FFN reads LN2
    const auto parallel = run_cli({"explain", "conv-parallel-residual-partial-rope", "mlp.hook_pre[ring,f0]"});
    INFO(parallel.out << parallel.err);
    REQUIRE(parallel.status == 0);
    CHECK(parallel.out.find("Σ_c LN2[ring,c]") != std::string::npos);
    CHECK(parallel.out.find("LN2[ring,d0]") != std::string::npos);
    CHECK(parallel.out.find("LN1[") == std::string::npos);
}

}  // namespace test_explain

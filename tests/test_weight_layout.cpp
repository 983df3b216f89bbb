// config.weight_layout (docs/lesson-format.md#weight-layout): matrices written
// as nn.Linear's weight (d_out x d_in, applied as x·Wᵀ). The reader keeps
// them as d_in x d_out, so a lesson in either layout runs the same numbers;
// shapes and paths in errors are the lesson's own. (Bad values of the field
// are in bad-input/; the convention lesson's verdicts in the README table and
// its golden.)
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "evaluate/evaluate.hpp"
#include "export/trace_export.hpp"
#include "pipeline/run.hpp"
#include "support.hpp"

using namespace attntrace;
using attntrace::test::run_cli;
using nlohmann::json;

namespace test_weight_layout {

namespace {

// A whole decoder-free block with an FFN, GQA (2 heads, 1 K/V head, so W_K
// and W_V are not square), every matrix given by the lesson in `layout`.
// Matrices are drawn d_in x d_out from a fixed pattern and written transposed
// for out_in: the two layouts describe the same model.
json block_lesson(const char* layout) {
    const std::size_t C = 4, F = 6, KV = 2;  // kv_heads 1 · head size 2
    auto matrix = [](std::size_t rows, std::size_t cols, int salt) {
        json m = json::array();
        for (std::size_t i = 0; i < rows; ++i) {
            json r = json::array();
            for (std::size_t j = 0; j < cols; ++j) r.push_back(static_cast<double>((i * 7 + j * 3 + salt) % 11) / 8.0 - 0.6);
            m.push_back(r);
        }
        return m;
    };
    auto as_written = [&](const json& in_out) {
        if (std::string(layout) != "out_in") return in_out;
        json t = json::array();
        for (std::size_t j = 0; j < in_out[0].size(); ++j) {
            json r = json::array();
            for (std::size_t i = 0; i < in_out.size(); ++i) r.push_back(in_out[i][j]);
            t.push_back(r);
        }
        return t;
    };
    json weights = {{"W_Q", as_written(matrix(C, C, 1))}, {"W_K", as_written(matrix(C, KV, 2))},
                    {"W_V", as_written(matrix(C, KV, 3))}, {"W_O", as_written(matrix(C, C, 4))},
                    {"W_1", as_written(matrix(C, F, 5))},  {"W_2", as_written(matrix(F, C, 6))},
                    {"b_1", json::array({0.1, -0.2, 0.3, 0, 0.5, -0.1})},
                    {"ln1_gamma", json::array({1, 2, 1, 0.5})}, {"ln1_beta", json::array({0, 0.1, 0, -0.1})},
                    {"ln2_gamma", json::array({1, 1, 1, 1})},   {"ln2_beta", json::array({0, 0, 0, 0})}};
    json config = {{"d_model", C}, {"heads", 2}, {"kv_heads", 1}, {"d_ff", F}, {"mask", "causal"}};
    if (std::string(layout) != "default") config["weight_layout"] = layout;
    return {{"format", "attntrace-lesson"}, {"version", 1}, {"id", "layout"}, {"title", "layout"},
            {"source", {{"document", "test"}}}, {"tokens", {"a", "b", "c"}}, {"config", config},
            {"run", {{"from", "embed"}, {"to", "norm2"}}},
            {"inputs", {{"X", {{1, 0, 0.5, -1}, {0, 1, 1, 0}, {2, -1, 0, 0.5}}}}}, {"weights", weights}};
}

Trace run_doc(const json& doc) { return run_lesson(parse_lesson(doc.dump(), "layout.json")); }

std::string error_of(const json& doc) { return attntrace::test::lesson_refusal(doc.dump(), "layout.json"); }

}  // namespace

TEST_CASE("a lesson in nn.Linear's layout runs the same numbers as the same model written d_in x d_out", "[weights]") {
    const Trace in_out = run_doc(block_lesson("in_out"));
    const Trace out_in = run_doc(block_lesson("out_in"));
    const Trace plain = run_doc(block_lesson("default"));  // no field: in_out
    REQUIRE(in_out.steps.size() == out_in.steps.size());
    REQUIRE(in_out.steps.size() > 20);  // the whole block, through the second norm
    for (std::size_t k = 0; k < in_out.steps.size(); ++k) {
        const Step &a = in_out.steps[k], &b = out_in.steps[k], &c = plain.steps[k];
        INFO(a.name);
        CHECK(a.name == b.name);
        const StepValues va = values_of(in_out, a), vb = values_of(out_in, b), vc = values_of(plain, c);
        CHECK(va->shape == vb->shape);
        CHECK(va->data == vb->data);  // the same floats: the reader only moved them
        CHECK(va->data == vc->data);
    }
    // The values are not all zero or all equal: a layout read the wrong way would show.
    const Step* q = out_in.find("blocks.0.attn.hook_q");
    REQUIRE(q != nullptr);
    CHECK(q->held().data[0] != q->held().data[1]);
}

TEST_CASE("out_in: W_Q's rows are output features, so Q = X·Wᵀ, checked on a 2x2 example by hand", "[weights]") {
    json doc = block_lesson("out_in");
    doc["config"] = {{"d_model", 2}, {"heads", 1}, {"weight_layout", "out_in"}};
    doc["run"] = {{"from", "embed"}, {"to", "qkv"}};
    doc["inputs"]["X"] = {{1, 0}, {0, 1}, {1, 1}};
    doc["weights"] = {{"W_Q", {{1, 2}, {0, 1}}}, {"W_K", {{1, 0}, {0, 1}}}, {"W_V", {{1, 0}, {0, 1}}}};
    const Trace t = run_doc(doc);
    const Step* q = t.find("blocks.0.attn.hook_q");
    REQUIRE(q != nullptr);
    // x·Wᵀ: [1,0] -> [1·1 + 0·2, 1·0 + 0·1] = [1, 0]; [0,1] -> [2, 1]; [1,1] -> [3, 1]
    CHECK(std::vector<float>(q->held().data.begin(), q->held().data.end()) == std::vector<float>{1, 0, 2, 1, 3, 1});
    doc["config"].erase("weight_layout");  // the same numbers read as d_in x d_out: X·W
    const Trace t2 = run_doc(doc);
    const Step* q2 = t2.find("blocks.0.attn.hook_q");
    REQUIRE(q2 != nullptr);
    CHECK(std::vector<float>(q2->held().data.begin(), q2->held().data.end()) == std::vector<float>{1, 2, 0, 1, 1, 3});
}

TEST_CASE("out_in: an error names the shape and the path in the lesson's own layout", "[weights]") {
    json doc = block_lesson("out_in");
    // W_1 written d_model x d_ff (the default layout) under out_in
    doc["weights"]["W_1"] = block_lesson("in_out")["weights"]["W_1"];
    std::string e = error_of(doc);
    INFO(e);
    CHECK(e.find("weights.W_1") != std::string::npos);
    CHECK(e.find("a 6x4 array (d_ff x d_model)") != std::string::npos);
    CHECK(e.find("found a 4x6 array") != std::string::npos);
    // GQA's K: its rows are the K/V heads' features, spelled out with their numbers
    doc = block_lesson("out_in");
    doc["weights"]["W_K"] = block_lesson("in_out")["weights"]["W_K"];
    e = error_of(doc);
    INFO(e);
    CHECK(e.find("a 2x4 array (kv_heads·head_size x d_model = 1·2 x 4)") != std::string::npos);
    // A bad number: its path is the row and column as written
    doc = block_lesson("out_in");
    doc["weights"]["W_2"][3][1] = "x";
    e = error_of(doc);
    INFO(e);
    CHECK(e.find("weights.W_2[3][1]") != std::string::npos);
    // Vectors are the same in both layouts
    doc = block_lesson("out_in");
    doc["weights"]["b_1"] = json::array({1, 2, 3, 4, 5, 6});
    CHECK(error_of(doc) == "(accepted)");
}

TEST_CASE("the trace and the text view say which layout the lesson used", "[weights][cli]") {
    const std::string lesson = attntrace::test::lessons_dir() + "/conv-weight-layout-out-in.json";
    const auto run = run_cli({"--color", "never", "run", lesson});
    CHECK(run.status == 0);
    CHECK(run.out.find("weights: as nn.Linear's weight, d_out x d_in, applied as x·Wᵀ") != std::string::npos);
    attntrace::test::TempDir dir;
    const auto exp = run_cli({"export", lesson, "-o", dir.file("t.json")});
    REQUIRE(exp.status == 0);
    const json t = json::parse(attntrace::test::read_text(dir.file("t.json")));
    CHECK(t["config"]["weight_layout"] == "out_in");
    // The default layout writes no field: traces of existing lessons are unchanged.
    const auto plain = run_cli({"export", "003-3.1-ring-fell", "-o", dir.file("p.json")});
    REQUIRE(plain.status == 0);
    CHECK(!json::parse(attntrace::test::read_text(dir.file("p.json")))["config"].contains("weight_layout"));
}

TEST_CASE("explain names each weight entry as the lesson writes it, in either layout", "[weights][explain]") {
    // conv-weight-layout-out-in writes W_Q = [[1, 2], [0, 1]] and W_1 = [[1, -1], [2, 0], [-1, 1]] as nn.Linear's
    // d_out x d_in: Q's column 1 reads W_Q's row 1, H's unit 1 reads W_1's row 1.
    const std::string lesson = attntrace::test::lessons_dir() + "/conv-weight-layout-out-in.json";
    auto q = run_cli({"explain", lesson, "hook_q[like,h0,d1]"});
    INFO(q.out << q.err);
    REQUIRE(q.status == 0);
    CHECK(q.out.find("Σ_c X[like,c] · W_Q[1,c]") != std::string::npos);
    CHECK(q.out.find("X[like,d0] · W_Q[1,0] =    0.0000 ·    0.0000") != std::string::npos);
    CHECK(q.out.find("X[like,d1] · W_Q[1,1] =    1.0000 ·    1.0000") != std::string::npos);
    auto h = run_cli({"explain", lesson, "mlp.hook_pre[I,f1]"});
    REQUIRE(h.status == 0);
    CHECK(h.out.find("LN1[I,d0] · W_1[1,0] =    1.0000 ·    2.0000") != std::string::npos);
    // the same matrices read in the default layout, d_in x d_out: W_Q[c, col], column 1 = [2, 1]
    json plain = json::parse(attntrace::test::read_text(lesson));
    plain["config"].erase("weight_layout");
    for (const char* ffn : {"W_1", "b_1", "W_2", "b_2"}) plain["weights"].erase(ffn);  // W_1 is 3 x 2: no d_in x d_out
    plain["config"].erase("d_ff");
    plain["run"]["to"] = "mix";
    plain.erase("claims");
    attntrace::test::TempDir dir;
    attntrace::test::write_text(dir.file("in_out.json"), plain.dump());
    auto d = run_cli({"explain", dir.file("in_out.json"), "hook_q[like,h0,d1]"});
    REQUIRE(d.status == 0);
    CHECK(d.out.find("· W_Q[c,1] + b_Q[1]") != std::string::npos);
    CHECK(d.out.find("X[like,d0] · W_Q[0,1] =    0.0000 ·    2.0000") != std::string::npos);
}

TEST_CASE("transposed(m)[j][i] is m[i][j] on shapes around the tile's edges", "[weights]") {
    // Held to the definition, element by element: the tiled loop's edge tiles
    // (a row or column count below, at, and past a multiple of the tile) included.
    for (std::size_t r : {1, 7, 8, 9, 15, 16, 17, 33, 64}) {
        for (std::size_t c : {1, 3, 8, 9, 16, 31, 48, 65}) {
            INFO(r << " x " << c);
            attntrace::Tensor m(attntrace::Shape{r, c});
            for (std::size_t k = 0; k < m.size(); ++k) m.data[k] = static_cast<float>(k) + 0.5f;
            const attntrace::Tensor t = attntrace::transposed(m);
            REQUIRE(t.shape == attntrace::Shape{c, r});
            bool same = true;
            for (std::size_t i = 0; i < r; ++i)
                for (std::size_t j = 0; j < c; ++j) same = same && t.data[j * r + i] == m.data[i * c + j];
            CHECK(same);
        }
    }
}

}  // namespace test_weight_layout

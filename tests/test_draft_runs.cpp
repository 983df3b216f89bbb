// The draft's examples when one article runs its inputs more than once (X alone, then with weights; the
// weights without a mask, then with one), and the printed forms those articles use: rows a line each, row
// labels in code comments, products written "[x] x W_K = [k]   (key 1)".
#include <cmath>
#include <map>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "draft/article.hpp"
#include "draft/draft.hpp"
#include "support.hpp"

namespace test_draft_runs {

std::vector<attntrace::Draft> drafts_of(const std::string& name) {
    return attntrace::draft_lessons(attntrace::read_article(attntrace::test::source_dir() + "/tests/draft-articles/" + name));
}

nlohmann::json lesson_of(const attntrace::Draft& d) { return nlohmann::json::parse(d.lesson.dump()); }

// Each claim's expected verdict by its step and its cells: "blocks.0.attn.hook_z", "blocks.0.attn.hook_z{\"query\":1}".
std::map<std::string, std::string> verdicts(const nlohmann::json& lesson) {
    std::map<std::string, std::string> out;
    for (const auto& c : lesson["claims"])
        out[c["step"].get<std::string>() + (c.contains("at") ? c["at"].dump() : "") + (c.contains("of") ? "/" + c["of"].get<std::string>() : "")] =
            c["expect"].get<std::string>();
    return out;
}

std::size_t count_verdict(const nlohmann::json& lesson, const std::string& verdict) {
    std::size_t n = 0;
    for (const auto& c : lesson["claims"]) n += c["expect"] == verdict;
    return n;
}

const attntrace::PrintedArray* array_named(const attntrace::Article& art, const std::string& name) {
    for (const auto& a : art.arrays)
        if (a.name == name) return &a;
    return nullptr;
}

TEST_CASE("a notebook that runs X alone, then its weights unmasked, then masked: an example each, only the planted numbers wrong",
          "[draft]") {
    // tests/draft-articles/context-vectors.ipynb (written with PyTorch): inputs with a comment naming each row's
    // word; inputs @ inputs.T, its softmax (0.1968 planted 0.1986) and the context vectors; then three weights
    // after torch.manual_seed(123), their scores, scaled softmax and context vectors; then the same scores
    // masked with -inf above the diagonal, their softmax and context vectors (0.7090 planted 0.7009)
    const auto ds = drafts_of("context-vectors.ipynb");
    REQUIRE(ds.size() >= 3);
    const auto alone = lesson_of(ds[0]), open = lesson_of(ds[1]), causal = lesson_of(ds[2]);
    INFO(alone.dump(1) << open.dump(1) << causal.dump(1));
    // the words come from the comments on the rows of the tensor literal
    CHECK(alone["tokens"] == nlohmann::json::parse(R"(["Bright", "stars", "shine", "over", "hills"])"));
    CHECK(ds[0].start == "the embeddings X alone (Q = K = V = X)");
    CHECK(alone["config"]["scale"] == false);
    std::map<std::string, std::string> v = verdicts(alone);
    CHECK(v["blocks.0.attn.hook_scores_raw"] == "agrees");
    CHECK(v["blocks.0.attn.hook_z"] == "agrees");
    CHECK(v["blocks.0.attn.hook_pattern{\"query\":0}"] == "disagrees");
    CHECK(count_verdict(alone, "disagrees") == 2);  // the table and its first row
    // the weights without a mask: every printed number agrees (none given from another run)
    CHECK(ds[1].start == "the embeddings X and the weights W_Q, W_K, W_V");
    CHECK(open["config"]["mask"] == "none");
    CHECK_FALSE(open.contains("given"));
    v = verdicts(open);
    CHECK(v["blocks.0.attn.hook_scores_raw"] == "agrees");
    CHECK(v["blocks.0.attn.hook_pattern"] == "agrees");
    CHECK(v["blocks.0.attn.hook_z"] == "agrees");
    CHECK(count_verdict(open, "disagrees") == 0);
    // the same inputs with the causal mask: the masked scores on the masked step (their -inf never on the raw
    // scores), the weights agreeing, Z wrong in its third row only
    CHECK(ds[2].start == ds[1].start);
    CHECK(causal["config"]["mask"] == "causal");
    CHECK_FALSE(causal.contains("given"));
    v = verdicts(causal);
    CHECK(v["blocks.0.attn.hook_scores_masked"] == "agrees");
    CHECK(v["blocks.0.attn.hook_pattern"] == "agrees");
    CHECK(v["blocks.0.attn.hook_z"] == "disagrees");
    CHECK(v["blocks.0.attn.hook_z{\"query\":2}"] == "disagrees");
    CHECK(v["blocks.0.attn.hook_z{\"query\":4}"] == "agrees");
    CHECK(count_verdict(causal, "disagrees") == 2);
    // the mask the code builds at a size it does not state (context_length = attn_scores.shape[0]) is no example
    // of its own, nor a printed array left unplaced
    for (const auto& d : ds) {
        CHECK(d.start.find("mask") == std::string::npos);
        CHECK(d.unplaced.empty());
    }
}

TEST_CASE("a page that prints each matrix a row per line and each product as [x] x W = [k]: read as matrices and rows", "[draft]") {
    // tests/draft-articles/rows-by-line.html (worked with numpy): inputs "Input 1 (red): [..]", each weight a row per
    // line under its caption, keys, queries and values a line each ("[1, 0, 0, 1] x W_K = [1, 0, 2]   (key 1)"),
    // query 1's dot products, its softmax, its weighted values (1.33 planted 1.31), output 1, the outputs' table
    // (1.579 planted 1.597)
    const std::string file = attntrace::test::source_dir() + "/tests/draft-articles/rows-by-line.html";
    const attntrace::Article art = attntrace::read_article(file);
    const attntrace::PrintedArray* wk = array_named(art, "The key weights");
    REQUIRE(wk);
    CHECK(wk->shape == std::vector<std::size_t>{4, 3});
    // a product's result is named by the note after it, never by the weight it multiplies by
    CHECK_FALSE(array_named(art, "W_K"));
    REQUIRE(array_named(art, "key 3"));
    const auto ds = attntrace::draft_lessons(art);
    REQUIRE(ds.size() == 1);
    const auto lesson = lesson_of(ds[0]);
    INFO(lesson.dump(1));
    CHECK(ds[0].start == "the embeddings X and the weights W_Q, W_K, W_V");
    CHECK(lesson["config"]["scale"] == false);
    std::map<std::string, std::string> v = verdicts(lesson);
    CHECK(v["blocks.0.attn.hook_k{\"key\":2}"] == "agrees");  // [1, 1, 1]: key 3, which query 3 equals
    CHECK(v["blocks.0.attn.hook_q{\"query\":2}"] == "agrees");
    CHECK(v["blocks.0.attn.hook_pattern{\"query\":0}"] == "agrees");
    CHECK(v["blocks.0.attn.hook_z{\"query\":0}/terms"] == "disagrees");
    CHECK(v["blocks.0.attn.hook_z"] == "disagrees");
    CHECK(v["blocks.0.attn.hook_z{\"query\":1}"] == "disagrees");
    CHECK(v["blocks.0.attn.hook_z{\"query\":2}"] == "agrees");
    CHECK(count_verdict(lesson, "disagrees") == 3);
    CHECK(ds[0].unplaced.empty());
    // the factors of the products are no arrays to place: no claim on the embeddings
    for (const auto& c : lesson["claims"]) CHECK(c["step"] != "blocks.0.hook_resid_pre");
}

TEST_CASE("an encoder block in formula images: attention, Add & Norm, the FFN, the second norm, two planted numbers", "[draft]") {
    // tests/draft-articles/block-images.md (worked with numpy): every matrix a codecogs image; the FFN's -0.373
    // planted -0.337, the block output's 1.478 planted 1.487
    const auto ds = drafts_of("block-images.md");
    REQUIRE(ds.size() == 1);
    const auto lesson = lesson_of(ds[0]);
    INFO(lesson.dump(1));
    std::map<std::string, std::string> v = verdicts(lesson);
    CHECK(v["blocks.0.attn.hook_pattern"] == "agrees");
    CHECK(v["blocks.0.hook_resid_mid"] == "agrees");
    CHECK(v["blocks.0.ln1.hook_standardized"] == "agrees");
    CHECK(v["blocks.0.mlp.hook_post"] == "agrees");
    CHECK(v["blocks.0.hook_mlp_out{\"pos\":1}"] == "disagrees");
    CHECK(v["blocks.0.hook_mlp_out{\"pos\":0}"] == "agrees");
    CHECK(v["blocks.0.ln2.hook_standardized{\"pos\":2}"] == "disagrees");
    CHECK(v["blocks.0.ln2.hook_standardized{\"pos\":1}"] == "agrees");
    CHECK(count_verdict(lesson, "disagrees") == 4);  // each wrong table and its wrong row
    CHECK(ds[0].unplaced.empty());
}

TEST_CASE("printed forms: a comment's word labels a row, bare rows a line each make a matrix, a note names a product", "[draft]") {
    auto read = [](const std::string& text) { return attntrace::read_article_text(text, "forms.md", "markdown"); };
    // a comment of one word, or of one word and a parenthesis, labels its row; a sentence labels nothing
    attntrace::Article art = read("```python\nX = torch.tensor(\n  [[1.0, 2.0], # cat (x^1)\n   [3.0, 4.0]] # dog\n)\n```\n");
    REQUIRE(art.arrays.size() >= 1);
    CHECK(art.arrays[0].row_labels == std::vector<std::string>{"cat", "dog"});
    art = read("```python\nX = torch.tensor(\n  [[1.0, 2.0], # the first row\n   [3.0, 4.0]] # the second\n)\n```\n");
    REQUIRE(art.arrays.size() >= 1);
    CHECK(art.arrays[0].row_labels.empty());
    // vectors alone on consecutive lines: one matrix, named by the caption above; a blank line ends it
    art = read("The value weights:\n\n```\n[1, 2, 0]\n[0, 1, 1]\n[2, 0, 1]\n\n[5, 5, 5]\n```\n");
    REQUIRE(art.arrays.size() == 2);
    CHECK(art.arrays[0].name == "The value weights");
    CHECK(art.arrays[0].shape == std::vector<std::size_t>{3, 3});
    CHECK(art.arrays[1].shape == std::vector<std::size_t>{3});
    // "x W_K" and ". [" make the vector before them a factor; a sentence's period does not
    art = read("[1, 0] x W_K = [3, 4]   (key 1)\n\n[1, 1] . [2, 0] = 2\n\nThe weights are [0.25, 0.75]. Next we mix.\n");
    const attntrace::PrintedArray* key = array_named(art, "key 1");
    REQUIRE(key);
    CHECK(key->rows == std::vector<std::vector<attntrace::PrintedNumber>>{{{3.0, 0}, {4.0, 0}}});
    std::size_t operands = 0, weights = 0;
    for (const auto& a : art.arrays) {
        operands += a.operand;
        weights += a.rows.size() == 1 && a.rows[0].size() == 2 && a.rows[0][0].value == 0.25 && !a.operand;
    }
    CHECK(operands == 3);  // [1, 0], and both factors of the dot product
    CHECK(weights == 1);
}

}  // namespace test_draft_runs

namespace test_draft_runs {

TEST_CASE("an HTML page of tables: weights under W_Q captions, minus-infinity scores, percentages with dashes for the masked cells",
          "[draft]") {
    // tests/draft-articles/percent-table.html (worked with numpy): X, W_Q, W_K, W_V as tables (their columns q1 q2,
    // k1 k2, v1 v2 under captions W<sub>Q</sub>: ...), Q, K, V, the scaled scores with "&minus;&infin;" above the
    // diagonal, the weights in percent with "&mdash;" there (tea's 35.3% planted 35.8%), a sentence of tea's
    // shares, Z (0.403 planted 0.430)
    const std::string file = attntrace::test::source_dir() + "/tests/draft-articles/percent-table.html";
    const attntrace::Article art = attntrace::read_article(file);
    // the weights are named by their captions, not by their columns (which would make W_Q a Q)
    REQUIRE(array_named(art, "WQ"));
    CHECK(array_named(art, "WQ")->shape == std::vector<std::size_t>{3, 2});
    const auto ds = attntrace::draft_lessons(art);
    REQUIRE(ds.size() == 1);
    const auto lesson = lesson_of(ds[0]);
    INFO(lesson.dump(1));
    CHECK(ds[0].start == "the embeddings X and the weights W_Q, W_K, W_V");
    CHECK(lesson["config"]["mask"] == "causal");
    std::map<std::string, std::string> v = verdicts(lesson);
    CHECK(v["blocks.0.attn.hook_q"] == "agrees");
    CHECK(v["blocks.0.attn.hook_attn_scores"] == "agrees");  // its -inf read from the entities
    CHECK(v["blocks.0.attn.hook_pattern{\"query\":0}"] == "agrees");  // 100.0% and three dashes: 1, 0, 0, 0
    CHECK(v["blocks.0.attn.hook_pattern{\"query\":2}"] == "disagrees");
    CHECK(v["blocks.0.attn.hook_z{\"query\":1}"] == "disagrees");
    CHECK(count_verdict(lesson, "disagrees") == 4);
    CHECK(ds[0].unplaced.empty());
}

TEST_CASE("a table's dash cells: 0 in a table of weights (rows summing to 1), -inf in a table of scores", "[draft]") {
    const attntrace::Article art = attntrace::read_article_text(
        "Weights:\n\n| | a | b |\n|---|---|---|\n| a | 1.00 | — |\n| b | 0.40 | 0.60 |\n\n"
        "Scores:\n\n| | a | b |\n|---|---|---|\n| a | 0.7 | – |\n| b | 0.2 | -1.3 |\n",
        "dashes.md", "markdown");
    REQUIRE(art.arrays.size() == 2);
    CHECK(art.arrays[0].rows[0][1] == attntrace::PrintedNumber{0.0, 2});
    CHECK(art.arrays[1].rows[0][1].value == -HUGE_VAL);
    CHECK(art.arrays[1].rows[1][1] == attntrace::PrintedNumber{-1.3, 1});
}

}  // namespace test_draft_runs

namespace test_draft_runs {

TEST_CASE("a LaTeX document: pmatrix inputs and steps, the weights in a tabular, two planted numbers", "[draft]") {
    // tests/draft-articles/tabular.tex (worked with numpy): X, W_Q, W_K, W_V, Q, K, S in pmatrix, the weights in a
    // \begin{tabular} with a header row and \hline (fly's 0.355 planted 0.335), Z (0.623 planted 0.632)
    const auto ds = drafts_of("tabular.tex");
    REQUIRE(ds.size() == 1);
    const auto lesson = lesson_of(ds[0]);
    INFO(lesson.dump(1));
    std::map<std::string, std::string> v = verdicts(lesson);
    CHECK(v["blocks.0.attn.hook_scores_scaled"] == "agrees");
    CHECK(v["blocks.0.attn.hook_pattern"] == "disagrees");  // the tabular, read as one table with its token labels
    CHECK(v["blocks.0.attn.hook_pattern{\"query\":1}"] == "disagrees");
    CHECK(v["blocks.0.attn.hook_pattern{\"query\":0}"] == "agrees");
    CHECK(v["blocks.0.attn.hook_z{\"query\":1}"] == "disagrees");
    CHECK(count_verdict(lesson, "disagrees") == 4);
    CHECK(ds[0].unplaced.empty());
}

TEST_CASE("a notebook of nn.Module heads on a batch of one sequence twice: each module's run from its seed", "[draft]") {
    // tests/draft-articles/head-modules.ipynb (written with PyTorch): a CausalAttention module of nn.Linear
    // projections and a triu mask buffer, run after torch.manual_seed(31) on torch.stack((inputs, inputs)); then
    // two such modules in an nn.ModuleList, concatenated, after the same seed (-0.2375 planted -0.2357 in
    // every print of it)
    const auto ds = drafts_of("head-modules.ipynb");
    REQUIRE(ds.size() >= 2);
    const auto one = lesson_of(ds[0]), two = lesson_of(ds[1]);
    INFO(one.dump(1) << two.dump(1));
    CHECK(one["tokens"] == nlohmann::json::parse(R"(["Rivers", "carve", "deep", "stone", "over", "ages"])"));
    CHECK(one["config"]["mask"] == "causal");
    CHECK(one["config"].value("heads", 1) == 1);
    CHECK(two["config"]["heads"] == 2);
    for (const auto& lesson : {one, two}) {
        std::map<std::string, std::string> v = verdicts(lesson);
        CHECK(v["blocks.0.attn.hook_z{\"query\":2}"] == "disagrees");
        CHECK(v["blocks.0.attn.hook_z{\"query\":1}"] == "agrees");
        CHECK(count_verdict(lesson, "disagrees") == 2);
    }
}

}  // namespace test_draft_runs

namespace test_draft_runs {

TEST_CASE("the same weights run on a second sentence: an example from each X, the second's tokens its own", "[draft]") {
    // tests/draft-articles/same-weights-two-sentences.md (worked with numpy): W_Q, W_K, W_V, then "dogs chase cats"
    // with its X, Q, K, scores, weights and Z; then "birds sing every morning" with a new X and its scores,
    // weights and Z (0.445 planted 0.454). Before, the second sentence was drafted from its printed scores, at
    // their 3 decimals, and one right row of its weights reported wrong.
    const auto ds = drafts_of("same-weights-two-sentences.md");
    REQUIRE(ds.size() == 2);
    const auto first = lesson_of(ds[0]), second = lesson_of(ds[1]);
    INFO(first.dump(1) << second.dump(1));
    CHECK(ds[1].start == "the embeddings X and the weights W_Q, W_K, W_V");
    CHECK(first["tokens"] == nlohmann::json::parse(R"(["dogs", "chase", "cats"])"));
    CHECK(second["tokens"] == nlohmann::json::parse(R"(["birds", "sing", "every", "morning"])"));
    CHECK(second["weights"] == first["weights"]);
    CHECK(count_verdict(first, "disagrees") == 0);
    std::map<std::string, std::string> v = verdicts(second);
    CHECK(v["blocks.0.attn.hook_pattern"] == "agrees");
    CHECK(v["blocks.0.attn.hook_z{\"query\":2}"] == "disagrees");
    CHECK(count_verdict(second, "disagrees") == 2);
}

}  // namespace test_draft_runs

namespace test_draft_runs {

TEST_CASE("a run from scores printed at 3 decimals: weights the article computed from more digits agree when rounded", "[draft]") {
    // the scores and weights numpy gave for one sentence (tests/draft-articles/same-weights-two-sentences.md),
    // printed at 3 decimals: from the printed scores, the third row's 0.261 computes as 0.262
    const std::string scores = "```\nscores = [[-0.210, 0.029, -0.080, -0.052],\n     [0.253, 0.120, 0.088, 0.153],\n"
                               "     [-0.231, 0.157, -0.096, 0.017],\n     [0.105, 0.051, 0.037, 0.064]]\n";
    const std::string right = "weights = [[0.218, 0.277, 0.249, 0.256],\n     [0.276, 0.241, 0.234, 0.249],\n"
                              "     [0.204, 0.301, 0.234, 0.261],\n     [0.260, 0.247, 0.243, 0.250]]\n```\n";
    const attntrace::Draft d = attntrace::draft_lesson(attntrace::read_article_text(scores + right, "rounded.md", "markdown"));
    const auto lesson = lesson_of(d);
    INFO(lesson.dump(1));
    CHECK(lesson["input_decimals"] == nlohmann::json::parse(R"({"given.blocks.0.attn.hook_scores_raw": 3})"));
    CHECK(verdicts(lesson)["blocks.0.attn.hook_pattern"] == "agrees-when-rounded");
    CHECK(count_verdict(lesson, "disagrees") == 0);
    // a wrong number is still wrong: 0.301 written 0.310 is nine units of the last digit
    std::string wrong = right;
    wrong.replace(wrong.find("0.301"), 5, "0.310");
    const auto w = lesson_of(attntrace::draft_lesson(attntrace::read_article_text(scores + wrong, "wrong.md", "markdown")));
    INFO(w.dump(1));
    std::map<std::string, std::string> v = verdicts(w);
    CHECK(v["blocks.0.attn.hook_pattern"] == "disagrees");
    CHECK(v["blocks.0.attn.hook_pattern{\"query\":2}"] == "disagrees");
    CHECK(v["blocks.0.attn.hook_pattern{\"query\":0}"] != "disagrees");
}

}  // namespace test_draft_runs

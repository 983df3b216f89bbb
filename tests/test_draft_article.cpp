// An article read for its numbers (draft/article.hpp): every format's
// arrays, names, labels, places and printed precision, and hostile articles
// refused in one line or read in one pass.
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <string>

#include "core/error.hpp"
#include "core/printable.hpp"
#include "draft/article.hpp"
#include "support.hpp"

using namespace attntrace;

namespace test_draft_article {

namespace {

Article read(const std::string& text, const std::string& format) { return read_article_text(text, "a", format); }

std::vector<const PrintedArray*> of_form(const Article& a, PrintedForm f) {
    std::vector<const PrintedArray*> out;
    for (const auto& x : a.arrays)
        if (x.form == f) out.push_back(&x);
    return out;
}

std::vector<double> values(const PrintedArray& a) {
    std::vector<double> out;
    for (const auto& r : a.rows)
        for (const auto& n : r) out.push_back(n.value);
    return out;
}

std::vector<int> decimals(const PrintedArray& a) {
    std::vector<int> out;
    for (const auto& r : a.rows)
        for (const auto& n : r) out.push_back(n.decimals);
    return out;
}

using Shape = std::vector<std::size_t>;

}  // namespace

TEST_CASE("LaTeX matrices: names from the formula, factors of a product, label columns, each number's decimals", "[draft]") {
    const std::string md =
        "Tokens: [\"the\", \"cat\"]\n"
        "\n"
        "\\[ X = \\begin{bmatrix} 0.1 & 0.20 \\\\ -0.5 & 1 \\end{bmatrix} \\begin{matrix} \\leftarrow \\text{``the''} \\\\ "
        "\\leftarrow \\text{``cat''} \\end{matrix} \\]\n"
        "\n"
        "\\[ S = QK^\\top = \\begin{pmatrix} 1 & 0 \\\\ 0 & 1 \\end{pmatrix} \\begin{pmatrix} 2 & 0 \\\\ 0 & 2 \\end{pmatrix} = "
        "\\begin{bmatrix} \\mathbf{2} & 0 \\\\ 0 & \\color{red}{2.5} \\end{bmatrix} \\]\n"
        "$$ \\tilde{S} \\approx \\begin{array}{cc} 0.71 & 0 \\\\ 0 & 1.77 \\\\ \\end{array} $$\n"
        "\\[ M = \\begin{bmatrix} q_1 & q_2 \\end{bmatrix} \\quad A = \\begin{bmatrix} 0.5 & \\cdots & 0.25 \\end{bmatrix} \\]\n";
    const Article a = read(md, "markdown");
    const auto m = of_form(a, PrintedForm::latex);
    REQUIRE(m.size() == 6);  // the symbolic [q_1 q_2] is none
    CHECK(m[0]->name == "X");
    CHECK(m[0]->shape == Shape{2, 2});
    CHECK(values(*m[0]) == std::vector<double>{0.1, 0.2, -0.5, 1});
    CHECK(decimals(*m[0]) == std::vector<int>{1, 2, 1, 0});
    CHECK(m[0]->row_labels == std::vector<std::string>{"the", "cat"});
    CHECK_FALSE(m[0]->operand);
    CHECK(m[0]->place.line == 3);
    CHECK(m[1]->operand);
    CHECK(m[2]->operand);
    CHECK(m[3]->name == "S");  // the chain's head, not "QK^\top"
    CHECK_FALSE(m[3]->operand);
    CHECK(values(*m[3]) == std::vector<double>{2, 0, 0, 2.5});
    CHECK(m[4]->name == "\\tilde{S}");
    CHECK(m[4]->shape == Shape{2, 2});
    CHECK(m[5]->name == "A");
    CHECK(m[5]->elided);
    CHECK(values(*m[5]) == std::vector<double>{0.5, 0.25});
    REQUIRE(a.tokens.size() == 1);
    CHECK(a.tokens[0].words == std::vector<std::string>{"the", "cat"});
}

TEST_CASE("bracketed arrays: Python lists, tensor and numpy prints with notes, labelled rows, indexing left alone", "[draft]") {
    const std::string md =
        "```python\n"
        "x = np.array([0.2, -0.5, 0.125])\n"
        "print(weights)\n"
        "# [[1.00, 0.00],   ← \"The\" only attends to itself\n"
        "#  [0.35, 0.65]]  ← \"cat\" attends 35% to \"The\"\n"
        "d = K.shape[-1]\n"
        "```\n"
        "tensor([[0.4419, 0.6515],\n"
        "        [0.1000, 0.2000]], grad_fn=<MmBackward0>)\n"
        "the [ 0.51 0.49 ] cat [ 0.18 0.82 ]\n"
        "\n"
        "    The   [0.3   0.7]\n"
        "    cat   [0.6   0.4]   \"cat\" looks back\n"
        "    sat   [0.5   0.5]\n"
        "Query: [0.3, 0.7, ..., 0.2]\n";
    const Article a = read(md, "markdown");
    const auto b = of_form(a, PrintedForm::bracket);
    REQUIRE(b.size() == 6);
    CHECK(b[0]->name == "x");
    CHECK(b[0]->shape == Shape{3});
    CHECK(decimals(*b[0]) == std::vector<int>{1, 1, 3});
    CHECK(b[1]->shape == Shape{2, 2});
    CHECK(values(*b[1]) == std::vector<double>{1, 0, 0.35, 0.65});
    CHECK(b[1]->row_labels == std::vector<std::string>{"The", "cat"});
    CHECK(b[2]->shape == Shape{2, 2});  // the tensor print
    CHECK(decimals(*b[2]) == std::vector<int>{4, 4, 4, 4});
    CHECK(b[3]->row_labels == std::vector<std::string>{"the", "cat"});
    CHECK(b[4]->row_labels == std::vector<std::string>{"The", "cat", "sat"});
    CHECK(b[4]->shape == Shape{3, 2});
    CHECK(b[5]->elided);
    CHECK(b[5]->name == "Query");
    for (const auto* x : b) CHECK(values(*x) != std::vector<double>{-1});  // K.shape[-1] is an index
    REQUIRE(!a.arrays.empty());
}

TEST_CASE("tables: Markdown and plain text rows, labels and header, bold and elided cells", "[draft]") {
    const std::string md =
        "| token | d1 | d2 | d3 |\n"
        "|---|:-:|---|---|\n"
        "| the | 0.1 | **0.2** | 0.3 |\n"
        "| cat | 0.4 | 0.5 | `0.6` |\n"
        "\n"
        "| Component | Purpose |\n"
        "|---|---|\n"
        "| Attention | looks around |\n"
        "\n"
        "Original v_ring 0 0 2 2\n"
        "Contextualized z_ring 1.72 0.19 0.62 2.15\n";
    const Article a = read(md, "markdown");
    const auto t = of_form(a, PrintedForm::table);
    REQUIRE(t.size() == 2);
    CHECK(t[0]->shape == Shape{2, 3});
    CHECK(t[0]->row_labels == std::vector<std::string>{"the", "cat"});
    CHECK(t[0]->col_labels == std::vector<std::string>{"d1", "d2", "d3"});
    CHECK(values(*t[0]) == std::vector<double>{0.1, 0.2, 0.3, 0.4, 0.5, 0.6});
    CHECK(t[1]->row_labels == std::vector<std::string>{"Original v_ring", "Contextualized z_ring"});
    CHECK(decimals(*t[1]) == std::vector<int>{0, 0, 0, 0, 2, 2, 2, 2});
    CHECK(t[1]->place.line == 10);
}

TEST_CASE("printed tensors as a REPL or a notebook shows them: 1. and 0.  are numbers, the print above names them", "[draft]") {
    const Article a = read(">>> print(scores)\n"
                           "tensor([[1., 5., 2.],\n"
                           "        [2., 2., 3.]], grad_fn=<UnsafeViewBackward0>)\n"
                           "In [4]: weights.detach()\n"
                           "tensor([[0.0996, 0.7361, 0.1643]])\n"
                           "Attention weights:\n"
                           "array([[1.  , 0.5 ],\n"
                           "       [0.25, 0.  ]])\n"
                           "print(x + y)\n"  // an expression names no one array
                           "[[1, 2]]\n"
                           "The score is 5. Then 3.1.4 is a section.\n",
                           "text");
    const auto b = of_form(a, PrintedForm::bracket);
    REQUIRE(b.size() == 4);
    CHECK(b[0]->name == "scores");
    CHECK(values(*b[0]) == std::vector<double>{1, 5, 2, 2, 2, 3});
    CHECK(decimals(*b[0]) == std::vector<int>{0, 0, 0, 0, 0, 0});
    CHECK(b[1]->name == "weights");
    CHECK(b[2]->name == "Attention weights");
    CHECK(values(*b[2]) == std::vector<double>{1, 0.5, 0.25, 0});
    CHECK(b[3]->name.empty());
    // a sentence's "5." is the number 5; "3.1.4" is none
    const auto p = of_form(a, PrintedForm::prose);
    REQUIRE(p.size() == 1);
    CHECK(values(*p[0]) == std::vector<double>{5});
}

TEST_CASE("a table whose first column counts positions under pos: the rows' labels, not numbers", "[draft]") {
    const Article a = read("| pos | PE0 | PE1 |\n|---|---|---|\n| 0 | 0.00 | 1.00 |\n| 1 | 0.84 | 0.54 |\n\n"
                           "| x | a | b |\n|---|---|---|\n| 0 | 0.5 | 1.5 |\n| 1 | 2.5 | 3.5 |\n",
                           "markdown");
    const auto t = of_form(a, PrintedForm::table);
    REQUIRE(t.size() == 2);
    CHECK(t[0]->shape == Shape{2, 2});
    CHECK(t[0]->row_labels == std::vector<std::string>{"0", "1"});
    CHECK(t[0]->col_labels == std::vector<std::string>{"PE0", "PE1"});
    CHECK(values(*t[0]) == std::vector<double>{0, 1, 0.84, 0.54});
    CHECK(t[1]->shape == Shape{2, 3});  // under another header, a column of numbers like the others
}

TEST_CASE("a mask's infinities as printed: -inf, a Unicode minus and infinity sign, LaTeX's -\\infty", "[draft]") {
    const Article a = read("mask = [[0, -inf], [0, 0]]\n\\[ M = \\begin{bmatrix} 0 & -\\infty \\\\ 0 & 0 \\end{bmatrix} \\]\n"
                           "row: [0, \xE2\x88\x92\xE2\x88\x9E]; infinite and inf are words\n",
                           "markdown");
    std::vector<std::vector<double>> got;
    for (const auto& x : a.arrays)
        if (x.form != PrintedForm::prose) got.push_back(values(x));
    const double inf = HUGE_VAL;
    CHECK(got == std::vector<std::vector<double>>{{0, -inf, 0, 0}, {0, -inf, 0, 0}, {0, -inf}});
    CHECK(of_form(a, PrintedForm::prose).empty());
}

TEST_CASE("prose: percentages as fractions with two more decimals, section numbers and words' digits are no numbers", "[draft]") {
    const Article a = read("3.1.4 Step 4: ring attends 51% to fell and 0.19 to the; W1 has 3rd rows, 1e-3 and \\(12.5\\%\\).\n",
                           "text");
    std::vector<double> v;
    std::vector<int> d;
    for (const auto* x : of_form(a, PrintedForm::prose)) v.push_back(values(*x)[0]), d.push_back(decimals(*x)[0]);
    CHECK(v == std::vector<double>{4, 0.51, 0.19, 1e-3, 0.125});
    CHECK(d == std::vector<int>{0, 2, 2, 3, 3});
}

TEST_CASE("HTML: tables, <pre>, KaTeX read once from its TeX, entities, a formula image's URL decoded", "[draft]") {
    const std::string html =
        "<!doctype html><html><head><style>td{color:red}</style><script>var x=[1,2,3];</script></head><body>\n"
        "<p>The weights &amp; scores:</p>\n"
        "<table><tr><th>token</th><th>a</th><th>b</th></tr>\n"
        "<tr><td>the</td><td>0.25</td><td>0.75</td></tr>\n"
        "<tr><td>cat</td><td>0.5</td><td>&#48;.5</td></tr></table>\n"
        "<pre>scores = [[1.0, 2.0],\n [3.0, 4.0]]</pre>\n"
        "<p><span class=\"katex\"><span class=\"katex-mathml\"><math><annotation encoding=\"application/x-tex\">"
        "V = \\begin{bmatrix} 7 &amp; 8 \\end{bmatrix}</annotation></math></span>"
        "<span class=\"katex-html\" aria-hidden=\"true\"><span>V=[78]</span><span>9</span></span></span></p>\n"
        "<img src=\"https://latex.codecogs.com/svg.image?W%20%3D%20%5Cbegin%7Bbmatrix%7D1%20%26%202%5Cend%7Bbmatrix%7D\">\n"
        "<!-- a comment with [5, 6] --></body></html>\n";
    const Article a = read(html, article_format("page.html", html));
    CHECK(a.format == "html");
    const auto t = of_form(a, PrintedForm::table);
    REQUIRE(t.size() == 1);
    CHECK(values(*t[0]) == std::vector<double>{0.25, 0.75, 0.5, 0.5});
    CHECK(t[0]->row_labels == std::vector<std::string>{"the", "cat"});
    CHECK(t[0]->col_labels == std::vector<std::string>{"a", "b"});
    const auto b = of_form(a, PrintedForm::bracket);
    REQUIRE(b.size() == 1);  // the <pre>'s; not the script's, nor the comment's
    CHECK(b[0]->shape == Shape{2, 2});
    const auto l = of_form(a, PrintedForm::latex);
    REQUIRE(l.size() == 2);
    CHECK(l[0]->name == "V");
    CHECK(values(*l[0]) == std::vector<double>{7, 8});
    CHECK(l[1]->name == "W");
    CHECK(values(*l[1]) == std::vector<double>{1, 2});
    for (const auto* p : of_form(a, PrintedForm::prose)) CHECK(values(*p)[0] != 9);  // the rendering's glyphs are not read
}

TEST_CASE("a bar chart drawn in text is a row of shares, its labels the columns, not a mask", "[draft]") {
    const Article a = read("Token: \"sat\"\nAttention weights:\n\nThe: \xE2\x96\x88\xE2\x96\x88\xE2\x96\x91\xE2\x96\x91 (15%)\n"
                           "cat: \xE2\x96\x88\xE2\x96\x88\xE2\x96\x88\xE2\x96\x91 (30%)\n"
                           "sat: \xE2\x96\x88\xE2\x96\x88\xE2\x96\x88\xE2\x96\x88\xE2\x96\x88 (55%)\n\n"
                           "ring \xE2\x96\x88\xE2\x96\x88 0.45\nfell \xE2\x96\x88 0.2\n\n"
                           "alone: \xE2\x96\x88\xE2\x96\x88 (40%)\n\n"
                           "The \xE2\x96\x88 \xE2\x96\x91\ncat \xE2\x96\x88 \xE2\x96\x88\n",
                           "text");
    std::vector<const PrintedArray*> tables;  // the rows of shares (the mask drawn last is a table too)
    for (const auto* t : of_form(a, PrintedForm::table))
        if (t->rows.size() == 1) tables.push_back(t);
    REQUIRE(tables.size() == 2);
    CHECK(tables[0]->name == "Attention weights");
    CHECK(tables[0]->col_labels == std::vector<std::string>{"The", "cat", "sat"});
    CHECK(values(*tables[0]) == std::vector<double>{0.15, 0.30, 0.55});
    CHECK(tables[0]->rows[0][0].decimals == 2);
    CHECK(tables[1]->col_labels == std::vector<std::string>{"ring", "fell"});
    CHECK(values(*tables[1]) == std::vector<double>{0.45, 0.2});
    // one bar is no row; bars without shares are a mask's drawing, read as one
    bool mask = false;
    for (const auto& x : a.arrays) mask = mask || (x.rows.size() == 2 && !x.legend.empty());
    CHECK(mask);
}

TEST_CASE("a print in shortest digits is known to the most decimals it shows: numpy's padded print, a notebook's list", "[draft]") {
    auto decimals = [](const PrintedArray& a) {
        std::vector<int> d;
        for (const auto& r : a.rows)
            for (const auto& n : r) d.push_back(n.decimals);
        return d;
    };
    // numpy pads "0.5" to the width of "0.12345678": all four known to 8 decimals. Torch's scientific notation
    // keeps each number's own (relative) digits; an author's brackets in prose keep what they show.
    Article a = read("```\n[[0.12345678 0.5       ]\n [0.25       0.75      ]]\n```\n\n```\ntensor([[9.9995e-01, 4.5398e-05]])\n```\n\n"
                     "The row is [0.5, 0.25].\n",
                     "markdown");
    auto b = of_form(a, PrintedForm::bracket);
    REQUIRE(b.size() == 3);
    CHECK(decimals(*b[0]) == std::vector<int>{8, 8, 8, 8});
    CHECK(decimals(*b[1]) == std::vector<int>{5, 9});
    CHECK(decimals(*b[2]) == std::vector<int>{1, 2});
    // a notebook's output: Python prints round(x, 2) = 0.10 as 0.1
    const std::string nb = R"nb({"cells": [{"cell_type": "code", "source": "print([round(x, 2) for x in w])", "outputs": [
        {"output_type": "stream", "name": "stdout", "text": ["[0.1, 0.25, 0.65]\n"]}]}], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})nb";
    a = read(nb, article_format("x.ipynb", nb));
    b = of_form(a, PrintedForm::bracket);
    REQUIRE(b.size() == 1);
    CHECK(decimals(*b[0]) == std::vector<int>{2, 2, 2});
}

TEST_CASE("a notebook: Markdown cells, code outputs by cell, binary outputs left out", "[draft]") {
    const std::string nb = R"nb({"cells": [
        {"cell_type": "markdown", "source": ["# Attention\n", "$$A = \\begin{bmatrix} 0.5 & 0.5 \\end{bmatrix}$$"]},
        {"cell_type": "code", "source": "print(q @ k.T)\nprint(q.shape)", "outputs": [
            {"output_type": "stream", "name": "stdout", "text": ["tensor([[0.4419, 0.6515]])\n", "torch.Size([1, 2])\n"]},
            {"output_type": "display_data", "data": {"image/png": "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAAC0lEQVQI12NgAAIAAAUAAeImBZsAAAAASUVORK5CYII=",
                                                     "text/plain": ["<Figure size 640x480 with 1 Axes>"]}},
            {"output_type": "execute_result", "data": {"text/plain": "array([[1.5, 2.5]])"}, "execution_count": 3}]}
    ], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})nb";
    const Article a = read(nb, article_format("x.ipynb", nb));
    CHECK(a.format == "notebook");
    const auto l = of_form(a, PrintedForm::latex);
    REQUIRE(l.size() == 1);
    CHECK(l[0]->place.cell == 0);
    CHECK(l[0]->place.describe() == "cell 0, line 2");
    const auto b = of_form(a, PrintedForm::bracket);
    REQUIRE(b.size() == 2);
    CHECK(values(*b[0]) == std::vector<double>{0.4419, 0.6515});
    CHECK(b[0]->place.output);
    CHECK(b[0]->place.describe() == "cell 1 (output), line 1");
    CHECK(values(*b[1]) == std::vector<double>{1.5, 2.5});
    CHECK(b[1]->place.line == 4);  // after the stream's two lines and the figure's one
    // torch.Size([1, 2]): a shape, the one the print of q.shape above it asks for, not an array of two numbers
    REQUIRE(a.shapes.size() == 1);
    CHECK(a.shapes[0].name == "q");
    CHECK(a.shapes[0].dims == std::vector<std::string>{"1", "2"});
    CHECK(a.shapes[0].place.describe() == "cell 1 (output), line 2");
}

TEST_CASE("hostile articles: refused in one line naming the file, or read whole in one pass", "[draft][hostile]") {
    test::TempDir dir;
    auto write = [&](const std::string& name, const std::string& text) {
        std::ofstream(dir.file(name), std::ios::binary) << text;
        return dir.file(name);
    };
    auto refusal = [](const std::string& path) {
        try {
            read_article(path);
        } catch (const InputError& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    // a notebook that is not one; JSON broken; not even an object
    CHECK(refusal(write("a.ipynb", "{\"cells\": 3}")).find("a.ipynb: cells: expected an array of cells, found") != std::string::npos);
    CHECK(refusal(write("b.ipynb", "{\"cells\": [")).find("b.ipynb") != std::string::npos);
    CHECK(refusal(write("c.ipynb", "[1, 2]")).find("c.ipynb: cells: expected a Jupyter notebook's cells") != std::string::npos);
    CHECK(refusal(dir.file("missing.md")).find("missing.md") != std::string::npos);
    // more numbers than any article prints
    std::string dump;
    for (int i = 0; i < 120000; ++i) dump += "0.5\n";
    const std::string too_many = refusal(write("dump.txt", dump));
    CHECK(too_many.find("dump.txt: line 100001: expected an article with at most 100000 printed arrays") != std::string::npos);
    CHECK(too_many.find('\n') == std::string::npos);

    // Each of these is ~10 MB and read in one pass (docs/drafting.md gives the times): no array, or the one array after it.
    const std::size_t big = 10u << 20;
    const std::string tail = "\n\\[ Z = \\begin{bmatrix} 1 & 2 \\end{bmatrix} \\]\n";
    auto arrays_of = [&](const std::string& name, const std::string& body) {
        const Article a = read_article(write(name, body + tail));
        std::size_t n = 0;
        for (const auto& x : a.arrays) n += x.form != PrintedForm::prose;
        return std::make_pair(n, a.arrays.empty() ? std::vector<double>{} : values(a.arrays.back()));
    };
    const auto open_brackets = arrays_of("brackets.txt", std::string(big, '['));
    CHECK(open_brackets.first == 1);
    CHECK(open_brackets.second == std::vector<double>{1, 2});
    std::string begins;
    while (begins.size() < big) begins += "\\begin{bmatrix} x & ";  // never ended
    CHECK(arrays_of("begins.tex", begins).second == std::vector<double>{1, 2});
    std::string nested;
    while (nested.size() < big / 2) nested += "<div><span>";
    CHECK(arrays_of("nested.html", "<html><body>" + nested + std::string(big / 2, '<')).first <= 1);
    std::string quotes;
    while (quotes.size() < big) quotes += "[\"a ";
    CHECK(arrays_of("quotes.md", quotes).second == std::vector<double>{1, 2});
    std::string lists;
    while (lists.size() < big) lists += "[x [";
    CHECK(arrays_of("lists.md", lists).second == std::vector<double>{1, 2});
    // shapes never closed, on one line and on many: each look bounded, the matrix after them read
    std::string sizes, shaped;
    while (sizes.size() < big) sizes += "torch.Size([n, x shape (a, ";
    CHECK(arrays_of("sizes.txt", sizes).second == std::vector<double>{1, 2});
    while (shaped.size() < big) shaped += "Q: [B, T\nprint(x.shape)\n# (  \\in \\mathbb{R}^{n \\times ";
    CHECK(arrays_of("shaped.txt", shaped).second == std::vector<double>{1, 2});
    // emphasis everywhere: runs of emphasised words that fail at their 64th (a part of attention), stars between
    // letters, a phrase's opening after "sentence" that never closes; a table of vector cells past an array's size
    std::string emphasis;
    while (emphasis.size() < big) {
        for (int w = 0; w < 63; ++w) emphasis += "**a**, ";
        emphasis += "**query** x*y*z sentence *a b ";
    }
    CHECK(arrays_of("emphasis.md", emphasis).second == std::vector<double>{1, 2});
    std::string vector_rows = "| token | q | k |\n|---|---|---|\n";
    while (vector_rows.size() < big) vector_rows += "| a | [1, 2] | [3, 4] |\n";
    CHECK(arrays_of("vector-table.md", vector_rows).second == std::vector<double>{1, 2});
    // numbers everywhere: refused at the first one too many, in one line
    std::string noise(big, '\0');
    for (std::size_t i = 0; i < noise.size(); ++i) noise[i] = static_cast<char>((i * 2654435761u) >> 13);
    const std::string refused = refusal(write("noise.bin", noise));
    CHECK(refused.find("noise.bin: line ") != std::string::npos);
    CHECK(refused.find("found more") != std::string::npos);
}

TEST_CASE("sizes the prose states: d_k, d_model and heads by the config's names, not a decimal or a comparison", "[draft]") {
    const Article a = read("With d_k = 64 and d_{model}=512 over h = 8 heads; dk: 16. Not x == 3, d_k = 6.4, or hd = 2.\n", "text");
    std::vector<std::pair<std::string, long>> got;
    for (const auto& s : a.settings) got.emplace_back(s.name, s.value);
    CHECK(got == std::vector<std::pair<std::string, long>>{{"d_k", 64}, {"d_model", 512}, {"heads", 8}, {"d_k", 16}});
    CHECK(a.setting("d_k") == 64);
    CHECK(a.setting("heads") == 8);
    CHECK(a.setting("d_ff") == 0);
}

TEST_CASE("sizes a tuple assignment states, each in its place: d_in, d_k, d_v = 4, 3, 2", "[draft]") {
    const Article a = read("```python\nd_in, d_k, heads = 4, 3, 2\nx, d_model = f(y), 8\n```\nFor example, d_k = 64.\n", "markdown");
    std::vector<std::pair<std::string, long>> got;
    for (const auto& s : a.settings) got.emplace_back(s.name, s.value);
    // the last name is not read alone as "heads = 4"; a name whose value is no integer gives nothing; prose after
    // a comma is no tuple
    CHECK(got == std::vector<std::pair<std::string, long>>{{"d_k", 3}, {"heads", 2}, {"d_model", 8}, {"d_k", 64}});
}

TEST_CASE("a sentence the code assigns is a token list, single-quoted too, its commas dropped, at a statement's start only", "[draft]") {
    const Article a = read("```python\nsentence = 'Owls hunt, small mice sleep.'\ntext=\"a b\"\nif x == 'c d':\n```\n"
                           "It's a 'quoted' one, title='e f' too.\n",
                           "markdown");
    REQUIRE(a.tokens.size() == 2);
    CHECK(a.tokens[0].words == std::vector<std::string>{"Owls", "hunt", "small", "mice", "sleep"});
    CHECK(a.tokens[1].words == std::vector<std::string>{"a", "b"});
}

TEST_CASE("shapes stated for named arrays: listings, code comments, prose, LaTeX, printed torch.Size and numpy tuples",
          "[draft]") {
    const Article a = read(
        "batch_size, seq_len, d_model = 2, 10, 64\n"                          // a tuple assignment: three sizes
        "h = 8  # heads\n"
        "X of shape [B, T, D] goes in.\n"                                     // prose: the name before \"of shape\"
        "Q: [B, H, T, D_h]\n"                                                 // a listing
        "weights: [B, H, T, T]  # After softmax\n"                            // a listing with its note
        "scores = torch.matmul(Q, K.transpose(-2, -1))  # (batch, n, n)\n"   // a code line's comment
        "    V: torch.Tensor,  # (batch, n, d_v)\n"                           // an annotation's comment
        "The output tensor of shape (batch, n, d_v) is returned.\n"          // generic words skipped back to the name
        "Then $K \\in \\mathbb{R}^{n \\times d_{\\text{model}}}$ holds the keys.\n"  // LaTeX
        "print(attn.shape)\n"
        "torch.Size([2, 8, 10, 10])\n"                                        // printed below its print
        "print(out.shape)\n"
        "(2, 10, 64)\n"                                                       // numpy's tuple
        "n = scores.shape[0]\n",                                              // indexing: no shape
        "text");
    std::vector<std::pair<std::string, std::vector<std::string>>> got;
    for (const auto& s : a.shapes) got.emplace_back(s.name, s.dims);
    using Dims = std::vector<std::string>;
    CHECK(got == std::vector<std::pair<std::string, Dims>>{{"X", {"B", "T", "D"}},
                                                           {"Q", {"B", "H", "T", "D_h"}},
                                                           {"weights", {"B", "H", "T", "T"}},
                                                           {"scores", {"batch", "n", "n"}},
                                                           {"V", {"batch", "n", "d_v"}},
                                                           {"output", {"batch", "n", "d_v"}},
                                                           {"K", {"n", "d_model"}},
                                                           {"attn", {"2", "8", "10", "10"}},
                                                           {"out", {"2", "10", "64"}}});
    REQUIRE(a.shapes.size() == 9);
    CHECK(a.shapes[2].note == "After softmax");
    CHECK(a.shapes[7].place.line == 11);
    // the printed shapes are no arrays of numbers
    CHECK(of_form(a, PrintedForm::bracket).empty());
    std::vector<std::pair<std::string, long>> sizes;
    for (const auto& s : a.sizes) sizes.emplace_back(s.name, s.value);
    CHECK(sizes == std::vector<std::pair<std::string, long>>{{"batch_size", 2}, {"seq_len", 10}, {"d_model", 64}, {"h", 8}});
}

TEST_CASE("a vector after a caption (\"Example row: [...]\") is an array of its own, not a labelled table's row", "[draft]") {
    const Article a = read("Example row: [2.1, 0.5]\nAfter softmax: [0.83, 0.17]\n\nthe [0.1, 0.2]\ncat [0.3, 0.4]\n", "text");
    const auto arrays = of_form(a, PrintedForm::bracket);
    REQUIRE(arrays.size() == 3);
    CHECK(arrays[0]->name == "Example row");
    CHECK(arrays[1]->name == "After softmax");
    CHECK(arrays[1]->rows.size() == 1);
    CHECK(arrays[2]->row_labels == std::vector<std::string>{"the", "cat"});
}

TEST_CASE("captioned vectors a line each whose captions differ by a number or a word are one array's rows", "[draft]") {
    const Article a = read("Input 1 (my):    [1, 0, 0, 1]\nInput 2 (dog):   [0, 1, 1, 0]\nInput 3 (barks): [1, 1, 0, 0]\n\n"
                           "Key for Input 1: [1, 2, 0]\nKey for Input 2: [1, 0, 2]\nKey for Input 3: [1, 1, 1]\n"
                           "Value for Input 1: [1, 1, 3]\nValue for Input 2: [1, 3, 0]\n\n"
                           "Key 'The': [0.1, 0.9]\nKey 'cat': [0.6, 0.3]\n\n"
                           "Example row: [2.1, 0.5]\nAfter softmax: [0.83, 0.17]\n",
                           "text");
    const auto arrays = of_form(a, PrintedForm::bracket);
    REQUIRE(arrays.size() == 6);
    CHECK(arrays[0]->name == "Input");
    CHECK(arrays[0]->row_labels == std::vector<std::string>{"my", "dog", "barks"});
    CHECK(values(*arrays[0]) == std::vector<double>{1, 0, 0, 1, 0, 1, 1, 0, 1, 1, 0, 0});
    CHECK(arrays[1]->name == "Key for Input");  // a family ends where the stem changes, not only at a blank line
    CHECK(arrays[1]->rows.size() == 3);
    CHECK(arrays[1]->row_labels.empty());  // numbered rows: no labels
    CHECK(arrays[2]->name == "Value for Input");
    CHECK(arrays[2]->rows.size() == 2);
    CHECK(arrays[3]->name == "Key");
    CHECK(arrays[3]->row_labels == std::vector<std::string>{"The", "cat"});
    // two captions that share no stem stay two arrays
    CHECK(arrays[4]->name == "Example row");
    CHECK(arrays[5]->name == "After softmax");
}

TEST_CASE("tokens quoted one by one in a sentence are a token list, two quoted words a verb apart are not", "[draft]") {
    const Article a = read("Three tokens, \"I\", \"like\" and \"tea\", then \xE2\x80\x9C" "the\xE2\x80\x9D, \xE2\x80\x9C" "cat\xE2\x80\x9D.\n"
                           "Here \"ring\" attends to \"fell\".\nTokens: [\"a\", \"b\"]\n",
                           "text");
    REQUIRE(a.tokens.size() == 3);
    CHECK(a.tokens[0].words == std::vector<std::string>{"I", "like", "tea"});
    CHECK(a.tokens[1].words == std::vector<std::string>{"the", "cat"});
    CHECK(a.tokens[2].words == std::vector<std::string>{"a", "b"});  // a list's words once, not again as a run
}

TEST_CASE("a prose number's symbol is what the sentence sets it to, whole characters only", "[draft]") {
    std::string alphas;
    for (int i = 0; i < 30; ++i) alphas += "\xCE\xB1";  // α: the 40-byte look-back falls inside one
    const Article a = read("Here \\(\\mu = 2.65\\), \xCF\x83 \xE2\x89\x88 0.48, mean: 2.5, the variance is 1.25, d_k = 64.\n" + alphas +
                               " = 3.5\nno symbol 4.5\n",
                           "text");
    const auto prose = of_form(a, PrintedForm::prose);
    REQUIRE(prose.size() == 7);
    CHECK(prose[0]->name == "\\mu");
    CHECK(prose[1]->name == "\xCF\x83");
    CHECK(prose[2]->name == "mean");
    CHECK(prose[3]->name == "variance");
    CHECK(prose[4]->name == "d_k");
    CHECK(valid_utf8(prose[5]->name) == prose[5]->name);  // a symbol that long is no name: none
    CHECK(prose[6]->name.empty());
}

TEST_CASE("a vector written as an equation's factor is an operand, the result after '=' the printed array", "[draft]") {
    const Article a = read("[1, 0, 2] \xC2\xB7 [1, 2, 0] = 1\n"
                           "softmax([0.577, 2.887, 1.732]) = [0.070, 0.707, 0.223]\n"
                           "0.070 * [1, 1, 3] = [0.070, 0.070, 0.211]\n"
                           "x = [3, 4]\n",
                           "text");
    const auto arrays = of_form(a, PrintedForm::bracket);
    for (const auto* x : arrays) UNSCOPED_INFO(x->place.describe() << " '" << x->name << "' " << x->rows.size() << "x" << x->rows[0].size() << " op " << x->operand);
    REQUIRE(arrays.size() == 7);
    for (std::size_t k : {0, 1, 2, 4}) {
        INFO(k);
        CHECK(arrays[k]->operand);
        CHECK(arrays[k]->name.empty());
    }
    CHECK(!arrays[3]->operand);
    CHECK(values(*arrays[3]) == std::vector<double>{0.070, 0.707, 0.223});
    CHECK(!arrays[5]->operand);
    CHECK(!arrays[6]->operand);
    CHECK(arrays[6]->name == "x");
}

TEST_CASE("a formula's head names its matrix across an argument list: Z_1 = Attention(Q_1, K_1, V_1) = [..]", "[draft]") {
    const Article a = read("\\[Z_1 = \\text{Attention}(Q_1, K_1, V_1) = \\begin{bmatrix} 1 & 2 \\\\ 3 & 4 \\end{bmatrix}\\]\n"
                           "\\[ A = \\begin{bmatrix} 1 \\end{bmatrix}, B = \\begin{bmatrix} 2 \\end{bmatrix} \\]\n",
                           "markdown");
    const auto m = of_form(a, PrintedForm::latex);
    REQUIRE(m.size() == 3);
    CHECK(m[0]->name == "Z_1");
    CHECK(m[1]->name == "A");
    CHECK(m[2]->name == "B");
}

TEST_CASE("masks drawn in glyphs or words: read as 0 and -inf, with their labels, legend and global tokens", "[draft]") {
    const double inf = -HUGE_VAL;
    // ●/○ under a header of tokens, a legend after it
    const Article dots = read("     a   b   c\n"
                              "a    ●   ○   ○\n"
                              "b    ●   ●   ○\n"
                              "c    ●   ●   ●\n"
                              "\n"
                              "● = attends to\n",
                              "text");
    REQUIRE(dots.arrays.size() == 1);
    const PrintedArray& d = dots.arrays[0];
    CHECK(values(d) == std::vector<double>{0, inf, inf, 0, 0, inf, 0, 0, 0});
    CHECK(decimals(d) == std::vector<int>(9, 0));
    CHECK(d.row_labels == std::vector<std::string>{"a", "b", "c"});
    CHECK(d.col_labels == std::vector<std::string>{"a", "b", "c"});
    CHECK(d.legend.find("as its legend says") != std::string::npos);
    CHECK(d.place.line == 1);
    // the legend reverses the glyphs: ● is the masked one here
    const Article reversed = read("● ○ ○\n● ● ○\n\n(● = masked, ○ = may attend)\n", "text");
    REQUIRE(reversed.arrays.size() == 1);
    CHECK(values(reversed.arrays[0]) == std::vector<double>{inf, 0, 0, inf, inf, 0});
    // ✓/✗ in a Markdown table: its header and separator above
    const Article ticks = read("| | x | y |\n|---|---|---|\n| x | ✓ | ✗ |\n| y | ✓ | ✓ |\n", "markdown");
    REQUIRE(ticks.arrays.size() == 1);
    CHECK(values(ticks.arrays[0]) == std::vector<double>{0, inf, 0, 0});
    CHECK(ticks.arrays[0].col_labels == std::vector<std::string>{"x", "y"});
    // True/False either way round: read so that each token sees itself (nn.MultiheadAttention's True is "masked")
    const Article sdpa = read("True False False\nTrue True False\nTrue True True\n", "text");
    const Article mha = read("False True True\nFalse False True\nFalse False False\n", "text");
    REQUIRE(sdpa.arrays.size() == 1);
    REQUIRE(mha.arrays.size() == 1);
    CHECK(values(sdpa.arrays[0]) == values(mha.arrays[0]));
    CHECK(values(mha.arrays[0]) == std::vector<double>{0, inf, inf, 0, 0, inf, 0, 0, 0});
    CHECK(mha.arrays[0].legend.find("so that each token sees itself") != std::string::npos);
    // glyphs written together, x/. in brackets with a row's note, a partial drawing with its global tokens
    const Article together = read("■□□\n■■□\n", "text");
    REQUIRE(together.arrays.size() == 1);
    CHECK(together.arrays[0].shape == Shape{2, 3});
    const Article gl = read("    a  G  b  c\n"
                            "a  [x  x  .  .]  local\n"
                            "G  [x  x  x  x]  global attends all\n"
                            "...\n"
                            "G = global token\n",
                            "text");
    REQUIRE(gl.arrays.size() == 1);
    CHECK(gl.arrays[0].row_labels == std::vector<std::string>{"a", "G"});
    CHECK(gl.arrays[0].col_labels == std::vector<std::string>{"a", "G", "b", "c"});
    CHECK(gl.arrays[0].global_labels == std::vector<std::string>{"G"});
    CHECK(values(gl.arrays[0]) == std::vector<double>{0, 0, inf, inf, 0, 0, 0, 0});
    // 1/0 is a table of numbers, unless the text around it says it is a mask
    const Article numbers = read("a 1 0 0\nb 1 1 0\n", "text");
    REQUIRE(numbers.arrays.size() == 1);
    CHECK(numbers.arrays[0].legend.empty());
    CHECK(values(numbers.arrays[0]) == std::vector<double>{1, 0, 0, 1, 1, 0});
    const Article mask01 = read("The causal mask:\n\na 1 0 0\nb 1 1 0\nc 1 1 1\n", "text");
    REQUIRE(mask01.arrays.size() == 1);
    CHECK(values(mask01.arrays[0]) == std::vector<double>{0, inf, inf, 0, 0, inf, 0, 0, 0});
    // an array of 1 and 0 named a mask, either way round
    const Article named = read("mask = [[1, 0, 0], [1, 1, 0], [1, 1, 1]]\n\nmask = [[0, 1], [0, 0]]\n\nK = [[1, 0], [0, 1]]\n", "text");
    REQUIRE(named.arrays.size() == 3);
    CHECK(values(named.arrays[0]) == std::vector<double>{0, inf, inf, 0, 0, inf, 0, 0, 0});
    CHECK(values(named.arrays[1]) == std::vector<double>{0, inf, 0, 0});
    CHECK(named.arrays[1].legend.find("1 blocked (-inf)") != std::string::npos);
    CHECK(values(named.arrays[2]) == std::vector<double>{1, 0, 0, 1});  // not named a mask: numbers
    // prose is no grid: a word between glyphs, two letters apart
    CHECK(read("x - y and\nx - y again\n", "text").arrays.empty());
    CHECK(read("● attends ○\n● attends ○\n", "text").arrays.empty());
}

TEST_CASE("a drawn mask of millions of cells read in one pass and left unread past the array bound", "[draft][hostile]") {
    std::string grid;
    while (grid.size() < (4u << 20)) grid += "x ● ○ ● ○\n";
    const Article a = read(grid + "\n\\[ Z = \\begin{bmatrix} 1 & 2 \\end{bmatrix} \\]\n", "text");
    REQUIRE(a.arrays.size() == 1);  // the grid is more cells than an array holds: not read
    CHECK(values(a.arrays[0]) == std::vector<double>{1, 2});
    // a line of millions of mask-building calls (each "x, diagonal=k" looked at as a tuple assignment's last
    // name, within a line of code's bound), and of sentences with their lists: no line looked through again
    std::string calls, sentences;
    while (calls.size() < (4u << 20)) calls += "torch.triu(torch.ones(n, n), diagonal=k); ";
    while (sentences.size() < (4u << 20)) sentences += "Token a can attend to [b, c] ";
    for (const std::string& line : {calls, sentences}) {
        const Article b = read(line + "\n\\[ Z = \\begin{bmatrix} 1 & 2 \\end{bmatrix} \\]\n", "text");
        CHECK(of_form(b, PrintedForm::code).empty());
        CHECK(values(b.arrays.back()) == std::vector<double>{1, 2});
    }
}

TEST_CASE("masks the code builds: triu of -inf or ones, tril, a method, the subsequent mask, at the size the code or text gives",
          "[draft]") {
    const double inf = -HUGE_VAL;
    auto only = [](const Article& a) {
        const auto code = of_form(a, PrintedForm::code);
        REQUIRE(code.size() == 1);
        return *code[0];
    };
    const std::vector<double> causal3{0, inf, inf, 0, 0, inf, 0, 0, 0};
    CHECK(values(only(read("mask = torch.triu(torch.ones(3, 3) * float('-inf'), diagonal=1)\n", "text"))) == causal3);
    CHECK(values(only(read("seq_len = 3\nmask = np.tril(np.ones((seq_len, seq_len)))\n", "text"))) == causal3);
    CHECK(values(only(read("m = torch.ones(3, 3).triu(1).bool()\n", "text"))) == causal3);
    CHECK(values(only(read("mask = nn.Transformer.generate_square_subsequent_mask(3)\n", "text"))) == causal3);
    // diagonal 0 blocks each token's own key too (a common slip), and the check will say so
    CHECK(values(only(read("mask = torch.triu(torch.ones(2, 2), diagonal=0)\n", "text"))) == std::vector<double>{inf, inf, 0, inf});
    // a size the code leaves open: drawn at kDescribedMaskSize tokens
    CHECK(only(read("mask = torch.triu(torch.ones(T, T) * -inf, diagonal=1)\n", "text")).shape == Shape{4, 4});
    // a triangle of something else is no mask
    CHECK(of_form(read("upper = np.triu(A)\n", "text"), PrintedForm::code).empty());
}

TEST_CASE("a sentence saying which keys a token sees: one row of the mask, its keys as column labels", "[draft]") {
    const double inf = -HUGE_VAL;
    const Article a = read("Sequence: [1, 2, 3, 4, 5]\n"
                           "Window size: 3\n"
                           "\n"
                           "Token 3 can attend to:\n"
                           "... [2, 3, 4] ...\n"
                           "\n"
                           "Not [1, 5] (outside window)\n"
                           "\n"
                           "- position 'cat' sees ['the', 'cat']\n"
                           "Token 6 attends to all of block 2\n",
                           "text");
    std::vector<const PrintedArray*> rows;
    for (const auto& x : a.arrays)
        if (!x.legend.empty()) rows.push_back(&x);
    REQUIRE(rows.size() == 2);  // a sentence with no list is no row
    CHECK(rows[0]->row_labels == std::vector<std::string>{"3"});
    CHECK(rows[0]->col_labels == std::vector<std::string>{"2", "3", "4", "1", "5"});
    CHECK(values(*rows[0]) == std::vector<double>{0, 0, 0, inf, inf});
    CHECK(rows[0]->place.line == 4);
    CHECK(rows[1]->row_labels == std::vector<std::string>{"cat"});
    CHECK(rows[1]->col_labels == std::vector<std::string>{"the", "cat"});
    CHECK(a.setting("window") == 3);
}

}  // namespace test_draft_article

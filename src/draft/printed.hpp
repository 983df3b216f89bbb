// What an article prints, read for its numbers: every array and scalar, where
// it stands, what the text calls it, and the precision each number was
// printed at. `attntrace draft` reads an article into this (article.hpp),
// then places each printed array on a step of a lesson it builds.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace attntrace {

// One number as printed: its value and the decimal places it shows ("0.50":
// 2, "3": 0, "51%": 2 as a fraction 0.51, "1.2e-3": 4, "1.2e3": -2).
struct PrintedNumber {
    double value = 0;
    int decimals = 0;
    bool operator==(const PrintedNumber&) const = default;
};

// How an array was written.
enum class PrintedForm {
    latex,     // \begin{bmatrix} ... \end{bmatrix} (pmatrix, matrix, array, ...), also in a formula image's URL
    bracket,   // [[0.1, 0.2], [0.3, 0.4]], tensor([...]), array([...]), numpy's "[[0.1 0.2]\n [0.3 0.4]]"
    table,     // a Markdown or HTML table's numeric cells, or lines "label 0.1 0.2 0.3" in a row
    prose,     // a number in a sentence ("attends 51% to fell")
    code,      // a mask the code builds: torch.triu(torch.ones(n, n) * -inf, diagonal=1), tril(ones), ...
};

// Where in the article: a line of the file, or a notebook cell and a line in it.
struct ArticlePlace {
    std::size_t line = 0;  // 1-based line of the file (of the cell's source or output for a notebook)
    int cell = -1;         // notebook cell index, or -1
    bool output = false;   // in a code cell's output, not its source
    std::string describe() const;  // "line 42", "cell 7 (output), line 2"
};

// One printed array: rows of numbers (every row the same length; a scalar
// is 1 x 1, a vector 1 x n), with what the text around it says.
struct PrintedArray {
    std::vector<std::vector<PrintedNumber>> rows;
    std::vector<std::size_t> shape;  // as printed: (n) for a vector, (r, c), (h, r, c) for three levels of brackets
    PrintedForm form = PrintedForm::prose;
    ArticlePlace place;
    std::string name;                      // what the text calls it ("Q", "W^Q", "\tilde{S}", "A"), or ""
    std::vector<std::string> row_labels;   // "the", "ring" ... (a table's first column, "\leftarrow the", "the [ ... ]")
    std::vector<std::string> col_labels;   // a table's header
    bool elided = false;                   // "..." stands for numbers not printed
    bool operand = false;                  // printed as a factor of a product (a matrix right before another), not a result
    bool weighted = false;                 // a weight times a vector, a line each ("0.07 * [1, 1, 3] = [..]"): rows are
                                           // the terms of a weighted sum (Z's weighted value vectors), not a matrix
    std::string quote;                     // the text it stands in, as written (a bounded excerpt)
    // A mask drawn in glyphs or words (scan_masks): how they were read ("● visible (0), ○ blocked (-inf)"),
    // the labels its legend calls global ("G = global token"), and the caption and legend around it, in
    // lower case, for the search's hints. Empty for an array of numbers.
    std::string legend;
    std::vector<std::string> global_labels;
    std::string context;
    std::size_t count() const;             // the numbers printed
};

// A list of words the article gives as its tokens (["the", "ring", "fell"]),
// or a quoted sentence ("the ring fell").
struct PrintedTokens {
    std::vector<std::string> words;
    bool sentence = false;  // a quoted sentence, split at spaces
    ArticlePlace place;
};

// A size the prose states: "d_k = 64", "d_model=512", "h = 8" (the name as a
// lesson's config spells it: d_k, d_model, heads).
struct PrintedSetting {
    std::string name;
    long value = 0;
    ArticlePlace place;
};

// A shape the text states for a named array: "Q: [B, H, T, D_h]", a code
// line's comment ("scores = Q @ K.T  # (batch, n, n)"), "X of shape
// [B, T, D]", "Q \in \mathbb{R}^{n \times d_k}", a printed torch.Size([2, 10, 64])
// or numpy's (2, 10, 64) after a print of `x.shape`.
struct PrintedShape {
    std::string name;               // the array's name as written ("Q", "attention_weights", "Output")
    std::vector<std::string> dims;  // each a size's name ("B", "d_k", "D/H") or a number ("10"), as written
    std::string note;               // the words after it on its line ("After softmax"), or ""
    ArticlePlace place;
    std::string quote;              // its line, as written (a bounded excerpt)
};

// A size the text assigns a name: "seq_len = 10", "batch_size, seq_len, d_model = 2, 10, 64",
// "num_heads=8", "d_{model} = 512" (the name without LaTeX's braces and backslashes).
struct PrintedSize {
    std::string name;
    long value = 0;
    ArticlePlace place;
};

struct Article {
    std::string file;
    std::string format;  // "markdown", "html", "notebook", "latex", "text"
    std::vector<PrintedArray> arrays;  // in the order of the text
    std::vector<PrintedTokens> tokens;
    std::vector<PrintedSetting> settings;  // in the order of the text
    std::vector<PrintedShape> shapes;      // in the order of the text
    std::vector<PrintedSize> sizes;        // in the order of the text
    // The first value the prose gives `name`, or 0.
    long setting(const std::string& name) const;
};

}  // namespace attntrace

// The scanners that find printed arrays in an article's text (article.cpp
// runs them in this order): LaTeX matrices, bracketed arrays, tables, then
// the numbers left in the prose. Each takes the bytes of what it finds, so a
// later one does not read the same numbers again. Each is one pass over the
// text, or a pass per kind of mark it looks for: linear in the text's size.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "draft/article_text.hpp"
#include "draft/printed.hpp"

namespace attntrace {

class Scan {
public:
    Scan(const ArticleText& text, std::string file) : text_(text), file_(std::move(file)), taken_(text.text().size(), 0) {}
    std::string_view s() const { return text_.text(); }
    bool taken(std::size_t begin, std::size_t end) const;
    // Records `a` as printed at [begin, end) of the text: its place and quote
    // from there, the bytes taken. Its rows must be set.
    void add(std::size_t begin, std::size_t end, PrintedArray a);
    void take(std::size_t begin, std::size_t end);
    // Refuses the article (InputError naming the file and the byte): more than kMaxPrintedArrays arrays.
    [[noreturn]] void too_many(std::size_t at) const;
    // The line(s) around [begin, end), at most kQuoteBytes, whitespace collapsed.
    std::string excerpt(std::size_t begin, std::size_t end) const;
    // The arrays found, in the order of the text.
    std::vector<PrintedArray> arrays() &&;
    const ArticleText& text() const { return text_; }
    // The arrays found so far, each with the byte it begins at, in the order found.
    const std::vector<std::pair<std::size_t, PrintedArray>>& found() const { return found_; }
    // The k-th array found is the ids of an embedding's lookup (PrintedArray::ids).
    void mark_ids(std::size_t k) { found_.at(k).second.ids = true; }

private:
    const ArticleText& text_;
    std::string file_;
    std::vector<unsigned char> taken_;
    std::vector<std::pair<std::size_t, PrintedArray>> found_;
};

// An excerpt is a line's worth: enough for the author to find the number.
inline constexpr std::size_t kQuoteBytes = 240;
// An array of more numbers than this is no worked example's (a dump of weights):
// read no further, so that a huge article costs its size, not more.
inline constexpr std::size_t kMaxPrintedNumbers = 1 << 16;
// An article with more arrays than this is no article (a data dump): refused
// at the first one too many, so that what it holds stays bounded.
inline constexpr std::size_t kMaxPrintedArrays = 100000;

// Shapes stated for named arrays (printed.hpp), their bytes taken: a
// torch.Size([2, 10, 64]) is a shape, not an array of three numbers.
std::vector<PrintedShape> scan_shapes(Scan& scan);
// "name = 64" and "a, b, c = 2, 10, 64": the sizes the text assigns.
std::vector<PrintedSize> scan_sizes(const ArticleText& text);
// Masks drawn as grids of glyphs or words ("The ● ○ ○", "True False", "x . ."), read as the mask's 0 and -inf.
void scan_masks(Scan& scan);
// Bar charts drawn in text ("The: ███░░░░░░░ (15%)", a line per key): a printed row of shares, its labels its
// columns. Before scan_masks, which would read the bars' glyphs as a mask's cells.
void scan_bars(Scan& scan);
// Masks the code builds: triu/tril of ones or of -inf (torch's, numpy's, a method's), and
// generate_square_subsequent_mask(n), as the n x n array of 0 and -inf they give; n from the call, else
// from a size the text assigns (`seq_len = 5`), else kDescribedMaskSize.
void scan_mask_code(Scan& scan, const std::vector<PrintedSize>& sizes);
// A sentence saying which keys a token sees ("Token 5 can attend to: [3, 4, 5, 6, 7]", "Not [1, 2, 8]"):
// one row of the mask, its keys its column labels (0 for those it sees, -inf for those it does not), the
// token its row label; every key it does not name is blocked (draft/masks.hpp).
void scan_mask_rows(Scan& scan);
// Arrays of 1 and 0 the text names a mask ("mask = [[1, 0], [1, 1]]"), read as the mask's 0 and -inf:
// 1 may look, unless every token would then be blocked from itself (1 = masked, as triu's ones are).
void read_mask_numbers(std::vector<PrintedArray>& arrays);
// A mask the code builds at a size it leaves open: drawn at this many tokens, enough to show its pattern.
inline constexpr std::size_t kDescribedMaskSize = 4;
void scan_latex(Scan& scan);
// Weights the code generates from a seed (torch.manual_seed, then torch.rand or nn.Linear, at the top
// level or in a module's __init__ the code builds): arrays of form `code` with PyTorch's values and
// `generated` set, named by what the code assigns them to (a module's attribute: W_Q ... by its role).
// After the bracket and table scanners: NAME.shape[k] reads their arrays.
void scan_seeded(Scan& scan);
// Tables whose cells are vectors ("| the | [1, 0, 2] | [0, 1, 1] |", under "| token | query | key |"): an
// array per column, a row per table row, named by the column's header. Before scan_brackets.
void scan_vector_tables(Scan& scan);
void scan_brackets(Scan& scan);
void scan_tables(Scan& scan);
void scan_prose(Scan& scan);
std::vector<PrintedTokens> scan_tokens(const ArticleText& text);
// "d_k = 64", "d_{model}=512", "dk: 64", "num_heads = 8": sizes the prose states, by the config's names.
std::vector<PrintedSetting> scan_settings(const ArticleText& text);

// Helpers the scanners share.
std::string trim(std::string_view s);
// The array a print(...) call's argument names: its last argument's last name that is not an attribute of
// every tensor ("sa.W_query.weight" -> "W_query", "'Q:', Q" -> "Q"); "" for a call's result or a shape (x.shape).
std::string print_argument_name(std::string_view arg);
// A call's arguments after s[open] == '(': the text up to its matching ')' on the same line (bounded), or none.
std::optional<std::string_view> call_args(std::string_view s, std::size_t open);
// The top-level items of a call's arguments, each trimmed ("a, f(b, c), d" -> a | f(b, c) | d).
std::vector<std::string> top_items(std::string_view args);
// A label as a reader sees it: LaTeX's \text{...}, quotes, arrows and markup taken off.
std::string clean_label(std::string_view s);
// Fills a.shape from a.rows (1 x n: (n)) and a.elided from ragged rows.
void set_shape(PrintedArray& a, std::size_t levels);

}  // namespace attntrace

// An article's text, whatever its format, as the scanners read it: one
// string of lines, each line knowing where it came from. HTML loses its
// tags (a table's cells become "| a | b |" rows, <pre> and <br> keep their
// lines, entities are decoded); a notebook becomes its cells' Markdown and
// source and its code cells' text outputs (images and other binary outputs
// are left out); a formula image's URL (codecogs and the like, as many blogs
// write LaTeX) is followed by its decoded LaTeX. Every reader is one pass.
// The text is valid UTF-8: a byte that is not becomes U+FFFD.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "draft/printed.hpp"

namespace attntrace {

class ArticleText {
public:
    // Appends a line (no '\n' in it) from `place`.
    void add_line(std::string_view line, const ArticlePlace& place);
    // Every line of `text` (split at '\n', a '\r' before it dropped), numbered from `first` in `place`.
    void add_lines(std::string_view text, ArticlePlace place);

    const std::string& text() const { return text_; }
    // Where the byte at `offset` of text() came from.
    const ArticlePlace& place_of(std::size_t offset) const;
    // The line holding `offset`, as [begin, end) of text().
    std::pair<std::size_t, std::size_t> line_around(std::size_t offset) const;

private:
    std::string text_;
    std::vector<std::size_t> starts_;
    std::vector<ArticlePlace> places_;
};

// The format's text. `format`: "markdown", "text" and "latex" are read as
// they are, "html" without its tags, "notebook" as its cells (InputError
// naming `file` when it is not a notebook's JSON).
ArticleText article_text(std::string_view content, const std::string& format, const std::string& file);

// Each formula image URL in `line` ("https://latex.codecogs.com/svg.image?X%20%3D%20%5Cbegin...", or the
// formula in its path: "https://i.upmath.me/svg/X%20%3D%20%5Cbegin...") with a Markdown image's alt text,
// replaced by its decoded LaTeX as "\[ ... \]", and every other http(s) address dropped (its digits
// are no printed numbers); the line unchanged when it has none.
std::string with_formula_urls(std::string_view line);

}  // namespace attntrace

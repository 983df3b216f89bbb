// An article read for its numbers (printed.hpp): the file's format from its
// name (.md, .html, .ipynb, .tex; else from its first bytes), its text
// (article_text.hpp), then the scanners (scan.hpp) in order: LaTeX
// matrices, bracketed arrays, tables, the numbers left in the prose; and the
// token lists it quotes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "draft/printed.hpp"

namespace attntrace {

// An article is a page of prose: more than this is no article (a data file).
inline constexpr std::uintmax_t kMaxArticleBytes = std::uintmax_t{64} << 20;

// "markdown", "html", "notebook", "latex" or "text".
std::string article_format(const std::string& path, std::string_view content);

// Throws InputError naming the file: unreadable, larger than
// kMaxArticleBytes, a notebook that is not one, more printed arrays than
// kMaxPrintedArrays (scan.hpp).
Article read_article(const std::string& path);
Article read_article_text(std::string_view content, const std::string& file, const std::string& format);

}  // namespace attntrace

// Prose to the width: a description, a note, a step's meaning broken at
// spaces so that the terminal never breaks a word (80 columns in a pipe, as
// every other view).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace attntrace {

// `text` broken at spaces into lines of at most `width` display columns, the
// first beginning with `first`, the others with `rest` (a hanging indent);
// each line ends with '\n'. A word longer than a line stays whole on its own
// line (a path, a URL). The spaces between two words on one line are kept as
// written; where a line breaks they go. width 0: one line.
std::string wrap_text(std::string_view text, std::size_t width, std::string_view first, std::string_view rest);

// Items joined by `sep`, lines broken only between items ("d_model 4 · heads 1 · ..."
// never parts "d_model" from its 4); the separator ends the line it breaks.
std::string wrap_items(const std::vector<std::string>& items, std::string_view sep, std::size_t width,
                       std::string_view first, std::string_view rest);

// The same with `rest` as many spaces as `first` is wide: "    note: ..." continues under "...".
std::string wrap_hanging(std::string_view text, std::size_t width, std::string_view first);

}  // namespace attntrace

// Prose to the width: a description, a note, a step's meaning broken at
// spaces so that the terminal never breaks a word (80 columns in a pipe, as
// every other view).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace attntrace {

// Joins two words that must stay on one line ("max |Δ| 0.02", a row of
// numbers that fits a line): a break is never made there, and it is written
// as a space. A control character, so no text from a lesson, a trace or an
// argument carries it (core/printable.hpp escapes controls).
inline constexpr char kNoBreak = '\x1f';

// `s` with every space a kNoBreak: one word for the wrapping.
std::string unbroken(std::string_view s);
// The same for each item of a list ("n 32768, d_model 4096", "head 'h0', key 'key 1'"):
// lines break only after its commas.
std::string unbroken_items(std::string_view s);

// `text` broken at spaces into lines of at most `width` display columns, the
// first beginning with `first`, the others with `rest` (a hanging indent);
// each line ends with '\n'. An operator standing alone between spaces
// ("+", "=", "|", "·", "—", ...) ends the line it breaks, as mathematics is
// typeset: never "0.45 | 0.19" broken into "0.45" and "| 0.19". A word
// longer than a line is broken after its commas ("[[0.45,0.27],[0.19,...]]");
// one without commas stays whole on its own line (a path, a URL). The
// spaces between two words on one line are kept as written; where a line
// breaks they go. width 0: one line.
std::string wrap_text(std::string_view text, std::size_t width, std::string_view first, std::string_view rest);

// Items joined by `sep`, lines broken only between items ("d_model 4 · heads 1 · ..."
// never parts "d_model" from its 4); the separator ends the line it breaks.
std::string wrap_items(const std::vector<std::string>& items, std::string_view sep, std::size_t width,
                       std::string_view first, std::string_view rest);

// The same with `rest` as many spaces as `first` is wide: "    note: ..." continues under "...".
std::string wrap_hanging(std::string_view text, std::size_t width, std::string_view first);

// A shell command to the width, to be copied whole: broken at the spaces
// between its words (never inside quotes), each broken line ending in " \"
// so that the shell joins the lines again; after a "&&" first when the command
// after it does not fit. A word longer than a line stays whole.
std::string wrap_command(std::string_view command, std::size_t width, std::string_view first, std::string_view rest);

// Every line of `text` wider than `width` wrapped at spaces, its
// continuation lines indented `extra` columns past its own indentation; the
// lines that fit are kept as written (a kNoBreak written as a space). For
// text made of lines already laid out (an explanation's terms).
std::string wrap_lines(std::string_view text, std::size_t width, std::size_t extra);

}  // namespace attntrace

// Text from a file or an argument, made safe to print on a terminal.
//
// A token name, a title, a claim id, a step name read from a trace or an
// argument echoed in an error may hold anything: ESC [2J clears the screen,
// an OSC sequence sets the window's title, CR and LF break a table or an
// error's one line. Every such string goes through printable() where it
// reaches output (tables, heatmap labels, errors); the strings themselves
// stay as they were read (an export writes what the lesson said).
#pragma once

#include <string>
#include <string_view>

namespace attntrace {

// `s` with every control character escaped: \n, \r, \t, and \xNN for the
// other C0 controls and DEL; the C1 controls (U+0080..U+009F, which some
// terminals obey like ESC) as \u0080..\u009f; each byte that is not part of
// valid UTF-8 (a stray continuation byte, a truncated sequence, an overlong
// form, a surrogate, above U+10FFFF) as \xNN; the bidirectional formatting
// characters (U+061C, U+200E, U+200F, U+202A..U+202E, U+2066..U+2069, which
// reorder the rest of a line) and the line and paragraph separators (U+2028,
// U+2029) as \uNNNN. Valid UTF-8 that is not a
// control ("é", "√", "Σ", "≤") is kept as is, so text without controls comes
// out unchanged. A backslash is kept as is: the result is for reading, not
// for parsing back.
// With keep_newlines, '\n' stays a line break: for a block of lines composed
// elsewhere whose own line breaks are wanted (an explanation).
std::string printable(std::string_view s, bool keep_newlines = false);

// `s` as valid UTF-8: each byte that is not part of a valid sequence (as
// printable() judges them) replaced by U+FFFD, everything else kept. For text
// that will be written into JSON, which must be UTF-8 (an article's quotes).
std::string valid_utf8(std::string_view s);

}  // namespace attntrace

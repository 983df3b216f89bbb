// What standard output can show: colour (--color, NO_COLOR, TERM, whether it
// is a terminal) and width (COLUMNS, else the terminal's, else 80). Decided
// here, in the CLI, and passed down to the renderers as a TermStyle.
#pragma once

#include <string>

#include "render/heatmap.hpp"

namespace attntrace {

// --color=auto|always|never (a global option; main.cpp sets it once parsed).
void set_color_choice(const std::string& choice);

// Width: $COLUMNS when it is a positive number; else, on a terminal, its
// width (TIOCGWINSZ); else 80, so that output to a file or a pipe is the same
// everywhere (as numpy's fixed linewidth).
TermStyle terminal_style();

}  // namespace attntrace

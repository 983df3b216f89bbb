// What standard output can show: colour (--color, NO_COLOR, TERM, whether it
// is a terminal) and width (COLUMNS, else the terminal's, else 80). Decided
// here, in the CLI, and passed down to the renderers as a TermStyle.
#pragma once

#include <string>

#include "cli/cli.hpp"
#include "render/heatmap.hpp"

namespace attntrace {

// Colour as --color=auto|always|never says for this host. Width:
// $COLUMNS when it is a positive number; else, on a terminal, its width;
// else 80, so that output to a file or a pipe is the same everywhere (as
// numpy's fixed linewidth).
TermStyle terminal_style(const std::string& color_choice, const CliHost& host);

}  // namespace attntrace

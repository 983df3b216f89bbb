// What standard output can show: colour (--color, NO_COLOR, TERM, whether it
// is a terminal) and width (COLUMNS, else the terminal's, else 80). Decided
// here, in the CLI, and passed down to the renderers as a TermStyle.
#pragma once

#include <memory>
#include <string>

#include "cli/cli.hpp"
#include "render/heatmap.hpp"

namespace CLI {
class FormatterBase;
}

namespace attntrace {

// Colour as --color=auto|always|never says for this host. Width:
// $COLUMNS when it is a positive number; else, on a terminal, its width;
// else 80, so that output to a file or a pipe is the same everywhere (as
// numpy's fixed linewidth).
// Colour depth: --color=24bit or 256 say it (and colour, wherever the
// output goes); else 24-bit when COLORTERM is "truecolor" or "24bit", the
// 256-colour palette when TERM names a 256-colour terminal without it
// ("xterm-256color"), else 24-bit.
TermStyle terminal_style(const std::string& color_choice, const CliHost& host);
bool decide_truecolor(const std::string& color_choice, const char* colorterm, const char* term);

// CLI11's help formatter with descriptions wrapped to `width` (cli/help_format.cpp).
std::shared_ptr<CLI::FormatterBase> wrapping_formatter(std::size_t width);

// --heatmap: "auto" (and the older "on"), "dense", "cells", "none" (and
// "off"). False for anything else.
bool parse_heatmap_choice(const std::string& text, bool& shown, HeatmapMode& mode);
inline constexpr const char* kHeatmapHelp =
    "auto (default): cells, each value on its colour (else shaded with ░▒▓█), when every key's column fits the "
    "width, else dense; dense: one character per cell, two query rows per line in colour, pooled (max) to the width; "
    "cells; or none. Masked cells are grey or ×";

}  // namespace attntrace

#include "cli/terminal.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>
#include <string_view>

namespace attntrace {

namespace {
constexpr std::size_t kDefaultWidth = 80;
}  // namespace

CliHost host_of_fds(const std::string& program, int out_fd, int err_fd) {
    CliHost h;
    h.program = program;
    h.stdout_is_terminal = isatty(out_fd) == 1;
    h.stderr_is_terminal = isatty(err_fd) == 1;
    winsize ws{};
    if (h.stdout_is_terminal && ioctl(out_fd, TIOCGWINSZ, &ws) == 0) h.terminal_columns = ws.ws_col;
    return h;
}

CliHost host_of_this_process(const char* argv0) {
    return host_of_fds(argv0 ? argv0 : "attntrace", STDOUT_FILENO, STDERR_FILENO);
}

bool decide_truecolor(const std::string& color_choice, const char* colorterm, const char* term) {
    if (color_choice == "256") return false;
    if (color_choice == "24bit") return true;
    const std::string_view ct = colorterm ? colorterm : "", t = term ? term : "";
    if (ct == "truecolor" || ct == "24bit") return true;
    return t.find("256color") == std::string_view::npos;
}

TermStyle terminal_style(const std::string& color_choice, const CliHost& host) {
    TermStyle s;
    const bool forced = color_choice == "256" || color_choice == "24bit";
    s.color = forced || decide_color(color_choice, host.stdout_is_terminal, std::getenv("NO_COLOR"), std::getenv("TERM"));
    s.truecolor = decide_truecolor(color_choice, std::getenv("COLORTERM"), std::getenv("TERM"));
    s.width = kDefaultWidth;
    if (const char* cols = std::getenv("COLUMNS"); cols && *cols) {
        char* end = nullptr;
        const long n = std::strtol(cols, &end, 10);
        if (*end == '\0' && n > 0 && n < 100000) return s.width = static_cast<std::size_t>(n), s;
    }
    if (host.stdout_is_terminal && host.terminal_columns > 0) s.width = host.terminal_columns;
    return s;
}

bool parse_heatmap_choice(const std::string& text, bool& shown, HeatmapMode& mode) {
    shown = text != "none" && text != "off";
    if (text == "auto" || text == "on") mode = HeatmapMode::automatic;
    else if (text == "dense") mode = HeatmapMode::dense;
    else if (text == "cells") mode = HeatmapMode::cells;
    else if (shown) return false;
    return true;
}

}  // namespace attntrace

#include "cli/terminal.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>
#include <string_view>

namespace attntrace {

namespace {
std::string g_color = "auto";
constexpr std::size_t kDefaultWidth = 80;
}  // namespace

void set_color_choice(const std::string& choice) { g_color = choice; }

TermStyle terminal_style() {
    TermStyle s;
    const bool tty = isatty(STDOUT_FILENO) == 1;
    s.color = decide_color(g_color, tty, std::getenv("NO_COLOR"), std::getenv("TERM"));
    s.width = kDefaultWidth;
    if (const char* cols = std::getenv("COLUMNS"); cols && *cols) {
        char* end = nullptr;
        const long n = std::strtol(cols, &end, 10);
        if (*end == '\0' && n > 0 && n < 100000) return s.width = static_cast<std::size_t>(n), s;
    }
    winsize ws{};
    if (tty && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) s.width = ws.ws_col;
    return s;
}

}  // namespace attntrace

#include "cli/progress.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <string_view>

#include "cli/commands.hpp"
#include "core/printable.hpp"
#include "lesson/lesson.hpp"
#include "pipeline/plan.hpp"

namespace attntrace {

namespace {

// Longer than a terminal's usual 80 columns, the line would wrap and \r would
// no longer return to its start.
constexpr std::size_t kMaxWidth = 79;

}  // namespace

bool progress_allowed(const CliContext& cli) {
    if (cli.quiet) return false;
    if (const char* off = std::getenv("ATTNTRACE_NO_PROGRESS"); off && *off && std::string_view(off) != "0")
        return false;
    return cli.host.stderr_is_terminal;
}

ProgressLine::ProgressLine(const CliContext& cli, bool wanted, std::string label)
    : ProgressLine(cli.err, wanted && progress_allowed(cli), std::move(label)) {}

void ProgressLine::update(const Progress& p) {
    if (!shown_) return;
    std::string text = "attntrace: ";
    if (!label_.empty()) text += label_ + ": ";
    text += fmt::format("{} [{}/{}]", p.task, p.done, p.total);
    if (!p.item.empty()) text += fmt::format(" {}", p.item);
    text = printable(text);  // the label is a lesson's id: no control character reaches the terminal
    if (text.size() > kMaxWidth) text.resize(kMaxWidth);
    const std::size_t width = text.size();
    if (width < width_) text.append(width_ - width, ' ');  // blank out the longer previous line
    sink_ << '\r' << text << std::flush;
    width_ = width;
}

void ProgressLine::clear() {
    if (!shown_ || width_ == 0) return;
    sink_ << '\r' << std::string(width_, ' ') << '\r' << std::flush;
    width_ = 0;
}

bool long_run(const Lesson& lesson) { return lesson_flops(lesson) >= kProgressMinFlops; }

}  // namespace attntrace

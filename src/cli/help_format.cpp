// --help to the width: CLI11's formatter with its descriptions (the app's,
// each option's, each subcommand's) broken at spaces to the terminal's width,
// 80 in a pipe. CLI11 2.1 indents what follows a '\n' in a description to the
// option column, so the wrapped lines line up under the first. Footers (the
// examples) are left as written: a command cut in two cannot be copied.
#include <CLI/CLI.hpp>

#include <sstream>

#include "cli/terminal.hpp"
#include "render/wrap.hpp"

namespace attntrace {

namespace {

// Below this many columns for a description, words stack one per line: keep at least this many.
constexpr std::size_t kMinDescriptionWidth = 30;

class WrappingFormatter : public CLI::Formatter {
public:
    explicit WrappingFormatter(std::size_t width) : width_(width) {}

    std::string make_description(const CLI::App* app) const override {
        const std::string d = CLI::Formatter::make_description(app);
        return d.empty() ? d : wrap_lines(d, width_);
    }
    std::string make_option_desc(const CLI::Option* opt) const override {
        return strip_newline(wrap_lines(opt->get_description(), description_width()));
    }
    std::string make_subcommand(const CLI::App* sub) const override {
        std::stringstream out;
        CLI::detail::format_help(out, sub->get_display_name(true),
                                 strip_newline(wrap_lines(sub->get_description(), description_width())),
                                 get_column_width());
        return out.str();
    }

private:
    std::size_t width_;
    std::size_t description_width() const {
        const std::size_t col = get_column_width();
        return std::max(width_ > col ? width_ - col : 0, kMinDescriptionWidth);
    }
    static std::string strip_newline(std::string s) {
        if (!s.empty() && s.back() == '\n') s.pop_back();
        return s;
    }
    // Each line of `text` wrapped on its own (CLI11 adds lines of its own: "[At most 1 ...]").
    static std::string wrap_lines(const std::string& text, std::size_t width) {
        std::string out;
        std::size_t start = 0;
        while (start < text.size()) {
            std::size_t end = text.find('\n', start);
            if (end == std::string::npos) end = text.size();
            out += wrap_text(std::string_view(text).substr(start, end - start), width, "", "");
            start = end + 1;
        }
        return out;
    }
};

}  // namespace

std::shared_ptr<CLI::FormatterBase> wrapping_formatter(std::size_t width) {
    return std::make_shared<WrappingFormatter>(width);
}

}  // namespace attntrace

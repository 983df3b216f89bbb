// --help to the width: CLI11's formatter with its descriptions (the app's,
// each option's, each subcommand's) broken at spaces to the terminal's width,
// 80 in a pipe. CLI11 2.1 indents what follows a '\n' in a description to the
// option column, so the wrapped lines line up under the first. In footers, an
// example command ("  attntrace ...") is broken between its words with the
// shell's " \\" continuation, so that it is still copied whole; a note after
// it ("   (an .npy folder ...)") goes on the next line; prose is wrapped.
#include <CLI/CLI.hpp>

#include <sstream>

#include "cli/terminal.hpp"
#include "render/wrap.hpp"

namespace attntrace {

namespace {

// How an example command begins in a footer.
constexpr std::string_view kExample = "  attntrace ";

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
    std::string make_footer(const CLI::App* app) const override {
        const std::string footer = app->get_footer();
        if (footer.empty()) return footer;
        std::string out;
        std::size_t start = 0;
        while (start < footer.size()) {
            std::size_t end = footer.find('\n', start);
            if (end == std::string::npos) end = footer.size();
            const std::string_view line = std::string_view(footer).substr(start, end - start);
            if (line.rfind(kExample, 0) == 0) {
                // "  attntrace report X -o Y   (what X is)": the command, then its note under it
                const std::size_t note = line.find("   (");
                out += wrap_command(line.substr(2, note == std::string_view::npos ? line.npos : note - 2), width_, "  ",
                                    "      ");
                if (note != std::string_view::npos) out += wrap_text(line.substr(note + 3), width_, "      ", "       ");
            } else {
                const std::size_t indent = std::min(line.find_first_not_of(' '), line.size());
                out += wrap_text(line.substr(indent), width_, line.substr(0, indent), std::string(indent, ' '));
            }
            start = end + 1;
        }
        return out;
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

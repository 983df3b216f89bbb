#include "render/wrap.hpp"

#include "render/matrix.hpp"

namespace attntrace {

std::string wrap_text(std::string_view text, std::size_t width, std::string_view first, std::string_view rest) {
    std::string out(first), line(first);
    bool empty_line = true;  // nothing but the prefix on the line yet
    std::size_t pos = 0;
    while (pos < text.size()) {
        const std::size_t start = text.find_first_not_of(' ', pos);
        if (start == std::string_view::npos) break;
        std::size_t end = text.find(' ', start);
        if (end == std::string_view::npos) end = text.size();
        const std::string_view word = text.substr(start, end - start);
        // The spaces as written between two words on one line ("A  [3x3]" keeps its two).
        const std::string_view gap = empty_line ? std::string_view() : text.substr(pos, start - pos);
        if (width && !empty_line && display_width(line) + gap.size() + display_width(word) > width) {
            out += "\n";
            out += rest;
            line = std::string(rest);
        } else {
            out += gap;
            line += gap;
        }
        out += word;
        line += word;
        empty_line = false;
        pos = end;
    }
    return out + "\n";
}

std::string wrap_items(const std::vector<std::string>& items, std::string_view sep, std::size_t width,
                       std::string_view first, std::string_view rest) {
    std::string out(first), line(first);
    bool empty_line = true;
    for (std::size_t i = 0; i < items.size(); ++i) {
        const std::string_view trail = i + 1 < items.size() ? sep : std::string_view();
        if (width && !empty_line && display_width(line) + display_width(items[i]) + display_width(trail) > width) {
            while (!out.empty() && out.back() == ' ') out.pop_back();  // the separator's own space, not at a line's end
            out += "\n";
            out += rest;
            line = std::string(rest);
        }
        out += items[i];
        out += trail;
        line += items[i];
        line += trail;
        empty_line = false;
    }
    return out + "\n";
}

std::string wrap_hanging(std::string_view text, std::size_t width, std::string_view first) {
    return wrap_text(text, width, first, std::string(display_width(first), ' '));
}

}  // namespace attntrace

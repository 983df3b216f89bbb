#include "render/wrap.hpp"

#include <algorithm>

#include "render/matrix.hpp"

namespace attntrace {

namespace {

// A word standing alone between spaces that joins what is on either side of
// it: it stays at the end of the line before a break, never begins one.
bool is_operator(std::string_view w) {
    static constexpr std::string_view kOperators[] = {"+", "-", "=", "|", "·", "×", "÷", "/",
                                                      "→", "—", "≈", "<", ">", "≤", "≥"};
    return std::find(std::begin(kOperators), std::end(kOperators), w) != std::end(kOperators);
}

// What the lines are made of: a word (with the operators after it, which
// never start a line) and the spaces written before it.
struct Unit {
    std::string_view gap;
    std::string_view text;
};

std::vector<Unit> units_of(std::string_view text) {
    std::vector<Unit> units;
    std::size_t pos = 0;
    while (pos < text.size()) {
        const std::size_t start = text.find_first_not_of(' ', pos);
        if (start == std::string_view::npos) break;
        std::size_t end = text.find(' ', start);
        if (end == std::string_view::npos) end = text.size();
        const std::string_view word = text.substr(start, end - start);
        if (!units.empty() && is_operator(word)) {  // joined to the word before it, with the spaces between
            const Unit& u = units.back();
            units.back().text = text.substr(u.text.data() - text.data(), end - (u.text.data() - text.data()));
        } else {
            units.push_back({text.substr(pos, start - pos), word});
        }
        pos = end;
    }
    return units;
}

// A word longer than `room` in pieces that each end after a comma (the last
// as it ends): after the commas that close a bracket ("[[0.45,0.27],") when
// those pieces fit, else after every comma; one piece when it has no comma.
std::vector<std::string_view> comma_pieces(std::string_view word, std::size_t room) {
    if (room == 0 || display_width(word) <= room || word.find(',') == std::string_view::npos) return {word};
    for (const bool rows : {true, false}) {
        std::vector<std::string_view> pieces;
        std::size_t start = 0;
        for (std::size_t i = 1; i + 1 < word.size(); ++i)
            if (word[i] == ',' && (!rows || word[i - 1] == ']' || word[i - 1] == ')')) {
                pieces.push_back(word.substr(start, i + 1 - start));
                start = i + 1;
            }
        pieces.push_back(word.substr(start));
        if (!rows || std::all_of(pieces.begin(), pieces.end(), [&](std::string_view p) { return display_width(p) <= room; }))
            return pieces;
    }
    return {word};
}

std::string spaced(std::string s) {
    std::replace(s.begin(), s.end(), kNoBreak, ' ');
    return s;
}

}  // namespace

std::string unbroken(std::string_view s) {
    std::string out(s);
    std::replace(out.begin(), out.end(), ' ', kNoBreak);
    return out;
}

std::string unbroken_items(std::string_view s) {
    std::string out(s);
    for (std::size_t i = 1; i < out.size(); ++i)
        if (out[i] == ' ' && out[i - 1] != ',') out[i] = kNoBreak;
    return out;
}

std::string wrap_text(std::string_view text, std::size_t width, std::string_view first, std::string_view rest) {
    std::string out(first);
    std::size_t col = display_width(first);
    const std::size_t rest_w = display_width(rest);
    bool empty_line = true;  // nothing but the prefix on the line yet
    for (const Unit& u : units_of(text)) {
        const auto pieces = comma_pieces(u.text, width > rest_w ? width - rest_w : 0);
        for (std::size_t k = 0; k < pieces.size(); ++k) {
            // The spaces as written between two words on one line ("A  [3x3]" keeps its two); none inside a word.
            const std::string_view gap = empty_line || k ? std::string_view() : u.gap;
            const std::size_t w = display_width(pieces[k]);
            // A break before the first word too when it does not fit after `first` and `rest` leaves it more room.
            if (width && (!empty_line || rest_w < col) && col + gap.size() + w > width) {
                if (empty_line)
                    while (!out.empty() && out.back() == ' ') out.pop_back();
                out += "\n";
                out += rest;
                col = rest_w;
            } else {
                out += gap;
                col += gap.size();
            }
            out += pieces[k];
            col += w;
            empty_line = false;
        }
    }
    return spaced(std::move(out)) + "\n";
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
    return spaced(std::move(out)) + "\n";
}

std::string wrap_hanging(std::string_view text, std::size_t width, std::string_view first) {
    return wrap_text(text, width, first, std::string(display_width(first), ' '));
}

namespace {

// A command's words: split at spaces outside single and double quotes.
std::vector<std::string_view> shell_words(std::string_view command) {
    std::vector<std::string_view> words;
    std::size_t start = std::string_view::npos;
    char quote = 0;
    for (std::size_t i = 0; i <= command.size(); ++i) {
        const char c = i < command.size() ? command[i] : ' ';
        if (quote) {
            if (c == quote) quote = 0;
        } else if (c == ' ') {
            if (start != std::string_view::npos) words.push_back(command.substr(start, i - start));
            start = std::string_view::npos;
            continue;
        } else if (c == '\'' || c == '"') {
            quote = c;
        }
        if (start == std::string_view::npos) start = i;
    }
    if (start != std::string_view::npos) words.push_back(command.substr(start));  // an unclosed quote: to the end
    return words;
}

}  // namespace

std::string wrap_command(std::string_view command, std::size_t width, std::string_view first, std::string_view rest) {
    // An option stays on the line of its value: "--layers 32", "-o gqa.json", "--text \"the ring fell\"".
    std::vector<std::string> words;
    for (std::string_view w : shell_words(command)) {
        const bool value = !words.empty() && words.back()[0] == '-' && words.back().find(' ') == std::string::npos &&
                           w[0] != '-' && w != "&&" && w != "|" && w != ">";
        if (value) words.back().append(" ").append(w);
        else words.emplace_back(w);
    }
    constexpr std::string_view kJoin = " \\";  // the shell's line continuation
    std::string out(first);
    std::size_t col = display_width(first);
    bool empty_line = true;
    for (std::size_t k = 0; k < words.size(); ++k) {
        const std::size_t w = display_width(words[k]);
        // room for this word, and for the continuation unless it is the last
        const std::size_t need = (empty_line ? 0 : 1) + w + (k + 1 < words.size() ? kJoin.size() : 0);
        bool wrap = width && !empty_line && col + need > width;
        // after "&&", the next command on a line of its own when it does not fit on this one
        if (width && !wrap && !empty_line && k > 0 && words[k - 1] == "&&") {
            std::size_t next = col;
            for (std::size_t j = k; j < words.size() && words[j] != "&&"; ++j) next += 1 + display_width(words[j]);
            wrap = next > width;
        }
        if (wrap) {
            out += kJoin;
            out += "\n";
            out += rest;
            col = display_width(rest);
            empty_line = true;
        }
        if (!empty_line) out += ' ', ++col;
        out += words[k];
        col += w;
        empty_line = false;
    }
    return out + "\n";
}

std::string wrap_lines(std::string_view text, std::size_t width, std::size_t extra) {
    std::string out;
    std::size_t pos = 0;
    while (pos < text.size()) {
        std::size_t end = text.find('\n', pos);
        const bool ended = end != std::string_view::npos;
        if (!ended) end = text.size();
        const std::string_view line = text.substr(pos, end - pos);
        if (width == 0 || display_width(line) <= width) {
            out += spaced(std::string(line));
            if (ended) out += '\n';
        } else {
            const std::size_t indent = std::min(line.find_first_not_of(' '), line.size());
            std::string wrapped = wrap_text(line.substr(indent), width, line.substr(0, indent),
                                            std::string(indent + extra, ' '));
            if (!ended) wrapped.pop_back();
            out += wrapped;
        }
        pos = end + 1;
    }
    return out;
}

}  // namespace attntrace

#include "draft/article_text.hpp"
#include "draft/mathml.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>

#include "core/error.hpp"
#include "core/printable.hpp"
#include "core/utf8.hpp"
#include <nlohmann/json.hpp>

#include "core/json_field.hpp"

namespace attntrace {

std::string ArticlePlace::describe() const {
    if (cell < 0) return "line " + std::to_string(line);
    return "cell " + std::to_string(cell) + (output ? " (output)" : "") + ", line " + std::to_string(line);
}

void ArticleText::add_line(std::string_view line, const ArticlePlace& place) {
    starts_.push_back(text_.size());
    places_.push_back(place);
    text_.append(valid_utf8(line));  // every quote, label and name taken from it is valid UTF-8, as JSON needs
    text_ += '\n';
}

void ArticleText::add_lines(std::string_view text, ArticlePlace place) {
    std::size_t a = 0;
    while (a <= text.size()) {
        std::size_t b = text.find('\n', a);
        if (b == std::string_view::npos) b = text.size();
        std::string_view line = text.substr(a, b - a);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (!(b == text.size() && line.empty() && a > 0)) add_line(with_formula_urls(line), place);
        ++place.line;
        a = b + 1;
    }
}

const ArticlePlace& ArticleText::place_of(std::size_t offset) const {
    static const ArticlePlace none;
    if (starts_.empty()) return none;
    const auto it = std::upper_bound(starts_.begin(), starts_.end(), offset);
    return places_[static_cast<std::size_t>(it - starts_.begin()) - 1];
}

std::pair<std::size_t, std::size_t> ArticleText::line_around(std::size_t offset) const {
    if (starts_.empty()) return {0, 0};
    const auto it = std::upper_bound(starts_.begin(), starts_.end(), offset);
    const std::size_t i = static_cast<std::size_t>(it - starts_.begin()) - 1;
    const std::size_t end = i + 1 < starts_.size() ? starts_[i + 1] - 1 : text_.size() - 1;
    return {starts_[i], std::max(end, starts_[i])};
}

namespace {

int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// A character reference's code point as UTF-8; one that is no character (NUL, a surrogate, past U+10FFFF) as U+FFFD.
void append_reference(std::string& out, std::uint32_t cp) {
    if (cp == 0 || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) cp = 0xFFFD;
    append_utf8(out, cp);
}

// An entity at s[i] == '&': appended decoded, and its length returned; 0 when it is none.
std::size_t decode_entity(std::string_view s, std::size_t i, std::string& out) {
    // The named entities an article's numbers and formulas use; any other is left as written.
    static constexpr std::array<std::pair<std::string_view, std::string_view>, 20> named = {{
        {"amp", "&"}, {"lt", "<"}, {"gt", ">"}, {"quot", "\""}, {"apos", "'"}, {"nbsp", " "},
        {"minus", "\xE2\x88\x92"}, {"times", "\xC3\x97"}, {"hellip", "\xE2\x80\xA6"}, {"middot", "\xC2\xB7"},
        {"space", " "}, {"plus", "+"}, {"larr", "\xE2\x86\x90"}, {"rarr", "\xE2\x86\x92"},
        {"ldquo", "\xE2\x80\x9C"}, {"rdquo", "\xE2\x80\x9D"}, {"infin", "\xE2\x88\x9E"}, {"mdash", "\xE2\x80\x94"},
        {"ndash", "\xE2\x80\x93"}, {"radic", "\xE2\x88\x9A"},
    }};
    constexpr std::size_t kLongest = 10;  // "&#x10FFFF;"
    const std::size_t semi = s.substr(i, kLongest + 1).find(';');
    if (semi == std::string_view::npos || semi < 2) return 0;
    const std::string_view body = s.substr(i + 1, semi - 1);
    if (body[0] == '#') {
        std::uint32_t cp = 0;
        const bool hex = body.size() > 1 && (body[1] == 'x' || body[1] == 'X');
        const std::string_view digits = body.substr(hex ? 2 : 1);
        if (digits.empty()) return 0;
        for (char c : digits) {
            const int d = hex ? hex_digit(c) : (std::isdigit(static_cast<unsigned char>(c)) ? c - '0' : -1);
            if (d < 0) return 0;
            cp = cp * (hex ? 16 : 10) + static_cast<std::uint32_t>(d);
            if (cp > 0x10FFFF) cp = 0x110000;
        }
        append_reference(out, cp);
        return semi + 1;
    }
    for (const auto& [name, text] : named)
        if (body == name) {
            out += text;
            return semi + 1;
        }
    return 0;
}

bool iequals_prefix(std::string_view s, std::size_t at, std::string_view word) {
    if (s.size() - at < word.size()) return false;
    for (std::size_t k = 0; k < word.size(); ++k)
        if (std::tolower(static_cast<unsigned char>(s[at + k])) != word[k]) return false;
    return true;
}

// The position of the case-insensitive `word` in s from `from`, or npos: one pass.
std::size_t ifind(std::string_view s, std::string_view word, std::size_t from) {
    for (std::size_t i = from; i + word.size() <= s.size(); ++i)
        if (iequals_prefix(s, i, word)) return i;
    return std::string_view::npos;
}

std::string attribute(std::string_view tag, std::string_view name) {
    std::size_t at = ifind(tag, name, 0);
    while (at != std::string_view::npos) {
        std::size_t k = at + name.size();
        const bool starts = at > 0 && std::isspace(static_cast<unsigned char>(tag[at - 1]));
        while (k < tag.size() && tag[k] == ' ') ++k;
        if (starts && k < tag.size() && tag[k] == '=') {
            ++k;
            while (k < tag.size() && tag[k] == ' ') ++k;
            if (k < tag.size() && (tag[k] == '"' || tag[k] == '\'')) {
                const std::size_t end = tag.find(tag[k], k + 1);
                return std::string(tag.substr(k + 1, end == std::string_view::npos ? std::string_view::npos : end - k - 1));
            }
            std::size_t end = k;
            while (end < tag.size() && !std::isspace(static_cast<unsigned char>(tag[end])) && tag[end] != '>') ++end;
            return std::string(tag.substr(k, end - k));
        }
        at = ifind(tag, name, at + 1);
    }
    return "";
}

std::string decode_entities(std::string_view s) {
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '&') {
            const std::size_t n = decode_entity(s, i, out);
            if (n) {
                i += n - 1;
                continue;
            }
        }
        out += s[i];
    }
    return out;
}

// HTML without its tags, a line per block, in one pass.
void html_text(std::string_view s, ArticleText& out, ArticlePlace place) {
    std::string line;
    std::size_t line_from = place.line;  // the source line the output line began on
    std::size_t src_line = place.line;
    int pre = 0;             // inside <pre>: newlines are lines
    int hidden_spans = -1;   // span depth of a KaTeX rendering being skipped (its TeX is in an annotation), or -1
    int span_depth = 0;
    bool no_tag_end = false;  // no '>' closes a tag after here: every '<' is text
    MathMlText mathml;        // inside a <math> read from its elements
    auto flush = [&] {
        const auto not_space = [](unsigned char c) { return !std::isspace(c); };
        if (std::any_of(line.begin(), line.end(), not_space)) {
            ArticlePlace p = place;
            p.line = line_from;
            out.add_line(with_formula_urls(line), p);
        }
        line.clear();
        line_from = src_line;
    };
    std::size_t i = 0;
    while (i < s.size()) {
        const char c = s[i];
        if (c == '<' && !no_tag_end) {
            if (s.substr(i, 4) == "<!--") {  // a comment, to its end
                const std::size_t end = s.find("-->", i + 4);
                const std::size_t stop = end == std::string_view::npos ? s.size() : end + 3;
                src_line += static_cast<std::size_t>(std::count(s.begin() + static_cast<std::ptrdiff_t>(i),
                                                                s.begin() + static_cast<std::ptrdiff_t>(stop), '\n'));
                i = stop;
                continue;
            }
            // a tag: its end past quoted attribute values; none: no tag ends after here, the rest is text
            std::size_t k = i + 1;
            char quote = 0;
            for (; k < s.size(); ++k) {
                if (quote) {
                    if (s[k] == quote) quote = 0;
                } else if (s[k] == '"' || s[k] == '\'') {
                    quote = s[k];
                } else if (s[k] == '>') {
                    break;
                }
            }
            if (k >= s.size()) {
                no_tag_end = true;
                continue;
            }
            const std::string_view tag = s.substr(i + 1, k - i - 1);
            src_line += static_cast<std::size_t>(std::count(tag.begin(), tag.end(), '\n'));
            const bool closing = !tag.empty() && tag[0] == '/';
            std::size_t n0 = closing ? 1 : 0, n1 = n0;
            while (n1 < tag.size() && (std::isalnum(static_cast<unsigned char>(tag[n1])) || tag[n1] == '-')) ++n1;
            std::string name(tag.substr(n0, n1 - n0));
            for (auto& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
            i = k + 1;
            const bool empty = !tag.empty() && tag.back() == '/';
            if (name == "math" && !closing && hidden_spans < 0) {
                // its TeX source when it carries it (KaTeX), read once; else its elements (mathml.hpp)
                if (const auto tex = math_tex_source(s, i)) {
                    line += " \\[" + decode_entities(tex->tex) + "\\] ";
                    src_line += static_cast<std::size_t>(std::count(s.begin() + static_cast<std::ptrdiff_t>(i),
                                                                    s.begin() + static_cast<std::ptrdiff_t>(tex->end), '\n'));
                    i = tex->end;
                    continue;
                }
            }
            if (hidden_spans < 0 && (name == "math" || mathml.inside())) {
                line += mathml.tag(name, closing, empty);
                continue;
            }
            if (name == "span") {
                if (closing) {
                    --span_depth;
                    if (hidden_spans >= 0 && span_depth <= hidden_spans) hidden_spans = -1;
                } else if (tag.empty() || tag.back() != '/') {
                    const std::string cls = attribute(tag, "class");
                    if (hidden_spans < 0 && (cls.find("katex-html") != std::string::npos ||
                                             attribute(tag, "aria-hidden") == "true"))
                        hidden_spans = span_depth;
                    ++span_depth;
                }
                continue;
            }
            if (hidden_spans >= 0) continue;
            if (!closing && (name == "script" || name == "style")) {
                // skipped to its end, but for MathJax 2's TeX: <script type="math/tex">
                const std::string end_tag = "</" + name;
                const std::size_t end = ifind(s, end_tag, i);
                const std::size_t stop = end == std::string_view::npos ? s.size() : end;
                const bool tex = name == "script" && attribute(tag, "type").rfind("math/tex", 0) == 0;
                const std::string_view body = s.substr(i, stop - i);
                if (tex) line += " \\[" + std::string(body) + "\\] ";
                src_line += static_cast<std::size_t>(std::count(body.begin(), body.end(), '\n'));
                i = stop;
                continue;
            }
            if (name == "img") {
                // a formula image's alt text repeats its formula, which its address gives (with_formula_urls)
                const std::string src = decode_entities(attribute(tag, "src"));
                const bool formula = with_formula_urls(src).find("\\[") != std::string::npos;
                line += " " + src + " " + (formula ? std::string() : decode_entities(attribute(tag, "alt"))) + " ";
                continue;
            }
            if (name == "pre") {
                flush();
                pre += closing ? -1 : 1;
                pre = std::max(pre, 0);
                continue;
            }
            if (name == "tr") {  // a row "| a | b |", each cell opened by " | "
                if (closing) line += " |";
                flush();
                continue;
            }
            if (name == "td" || name == "th") {
                if (!closing) line += " | ";
                continue;
            }
            static constexpr std::array<std::string_view, 22> blocks = {
                "p", "div", "br", "li", "ul", "ol", "h1", "h2", "h3", "h4", "h5", "h6", "table",
                "section", "article", "blockquote", "figure", "figcaption", "hr", "header", "footer", "dd"};
            if (std::find(blocks.begin(), blocks.end(), name) != blocks.end()) flush();
            continue;
        }
        if (c == '\n') {
            ++src_line;
            if (pre) flush();
            else if (hidden_spans < 0) line += ' ';
            ++i;
            continue;
        }
        if (hidden_spans >= 0) {
            ++i;
            continue;
        }
        if (c == '&') {
            const std::size_t n = decode_entity(s, i, line);
            if (n) {
                i += n;
                continue;
            }
        }
        line += c;
        ++i;
    }
    flush();
}

// A notebook cell's "source" or an output's "text": a string or an array of strings.
std::string joined(const json& v) {
    if (v.is_string()) return v.get<std::string>();
    std::string out;
    if (v.is_array())
        for (const auto& piece : v)
            if (piece.is_string()) out += piece.get<std::string>();
    return out;
}

void notebook_text(std::string_view content, const std::string& file, ArticleText& out) {
    const json nb = parse_json_text(std::string(content), file);
    if (!nb.is_object() || !nb.contains("cells")) fail_field(file, "cells", "a Jupyter notebook's cells", nb.is_object() ? "no cells" : describe(nb));
    const json& cells = nb["cells"];
    if (!cells.is_array()) fail_field(file, "cells", "an array of cells", describe(cells));
    for (std::size_t c = 0; c < cells.size(); ++c) {
        const json& cell = cells[c];
        const std::string path = "cells[" + std::to_string(c) + "]";
        if (!cell.is_object()) fail_field(file, path, "a cell (an object)", describe(cell));
        ArticlePlace place{1, static_cast<int>(c), false};
        const std::string type = cell.contains("cell_type") && cell["cell_type"].is_string() ? cell["cell_type"].get<std::string>() : "";
        if (cell.contains("source")) out.add_lines(joined(cell["source"]), place);
        if (type != "code" || !cell.contains("outputs") || !cell["outputs"].is_array()) continue;
        ArticlePlace at{1, static_cast<int>(c), true};
        for (const json& o : cell["outputs"]) {
            if (!o.is_object()) continue;
            std::string text;
            bool html = false;
            if (o.contains("text")) {
                text = joined(o["text"]);
            } else if (o.contains("data") && o["data"].is_object()) {
                const json& d = o["data"];
                // the text a reader sees; images and other binary data are left out
                if (d.contains("text/plain")) text = joined(d["text/plain"]);
                else if (d.contains("text/latex")) text = joined(d["text/latex"]);
                else if (d.contains("text/markdown")) text = joined(d["text/markdown"]);
                else if (d.contains("text/html")) text = joined(d["text/html"]), html = true;
            }
            if (text.empty()) continue;
            if (html) {
                html_text(text, out, at);
            } else {
                out.add_lines(text, at);
            }
            at.line += static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')) + (text.back() == '\n' ? 0 : 1);
        }
    }
}

}  // namespace

namespace formula_urls {

// The rendering directives a formula editor puts before the formula in an image's URL (codecogs': \dpi{120},
// \bg_white, \inline, \large, \fn_cm): how to draw it, no part of it, and their digits no printed numbers.
std::string strip_render_directives(const std::string& tex) {
    std::string out;
    for (std::size_t i = 0; i < tex.size();) {
        if (tex[i] == '\\') {
            std::size_t j = i + 1;
            while (j < tex.size() && (std::isalpha(static_cast<unsigned char>(tex[j])) || tex[j] == '_')) ++j;
            const std::string cmd = tex.substr(i + 1, j - i - 1);
            const bool sized = cmd == "tiny" || cmd == "small" || cmd == "normalsize" || cmd == "large" || cmd == "Large" ||
                               cmd == "LARGE" || cmd == "huge" || cmd == "Huge";
            if (cmd == "dpi" && j < tex.size() && tex[j] == '{') {
                const std::size_t close = tex.find('}', j);
                if (close != std::string::npos && close - j <= 6) {
                    i = close + 1;
                    continue;
                }
            }
            if (sized || cmd == "inline" || cmd.rfind("bg_", 0) == 0 || cmd.rfind("fn_", 0) == 0) {
                i = j;
                continue;
            }
            out.append(tex, i, j - i);
            i = j;
            continue;
        }
        out += tex[i++];
    }
    return out;
}

}  // namespace formula_urls

std::string with_formula_urls(std::string_view line) {
    using formula_urls::strip_render_directives;
    std::size_t at = line.find("http");
    if (at == std::string_view::npos) return std::string(line);
    std::string out;
    std::size_t copied = 0;
    while (at != std::string_view::npos) {
        std::size_t end = at;
        int parens = 0;
        for (; end < line.size(); ++end) {
            const char c = line[end];
            if (std::isspace(static_cast<unsigned char>(c)) || c == '"' || c == '\'' || c == '<' || c == '>') break;
            if (c == '(') ++parens;
            if (c == ')' && --parens < 0) break;
        }
        const std::string_view url = line.substr(at, end - at);
        // the formula: the query (latex.codecogs.com/svg.image?TEX), else the path's part from the last '/'
        // before its first backslash, plain or escaped (i.upmath.me/svg/TEX)
        std::size_t q = url.find('?');
        if (q == std::string_view::npos || (url.find('\\', q) == std::string_view::npos && url.find("%5C", q) == std::string_view::npos &&
                                            url.find("%5c", q) == std::string_view::npos)) {
            std::size_t slash = std::min({url.find('\\'), url.find("%5C"), url.find("%5c")});
            if (slash != std::string_view::npos && slash > 8) q = url.rfind('/', slash);
        }
        if (q != std::string_view::npos) {
            std::string tex;
            std::string_view query = url.substr(q + 1);
            // a formula service that names its parameter (zhihu.com/equation?tex=TEX, render/math?math=TEX,
            // chart.googleapis.com/chart?cht=tx&chl=TEX): that parameter's value alone
            for (std::size_t p = 0; p < query.size();) {
                const std::size_t amp = std::min(query.find('&', p), query.size());
                const std::string_view param = query.substr(p, amp - p);
                bool named = false;
                for (std::string_view key : {"tex=", "math=", "chl=", "from=", "latex=", "formula=", "eq=", "equation="})
                    named = named || param.substr(0, key.size()) == key;
                if (named && (param.find('\\') != std::string_view::npos || param.find("%5C") != std::string_view::npos ||
                              param.find("%5c") != std::string_view::npos)) {
                    query = param.substr(param.find('=') + 1);
                    break;
                }
                p = amp + 1;  // (none named: codecogs' query is the formula itself, its & are &space;)
            }
            for (std::size_t k = 0; k < query.size(); ++k) {
                if (query[k] == '%' && k + 2 < query.size() + 0 && hex_digit(query[k + 1]) >= 0 && hex_digit(query[k + 2]) >= 0) {
                    tex += static_cast<char>(hex_digit(query[k + 1]) * 16 + hex_digit(query[k + 2]));
                    k += 2;
                } else {
                    tex += query[k];
                }
            }
            tex = strip_render_directives(decode_entities(tex));
            if (tex.find('\\') != std::string::npos) {  // a formula image: its LaTeX in place of its address
                std::string_view before = line.substr(copied, at - copied);
                // a Markdown image, ![ALT](URL): its alt text, which often repeats the formula, goes with it
                const std::size_t alt = before.size() >= 2 && before.substr(before.size() - 2) == "](" ? before.rfind("![")
                                                                                                      : std::string_view::npos;
                bool image = false;
                if (alt != std::string_view::npos) {
                    before = before.substr(0, alt);
                    image = true;
                }
                // an <img src="URL" title="..." alt="..."> in Markdown: the tag goes with it (its title and alt repeat it)
                std::size_t resume = image && end < line.size() && line[end] == ')' ? end + 1 : end;
                const bool in_tag = before.size() >= 5 && (before.substr(before.size() - 5) == "src=\"" || before.substr(before.size() - 5) == "src='");
                if (const std::size_t open = in_tag ? before.rfind('<') : std::string_view::npos; open != std::string_view::npos) {
                    const std::size_t close = line.find('>', end);
                    before = before.substr(0, open);
                    resume = close == std::string_view::npos ? line.size() : close + 1;
                }
                out.append(before);
                out += " \\[" + tex + "\\] ";
                copied = resume;
            }
        }
        if (copied < end && (url.rfind("http://", 0) == 0 || url.rfind("https://", 0) == 0)) {
            // another address: its digits are no printed numbers ("https://example.org/2023/05/attention")
            out.append(line.substr(copied, at - copied));
            copied = end;
        }
        at = line.find("http", std::max(end, at + 1));
    }
    out.append(line.substr(copied));
    return out;
}

ArticleText article_text(std::string_view content, const std::string& format, const std::string& file) {
    ArticleText out;
    if (format == "html") html_text(content, out, ArticlePlace{1, -1, false});
    else if (format == "notebook") notebook_text(content, file, out);
    else out.add_lines(content, ArticlePlace{1, -1, false});
    return out;
}

}  // namespace attntrace

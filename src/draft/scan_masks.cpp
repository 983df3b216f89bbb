// Masks printed as a grid of glyphs or words: "The ● ○ ○", "1 [■ □ □]",
// "| cat | ✓ | ✗ |", "True False", "allowed masked", "x . .", or 1/0 under
// a caption that says it is a mask. A run of two or more lines of the same
// count of cells, all of one pair of glyphs, is one array of the mask's
// values (0 where a query may look, -inf where it may not), each row's
// label before it, the line above its column labels, a legend after it
// ("● = attends to", "G = global token") saying which glyph is which. One
// pass over the lines; the look back and ahead is a bounded few lines.
#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "draft/scan.hpp"

namespace attntrace {

namespace {

// The lines a legend may stand after a grid, or its caption's paragraph before it (each stopping at a heading).
constexpr std::size_t kLegendLines = 4, kCaptionLines = 6;
// A line longer than this is prose, not a grid's row or a legend.
constexpr std::size_t kMaxGridLine = 400;

// A pair of glyphs a mask is drawn with: the one for a key a query looks at, the one for a key it does not.
// `ambiguous`: articles draw either way (1 may mean "masked"), so a grid of them is read the way its
// legend says, else the way that lets each token see itself.
struct Family {
    std::array<const char*, 6> visible, blocked;
    bool ambiguous;
    bool numeric;  // 1/0: a table of numbers unless the text says it is a mask
};

const std::array<Family, 8>& families() {
    static const std::array<Family, 8> f{{
        {{"\xE2\x97\x8F", "\xE2\x97\x89"}, {"\xE2\x97\x8B"}, false, false},                                    // ● ◉ / ○
        {{"\xE2\x96\xA0", "\xE2\x97\xBC", "\xE2\xAC\x9B"}, {"\xE2\x96\xA1", "\xE2\x97\xBB", "\xE2\xAC\x9C"}, false, false},  // ■ ◼ ⬛ / □ ◻ ⬜
        {{"\xE2\x9C\x93", "\xE2\x9C\x94", "\xE2\x9C\x85"}, {"\xE2\x9C\x97", "\xE2\x9C\x98", "\xE2\x9C\x95", "\xE2\x9D\x8C", "\xC3\x97"}, false, false},  // ✓ ✔ ✅ / ✗ ✘ ✕ ❌ ×
        {{"\xE2\x96\x88", "\xE2\x96\x93"}, {"\xE2\x96\x91"}, false, false},                                    // █ ▓ / ░
        {{"allowed", "visible", "attend", "keep", "yes"}, {"masked", "blocked", "hidden", "mask", "no"}, false, false},
        {{"True", "true", "T"}, {"False", "false", "F"}, true, false},
        {{"x", "X"}, {".", "\xC2\xB7", "-"}, true, false},                                                     // x / . · -
        {{"1", "1."}, {"0", "0."}, true, true},
    }};
    return f;
}

// The family and role of a cell: its family's index and whether it reads as visible; -1 when no glyph.
int glyph_of(std::string_view t, bool& visible) {
    const auto& fs = families();
    for (std::size_t f = 0; f < fs.size(); ++f) {
        for (const char* g : fs[f].visible)
            if (g && t == g) return visible = true, static_cast<int>(f);
        for (const char* g : fs[f].blocked)
            if (g && t == g) return visible = false, static_cast<int>(f);
    }
    return -1;
}

// The length of the UTF-8 character at s[i].
std::size_t char_len(std::string_view s, std::size_t i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    const std::size_t n = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    return std::min(n, s.size() - i);
}

// Cells stand apart by spaces, a table's bars, commas, or a printed tensor's brackets ("[ True, False],").
bool cell_separator(char c) {
    return std::isspace(static_cast<unsigned char>(c)) || c == '|' || c == ',' || c == '[' || c == ']' || c == '(' || c == ')';
}

// A line's words, split at spaces, '|' and ','; a word of glyphs written together ("■□□") split into its glyphs.
std::vector<std::string> words_of(std::string_view line) {
    std::vector<std::string> out;
    for (std::size_t i = 0; i < line.size();) {
        while (i < line.size() && cell_separator(line[i])) ++i;
        std::size_t j = i;
        while (j < line.size() && !cell_separator(line[j])) ++j;
        if (j == i) break;
        const std::string_view w = line.substr(i, j - i);
        bool v = false;
        // glyphs written together: every character of the word a glyph of one family
        std::vector<std::string> parts;
        int fam = -2;
        for (std::size_t k = 0; k < w.size() && fam != -1;) {
            const std::size_t n = char_len(w, k);
            const int f = glyph_of(w.substr(k, n), v);
            if (f < 0 || (fam >= 0 && f != fam) || families()[static_cast<std::size_t>(f)].numeric) fam = -1;
            else fam = f, parts.emplace_back(w.substr(k, n));
            k += n;
        }
        if (fam >= 0 && parts.size() > 1) out.insert(out.end(), parts.begin(), parts.end());
        else out.emplace_back(w);
        i = j;
    }
    return out;
}

// One line read as a grid's row: its label, its cells' family and roles, the words after them.
struct GridLine {
    std::size_t begin = 0, end = 0;
    std::string label;
    int family = -1;
    std::vector<bool> visible;
    bool ok = false;
};

GridLine grid_line(std::string_view line) {
    GridLine g;
    if (line.size() > kMaxGridLine) return g;
    std::string label;
    const std::vector<std::string> words = words_of(line);
    std::size_t first = 0;
    // a label before the cells: a word that is no glyph, or a glyph of another family than the cells ("1 [● ○]")
    if (words.size() >= 3) {
        bool v = false;
        const int f0 = glyph_of(words[0], v), f1 = glyph_of(words[1], v);
        if (f1 >= 0 && f0 != f1) label = clean_label(words[0]), first = 1;
        else if (f0 < 0 || f1 < 0) return g;  // a line of prose
    }
    for (std::size_t k = first; k < words.size(); ++k) {
        bool v = false;
        const int f = glyph_of(words[k], v);
        if (f < 0) {
            // the words after the cells are a note ("← the", "global attends all"); a word between cells is prose
            if (k == first) return g;
            break;
        }
        if (g.family >= 0 && f != g.family) return g;
        g.family = f;
        g.visible.push_back(v);
    }
    g.label = label;
    // two cells of letters or dots may be prose ("x - y"); a grid of them has three or more
    g.ok = g.visible.size() >= 2 && (g.visible.size() >= 3 || !families()[static_cast<std::size_t>(g.family)].ambiguous);
    return g;
}

std::string lowercase(std::string_view s) {
    std::string out(s);
    for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

bool mentions_any(const std::string& text, std::initializer_list<const char*> words) {
    return std::any_of(words.begin(), words.end(), [&](const char* w) { return text.find(w) != std::string::npos; });
}

// What a legend line says of a glyph: "● = attends to" (+1), "○ = masked" (-1), nothing (0).
int legend_role(const std::string& words) {
    const std::string l = lowercase(words);
    if (mentions_any(l, {"not", "mask", "block", "cannot", "can't", "hidden", "ignore", "no "})) return -1;
    if (mentions_any(l, {"attend", "visible", "allow", "see", "look", "keep"})) return 1;
    return 0;
}

}  // namespace

void scan_masks(Scan& scan) {
    const std::string_view s = scan.s();
    // the lines, as [begin, end); a grid is read when the line after its last row is reached
    std::vector<std::pair<std::size_t, std::size_t>> lines;
    for (std::size_t b = 0; b <= s.size();) {
        std::size_t e = s.find('\n', b);
        if (e == std::string_view::npos) e = s.size();
        lines.emplace_back(b, e);
        b = e + 1;
        if (e == s.size()) break;
    }
    auto line = [&](std::size_t k) { return s.substr(lines[k].first, lines[k].second - lines[k].first); };
    std::vector<GridLine> run;
    auto flush = [&](std::size_t next) {  // next: the index of the line after the run
        // a grid of more cells than an array holds is no drawing of a worked example's mask
        if (run.size() < 2 || run.size() * run[0].visible.size() > kMaxPrintedNumbers) return run.clear();
        const std::size_t first_line = next - run.size();
        const Family& fam = families()[static_cast<std::size_t>(run[0].family)];
        const std::size_t cols = run[0].visible.size();
        PrintedArray a;
        a.form = PrintedForm::table;
        // the column labels: the line above, as many words as columns (or one more, the corner's)
        std::size_t from = first_line, above = first_line;
        // a Markdown table's separator row stands between its header and its rows
        if (above > 1 && line(above - 1).find_first_not_of("|-: \t") == std::string_view::npos && line(above - 1).find('-') != std::string_view::npos)
            --above;
        if (above > 0 && !scan.taken(lines[above - 1].first, lines[above - 1].second)) {
            const std::vector<std::string> head = words_of(line(above - 1));
            bool v = false;
            const bool glyphs = !head.empty() && glyph_of(head.back(), v) == run[0].family && !fam.numeric;
            if ((head.size() == cols || head.size() == cols + 1) && !glyphs && line(above - 1).size() <= kMaxGridLine) {
                for (std::size_t k = head.size() - cols; k < head.size(); ++k) a.col_labels.push_back(clean_label(head[k]));
                from = above - 1;
            }
        }
        // the caption above and the legend below, read for hints: which glyph is which, the global tokens
        // the paragraph above it (blank lines between skipped), up to a heading
        auto heading = [&](std::string_view l) { const std::string t = trim(l); return !t.empty() && t[0] == '#'; };
        std::size_t top = from;
        while (top > 0 && from - top < kCaptionLines && trim(line(top - 1)).empty()) --top;
        while (top > 0 && from - top < kCaptionLines && !trim(line(top - 1)).empty() && !heading(line(top - 1))) --top;
        std::string context;
        for (std::size_t k = top; k < from; ++k)
            if (line(k).size() <= kMaxGridLine) context += std::string(line(k)) + "\n";
        int role = 0;  // +1: the legend confirms the default reading, -1: it reverses it
        std::vector<std::string> global;
        for (std::size_t k = next, seen = 0; k < lines.size() && seen < kLegendLines; ++k) {
            const std::string_view l = line(k);
            if (trim(l).empty()) continue;
            ++seen;
            if (l.size() > kMaxGridLine || heading(l)) break;
            context += std::string(l) + "\n";
            const std::size_t eq = l.find('=') != std::string_view::npos ? l.find('=') : l.find(':');
            if (eq == std::string_view::npos) continue;
            // "(✓ = may attend, ✗ = masked)": the first pair, without its parentheses
            std::string key;
            for (char c : l.substr(0, eq))
                if (c != '(' && c != '*' && c != '`') key += c;
            key = trim(key);
            std::string_view rest = l.substr(eq + 1);
            rest = rest.substr(0, std::min(rest.find_first_of(",;)"), rest.size()));
            const std::string words(rest);
            bool v = false;
            if (glyph_of(key, v) == run[0].family) {
                const int r = legend_role(words);
                if (r != 0) role = (r > 0) == v ? 1 : -1;
            } else if (lowercase(words).find("global") != std::string::npos && !key.empty() && key.size() < 24) {
                global.push_back(clean_label(key));
            }
        }
        const std::string hint = lowercase(context);
        if (fam.numeric && role == 0 && hint.find("mask") == std::string::npos) return run.clear();
        bool labelled = true;
        for (const GridLine& g : run) labelled = labelled && !g.label.empty();
        for (const GridLine& g : run) {
            if (labelled) a.row_labels.push_back(g.label);
            a.rows.emplace_back();
        }
        // the reading: as the legend says; else, for glyphs drawn either way, the one where each token sees itself
        bool flip = role < 0;
        if (role == 0 && fam.ambiguous && run.size() <= cols) {
            bool diagonal_blocked = true;
            for (std::size_t r = 0; r < run.size(); ++r) {
                std::size_t c = r;
                if (labelled && a.col_labels.size() == cols) {
                    const auto it = std::find(a.col_labels.begin(), a.col_labels.end(), run[r].label);
                    if (it != a.col_labels.end()) c = static_cast<std::size_t>(it - a.col_labels.begin());
                }
                diagonal_blocked = diagonal_blocked && !run[r].visible[c];
            }
            flip = diagonal_blocked;
        }
        for (std::size_t r = 0; r < run.size(); ++r)
            for (bool v : run[r].visible) a.rows[r].push_back({(v != flip) ? 0.0 : -HUGE_VAL, 0});
        const auto& vis = fam.visible[0];
        const auto& blk = fam.blocked[0];
        a.legend = std::string(flip ? blk : vis) + " visible (0), " + (flip ? vis : blk) + " blocked (-inf)" +
                   (role != 0 ? ", as its legend says" : fam.ambiguous ? (flip ? ", so that each token sees itself" : ", each token seeing itself") : "");
        a.global_labels = std::move(global);
        a.context = hint;
        set_shape(a, 2);
        if (scan.taken(lines[from].first, lines[next - 1].second)) return run.clear();
        scan.add(lines[from].first, lines[next - 1].second, std::move(a));
        run.clear();
    };
    for (std::size_t k = 0; k < lines.size(); ++k) {
        GridLine g = grid_line(line(k));
        g.begin = lines[k].first;
        g.end = lines[k].second;
        const bool joins = g.ok && (run.empty() || (g.family == run[0].family && g.visible.size() == run[0].visible.size()));
        if (!joins) flush(k);
        if (g.ok) run.push_back(std::move(g));
    }
    flush(lines.size());
}

}  // namespace attntrace

namespace attntrace {

namespace {

// The integer after "name=" in a call's arguments ("diagonal=1", "k = -1"), if it is there.
std::optional<long> keyword_int(std::string_view args, std::string_view name) {
    for (std::size_t at = args.find(name); at != std::string_view::npos; at = args.find(name, at + 1)) {
        if (at > 0 && (std::isalnum(static_cast<unsigned char>(args[at - 1])) || args[at - 1] == '_')) continue;
        std::size_t i = at + name.size();
        while (i < args.size() && args[i] == ' ') ++i;
        if (i >= args.size() || args[i] != '=') continue;
        ++i;
        while (i < args.size() && args[i] == ' ') ++i;
        bool minus = i < args.size() && args[i] == '-';
        if (minus) ++i;
        long v = 0;
        std::size_t digits = 0;
        while (i < args.size() && std::isdigit(static_cast<unsigned char>(args[i])) && digits < 6) v = v * 10 + (args[i++] - '0'), ++digits;
        if (digits) return minus ? -v : v;
    }
    return std::nullopt;
}

// The size of the square a constructor ("ones(", "full(") makes in `expr`: a number, a size the text
// assigns, or 0 when neither.
std::size_t square_size(std::string_view expr, const std::vector<PrintedSize>& sizes) {
    for (const char* ctor : {"ones(", "full(", "zeros(", "empty("}) {
        const std::size_t at = expr.find(ctor);
        if (at == std::string_view::npos) continue;
        const auto args = call_args(expr, at + std::string_view(ctor).size() - 1);
        if (!args) return 0;
        std::string first;
        for (char c : *args)
            if (c != '(' && c != '[') first += c;
        first = trim(std::string_view(first).substr(0, std::min(first.find(','), first.size())));
        if (!first.empty() && std::all_of(first.begin(), first.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
            return first.size() <= 2 ? static_cast<std::size_t>(std::stoul(first)) : 0;
        for (const PrintedSize& z : sizes)
            if (z.name == first && z.value >= 2 && z.value <= 16) return static_cast<std::size_t>(z.value);
        return 0;
    }
    return 0;
}

}  // namespace

void scan_mask_code(Scan& scan, const std::vector<PrintedSize>& sizes) {
    const std::string_view s = scan.s();
    // a drawn size past this is no example's: the mask is drawn at kDescribedMaskSize instead
    constexpr std::size_t kMaxDescribed = 16;
    for (const char* fn : {"triu", "tril", "generate_square_subsequent_mask"}) {
        const std::string_view name(fn);
        for (std::size_t at = s.find(name); at != std::string_view::npos; at = s.find(name, at + 1)) {
            if (at > 0 && (std::isalnum(static_cast<unsigned char>(s[at - 1])) || s[at - 1] == '_')) continue;
            std::size_t open = at + name.size();
            if (open >= s.size() || s[open] != '(') continue;
            const auto args = call_args(s, open);
            if (!args) continue;
            const auto [line_begin, line_end] = scan.text().line_around(at);
            // a line of code that builds a mask is short: a longer one is not looked into (nor, each time, through)
            if (line_end - line_begin > kMaxGridLine || scan.taken(line_begin, line_end)) continue;
            // the expression it reads: its arguments, or (a method, "torch.ones(n, n).triu(1)") the line before it
            const std::string_view before = s.substr(line_begin, at - line_begin);
            const std::string lowered_args = lowercase(*args);
            const bool own = lowered_args.find("ones") != std::string::npos || lowered_args.find("inf") != std::string::npos ||
                             lowered_args.find("full") != std::string::npos || name == "generate_square_subsequent_mask";
            const std::string_view expr = own ? *args : before;
            const std::string e = lowercase(expr);
            const bool inf = e.find("inf") != std::string::npos || e.find("-1e") != std::string::npos;
            const bool ones = e.find("ones") != std::string::npos;
            long diagonal = 0;
            if (name == "generate_square_subsequent_mask") {
                diagonal = 1;
            } else {
                if (!inf && !ones) continue;  // a triangle of something else: no mask
                const auto items = top_items(*args);
                if (const auto k = keyword_int(*args, "diagonal")) diagonal = *k;
                else if (const auto k2 = keyword_int(*args, "k")) diagonal = *k2;
                else if (const std::size_t p = own ? 1 : 0;  // torch.triu(x, 1); a method's x.triu(1)
                         items.size() > p && !items[p].empty() && items[p].find_first_not_of("-0123456789") == std::string::npos && items[p].size() < 4 &&
                         items[p] != "-")
                    diagonal = std::stol(items[p]);
            }
            std::size_t n = name == "generate_square_subsequent_mask" ? 0 : square_size(expr, sizes);
            if (name == "generate_square_subsequent_mask") {
                const std::string a = trim(*args);
                if (!a.empty() && a.size() <= 2 && std::all_of(a.begin(), a.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
                    n = static_cast<std::size_t>(std::stoul(a));
                for (const PrintedSize& z : sizes)
                    if (!n && z.name == a && z.value >= 2) n = static_cast<std::size_t>(z.value);
            }
            const bool guessed = n < 2 || n > kMaxDescribed;
            if (guessed) n = kDescribedMaskSize;
            // triu keeps j - i >= d, tril j - i <= d; what triu keeps is blocked (its -inf, or the ones that
            // masked_fill blocks), what tril keeps is seen (the ones a mask == 0 test blocks the rest of)
            const bool upper = name != "tril";
            PrintedArray a;
            a.form = PrintedForm::code;
            a.size_guessed = guessed;
            for (std::size_t i = 0; i < n; ++i) {
                a.rows.emplace_back();
                for (std::size_t j = 0; j < n; ++j) {
                    const long off = static_cast<long>(j) - static_cast<long>(i);
                    const bool blocked = upper ? off >= diagonal : off > diagonal;
                    a.rows.back().push_back({blocked ? -HUGE_VAL : 0.0, 0});
                }
            }
            a.legend = fmt::format("the {} x {} mask the code builds ({}{}, diagonal {}), 0 where it lets a query look and -inf where it does not", n,
                                   n, fn, name == "generate_square_subsequent_mask" ? "" : inf ? " of -inf" : " of ones", diagonal);
            a.context = lowercase(s.substr(line_begin >= 200 ? line_begin - 200 : 0, line_end - (line_begin >= 200 ? line_begin - 200 : 0)));
            set_shape(a, 2);
            scan.add(line_begin, line_end, std::move(a));
        }
    }
}

}  // namespace attntrace

namespace attntrace {

void read_mask_numbers(std::vector<PrintedArray>& arrays) {
    for (PrintedArray& a : arrays) {
        if (a.form == PrintedForm::prose || a.form == PrintedForm::code || !a.legend.empty() || a.rows.size() < 2) continue;
        if (lowercase(a.name).find("mask") == std::string::npos) continue;
        bool zero = false, one = false, other = false, square = true;
        for (const auto& r : a.rows) {
            square = square && r.size() == a.rows.size();
            for (const auto& n : r) (n.value == 0 ? zero : n.value == 1 ? one : other) = true;
        }
        if (!zero || !one || other || !square) continue;
        // 1 is "may look" (tril of ones) unless every token would then be blocked from itself (triu's 1 = "masked")
        bool diagonal_zero = true;
        for (std::size_t i = 0; i < a.rows.size(); ++i) diagonal_zero = diagonal_zero && a.rows[i][i].value == 0;
        for (auto& r : a.rows)
            for (auto& n : r) n = {(n.value == 1) != diagonal_zero ? 0.0 : -HUGE_VAL, 0};
        a.legend = diagonal_zero ? "0 visible (0), 1 blocked (-inf), so that each token sees itself"
                                 : "1 visible (0), 0 blocked (-inf), each token seeing itself";
    }
}

}  // namespace attntrace

namespace attntrace {

namespace {

// The items of a bracketed list ("[3, 4, 5]", "['the', 'cat']"), as written without quotes; none when unclosed.
std::optional<std::vector<std::string>> list_items(std::string_view line, std::size_t& end) {
    const std::size_t open = line.find('[');
    if (open == std::string_view::npos) return std::nullopt;
    const std::size_t close = line.find(']', open);
    if (close == std::string_view::npos) return std::nullopt;
    end = close + 1;
    std::vector<std::string> out;
    std::string item;
    for (std::size_t i = open + 1; i <= close; ++i) {
        const char c = line[i];
        if (c == ',' || c == ']' || std::isspace(static_cast<unsigned char>(c))) {
            if (!item.empty()) out.push_back(clean_label(item));
            item.clear();
        } else {
            item += c;
        }
    }
    out.erase(std::remove_if(out.begin(), out.end(), [](const std::string& w) { return w.empty() || w == "..." || w == "\xE2\x80\xA6"; }),
              out.end());
    if (out.empty()) return std::nullopt;
    return out;
}

// "Token 5 can attend to", "position 3 sees", "query 'cat' attends to": the query's label, or "".
std::string attending_token(std::string_view line) {
    std::string t = trim(line);
    if (t.rfind("- ", 0) == 0 || t.rfind("* ", 0) == 0) t = trim(std::string_view(t).substr(2));
    const std::string l = lowercase(t);
    for (const char* who : {"token ", "position ", "query "}) {
        if (l.rfind(who, 0) != 0) continue;
        std::size_t i = std::string_view(who).size();
        std::size_t j = i;
        while (j < t.size() && !std::isspace(static_cast<unsigned char>(t[j])) && t[j] != ':') ++j;
        const std::string label = clean_label(std::string_view(t).substr(i, j - i));
        const std::string rest = l.substr(j);
        if (label.empty() || label.size() > 24) return "";
        for (const char* verb : {" attend", " can see", " sees", " looks at", " can look at"})
            if (rest.rfind(verb, 0) == 0 || rest.rfind(std::string(" can") + verb, 0) == 0 || rest.find(verb) < 8) return label;
        return "";
    }
    return "";
}

}  // namespace

void scan_mask_rows(Scan& scan) {
    const std::string_view s = scan.s();
    // the lines a row's lists may stand below its sentence
    constexpr std::size_t kListLines = 2, kNotLines = 4;
    std::vector<std::pair<std::size_t, std::size_t>> lines;
    for (std::size_t b = 0; b <= s.size();) {
        std::size_t e = s.find('\n', b);
        if (e == std::string_view::npos) e = s.size();
        lines.emplace_back(b, e);
        if (e == s.size()) break;
        b = e + 1;
    }
    auto line = [&](std::size_t k) { return s.substr(lines[k].first, lines[k].second - lines[k].first); };
    for (std::size_t k = 0; k < lines.size(); ++k) {
        if (line(k).size() > kMaxGridLine || scan.taken(lines[k].first, lines[k].second)) continue;
        const std::string query = attending_token(line(k));
        if (query.empty()) continue;
        // the keys it sees: a list after the verb, on its line or the next lines
        std::optional<std::vector<std::string>> seen;
        std::size_t last = k, end = 0;
        for (std::size_t j = k, n = 0; j < lines.size() && n <= kListLines && !seen; ++j) {
            if (line(j).size() > kMaxGridLine || scan.taken(lines[j].first, lines[j].second)) break;
            if (trim(line(j)).empty()) continue;
            ++n;
            const std::string_view l = j == k ? line(j).substr(std::min(line(j).size(), line(j).find_first_of(":") + 1)) : line(j);
            if ((seen = list_items(l, end))) last = j;
        }
        if (!seen) continue;
        // the keys it does not: "Not [1, 2, 8]", "cannot attend to [...]" in the lines after
        std::vector<std::string> not_seen;
        for (std::size_t j = last + 1, n = 0; j < lines.size() && n < kNotLines; ++j) {
            if (line(j).size() > kMaxGridLine || scan.taken(lines[j].first, lines[j].second)) break;
            const std::string l = lowercase(trim(line(j)));
            if (l.empty()) continue;
            ++n;
            const bool negated = l.rfind("not ", 0) == 0 || l.rfind("not:", 0) == 0 || l.find("cannot") != std::string::npos ||
                                 l.find("can't") != std::string::npos;
            if (!negated && (l.find('[') != std::string::npos || !attending_token(line(j)).empty())) break;  // another row's
            if (!negated) continue;
            if (const auto items = list_items(line(j), end)) {
                not_seen = *items;
                last = j;
                break;
            }
        }
        PrintedArray a;
        a.form = PrintedForm::bracket;
        a.rows.emplace_back();
        for (const auto& w : *seen) a.rows[0].push_back({0.0, 0}), a.col_labels.push_back(w);
        for (const auto& w : not_seen) a.rows[0].push_back({-HUGE_VAL, 0}), a.col_labels.push_back(w);
        a.row_labels = {query};
        a.legend = "the keys it names visible (0), every other key blocked (-inf)";
        // its paragraph above and its own lines, for the search's hints
        std::string context;
        for (std::size_t j = k >= kCaptionLines ? k - kCaptionLines : 0; j <= last; ++j)
            if (line(j).size() <= kMaxGridLine) context += lowercase(line(j)) + "\n";
        a.context = std::move(context);
        set_shape(a, 1);
        scan.add(lines[k].first, lines[last].second, std::move(a));
        k = last;
    }
}

}  // namespace attntrace

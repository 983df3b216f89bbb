// Tables: Markdown's "| a | 0.1 | 0.2 |" rows (and HTML's, which
// article_text writes so), and plain text's rows "label 0.1 0.2 0.3" (a
// table saved from a web page loses its bars). A run of rows with the same
// count of numbers is one array, the first column its row labels, a header
// of words above its column labels. One pass over the lines.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "draft/numbers.hpp"
#include "draft/scan.hpp"

namespace attntrace {

namespace {

struct Row {
    std::size_t begin = 0, end = 0;  // the line
    std::string label;
    std::vector<PrintedNumber> numbers;  // a dash cell as kDash, until its table says what it stands for
    std::vector<std::string> words;  // a header row's cells
    bool elided = false;
};

// A cell of a dash alone ("—", "–", "-"): what a table of weights prints where the mask left 0, and a table
// of scores where it left -inf. Held as NaN until the whole table is read (resolve_dashes).
constexpr double kDash = std::numeric_limits<double>::quiet_NaN();

bool dash_cell(const std::string& t) { return t == "-" || t == "\xE2\x80\x94" || t == "\xE2\x80\x93" || t == "\xE2\x88\x92"; }

// The dashes of a table: 0 (at the table's decimals) when at least half its rows of numbers sum to 1, as
// percentages too, without them (weights whose masked cells the table leaves blank, one of them maybe
// printed wrong); else -inf (scores).
void resolve_dashes(std::vector<std::vector<PrintedNumber>>& rows) {
    bool any = false;
    std::size_t summing = 0;
    int decimals = 0;
    for (const auto& r : rows) {
        double sum = 0;
        int most = 0;
        for (const auto& n : r) {
            if (std::isnan(n.value)) {
                any = true;
                continue;
            }
            sum += n.value;
            most = std::max(most, n.decimals);
        }
        decimals = std::max(decimals, most);
        const double unit = 0.5 * std::pow(10.0, -most) * static_cast<double>(r.size());
        summing += std::fabs(sum - 1) <= unit + 1e-9;
    }
    if (!any) return;
    const bool sums = 2 * summing >= rows.size();
    for (auto& r : rows)
        for (auto& n : r)
            if (std::isnan(n.value)) n = sums ? PrintedNumber{0.0, decimals} : PrintedNumber{-HUGE_VAL, 0};
}

// A caption that names a weight: "W_Q", "WQ" (a subscript's markup gone), "W^K", "The query weights".
bool names_weight(const std::string& caption) {
    std::string b;
    for (char c : caption)
        if (std::isalnum(static_cast<unsigned char>(c))) b += c;
    if (b.size() == 2 && (b[0] == 'W' || b[0] == 'w') && std::string_view("QKVqkv").find(b[1]) != std::string_view::npos) return true;
    return caption.find("weight") != std::string::npos || caption.find("Weight") != std::string::npos;
}

// A cell's number without its markup ("**0.51**", "`0.5`", "$0.5$"), or none.
std::optional<PrintedNumber> cell_number(std::string_view cell, bool& elided) {
    std::string c;
    for (char ch : cell)
        if (ch != '*' && ch != '_' && ch != '`' && ch != '$') c += ch;
    const std::string t = trim(c);
    if (t == "..." || t == "\xE2\x80\xA6") {
        elided = true;
        return std::nullopt;
    }
    if (const auto n = read_number(t, 0); n && n->end == t.size()) return n->number;
    return std::nullopt;
}

// "| a | b |" split into its cells; none when the line is no table row.
// A LaTeX tabular's row, "fly & 0.310 & 0.355 \\ \hline", split into its cells (markup such as \textbf{..}
// taken off); none when the line is no such row. A matrix's rows are the LaTeX scanner's, read before.
std::optional<std::vector<std::string>> tabular_cells(std::string_view line) {
    std::string t = trim(line);
    for (bool more = true; more;) {
        more = false;
        for (std::string_view rule : {"\\hline", "\\midrule", "\\toprule", "\\bottomrule"})
            if (t.size() >= rule.size() && t.compare(t.size() - rule.size(), rule.size(), rule) == 0)
                t = trim(std::string_view(t).substr(0, t.size() - rule.size())), more = true;
    }
    if (t.size() < 4 || t.compare(t.size() - 2, 2, "\\\\") != 0 || t.find('&') == std::string::npos) return std::nullopt;
    t.resize(t.size() - 2);
    std::vector<std::string> cells;
    for (std::size_t a = 0; a <= t.size();) {
        std::size_t b = t.find('&', a);
        if (b == std::string::npos) b = t.size();
        std::string c = trim(std::string_view(t).substr(a, b - a));
        for (std::string_view wrap : {"\\textbf{", "\\mathbf{", "\\emph{", "\\textit{", "\\text{"})
            if (c.rfind(wrap, 0) == 0 && c.back() == '}') c = trim(std::string_view(c).substr(wrap.size(), c.size() - wrap.size() - 1));
        cells.push_back(std::move(c));
        a = b + 1;
    }
    return cells;
}

std::optional<std::vector<std::string>> pipe_cells(std::string_view line) {
    const std::string t = trim(line);
    if (t.size() < 3 || t[0] != '|' || t.find('|', 1) == std::string::npos) return std::nullopt;
    std::vector<std::string> cells;
    std::size_t a = 1;
    while (a <= t.size()) {
        std::size_t b = t.find('|', a);
        if (b == std::string::npos) b = t.size();
        cells.push_back(trim(std::string_view(t).substr(a, b - a)));
        a = b + 1;
    }
    if (!cells.empty() && cells.back().empty()) cells.pop_back();
    return cells;
}

bool separator_row(const std::vector<std::string>& cells) {
    return !cells.empty() && std::all_of(cells.begin(), cells.end(), [](const std::string& c) {
        return !c.empty() && c.find_first_not_of("-: ") == std::string::npos;
    });
}

// A header over a column of positions: "pos", "position", "#", "i", "t", "index".
bool index_word(const std::string& w) {
    std::string l;
    for (char c : w) l += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (const char* x : {"pos", "position", "p", "#", "i", "t", "index", "idx", "step", "row"})
        if (l == x) return true;
    return false;
}

Row pipe_row(const std::vector<std::string>& cells) {
    Row r;
    bool numeric = true;
    for (std::size_t c = 0; c < cells.size(); ++c) {
        bool elided = false;
        const auto n = cell_number(cells[c], elided);
        if (n) r.numbers.push_back(*n);
        else if (c > 0 && dash_cell(trim(cells[c]))) r.numbers.push_back({kDash, 0});
        else if (elided) r.elided = true;
        else if (c == 0) r.label = clean_label(cells[c]);
        else numeric = false;
    }
    if (!numeric || std::all_of(r.numbers.begin(), r.numbers.end(), [](const PrintedNumber& n) { return std::isnan(n.value); }))
        r.numbers.clear();
    if (r.numbers.empty()) r.words = cells;
    return r;
}

// A plain line ending in two or more numbers apart by spaces: its label and numbers.
Row plain_row(std::string_view line) {
    Row r;
    // numbers read from the end back, while what stands before each is a space
    std::size_t end = line.size();
    while (end > 0 && std::isspace(static_cast<unsigned char>(line[end - 1]))) --end;
    std::vector<PrintedNumber> back;
    std::size_t cut = end;
    while (cut > 0) {
        std::size_t a = cut;
        while (a > 0 && !std::isspace(static_cast<unsigned char>(line[a - 1]))) --a;
        const std::string_view word = line.substr(a, cut - a);
        const auto n = read_number(word, 0);
        if (!n || n->end != word.size()) break;
        back.push_back(n->number);
        cut = a;
        while (cut > 0 && (line[cut - 1] == ' ' || line[cut - 1] == '\t')) --cut;
    }
    if (back.size() < 2) return r;
    r.label = clean_label(line.substr(0, cut));
    if (r.label.size() > 60) return Row{};  // a sentence that ends in numbers, not a table's row
    r.numbers.assign(back.rbegin(), back.rend());
    return r;
}

// A table whose columns are one letter's numbered dimensions, "q1 q2", "k_1 k_2", "V0 V1 V2": that
// letter's array (Q, K or V), named by the letter as the header writes it; "" otherwise.
std::string name_of_columns(const std::vector<std::string>& labels) {
    if (labels.size() < 2) return "";
    char letter = 0;
    for (const std::string& l : labels) {
        if (l.size() < 2 || (l[0] != 'q' && l[0] != 'k' && l[0] != 'v' && l[0] != 'Q' && l[0] != 'K' && l[0] != 'V')) return "";
        const std::size_t digits = l[1] == '_' ? 2 : 1;
        if (digits >= l.size() || l.find_first_not_of("0123456789", digits) != std::string::npos) return "";
        if (letter && l[0] != letter) return "";
        letter = l[0];
    }
    return std::string(1, letter);
}

}  // namespace

namespace vector_tables {

// "[1, 0, 2]" or "[0.5 -0.1]" as a table's cell (markup taken off): its numbers, or none.
std::optional<std::vector<PrintedNumber>> cell_vector(std::string_view cell) {
    std::string c;
    for (char ch : cell)
        if (ch != '*' && ch != '`' && ch != '$') c += ch;
    const std::string t = trim(c);
    if (t.size() < 3 || t.front() != '[' || t.back() != ']') return std::nullopt;
    std::vector<PrintedNumber> out;
    for (std::size_t i = 1; i + 1 < t.size();) {
        if (t[i] == ' ' || t[i] == ',') {
            ++i;
            continue;
        }
        const auto n = read_number(t, i);
        if (!n || n->end <= i || out.size() >= kMaxPrintedNumbers) return std::nullopt;
        out.push_back(n->number);
        i = n->end;
    }
    if (out.size() < 2) return std::nullopt;
    return out;
}

// The caption a table stands under: the nearest line above `first` (one blank line between allowed) when it
// ends in ':' ("The query weights W^Q:", "Attention weights:"), without it; "" for anything else.
std::string caption_above(std::string_view s, std::size_t first) {
    constexpr std::size_t kMaxCaption = 60;
    std::size_t end = first;
    for (int blank = 0; blank < 2 && end > 0; ++blank) {
        const std::size_t line_end = end - 1;  // the '\n' ending the line above
        const std::size_t begin = line_end == 0 ? 0 : (s.rfind('\n', line_end - 1) == std::string_view::npos ? 0 : s.rfind('\n', line_end - 1) + 1);
        const std::string line = trim(s.substr(begin, line_end - begin));
        if (line.empty()) {
            end = begin;
            continue;
        }
        if (line.size() > kMaxCaption || line.back() != ':' || line.find_first_of("()[]{}=|") != std::string::npos) return "";
        return trim(std::string_view(line).substr(0, line.size() - 1));
    }
    return "";
}

}  // namespace vector_tables

void scan_vector_tables(Scan& scan) {
    using vector_tables::cell_vector;
    const std::string_view s = scan.s();
    struct Body {
        std::size_t begin = 0, end = 0;
        std::vector<std::string> cells;
    };
    std::vector<std::string> header;
    std::vector<Body> body;
    auto flush = [&] {
        const std::size_t cols = body.empty() ? 0 : body[0].cells.size();
        if (body.size() >= 2 && cols >= 2 && header.size() == cols) {
            std::vector<std::string> labels;
            for (const Body& b : body) labels.push_back(clean_label(b.cells[0]));
            for (std::size_t c = 1; c < cols; ++c) {
                PrintedArray a;
                a.form = PrintedForm::table;
                for (const Body& b : body)
                    if (const auto v = cell_vector(b.cells[c]); v && (a.rows.empty() || v->size() == a.rows[0].size())) a.rows.push_back(*v);
                if (a.rows.size() != body.size()) continue;
                a.row_labels = labels;
                a.name = clean_label(header[c]);
                set_shape(a, 2);
                scan.add(body.front().begin, body.back().end, std::move(a));
            }
        }
        body.clear();
    };
    for (std::size_t begin = 0; begin < s.size();) {
        std::size_t end = s.find('\n', begin);
        if (end == std::string_view::npos) end = s.size();
        const auto cells = scan.taken(begin, end) ? std::nullopt : pipe_cells(s.substr(begin, end - begin));
        if (!cells) {
            flush();
            header.clear();
        } else if (separator_row(*cells)) {
        } else if (cells->size() >= 2 && cell_vector((*cells)[1]) && (body.empty() || body[0].cells.size() == cells->size())) {
            // a table of more rows than an array holds is no worked example's: read a bounded part at a time
            if (body.size() * cells->size() >= kMaxPrintedNumbers / 4) flush();
            body.push_back({begin, end, *cells});
        } else {
            flush();
            header = *cells;
        }
        begin = end + 1;
    }
    flush();
}

void scan_tables(Scan& scan) {
    const std::string_view s = scan.s();
    std::vector<Row> run;
    std::vector<std::string> header;
    std::size_t table_begin = 0;  // the header's line
    auto flush = [&] {
        if (run.empty()) return;
        PrintedArray a;
        a.form = PrintedForm::table;
        bool labelled = true;
        for (const Row& r : run) {
            a.rows.push_back(r.numbers);
            a.row_labels.push_back(r.label);
            labelled = labelled && !r.label.empty();
            a.elided = a.elided || r.elided;
        }
        if (!labelled) a.row_labels.clear();
        resolve_dashes(a.rows);
        // a first column of positions under "pos" (0, 1, 2, ... or from 1): the rows' labels, not numbers
        if (!labelled && header.size() == a.rows[0].size() && a.rows[0].size() >= 2 && index_word(header[0])) {
            bool counting = true;
            const double from = a.rows[0][0].value;
            for (std::size_t i = 0; i < a.rows.size() && counting; ++i)
                counting = a.rows[i].size() == a.rows[0].size() && a.rows[i][0].decimals == 0 &&
                           a.rows[i][0].value == from + static_cast<double>(i) && (from == 0 || from == 1);
            if (counting) {
                a.row_labels.clear();
                for (auto& r : a.rows) {
                    a.row_labels.push_back(fmt::format("{}", r[0].value));
                    r.erase(r.begin());
                }
            }
        }
        if (header.size() >= a.rows[0].size()) a.col_labels.assign(header.end() - static_cast<std::ptrdiff_t>(a.rows[0].size()), header.end());
        a.name = name_of_columns(a.col_labels);
        // its caption, when the columns name nothing, or when the caption says these are weights (columns q1 q2
        // under "The query weights:" are W^Q's outputs, not Q)
        const std::string caption = vector_tables::caption_above(s, header.empty() ? run.front().begin : table_begin);
        if (a.name.empty() || names_weight(caption)) a.name = caption;
        set_shape(a, 2);
        scan.add(run.front().begin, run.back().end, std::move(a));
        run.clear();
    };
    for (std::size_t begin = 0; begin < s.size();) {
        std::size_t end = s.find('\n', begin);
        if (end == std::string_view::npos) end = s.size();
        const std::string_view line = s.substr(begin, end - begin);
        Row r;
        bool table_line = false;
        if (!scan.taken(begin, end)) {
            if (const auto cells = pipe_cells(line)) {
                table_line = true;
                if (!separator_row(*cells)) r = pipe_row(*cells);
            } else if (const auto row = tabular_cells(line)) {
                table_line = true;
                r = pipe_row(*row);
            } else {
                r = plain_row(line);
            }
        }
        r.begin = begin;
        r.end = end;
        if (!r.numbers.empty() && (run.empty() || run.back().numbers.size() == r.numbers.size())) {
            run.push_back(std::move(r));
        } else {
            flush();
            if (!r.numbers.empty()) {
                run.push_back(std::move(r));
            } else if (!table_line || !r.words.empty() || !header.empty()) {
                // a table's header row is kept for the rows below it; any other line ends it
                if (table_line && !r.words.empty()) header = r.words, table_begin = begin;
                else if (!table_line) header.clear();
            }
        }
        begin = end + 1;
    }
    flush();
}

}  // namespace attntrace

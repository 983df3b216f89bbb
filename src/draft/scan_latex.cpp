// LaTeX matrices: \begin{bmatrix} 0.1 & 0.2 \\ 0.3 & 0.4 \end{bmatrix}, and
// pmatrix, matrix, vmatrix, Bmatrix, Vmatrix, smallmatrix, array. Every
// \begin and \end is paired in one pass with a stack, so a malformed formula
// (an \end missing, or one too many) costs its length, once.
#include <algorithm>
#include <array>
#include <cctype>

#include "draft/numbers.hpp"
#include "draft/scan.hpp"

namespace attntrace {

namespace {

constexpr std::array<std::string_view, 8> kMatrixEnvs = {"bmatrix", "pmatrix", "matrix", "vmatrix",
                                                         "Bmatrix", "Vmatrix", "smallmatrix", "array"};
// Environments open at once beyond this: the oldest is dropped (no article nests matrices so deep).
constexpr std::size_t kMaxEnvDepth = 64;

bool is_matrix_env(std::string_view name) {
    return std::find(kMatrixEnvs.begin(), kMatrixEnvs.end(), name) != kMatrixEnvs.end();
}

struct Env {
    std::string name;
    std::size_t begin = 0;       // at "\begin"
    std::size_t body = 0;        // after "\begin{name}" (and an array's column spec)
    std::size_t body_end = 0;    // at "\end"
    std::size_t end = 0;         // after "\end{name}"
    bool has_child = false;
};

// "\begin{NAME}" or "\end{NAME}" at s[i]: the name and the position after the '}'.
bool read_env_mark(std::string_view s, std::size_t i, std::string_view mark, std::string& name, std::size_t& after) {
    if (s.substr(i, mark.size()) != mark) return false;
    std::size_t k = i + mark.size();
    while (k < s.size() && s[k] == ' ') ++k;
    if (k >= s.size() || s[k] != '{') return false;
    const std::size_t close = s.substr(k + 1, 24).find('}');
    if (close == std::string_view::npos) return false;
    name = std::string(s.substr(k + 1, close));
    after = k + 1 + close + 1;
    return true;
}

// One cell's text without its markup: the number it holds, "..." for an elision, or the text.
enum class CellKind { number, elided, text, empty };

struct Cell {
    CellKind kind = CellKind::empty;
    PrintedNumber number;
    std::string text;
};

Cell read_cell(std::string_view raw) {
    // markup dropped: commands whose argument is the content (\mathbf{0.19}), colour commands with their colour
    std::string c;
    for (std::size_t i = 0; i < raw.size();) {
        if (raw[i] == '\\') {
            std::size_t k = i + 1;
            while (k < raw.size() && std::isalpha(static_cast<unsigned char>(raw[k]))) ++k;
            const std::string_view cmd = raw.substr(i + 1, k - i - 1);
            if (cmd.empty()) {  // "\," "\;" "\!" "\ " spacing; "\%" kept for the percentage
                if (k < raw.size() && raw[k] == '%') c += "\\%";
                // the character after it, whole (a multibyte one cut would leave its tail, no valid UTF-8)
                const unsigned char next = k < raw.size() ? static_cast<unsigned char>(raw[k]) : 0;
                i = std::min(raw.size(), k + (next < 0x80 ? 1 : next < 0xE0 ? 2 : next < 0xF0 ? 3 : 4));
                continue;
            }
            if (cmd == "cdots" || cmd == "ldots" || cmd == "dots" || cmd == "vdots" || cmd == "ddots") {
                c += "...";
                i = k;
                continue;
            }
            if (cmd == "color" || cmd == "textcolor" || cmd == "cellcolor" || cmd == "colorbox" || cmd == "phantom") {
                // the colour's argument is no content
                std::size_t a = k;
                while (a < raw.size() && raw[a] == ' ') ++a;
                if (a < raw.size() && raw[a] == '{') {
                    const std::size_t close = raw.find('}', a);
                    i = close == std::string_view::npos ? raw.size() : close + 1;
                    if (cmd == "phantom" && i < raw.size()) {}
                    continue;
                }
            }
            if (cmd == "text" || cmd == "textrm" || cmd == "mathrm" || cmd == "texttt" || cmd == "mathit" || cmd == "textit" ||
                cmd == "mathbf" || cmd == "textbf" || cmd == "boldsymbol" || cmd == "bm" || cmd == "bf" || cmd == "underline" ||
                cmd == "mathsf" || cmd == "mathtt" || cmd == "operatorname" || cmd == "quad" || cmd == "qquad" ||
                cmd == "left" || cmd == "right" || cmd == "big" || cmd == "Big" || cmd == "displaystyle" || cmd == "hline") {
                if (cmd == "text" || cmd == "textrm" || cmd == "texttt" || cmd == "textit" || cmd == "operatorname") c += ' ';
                i = k;
                continue;
            }
            c.append(raw.substr(i, k - i));  // another command: kept, so the cell reads as text
            i = k;
            continue;
        }
        if (raw[i] == '{' || raw[i] == '}' || raw[i] == '$' || raw[i] == '~') {
            ++i;
            continue;
        }
        c += raw[i++];
    }
    const std::string t = trim(c);
    Cell out;
    if (t.empty()) return out;
    if (t == "..." || t == "\xE2\x80\xA6" || t == "\xE2\x8B\xAF" || t == "\xE2\x8B\xAE" || t == "\xE2\x8B\xB1") {
        out.kind = CellKind::elided;
        return out;
    }
    if (const auto n = read_number(t, 0); n && n->end == t.size()) {
        out.kind = CellKind::number;
        out.number = n->number;
        return out;
    }
    out.kind = CellKind::text;
    out.text = t;
    return out;
}

// A matrix body split into rows of cells: rows at "\\" (or "\cr"), cells at "&", outside braces.
std::vector<std::vector<Cell>> read_body(std::string_view body) {
    std::vector<std::vector<Cell>> rows(1);
    int depth = 0;
    std::size_t cell_from = 0;
    auto end_cell = [&](std::size_t at) { rows.back().push_back(read_cell(body.substr(cell_from, at - cell_from))); };
    for (std::size_t i = 0; i < body.size(); ++i) {
        const char c = body[i];
        if (c == '{') ++depth;
        else if (c == '}') depth = std::max(depth - 1, 0);
        if (depth > 0) continue;
        if (c == '&') {
            end_cell(i);
            cell_from = i + 1;
        } else if (c == '\\' && i + 1 < body.size() && body[i + 1] == '\\') {
            end_cell(i);
            rows.emplace_back();
            ++i;
            cell_from = i + 1;
        } else if (c == '\\' && body.substr(i, 3) == "\\cr" && !(i + 3 < body.size() && std::isalpha(static_cast<unsigned char>(body[i + 3])))) {
            end_cell(i);
            rows.emplace_back();
            i += 2;
            cell_from = i + 1;
        } else if (c == '\\' && i + 1 < body.size()) {
            ++i;  // "\&", "\\" handled above: an escaped character is no separator
        }
    }
    end_cell(body.size());
    // a row of empty cells (after the last "\\", or "\hline" alone) is none
    rows.erase(std::remove_if(rows.begin(), rows.end(),
                              [](const std::vector<Cell>& r) {
                                  return std::all_of(r.begin(), r.end(), [](const Cell& c) { return c.kind == CellKind::empty; });
                              }),
               rows.end());
    return rows;
}

// The name a formula gives the matrix at `begin`: "Q" in "Q = \begin{bmatrix}", "S" in
// "S = QK^\top = [..][..] = \begin{bmatrix}"; "" when none. `operand`: the matrix right
// after another one (the second factor of a product).
std::string name_before(std::string_view s, std::size_t begin, bool& after_matrix, std::vector<std::string>* weights) {
    constexpr std::size_t kLookBack = 400;
    std::size_t from = begin > kLookBack ? begin - kLookBack : 0;
    while (from < begin && (static_cast<unsigned char>(s[from]) & 0xC0) == 0x80) ++from;  // a whole character first
    std::string_view seg = s.substr(from, begin - from);
    // the formula's start: a display or inline opener, a line break, or a "\quad" / "," between two formulas
    for (std::string_view opener : {"\\[", "\\(", "$$", "$", "\n", "\\quad", "\\qquad"}) {
        const std::size_t at = seg.rfind(opener);
        if (at != std::string_view::npos) seg = seg.substr(at + opener.size());
    }
    // a comma outside brackets: "Attention(Q_1, K_1, V_1)" is one formula's argument list, not two formulas
    for (std::size_t k = seg.size(), depth = 0; k-- > 0;) {
        if (seg[k] == ')' || seg[k] == ']' || seg[k] == '}') ++depth;
        else if ((seg[k] == '(' || seg[k] == '[' || seg[k] == '{') && depth > 0) --depth;
        else if (depth == 0 && seg[k] == ',' && k + 1 < seg.size() && seg[k + 1] == ' ') {
            seg = seg.substr(k + 2);
            break;
        }
    }
    std::string t = trim(seg);
    after_matrix = t.size() >= 5 && t.rfind("}") == t.size() - 1 && t.find("\\end{") != std::string::npos &&
                   t.substr(t.rfind("\\end{")).find('=') == std::string::npos;
    // the chain's head: "S = QK^T = ..." -> "S"; "\tilde{S} \approx" -> "\tilde{S}"
    std::size_t eq = std::string::npos;
    for (std::string_view rel : {"=", "\\approx", "\\leftarrow", "\\to"}) {
        const std::size_t at = t.find(rel);
        if (at != std::string::npos) eq = std::min(eq, at);
    }
    if (eq == std::string::npos) return "";
    // "W^Q = W^K = W^V = \begin{pmatrix}": one matrix for every weight the chain names
    if (weights) {
        std::vector<std::string> parts;
        std::size_t at = 0;
        for (std::size_t next; (next = t.find('=', at)) != std::string::npos; at = next + 1) parts.push_back(trim(t.substr(at, next - at)));
        const bool all_weights = parts.size() >= 2 && trim(t.substr(at)).empty() &&
                                 std::all_of(parts.begin(), parts.end(), [](const std::string& p) {
                                     return p.size() >= 2 && p.size() <= 8 && (p[0] == 'W' || p[0] == 'w') &&
                                            p.find_first_of(" +-*/()") == std::string::npos;
                                 });
        if (all_weights) *weights = parts;
    }
    std::string head = trim(t.substr(0, eq));
    if (head.find("\\begin") != std::string::npos || head.find("\\end") != std::string::npos) return "";
    // "\text{softmax}\left(\frac{QK^T}{\sqrt{d_k}}\right) =": the weights, however long their argument
    for (std::string_view f : {"\\text{softmax}", "\\mathrm{softmax}", "\\operatorname{softmax}", "\\textrm{softmax}", "softmax"})
        if (head.rfind(f, 0) == 0 && head.size() > 40) return "softmax";
    if (head.size() > 40) return "";
    return head;
}

}  // namespace

void scan_latex(Scan& scan) {
    const std::string_view s = scan.s();
    std::vector<Env> stack, matrices;
    for (std::size_t i = s.find('\\'); i != std::string_view::npos && i < s.size(); i = s.find('\\', i + 1)) {
        std::string name;
        std::size_t after = 0;
        if (read_env_mark(s, i, "\\begin", name, after)) {
            if (!stack.empty()) stack.back().has_child = true;
            // the innermost kMaxEnvDepth are kept: an unclosed \begin far back no longer pairs with an \end here
            if (stack.size() >= kMaxEnvDepth) stack.erase(stack.begin());
            Env e{name, i, after, 0, 0, false};
            if (name == "array") {  // its column spec, "{ccc}"
                std::size_t k = after;
                while (k < s.size() && s[k] == ' ') ++k;
                if (k < s.size() && s[k] == '{') {
                    const std::size_t close = s.substr(k, 64).find('}');
                    if (close != std::string_view::npos) e.body = k + close + 1;
                }
            }
            stack.push_back(std::move(e));
            i = after - 1;
        } else if (read_env_mark(s, i, "\\end", name, after)) {
            // pops to the \begin of the same name; an \end that matches none is ignored
            auto it = std::find_if(stack.rbegin(), stack.rend(), [&](const Env& e) { return e.name == name; });
            if (it == stack.rend()) continue;
            const std::size_t keep = static_cast<std::size_t>(stack.rend() - it) - 1;
            Env e = std::move(stack[keep]);
            stack.resize(keep);
            e.body_end = i;
            e.end = after;
            if (is_matrix_env(e.name)) matrices.push_back(std::move(e));
            i = after - 1;
        }
    }
    std::sort(matrices.begin(), matrices.end(), [](const Env& a, const Env& b) { return a.begin < b.begin; });
    // label columns ("\begin{matrix} \leftarrow \text{the} \\ ... \end{matrix}") given to the matrix before them
    constexpr std::size_t kNone = static_cast<std::size_t>(-1);
    std::size_t last = kNone, last_end = 0;
    bool last_after_matrix = false;
    std::vector<std::pair<std::size_t, std::size_t>> spans;
    std::vector<PrintedArray> arrays;
    for (const Env& e : matrices) {
        if (e.has_child || e.body_end - e.body > kMaxPrintedNumbers * 8) continue;
        const auto rows = read_body(s.substr(e.body, e.body_end - e.body));
        PrintedArray a;
        a.form = PrintedForm::latex;
        bool other_text = false, labels_only = !rows.empty();
        std::size_t numbers = 0;
        for (const auto& r : rows) {
            if (!(r.size() == 1 && r[0].kind == CellKind::text)) labels_only = false;
            std::vector<PrintedNumber> out;
            for (std::size_t c = 0; c < r.size(); ++c) {
                const Cell& cell = r[c];
                if (cell.kind == CellKind::number) out.push_back(cell.number);
                else if (cell.kind == CellKind::elided) a.elided = true;
                else if (cell.kind == CellKind::text && c == 0 && r.size() > 1) a.row_labels.push_back(clean_label(cell.text));
                else if (cell.kind == CellKind::text) other_text = true;
            }
            numbers += out.size();
            a.rows.push_back(std::move(out));
        }
        const bool adjacent = last != kNone && trim(s.substr(last_end, e.begin - last_end)).empty();
        if (labels_only) {
            if (adjacent && rows.size() == arrays[last].rows.size() && arrays[last].row_labels.empty()) {
                for (const auto& r : rows) arrays[last].row_labels.push_back(clean_label(r[0].text));
                arrays[last].operand = last_after_matrix;  // the matrix after it was its labels, not a factor
                spans[last].second = e.end;
                last_end = e.end;
            }
            continue;
        }
        if (other_text || numbers == 0) continue;  // a symbolic matrix (q_1, \sqrt{d}): no numbers to check
        if (a.row_labels.size() != a.rows.size()) a.row_labels.clear();
        set_shape(a, 2);
        if (a.rows.size() == 1) a.shape = {a.rows[0].size()};  // one row: a vector
        bool after_matrix = false;
        std::vector<std::string> chain;
        a.name = name_before(s, e.begin, after_matrix, &chain);
        // a factor of a product: right after another matrix, or right before one
        std::size_t k = e.end;
        while (k < s.size() && std::isspace(static_cast<unsigned char>(s[k]))) ++k;
        for (std::string_view op : {"\\cdot", "\\times", "^\\top", "^T", "^{\\top}", "^{T}"})
            if (s.substr(k, op.size()) == op) {
                k += op.size();
                while (k < s.size() && std::isspace(static_cast<unsigned char>(s[k]))) ++k;
            }
        const bool before_matrix = s.substr(k, 6) == "\\begin";
        a.operand = before_matrix || (after_matrix && adjacent);
        if (a.operand && after_matrix) a.name.clear();
        std::vector<PrintedArray> same;  // the chain's other weights: the same numbers again
        for (std::size_t c = 1; c < chain.size(); ++c) {
            same.push_back(a);
            same.back().name = chain[c];
        }
        arrays.push_back(std::move(a));
        spans.emplace_back(e.begin, e.end);
        for (PrintedArray& x : same) {
            arrays.push_back(std::move(x));
            spans.emplace_back(e.end, e.end);
        }
        last = arrays.size() - 1 - same.size();
        last_end = e.end;
        last_after_matrix = after_matrix && adjacent;
    }
    for (std::size_t k = 0; k < arrays.size(); ++k) scan.add(spans[k].first, spans[k].second, std::move(arrays[k]));
}

}  // namespace attntrace

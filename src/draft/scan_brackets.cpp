// Bracketed arrays: [0.2, 0.5], [[0.1, 0.2], [0.3, 0.4]], tensor([[...]]),
// array([...]), numpy's "[[ 2.1  0.3]\n [ 0.8  3.5]]" (in a "# " comment
// too, a row's note after "←" or "#"), and rows led by labels: "the [ 0.51
// 0.30 ] cat [ 0.18 0.43 ]" or a line per token. Brackets are paired in one
// pass with a bounded stack; each byte is read once as the direct content
// of its innermost pair, so any text costs its length.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <optional>

#include "draft/numbers.hpp"
#include "draft/scan.hpp"

namespace attntrace {

namespace {

// Three levels make (heads, rows, cols); deeper brackets are no printed example's.
constexpr std::size_t kMaxLevels = 3;
constexpr std::size_t kMaxStack = 8;

struct Pair {
    std::size_t open = 0, close = 0;
    std::size_t numbers = 0, children = 0, levels = 1;
    std::size_t child_levels = 0;  // the levels of its children, when all have the same; else marked not ok
    bool ok = true, elided = false;
    std::vector<std::string> notes;  // per child, the note after it ("← "The" attends ...")
};

bool starts_note(std::string_view s, std::size_t i) {
    return s.substr(i, 3) == "\xE2\x86\x90" || s.substr(i, 2) == "<-" || s[i] == '#';
}

// A row's note names its row by the first quoted word (`← "The" attends mostly to itself`), else by a
// comment's one word, alone or before a parenthesis (`# Bright (x^1)`, `# the`); a sentence names nothing.
std::string note_label(std::string_view note) {
    for (std::size_t i = 0; i < note.size(); ++i) {
        std::size_t len = note[i] == '"' ? 1 : note.substr(i, 3) == "\xE2\x80\x9C" ? 3 : 0;
        if (!len) continue;
        std::size_t j = i + len;
        while (j < note.size() && note[j] != '"' && note.substr(j, 3) != "\xE2\x80\x9D" && j - i < 40) ++j;
        if (j < note.size() && j - i < 40) return std::string(note.substr(i + len, j - i - len));
        return "";
    }
    std::size_t i = note.substr(0, 3) == "\xE2\x86\x90" ? 3 : note.substr(0, 2) == "<-" ? 2 : note.substr(0, 1) == "#" ? 1 : 0;
    while (i < note.size() && (note[i] == ' ' || note[i] == '\t')) ++i;
    std::size_t j = i;  // a word: letters (any UTF-8 letter's bytes), an apostrophe or a hyphen inside it
    while (j < note.size() && j - i < 32 &&
           (std::isalpha(static_cast<unsigned char>(note[j])) || static_cast<unsigned char>(note[j]) >= 0x80 ||
            (j > i && (note[j] == '\'' || note[j] == '-'))))
        ++j;
    if (j == i || j - i >= 32) return "";
    const std::string rest = trim(note.substr(j));
    return rest.empty() || rest[0] == '(' ? std::string(note.substr(i, j - i)) : "";
}

// How the numbers of an array were written, as read_rows saw them.
struct Written {
    bool padded = false;    // a number right-padded with spaces ("0.5       ]"): numpy's shortest digits, aligned
    bool exponent = false;  // a number in scientific notation ("4.5398e-05"): its digits are relative
};

// The numbers of [open, close] read into rows: a list of lists' inner lists are rows, of a list its numbers one row.
Written read_rows(std::string_view s, const Pair& p, PrintedArray& a, std::vector<std::size_t>* rows_per_head = nullptr) {
    Written w;
    int depth = 0;
    bool fresh_line = false;
    std::vector<PrintedNumber> row;
    std::size_t head_first_row = a.rows.size();
    for (std::size_t i = p.open; i <= p.close; ++i) {
        const char c = s[i];
        if (c == '[') {
            ++depth;
            continue;
        }
        if (c == ']') {
            if (static_cast<std::size_t>(depth) == p.levels || p.levels == 1) {
                if (!row.empty() || p.levels == 1) a.rows.push_back(std::move(row));
                row.clear();
            }
            if (p.levels == 3 && depth == 2 && rows_per_head) {  // a head's rows end
                rows_per_head->push_back(a.rows.size() - head_first_row);
                head_first_row = a.rows.size();
            }
            --depth;
            continue;
        }
        if (c == '\n') fresh_line = true;
        else if (!std::isspace(static_cast<unsigned char>(c)) && c != '#') fresh_line = false;
        if (c == '#' && fresh_line) continue;
        if (starts_note(s, i) && depth > 0) {
            while (i < p.close && s[i] != '\n') ++i;
            --i;  // the '\n' is read next: the next line begins fresh
            continue;
        }
        if (may_start_number(s, i))
            if (const auto t = read_number(s, i)) {
                row.push_back(t->number);
                i = t->end - 1;
                const std::string_view text = s.substr(t->begin, t->end - t->begin);
                w.exponent = w.exponent || text.find_first_of("eE") != std::string_view::npos;
                std::size_t k = t->end;
                while (k <= p.close && s[k] == ' ') ++k;
                const std::size_t spaces = k - t->end;
                if (k <= p.close && spaces > 0 && (s[k] == ']' || s[k] == ',' || (spaces >= 2 && may_start_number(s, k)))) w.padded = true;
            }
    }
    return w;
}

// A print that writes each number in its shortest digits (numpy's default, "0.5" beside "0.12345678", or a
// Python list of rounded floats in a notebook's output): every number is known to the most decimals any of
// them shows. Not for scientific notation, whose digits are relative, nor for an author's own brackets.
void widen_shortest(PrintedArray& a, const Written& w, bool output) {
    if (w.exponent || (!w.padded && !output)) return;
    int most = 0;
    for (const auto& r : a.rows)
        for (const auto& n : r) most = std::max(most, n.decimals);
    for (auto& r : a.rows)
        for (auto& n : r)
            if (std::isfinite(n.value)) n.decimals = most;
}

// What the line above an array printed alone on its lines calls it: a REPL's or a notebook cell's last
// statement ("print(x)", ">>> q", "In [3]: weights", "display(A)"), or a caption ending in ':'
// ("Attention weights:") or in '=' ("W_Q ="); "" for anything else. Looks at one line only, or past torch's
// "Parameter containing:" between the statement and the array, or past up to kMaxCaptionGap blank lines
// and code fences between a caption and its rows.
constexpr std::size_t kMaxCaptionGap = 2;
std::string name_above(std::string_view s, std::size_t line_begin, std::size_t depth = 0) {
    if (line_begin < 2) return "";
    const std::size_t end = line_begin - 1;  // the '\n' ending the line above
    const std::size_t begin = s.rfind('\n', end - 1) == std::string_view::npos ? 0 : s.rfind('\n', end - 1) + 1;
    if (end - begin > 200) return "";
    std::string line = trim(s.substr(begin, end - begin));
    // a caption above a code fence or a blank line ("The value weights:", "", "```", the rows)
    if ((line.empty() || line.rfind("```", 0) == 0) && depth < kMaxCaptionGap) return name_above(s, begin, depth + 1);
    // torch prints a module's weight under "Parameter containing:": the statement above it names it
    if (line == "Parameter containing:" && depth < kMaxCaptionGap) return name_above(s, begin, depth + 1);
    for (std::string_view prompt : {">>> ", "In [", "... "}) {
        if (line.rfind(prompt, 0) != 0) continue;
        line = prompt == "In [" && line.find("]:") != std::string::npos ? trim(line.substr(line.find("]:") + 2))
                                                                        : trim(line.substr(prompt.size()));
    }
    if (!line.empty() && line.back() == ':' && line.size() <= 41 && line.find_first_of("()=[]{}") == std::string::npos)
        return trim(line.substr(0, line.size() - 1));  // a caption
    // "inputs = torch.tensor(" or "X = np.array([" above the array's first row: the call's name
    for (std::string_view call : {"torch.tensor(", "np.array(", "numpy.array(", "torch.Tensor(", "torch.FloatTensor(", "tensor(", "array(", "["}) {
        if (line.size() <= call.size() || line.compare(line.size() - call.size(), call.size(), call) != 0) continue;
        const std::string head = trim(std::string_view(line).substr(0, line.size() - call.size()));
        if (head.size() >= 2 && head.back() == '=' && head.find_first_of("()[]{}=") == head.size() - 1)
            return trim(std::string_view(head).substr(0, head.size() - 1));
        break;
    }
    // "X =" or "W_Q =" alone above a printed array (print("W_Q ="); print(W_Q)): the name before its equals sign
    if (line.size() >= 2 && line.back() == '=' && line.size() <= 41 && line.find_first_of("()[]{}=") == line.size() - 1)
        return trim(line.substr(0, line.size() - 1));
    for (std::string_view call : {"print(", "display("})
        if (line.rfind(call, 0) == 0 && line.back() == ')')
            return print_argument_name(std::string_view(line).substr(call.size(), line.size() - call.size() - 1));
    // one identifier (a trailing ".detach()" or ".numpy()" is no other array)
    std::size_t k = 0;
    while (k < line.size() && (std::isalnum(static_cast<unsigned char>(line[k])) || line[k] == '_')) ++k;
    if (k == 0 || std::isdigit(static_cast<unsigned char>(line[0]))) return "";
    const std::string rest = line.substr(k);
    if (!rest.empty() && rest.rfind(".detach()", 0) != 0 && rest.rfind(".numpy()", 0) != 0 && rest.rfind(".round(", 0) != 0 &&
        rest.rfind(".data", 0) != 0)
        return "";
    return line.substr(0, k);
}

// What the text calls an array, from the words before it on its line: the last word before
// "=" ("x = np.array([" -> "x", "row 2 of Q \\(=[" -> "Q"), or up to three words before ":" ("Example row: [").
std::string name_on_line(std::string_view s, std::size_t line_begin, std::size_t open) {
    std::string before = trim(s.substr(line_begin, open - line_begin));
    for (std::string_view call : {"torch.tensor(", "np.array(", "numpy.array(", "tensor(", "array(", "\\(", "(", "$"})
        if (before.size() >= call.size() && before.compare(before.size() - call.size(), call.size(), call) == 0)
            before = trim(before.substr(0, before.size() - call.size()));
    bool colon = false;
    while (!before.empty()) {
        if (before.size() >= 2 && before.compare(before.size() - 2, 2, "\\(") == 0) {
            before.resize(before.size() - 2);
            continue;
        }
        const char c = before.back();
        if (c != '=' && c != ':' && c != ' ' && c != '(' && c != '$') break;
        colon = colon || c == ':';
        before.pop_back();
    }
    std::size_t words = colon ? 3 : 1, at = before.size();
    while (words > 0 && at > 0) {
        const std::size_t sp = before.rfind(' ', at - 1);
        at = sp == std::string::npos ? 0 : sp;
        --words;
        if (sp == std::string::npos) break;
    }
    std::string name = trim(before.substr(at));
    // "E + PE = [": the name of a sum's last term is not the sum's
    if (!colon && at > 0) {
        const std::string left = trim(before.substr(0, at));
        if (!left.empty() && std::string_view("+-*/@").find(left.back()) != std::string_view::npos) return "";
        // "[1, 0, 1] x W_K = [": a product's last factor is not the product's name
        if (left.back() == ']' || (left.back() == 'x' && (left.size() == 1 || left[left.size() - 2] == ' '))) return "";
        if (left.size() >= 2 && (left.compare(left.size() - 2, 2, "\xC2\xB7") == 0 || left.compare(left.size() - 2, 2, "\xC3\x97") == 0))
            return "";
    }
    if (!name.empty() && (name[0] == '#' || name[0] == '(' || name[0] == '-' || name[0] == '*')) name = trim(name.substr(1));
    if (name.rfind("\xE2\x80\xA2", 0) == 0) name = trim(name.substr(3));  // a bullet: "• Normalized: ["
    // "0.07 * [1, 1, 3] = [": the right side of an expression, not of a name
    if (name.find_first_of("[]()") != std::string::npos) return "";
    return name.size() > 40 ? "" : name;
}

// "[1, 0, 2]   (key 1)": a parenthesis alone after an array, to the end of its line, of a word and maybe a
// number, names it ("key 1").
std::string name_after(std::string_view s, std::size_t close, std::size_t line_end) {
    if (close + 1 >= line_end || line_end - close > 40) return "";
    const std::string after = trim(s.substr(close + 1, line_end - close - 1));
    if (after.size() < 3 || after.front() != '(' || after.back() != ')') return "";
    const std::string inner = trim(std::string_view(after).substr(1, after.size() - 2));
    std::size_t i = 0;
    while (i < inner.size() && std::isalpha(static_cast<unsigned char>(inner[i]))) ++i;
    if (i == 0) return "";
    std::size_t j = i;
    while (j < inner.size() && inner[j] == ' ') ++j;
    while (j < inner.size() && std::isdigit(static_cast<unsigned char>(inner[j]))) ++j;
    return j == inner.size() ? inner : "";
}

// An array written as a factor of an equation, not its result: an operator right after it
// ("[1, 0, 2] · [1, 2, 0] = 1", "softmax([0.58, 2.89]) = [...]", "0.07 * [1, 1, 3] = [...]"); the result,
// after "=", is the array the text prints.
bool written_as_factor(std::string_view s, std::size_t close) {
    std::size_t i = close + 1;
    while (i < s.size() && i - close < 16 && (s[i] == ' ' || s[i] == ')' || s[i] == '\t')) ++i;
    if (i >= s.size()) return false;
    for (std::string_view op : {"=", "*", "@", "\xC2\xB7" /* · */, "\xC3\x97" /* × */, "\xE2\x8B\x85" /* ⋅ */,
                                "\xE2\x8A\x99" /* ⊙ */, "\xE2\x89\x88" /* ≈ */})
        if (s.substr(i, op.size()) == op) return s.substr(i, 2) != "==";
    // a letter x or a period as the operator, before another factor: "[1, 0, 1] x W_K =", "[1, 1] . [2, 0] ="
    // (not a sentence's period: "the weights are [0.2, 0.8]. Next")
    if ((s[i] == 'x' || s[i] == '.') && i + 1 < s.size() && s[i + 1] == ' ') {
        std::size_t j = i + 1;
        while (j < s.size() && j - i < 8 && s[j] == ' ') ++j;
        return j < s.size() && (s[j] == '[' || (s[i] == 'x' && std::isupper(static_cast<unsigned char>(s[j]))));
    }
    return false;
}

// "0.07 * [1, 1, 3] = [" before a vector: a weight times a printed vector, the vector after '=' their product.
bool weight_times_vector(std::string_view line) {
    std::size_t i = 0;
    auto skip = [&] {
        while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '-' || line[i] == '*' || line[i] == '#')) ++i;
    };
    skip();
    if (i >= line.size() || !may_start_number(line, i)) return false;
    const auto w = read_number(line, i);
    if (!w) return false;
    i = w->end;
    while (i < line.size() && line[i] == ' ') ++i;
    bool op = false;
    for (std::string_view o : {std::string_view("*"), std::string_view("\xC2\xB7"), std::string_view("\xC3\x97"), std::string_view("x")})
        if (line.substr(i, o.size()) == o) i += o.size(), op = true;
    if (!op) return false;
    while (i < line.size() && line[i] == ' ') ++i;
    if (i >= line.size() || line[i] != '[') return false;
    const std::size_t close = line.find(']', i);
    if (close == std::string_view::npos) return false;
    i = close + 1;
    while (i < line.size() && line[i] == ' ') ++i;
    if (i >= line.size() || line[i] != '=') return false;
    ++i;
    while (i < line.size() && line[i] == ' ') ++i;
    return i == line.size();
}

// A vector's caption that names one of a family of rows: "Input 1 (my):", "Key for Input 2:", "x_3 =",
// "Token 'cat':". Its stem is the caption with the varying part put as '#' (a number) or taken out (a word
// in parentheses or quotes, which is the row's label); consecutive vectors whose captions share a stem
// are the rows of one array ("Key for Input #": the keys, a row per input).
struct CaptionFamily {
    std::string stem, label;
};

std::optional<CaptionFamily> family_of(std::string_view caption) {
    std::string raw = trim(caption);
    while (!raw.empty() && (raw.back() == ':' || raw.back() == '=' || raw.back() == ' ')) raw.pop_back();
    while (!raw.empty() && (raw[0] == '-' || raw[0] == '*' || raw[0] == '#' || raw[0] == ' ')) raw.erase(0, 1);
    if (raw.empty() || raw.size() > 48 || raw.find_first_of("[]{}=\\$|") != std::string::npos) return std::nullopt;
    CaptionFamily f;
    for (std::size_t i = 0; i < raw.size();) {
        const char c = raw[i];
        const char close = c == '(' ? ')' : c == '\'' || c == '"' || c == '`' ? c : 0;
        if (close) {
            const std::size_t end = raw.find(close, i + 1);
            if (end == std::string::npos || end - i > 33 || !f.label.empty()) return std::nullopt;
            f.label = trim(std::string_view(raw).substr(i + 1, end - i - 1));
            i = end + 1;
            continue;
        }
        if (std::isdigit(static_cast<unsigned char>(c))) {
            while (i < raw.size() && std::isdigit(static_cast<unsigned char>(raw[i]))) ++i;
            f.stem += '#';
            continue;
        }
        f.stem += c;
        ++i;
    }
    f.stem = trim(f.stem);
    const bool varies = f.stem.find('#') != std::string::npos || !f.label.empty();
    const bool words = std::any_of(f.stem.begin(), f.stem.end(), [](char c) { return std::isalpha(static_cast<unsigned char>(c)); });
    if (!varies || !words || std::count(f.stem.begin(), f.stem.end(), '#') > 1) return std::nullopt;
    return f;
}

// The family's name: its stem without the varying number ("Key for Input #" -> "Key for Input", "x_#" -> "x").
std::string family_name(const std::string& stem) {
    std::string n;
    for (char c : stem)
        if (c != '#') n += c;
    n = trim(n);
    while (!n.empty() && (n.back() == '_' || n.back() == ' ')) n.pop_back();
    return n;
}

}  // namespace

void scan_brackets(Scan& scan) {
    const std::string_view s = scan.s();
    std::vector<Pair> stack, closed;
    std::size_t overflow = 0;  // '[' past kMaxStack, not pushed
    std::size_t index_depth = 0;  // '[' of an index ("x[0]"), not pushed
    bool fresh_line = true;  // only spaces and '#' since the line began: a '#' there is a comment's, not a note's
    for (std::size_t i = 0; i < s.size(); ++i) {
        const char c = s[i];
        if (c == '\n') fresh_line = true;
        else if (!std::isspace(static_cast<unsigned char>(c)) && c != '#') fresh_line = false;
        if (c == '[') {
            // an index, not an array: "x[0]", "K.shape[-1]", "f(x)[1]", "a[0][1]"
            if (i > 0 && (std::isalnum(static_cast<unsigned char>(s[i - 1])) || s[i - 1] == '_' || s[i - 1] == ')' ||
                          (s[i - 1] == ']' && (stack.empty() || !stack.back().children)))) {
                if (!stack.empty()) stack.back().ok = false;
                ++index_depth;
                continue;
            }
            // a notebook's prompt saved as text, "In [4]:" or "Out[4]:": no array
            if (stack.empty() && ((i >= 3 && s.substr(i - 3, 3) == "In ") || (i >= 3 && s.substr(i - 3, 3) == "Out"))) {
                std::size_t k = i + 1;
                while (k < s.size() && k - i < 8 && (std::isdigit(static_cast<unsigned char>(s[k])) || s[k] == ' ')) ++k;
                if (k + 1 < s.size() && s[k] == ']' && s[k + 1] == ':') {
                    scan.take(i - 3, k + 2);  // nor its number a prose one
                    ++index_depth;
                    continue;
                }
            }
            if (stack.size() >= kMaxStack) {
                ++overflow;
                for (auto& p : stack) p.ok = false;
                continue;
            }
            if (!stack.empty() && stack.back().numbers) stack.back().ok = false;  // numbers and lists mixed
            Pair p;
            p.open = i;
            stack.push_back(std::move(p));
            continue;
        }
        if (c == ']') {
            if (index_depth) {
                --index_depth;
                continue;
            }
            if (overflow) {
                --overflow;
                continue;
            }
            if (stack.empty()) continue;
            Pair p = std::move(stack.back());
            stack.pop_back();
            p.close = i;
            if (p.numbers == 0 && p.children == 0) p.ok = false;  // "[]", "[x]"
            if (p.levels > kMaxLevels) p.ok = false;
            if (!stack.empty()) {
                Pair& parent = stack.back();
                if (parent.numbers) parent.ok = false;
                if (!p.ok) parent.ok = false;
                parent.children += 1;
                if (parent.child_levels && parent.child_levels != p.levels) parent.ok = false;  // "[[[1]], [2]]": ragged depth
                parent.child_levels = p.levels;
                parent.levels = std::max(parent.levels, p.levels + 1);
                parent.elided = parent.elided || p.elided;
                parent.notes.emplace_back();
            }
            if (p.children && !p.notes.empty() && p.notes.back().empty()) {  // "[ 0.4 2.9]]  ← "sat" ...": the last row's note
                std::size_t k = i + 1;
                while (k < s.size() && (s[k] == ' ' || s[k] == '\t')) ++k;
                if (k < s.size() && starts_note(s, k)) {
                    const std::size_t end = std::min(s.find('\n', k), s.size());
                    p.notes.back() = note_label(s.substr(k, std::min<std::size_t>(end - k, kQuoteBytes)));
                }
            }
            // only what may be an array is kept: "[][][]..." costs nothing, nor do brackets another scanner read
            // (a table's vector cells)
            if (p.ok && !scan.taken(p.open, p.open + 1)) {
                if (closed.size() >= kMaxPrintedArrays) scan.too_many(p.open);
                closed.push_back(std::move(p));
            }
            continue;
        }
        if (stack.empty()) continue;
        Pair& top = stack.back();
        if (std::isspace(static_cast<unsigned char>(c)) || c == ',') continue;
        if (c == '#' && fresh_line) continue;  // "#  [ 0.8 3.5 ]": a printed array inside a comment
        if (starts_note(s, i)) {  // a row's note, to the end of the line
            std::size_t end = s.find('\n', i);
            if (end == std::string_view::npos) end = s.size();
            if (top.children && !top.notes.empty() && top.notes.back().empty())
                top.notes.back() = note_label(s.substr(i, std::min<std::size_t>(end - i, kQuoteBytes)));
            i = end - 1;  // the newline is read next: the next line begins fresh
            continue;
        }
        if (s.substr(i, 3) == "..." || s.substr(i, 3) == "\xE2\x80\xA6") {
            top.elided = true;
            i += 2;
            continue;
        }
        if (may_start_number(s, i)) {
            if (const auto t = read_number(s, i)) {
                if (top.children) top.ok = false;  // numbers and lists mixed
                ++top.numbers;
                if (top.numbers > kMaxPrintedNumbers) top.ok = false;
                i = t->end - 1;
                continue;
            }
        }
        top.ok = false;
    }
    // Parents: a pair's parent is the nearest enclosing pair; the arrays are the ok pairs no ok pair encloses.
    std::sort(closed.begin(), closed.end(), [](const Pair& a, const Pair& b) { return a.open < b.open; });
    std::vector<const Pair*> arrays;
    std::size_t covered_to = 0;  // end of the last array taken: pairs inside it are its children
    for (const Pair& p : closed) {
        if (p.open < covered_to) continue;
        if (!p.ok) continue;
        arrays.push_back(&p);
        covered_to = p.close + 1;
    }
    // Labelled rows: consecutive vectors of one length, each after a short label ("the [..] cat [..]", or a
    // line per row). A row's label is the text before it on its own line (a note after the row before is not).
    auto short_label = [](const std::string& l) {
        return !l.empty() && l.size() <= 32 && std::count(l.begin(), l.end(), ' ') <= 1 &&
               std::none_of(l.begin(), l.end(), [](char ch) { return std::isdigit(static_cast<unsigned char>(ch)); });
    };
    // a vector with only spaces before it on its line, and after it at most a comma
    auto alone_on_line = [&](const Pair& p) {
        const auto [begin, end] = scan.text().line_around(p.open);
        if (!trim(s.substr(begin, p.open - begin)).empty()) return false;
        const std::string after = p.close + 1 < end ? trim(s.substr(p.close + 1, end - p.close - 1)) : "";
        return after.empty() || after == ",";
    };
    std::size_t k = 0;
    while (k < arrays.size()) {
        const Pair& first = *arrays[k];
        const std::size_t line_begin = scan.text().line_around(first.open).first;
        std::size_t j = k;
        std::vector<std::string> labels, header;
        bool unlabelled = false;  // rows a line each with no label: named by the caption above them
        if (first.levels == 1 && !written_as_factor(s, first.close)) {
            // the first row's label, and before it on the line, maybe the columns' labels ("the cat sat down the [ ...")
            const std::string prefix = clean_label(s.substr(line_begin, first.open - line_begin));
            std::string l0 = prefix;
            if (!short_label(prefix)) {
                // "the cat sat down the [": the columns' labels, one a number, then the row's
                const std::size_t sp = prefix.rfind(' ');
                l0 = sp == std::string::npos ? "" : prefix.substr(sp + 1);
                const std::string rest = sp == std::string::npos ? "" : prefix.substr(0, sp);
                for (std::size_t a = 0; a < rest.size();) {
                    const std::size_t b = std::min(rest.find(' ', a), rest.size());
                    if (b > a) header.push_back(rest.substr(a, b - a));
                    a = b + 1;
                }
                if (header.size() != first.numbers) l0.clear(), header.clear();
            }
            // "Example row: [..]" is a caption, not a row's label: each such vector is an array of its own
            auto caption = [&](std::size_t from, std::size_t to) {
                const std::string raw = trim(s.substr(from, to - from));
                return !raw.empty() && raw.back() == ':';
            };
            if (short_label(l0) && !caption(line_begin, first.open)) {
                labels.push_back(l0);
                while (j + 1 < arrays.size() && arrays[j + 1]->levels == 1 && arrays[j + 1]->numbers == first.numbers) {
                    const std::size_t next = arrays[j + 1]->open;
                    const auto next_line = scan.text().line_around(next);
                    const auto this_line = scan.text().line_around(arrays[j]->close);
                    // on the same line, or on the next one: rows of one table, not vectors a paragraph apart
                    if (next_line.first != this_line.first && next_line.first != this_line.second + 1) break;
                    const std::size_t from = std::max(arrays[j]->close + 1, next_line.first);
                    const std::string l = clean_label(s.substr(from, next - from));
                    if (!short_label(l) || caption(from, next) || written_as_factor(s, arrays[j + 1]->close) ||
                        s.substr(from, next - from).find_first_of("=()") != std::string_view::npos)
                        break;  // "softmax([..]) = [..]": a factor and a result, not a table's rows
                    labels.push_back(l);
                    ++j;
                }
            } else if (prefix.empty() && alone_on_line(first)) {
                // "[1, 0, 1]" a line each and nothing else on the lines: a matrix printed a row per line
                while (j + 1 < arrays.size() && arrays[j + 1]->levels == 1 && arrays[j + 1]->numbers == first.numbers &&
                       scan.text().line_around(arrays[j + 1]->open).first == scan.text().line_around(arrays[j]->close).second + 1 &&
                       alone_on_line(*arrays[j + 1]))
                    ++j;
                if (j > k) labels.assign(j - k + 1, ""), unlabelled = true;
            }
        }
        std::string family;  // the name of a family of captioned rows ("Key for Input 1: [..]" a line each)
        if (j == k && first.levels == 1) {
            const auto f0 = family_of(s.substr(line_begin, first.open - line_begin));
            std::vector<std::string> flabels;
            if (f0) flabels.push_back(f0->label);
            while (f0 && j + 1 < arrays.size() && arrays[j + 1]->levels == 1 && arrays[j + 1]->numbers == first.numbers) {
                const auto next_line = scan.text().line_around(arrays[j + 1]->open);
                const auto this_line = scan.text().line_around(arrays[j]->close);
                if (next_line.first != this_line.second + 1) break;  // a line each, no line between
                const auto f = family_of(s.substr(next_line.first, arrays[j + 1]->open - next_line.first));
                if (!f || f->stem != f0->stem) break;
                flabels.push_back(f->label);
                ++j;
            }
            if (j > k) {
                family = family_name(f0->stem);
                // "x1 = [1, 0, 1]  # the": a family's rows named by the one word of the comment after each
                if (std::all_of(flabels.begin(), flabels.end(), [](const std::string& l) { return l.empty(); })) {
                    std::vector<std::string> notes;
                    for (std::size_t m = k; m <= j; ++m) {
                        const std::size_t after = arrays[m]->close + 1, eol = scan.text().line_around(arrays[m]->close).second;
                        std::string note = trim(s.substr(after, eol > after ? eol - after : 0));
                        if (note.empty() || note[0] != '#') break;
                        note = clean_label(std::string_view(note).substr(1));
                        if (!short_label(note) || note.find(' ') != std::string::npos) break;
                        notes.push_back(note);
                    }
                    if (notes.size() == flabels.size()) flabels = notes;
                }
                const bool all = std::none_of(flabels.begin(), flabels.end(), [](const std::string& l) { return l.empty(); });
                labels = all ? flabels : std::vector<std::string>(j - k + 1);
            }
        }
        PrintedArray a;
        a.form = PrintedForm::bracket;
        if (j > k) {  // rows with labels
            Written w;
            for (std::size_t m = k; m <= j; ++m) {
                const Written wm = read_rows(s, *arrays[m], a);
                w.padded = w.padded || wm.padded, w.exponent = w.exponent || wm.exponent;
                a.elided = a.elided || arrays[m]->elided;
            }
            widen_shortest(a, w, scan.text().place_of(first.open).output);
            if (std::any_of(labels.begin(), labels.end(), [](const std::string& l) { return !l.empty(); })) a.row_labels = labels;
            if (header.size() == first.numbers) a.col_labels = header;
            a.name = unlabelled ? name_above(s, line_begin) : family;
            set_shape(a, 2);
        } else {
            std::vector<std::size_t> rows_per_head;
            widen_shortest(a, read_rows(s, first, a, &rows_per_head), scan.text().place_of(first.open).output);
            a.elided = first.elided;
            a.name = name_on_line(s, line_begin, first.open);
            if (a.name.empty() && trim(s.substr(line_begin, first.open - line_begin)).find_first_not_of("tensorarray(.") ==
                                      std::string::npos)
                a.name = name_above(s, line_begin);
            if (a.name.empty()) a.name = name_after(s, first.close, scan.text().line_around(first.close).second);
            if (first.levels == 2) {
                bool any = false;
                for (const auto& n : first.notes) any = any || !n.empty();
                if (any && first.notes.size() == a.rows.size()) a.row_labels = first.notes;
            }
            set_shape(a, first.levels);
            if (first.levels == 3 && !a.rows.empty()) {  // (heads, rows, cols) when every head has as many rows
                const bool even = !rows_per_head.empty() &&
                                  std::all_of(rows_per_head.begin(), rows_per_head.end(),
                                              [&](std::size_t n) { return n == rows_per_head[0] && n > 0; });
                if (even) a.shape = {rows_per_head.size(), rows_per_head[0], a.rows[0].size()};
                else a.elided = true;  // not rectangular: no shape a step could have
            }
        }
        if (j == k && written_as_factor(s, first.close)) {
            a.operand = true;
            a.name.clear();
        } else if (j == k && first.levels == 1 && weight_times_vector(s.substr(line_begin, first.open - line_begin))) {
            a.weighted = true;
            a.name.clear();
        }
        if (!a.rows.empty() && !scan.taken(first.open, arrays[j]->close + 1))
            scan.add(j > k ? line_begin : first.open, arrays[j]->close + 1, std::move(a));
        k = j + 1;
    }
}

}  // namespace attntrace

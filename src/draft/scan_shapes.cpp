// Shapes an article states for its named arrays, and the sizes it assigns
// (scan.hpp). Every pattern is read a line at a time, each look before or
// after a mark bounded, so a line costs its length.
#include <algorithm>
#include <cctype>
#include <deque>
#include <optional>

#include "draft/scan.hpp"

namespace attntrace {

namespace {

// A shape is a few sizes: a bracket longer than this, or with more sizes, is something else.
constexpr std::size_t kMaxDimsBytes = 160;
constexpr std::size_t kMaxDims = 6;
// A name of a size or an array is a word's length.
constexpr std::size_t kMaxName = 32;
// A torch.Size printed after `print(x.shape)` belongs to that print when it comes within this many lines.
constexpr std::size_t kPrintReach = 40;
// A size a worked example assigns; larger is a count of something else (a vocabulary, a step count).
constexpr long kMaxSize = 1L << 20;

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool is_digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

std::string_view strip(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return s;
}

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// One size as written: a whole number, or a name or a small expression of names ("d_k", "D/H",
// "d_model // num_heads", "self.d_k", "d_{model}"); nullopt for anything else.
std::optional<std::string> dim_of(std::string_view d) {
    d = strip(d);
    if (starts_with(d, "self.")) d.remove_prefix(5);
    if (d.empty() || d.size() > kMaxName) return std::nullopt;
    if (std::all_of(d.begin(), d.end(), is_digit)) return std::string(d);
    if (!std::isalpha(static_cast<unsigned char>(d[0])) && d[0] != '\\') return std::nullopt;
    std::string out;
    std::string bare(d);
    for (const char* markup : {"\\text", "\\mathrm", "\\mathit", "\\operatorname"})  // d_{\text{model}}
        for (std::size_t m = bare.find(markup); m != std::string::npos; m = bare.find(markup)) bare.erase(m, std::string_view(markup).size());
    for (char c : bare) {
        if (c == '{' || c == '}' || c == '\\' || c == '$') continue;
        if (!word_char(c) && c != '/' && c != '*' && c != ' ' && c != '.') return std::nullopt;
        if (c != ' ') out += c;
    }
    return out;
}

// The sizes inside a bracket, split at commas (LaTeX: at \times or ×); a trailing comma is Python's one-tuple.
std::optional<std::vector<std::string>> dims_in(std::string_view inside, bool latex) {
    std::vector<std::string> dims;
    std::size_t a = 0;
    while (a <= inside.size()) {
        std::size_t b;
        std::size_t skip = 1;
        if (latex) {
            const std::size_t t = inside.find("\\times", a), u = inside.find("\xC3\x97", a);  // ×
            b = std::min(t, u);
            skip = b == t ? 6 : 2;
        } else {
            b = inside.find(',', a);
        }
        if (b == std::string_view::npos) b = inside.size();
        const std::string_view part = strip(inside.substr(a, b - a));
        if (part.empty() && b == inside.size() && !dims.empty() && !latex) break;  // "(n,)"
        const auto d = dim_of(part);
        if (!d) return std::nullopt;
        dims.push_back(*d);
        if (dims.size() > kMaxDims) return std::nullopt;
        a = b + skip;
    }
    if (dims.empty()) return std::nullopt;
    return dims;
}

// The bracket opening at line[i] ('(' or '['), its sizes and the index past its close.
std::optional<std::pair<std::vector<std::string>, std::size_t>> bracket_at(std::string_view line, std::size_t i) {
    if (i >= line.size() || (line[i] != '(' && line[i] != '[')) return std::nullopt;
    const char close = line[i] == '(' ? ')' : ']';
    const std::size_t found = line.substr(i + 1, kMaxDimsBytes).find(close);  // bounded: a long line costs its length
    if (found == std::string_view::npos) return std::nullopt;
    const std::size_t e = i + 1 + found;
    const std::string_view inside = line.substr(i + 1, e - i - 1);
    if (inside.find_first_of("([") != std::string_view::npos) return std::nullopt;  // nested: data, not a shape
    auto dims = dims_in(inside, false);
    if (!dims) return std::nullopt;
    return std::make_pair(std::move(*dims), e + 1);
}

std::size_t skip_spaces(std::string_view s, std::size_t i) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '`')) ++i;
    return i;
}

// The identifier ending at s[end) (a dotted one's last part: "self.out" -> "out"), or "".
std::string ident_before(std::string_view s, std::size_t end) {
    std::size_t b = end;
    while (b > 0 && end - b < kMaxName && word_char(s[b - 1])) --b;
    if (b == end || is_digit(s[b])) return "";
    return std::string(s.substr(b, end - b));
}

// The identifier starting at s[i], or "".
std::string ident_at(std::string_view s, std::size_t i) {
    std::size_t e = i;
    while (e < s.size() && e - i < kMaxName && word_char(s[e])) ++e;
    if (e == i || is_digit(s[i])) return "";
    return std::string(s.substr(i, e - i));
}

// The array a line of code is about: "NAME: type", "NAME = ...", "a.b.NAME = ...", "print(...NAME.shape...)",
// "return NAME".
std::string code_subject(std::string_view code) {
    code = strip(code);
    if (const std::size_t p = code.find(".shape"); p != std::string_view::npos) return ident_before(code, p);
    if (const std::size_t p = code.find(".size("); p != std::string_view::npos) return ident_before(code, p);
    if (starts_with(code, "return ")) return ident_at(code, skip_spaces(code, 7));
    std::size_t i = 0;
    if (starts_with(code, "self.")) i = 5;
    const std::string name = ident_at(code, i);
    if (name.empty()) return "";
    std::size_t k = skip_spaces(code, i + name.size());
    if (k < code.size() && (code[k] == ':' || (code[k] == '=' && (k + 1 >= code.size() || code[k + 1] != '=')) || code[k] == ','))
        return name;
    return "";
}

// Words that say what an array is, not which: "Output tensor of shape" names Output.
bool generic_word(const std::string& w) {
    std::string l;
    for (char c : w) l += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (const char* g : {"tensor", "matrix", "array", "vector", "sequence", "of", "has", "with", "a", "an", "the", "its", "is",
                          "are", "have", "result", "resulting", "final"})
        if (l == g) return true;
    return false;
}

// The name a sentence gives before "... of shape": the nearest word that is not generic, at most 3 back.
std::string prose_subject(std::string_view line, std::size_t end) {
    std::string last_generic;
    const std::size_t stop = end > 4 * kMaxName ? end - 4 * kMaxName : 0;  // a few words back, no further
    for (int words = 0; words < 4 && end > stop; ++words) {
        while (end > stop && !word_char(line[end - 1])) {
            if (line[end - 1] == '.' || line[end - 1] == ':' || line[end - 1] == ';') return "";
            --end;
        }
        const std::string w = ident_before(line, end);
        if (w.empty()) return "";
        if (!generic_word(w)) return w;
        if (last_generic.empty() && (w == "result" || w == "final")) last_generic = w;
        end -= w.size();
    }
    return last_generic;
}

class ShapeScanner {
public:
    explicit ShapeScanner(Scan& scan) : scan_(scan) {}

    void line(std::string_view line, std::size_t offset, std::size_t number) {
        line_ = line;
        offset_ = offset;
        number_ = number;
        found_here_ = false;
        torch_size();
        comment();
        listing();
        prose();
        latex();
        printed_tuple();
        // a print of x.shape whose shape is printed below it
        if (!found_here_)
            if (const std::size_t p = line.find("print("); p != std::string_view::npos) {
                for (std::size_t q = line.find(".shape", p); q != std::string_view::npos; q = line.find(".shape", q + 6)) {
                    const std::string name = ident_before(line, q);
                    if (!name.empty() && pending_.size() < kMaxDims) pending_.push_back({name, number});
                }
            }
    }

    using Found = std::pair<std::size_t, PrintedShape>;  // (offset in the text, the shape)
    std::vector<Found> take() && { return std::move(found_); }

private:
    Scan& scan_;
    std::string_view line_;
    std::size_t offset_ = 0, number_ = 0;
    bool found_here_ = false;
    struct Pending {
        std::string name;
        std::size_t line;
    };
    std::deque<Pending> pending_;
    std::vector<Found> found_;

    void add(std::string name, std::vector<std::string> dims, std::size_t begin, std::size_t end, std::string note = "") {
        if (scan_.taken(offset_ + begin, offset_ + end)) return;
        if (name.empty()) return;
        PrintedShape s;
        s.name = std::move(name);
        s.dims = std::move(dims);
        s.note = std::string(strip(note));
        s.place = scan_.text().place_of(offset_ + begin);
        s.quote = scan_.excerpt(offset_ + begin, offset_ + end);
        scan_.take(offset_ + begin, offset_ + end);
        found_.push_back({offset_ + begin, std::move(s)});
        found_here_ = true;
    }

    // The name a printed shape has: a label before it on its line ("Q shape:", "Q.shape:"), else the
    // oldest print of x.shape above it not yet answered.
    std::string printed_name(std::size_t at) {
        std::string_view before = strip(line_.substr(0, at));
        while (!before.empty() && std::string_view(":=#").find(before.back()) != std::string_view::npos)
            before = strip(before.substr(0, before.size() - 1));
        if (const std::size_t dot = before.rfind(".shape"); dot != std::string_view::npos) return ident_before(before, dot);
        if (before.size() >= 5 && before.substr(before.size() - 5) == "shape")
            return prose_subject(before, before.size() - 5);  // "Output shape:"
        if (!before.empty()) {
            const std::string w = ident_before(before, before.size());
            if (!w.empty() && w.size() == before.size()) return w;  // "Q: torch.Size(...)"
            return "";
        }
        while (!pending_.empty() && number_ - pending_.front().line > kPrintReach) pending_.pop_front();
        if (pending_.empty()) return "";
        std::string name = pending_.front().name;
        pending_.pop_front();
        return name;
    }

    void torch_size() {
        for (std::size_t p = line_.find("torch.Size(["); p != std::string_view::npos; p = line_.find("torch.Size([", p + 1)) {
            const auto b = bracket_at(line_, p + 11);
            if (!b) continue;
            const std::size_t end = b->second < line_.size() && line_[b->second] == ')' ? b->second + 1 : b->second;
            add(printed_name(p), b->first, p, end);
            scan_.take(offset_ + p, offset_ + end);  // a shape, named or not: no array of numbers
        }
    }

    // "code  # (batch, n, d_k)", "# -> [B, T, D]", "# shape: (B, T, D)"
    void comment() {
        const std::size_t h = line_.find('#');
        if (h == std::string_view::npos || strip(line_.substr(0, h)).empty()) return;
        std::size_t i = skip_spaces(line_, h + 1);
        for (std::string_view lead : {"->", "\xE2\x86\x92", "shape:", "shape", "Shape:", "Shape", "=>"})
            if (starts_with(line_.substr(i), lead)) i = skip_spaces(line_, i + lead.size());
        const auto b = bracket_at(line_, i);
        if (!b) return;
        add(code_subject(line_.substr(0, h)), b->first, h, b->second, std::string(line_.substr(b->second)));
    }

    // "Q: [B, H, T, D_h]  # After Q @ K.T", "- X.shape: (B, T, D)", "Q.shape == (2, 10, 64)"
    void listing() {
        std::size_t i = skip_spaces(line_, 0);
        while (i < line_.size() && (line_[i] == '-' || line_[i] == '*' || line_[i] == '>')) i = skip_spaces(line_, i + 1);
        std::string name = ident_at(line_, i);
        if (name.empty()) return;
        std::size_t k = i + name.size();
        if (starts_with(line_.substr(k), ".shape")) k += 6;
        else if (starts_with(line_.substr(k), " shape")) k += 6;
        k = skip_spaces(line_, k);
        if (k < line_.size() && line_[k] == ':') ++k;
        else if (starts_with(line_.substr(k), "==")) k += 2;
        else if (k < line_.size() && line_[k] == '=' && line_.substr(i + name.size(), 6) == ".shape") ++k;
        else return;
        k = skip_spaces(line_, k);
        const auto b = bracket_at(line_, k);
        if (!b) return;
        std::string_view rest = line_.substr(b->second);
        if (const std::size_t h = rest.find('#'); h != std::string_view::npos) rest = rest.substr(h + 1);
        else if (!strip(rest).empty()) return;  // a bracket inside a sentence or an expression
        add(name, b->first, i, b->second, std::string(rest));
    }

    // "X of shape [B, T, D]", "the output has shape (batch, n, d_v)", "with shape (n, d)"
    void prose() {
        for (std::size_t p = line_.find("shape"); p != std::string_view::npos; p = line_.find("shape", p + 5)) {
            if (p + 5 < line_.size() && (line_[p + 5] == '[' || line_[p + 5] == '(')) continue;  // x.shape[0]: indexing
            std::size_t k = skip_spaces(line_, p + 5);
            for (std::string_view w : {"of ", "is ", ": ", "= "})
                if (starts_with(line_.substr(k), w)) k = skip_spaces(line_, k + w.size());
            const auto b = bracket_at(line_, k);
            if (!b) continue;
            // the words before "shape": "of", "has", "with", "a"
            std::size_t e = p;
            if (e > 0 && line_[e - 1] == '.') {  // x.shape (a listing or a comment took the usual forms)
                add(ident_before(line_, e - 1), b->first, p, b->second);
                continue;
            }
            add(prose_subject(line_, e), b->first, p, b->second);
        }
    }

    // "Q \in \mathbb{R}^{n \times d_k}", "X ∈ ℝ^{n×d}"
    void latex() {
        for (std::string_view mark : {std::string_view("\\in "), std::string_view("\xE2\x88\x88")}) {  // ∈
            for (std::size_t p = line_.find(mark); p != std::string_view::npos; p = line_.find(mark, p + 1)) {
                std::size_t k = skip_spaces(line_, p + mark.size());
                for (std::string_view r : {"\\mathbb{R}", "\\mathbb R", "\\R", "\xE2\x84\x9D", "R"})  // ℝ
                    if (starts_with(line_.substr(k), r)) {
                        k += r.size();
                        break;
                    }
                if (k >= line_.size() || line_[k] != '^') continue;
                ++k;
                std::string_view inside;
                std::size_t end;
                if (k < line_.size() && line_[k] == '{') {
                    std::size_t depth = 0, e = k;
                    for (; e < line_.size() && e - k < kMaxDimsBytes; ++e) {
                        if (line_[e] == '{') ++depth;
                        if (line_[e] == '}' && --depth == 0) break;
                    }
                    if (e >= line_.size() || line_[e] != '}') continue;
                    inside = line_.substr(k + 1, e - k - 1);
                    end = e + 1;
                } else {
                    continue;
                }
                const auto dims = dims_in(inside, true);
                if (!dims) continue;
                // the name before \in: "Q", "W^Q", "X_{emb}"
                std::size_t e = p;
                while (e > 0 && line_[e - 1] == ' ') --e;
                std::size_t b = e;
                while (b > 0 && e - b < kMaxName && (word_char(line_[b - 1]) || line_[b - 1] == '^' || line_[b - 1] == '{' ||
                                                     line_[b - 1] == '}' || line_[b - 1] == '\\'))
                    --b;
                std::string name;
                for (char c : line_.substr(b, e - b))
                    if (c != '{' && c != '}' && c != '\\') name += c;
                if (name.rfind("mathbf", 0) == 0) name = name.substr(6);
                add(name, *dims, b, end);
            }
        }
    }

    // numpy's "(2, 10, 64)" alone on a line after a print of x.shape
    void printed_tuple() {
        const std::string_view t = strip(line_);
        if (t.size() < 3 || t.front() != '(' || t.back() != ')' || pending_.empty()) return;
        const auto b = bracket_at(t, 0);
        if (!b || b->second != t.size()) return;
        for (const auto& d : b->first)
            if (!std::all_of(d.begin(), d.end(), is_digit)) return;
        const std::size_t at = static_cast<std::size_t>(t.data() - line_.data());
        add(printed_name(at), b->first, at, at + t.size());
    }
};

}  // namespace

std::vector<PrintedShape> scan_shapes(Scan& scan) {
    const std::string_view s = scan.s();
    ShapeScanner sc(scan);
    std::size_t number = 0;
    for (std::size_t a = 0; a < s.size();) {
        std::size_t b = s.find('\n', a);
        if (b == std::string_view::npos) b = s.size();
        sc.line(s.substr(a, b - a), a, ++number);
        a = b + 1;
    }
    auto found = std::move(sc).take();
    std::stable_sort(found.begin(), found.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    std::vector<PrintedShape> out;
    for (auto& f : found) out.push_back(std::move(f.second));
    return out;
}

std::vector<PrintedSize> scan_sizes(const ArticleText& text) {
    const std::string_view s = text.text();
    std::vector<PrintedSize> out;
    for (std::size_t a = 0; a < s.size();) {
        std::size_t b = s.find('\n', a);
        if (b == std::string_view::npos) b = s.size();
        const std::string_view line = s.substr(a, b - a);
        for (std::size_t eq = line.find('='); eq != std::string_view::npos; eq = line.find('=', eq + 1)) {
            if ((eq + 1 < line.size() && line[eq + 1] == '=') || (eq > 0 && std::string_view("=!<>+-*/").find(line[eq - 1]) != std::string_view::npos))
                continue;
            // the names before: one, or a tuple "a, b, c"
            std::vector<std::string> names;
            std::size_t e = eq;
            for (;;) {
                while (e > 0 && (line[e - 1] == ' ' || line[e - 1] == '}' || line[e - 1] == '$')) --e;
                std::size_t nb = e;
                while (nb > 0 && e - nb < kMaxName && (word_char(line[nb - 1]) || line[nb - 1] == '{' || line[nb - 1] == '\\')) --nb;
                std::string name;
                for (char c : line.substr(nb, e - nb))
                    if (c != '{' && c != '}' && c != '\\') name += c;
                if (name.empty() || is_digit(name[0])) break;
                if (nb >= 5 && line.substr(nb - 5, 5) == "self.") nb -= 5;
                names.insert(names.begin(), name);
                std::size_t c = nb;
                while (c > 0 && line[c - 1] == ' ') --c;
                if (c == 0 || line[c - 1] != ',' || names.size() >= kMaxDims) break;
                e = c - 1;
            }
            if (names.empty()) continue;
            // the integers after: as many as the names
            std::vector<long> values;
            std::size_t k = eq + 1;
            for (;;) {
                while (k < line.size() && line[k] == ' ') ++k;
                std::size_t d = k;
                long v = 0;
                while (d < line.size() && is_digit(line[d]) && d - k < 8) v = v * 10 + (line[d++] - '0');
                if (d == k || (d < line.size() && (line[d] == '.' || is_digit(line[d]) || word_char(line[d])))) break;
                values.push_back(v);
                k = d;
                while (k < line.size() && line[k] == ' ') ++k;
                if (k >= line.size() || line[k] != ',' || values.size() >= names.size()) break;
                ++k;
            }
            if (values.size() != names.size()) continue;
            for (std::size_t i = 0; i < names.size(); ++i)
                if (values[i] > 0 && values[i] <= kMaxSize) out.push_back({names[i], values[i], text.place_of(a + eq)});
        }
        a = b + 1;
    }
    return out;
}

}  // namespace attntrace

#include "draft/scan.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <optional>

#include "core/error.hpp"
#include "draft/numbers.hpp"

namespace attntrace {

bool Scan::taken(std::size_t begin, std::size_t end) const {
    for (std::size_t i = begin; i < end && i < taken_.size(); ++i)
        if (taken_[i]) return true;
    return false;
}

void Scan::take(std::size_t begin, std::size_t end) {
    std::fill(taken_.begin() + static_cast<std::ptrdiff_t>(std::min(begin, taken_.size())),
              taken_.begin() + static_cast<std::ptrdiff_t>(std::min(end, taken_.size())), 1);
}

void Scan::too_many(std::size_t at) const {
    ErrorFields f;
    f.file = file_;
    f.path = text_.place_of(at).describe();
    f.expected = "an article with at most " + std::to_string(kMaxPrintedArrays) + " printed arrays and numbers";
    f.found = "more";
    throw InputError(std::move(f));
}

void Scan::add(std::size_t begin, std::size_t end, PrintedArray a) {
    if (found_.size() >= kMaxPrintedArrays) too_many(begin);
    a.place = text_.place_of(begin);
    if (a.quote.empty()) a.quote = excerpt(begin, end);
    take(begin, end);
    found_.emplace_back(begin, std::move(a));
}

std::string Scan::excerpt(std::size_t begin, std::size_t end) const {
    const std::string_view t = text_.text();
    std::size_t from = text_.line_around(begin).first, to = text_.line_around(end > begin ? end - 1 : begin).second;
    // centred on the array when the lines are longer than a quote
    if (to - from > kQuoteBytes) {
        const std::size_t mid = begin + (std::min(end, to) - begin) / 2;
        from = std::max(from, mid > kQuoteBytes / 2 ? mid - kQuoteBytes / 2 : 0);
        to = std::min(to, from + kQuoteBytes);
    }
    while (from > 0 && from < t.size() && (static_cast<unsigned char>(t[from]) & 0xC0) == 0x80) ++from;  // whole characters
    while (to < t.size() && to > from && (static_cast<unsigned char>(t[to]) & 0xC0) == 0x80) --to;
    std::string out;
    bool space = false;
    for (std::size_t i = from; i < to && i < t.size(); ++i) {
        const unsigned char c = static_cast<unsigned char>(t[i]);
        if (std::isspace(c)) {
            space = !out.empty();
            continue;
        }
        if (space) out += ' ';
        space = false;
        out += static_cast<char>(c);
    }
    return out;
}

std::vector<PrintedArray> Scan::arrays() && {
    std::stable_sort(found_.begin(), found_.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<PrintedArray> out;
    out.reserve(found_.size());
    for (auto& [at, a] : found_) out.push_back(std::move(a));
    return out;
}

std::string trim(std::string_view s) {
    std::size_t a = 0, b = s.size();
    while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
    while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
    return std::string(s.substr(a, b - a));
}

// A call's arguments after s[open] == '(': the text up to its matching ')' (bounded), or none.
std::optional<std::string_view> call_args(std::string_view s, std::size_t open) {
    constexpr std::size_t kMaxCall = 200;
    int depth = 0;
    for (std::size_t i = open; i < s.size() && i - open < kMaxCall; ++i) {
        if (s[i] == '(') ++depth;
        else if (s[i] == ')' && --depth == 0) return s.substr(open + 1, i - open - 1);
        else if (s[i] == '\n') return std::nullopt;
    }
    return std::nullopt;
}

// The top-level items of a call's arguments.
std::vector<std::string> top_items(std::string_view args) {
    std::vector<std::string> out;
    int depth = 0;
    std::size_t from = 0;
    for (std::size_t i = 0; i <= args.size(); ++i) {
        const char c = i < args.size() ? args[i] : ',';
        if (c == '(' || c == '[') ++depth;
        else if (c == ')' || c == ']') --depth;
        else if (c == ',' && depth == 0) out.push_back(trim(args.substr(from, i - from))), from = i + 1;
    }
    return out;
}

// What `print(...)` prints, by name: its last argument's last name that is not an attribute of every tensor
// ("sa.W_query.weight" -> "W_query", "attn_scores" -> "attn_scores", "'Q:', Q" -> "Q"); "" for a call's result.
std::string print_argument_name(std::string_view arg) {
    const std::size_t comma = arg.rfind(',');
    if (comma != std::string_view::npos) arg = arg.substr(comma + 1);
    while (!arg.empty() && arg.front() == ' ') arg.remove_prefix(1);
    while (!arg.empty() && arg.back() == ' ') arg.remove_suffix(1);
    if (const std::size_t r = arg.rfind(".round("); r != std::string_view::npos && arg.back() == ')') arg = arg.substr(0, r);
    for (std::string_view shape : {".shape", ".size()", ".dim()"})  // a print of its shape: no array of numbers
        if (arg.size() > shape.size() && arg.substr(arg.size() - shape.size()) == shape) return "";
    for (std::string_view tail : {".detach()", ".numpy()", ".cpu()", ".data", ".weight", ".T"})
        while (arg.size() > tail.size() && arg.substr(arg.size() - tail.size()) == tail) arg.remove_suffix(tail.size());
    if (arg.empty() || arg.find_first_of("()[]'\"+-*/@ ") != std::string_view::npos) return "";
    const std::size_t dot = arg.rfind('.');
    return std::string(dot == std::string_view::npos ? arg : arg.substr(dot + 1));
}

std::string clean_label(std::string_view s) {
    std::string out;
    for (std::size_t i = 0; i < s.size();) {
        if (s[i] == '\\') {  // a LaTeX command: its name dropped, its argument kept
            std::size_t k = i + 1;
            while (k < s.size() && std::isalpha(static_cast<unsigned char>(s[k]))) ++k;
            if (k == i + 1 && k < s.size()) {  // "\," "\{", a whole character after the backslash
                const unsigned char c = static_cast<unsigned char>(s[k]);
                k += c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
                k = std::min(k, s.size());
            }
            i = k;
            continue;
        }
        const unsigned char c = static_cast<unsigned char>(s[i]);
        // quotes, braces, markup and arrows around a label
        if (c == '{' || c == '}' || c == '"' || c == '`' || c == '*' || c == '$' || c == '\'' || c == '[' || c == ']' ||
            c == ':' || c == '=' || c == '|') {
            ++i;
            continue;
        }
        if (c == 0xE2 && i + 2 < s.size()) {  // “ ” ‘ ’ ← → and the like (U+2000-U+21FF)
            const unsigned char c1 = static_cast<unsigned char>(s[i + 1]);
            if (c1 == 0x80 || c1 == 0x86) {
                i += 3;
                continue;
            }
        }
        out += static_cast<char>(c);
        ++i;
    }
    return trim(out);
}

void set_shape(PrintedArray& a, std::size_t levels) {
    std::size_t cols = a.rows.empty() ? 0 : a.rows[0].size();
    for (const auto& r : a.rows)
        if (r.size() != cols) a.elided = true;
    if (a.rows.size() == 1 && levels <= 1) a.shape = {cols};
    else a.shape = {a.rows.size(), cols};
}

std::size_t PrintedArray::count() const {
    std::size_t n = 0;
    for (const auto& r : rows) n += r.size();
    return n;
}

namespace {

// The symbol a sentence sets a number to, when it writes one: "\\mu = 2.65", "σ ≈ 0.48", "mean: 2.5",
// "variance is 1.25", "\\(\\sigma^2 = 0.25\\)" give "\\mu", "σ", "mean", "variance", "\\sigma^2"; else "".
// Looks back at most a few dozen bytes on the number's line.
std::string prose_symbol(std::string_view s, std::size_t begin) {
    constexpr std::size_t kLookBack = 40;
    const std::size_t floor = begin > kLookBack ? begin - kLookBack : 0;
    std::size_t i = begin;
    auto skip_space = [&] {
        while (i > floor && (s[i - 1] == ' ' || s[i - 1] == '$' || s[i - 1] == '{' || s[i - 1] == '~')) --i;
    };
    skip_space();
    bool op = false;
    for (std::string_view o : {std::string_view("="), std::string_view("\xE2\x89\x88"), std::string_view("\\approx"),
                               std::string_view(":"), std::string_view(" is")})
        if (i >= floor + o.size() && s.substr(i - o.size(), o.size()) == o) {
            i -= o.size();
            op = true;
            break;
        }
    if (!op) return "";
    skip_space();
    const std::size_t end = i;
    while (i > floor) {
        const unsigned char c = static_cast<unsigned char>(s[i - 1]);
        if (std::isalnum(c) || c == '_' || c == '^' || c == '\\' || c == '{' || c == '}' || c >= 0x80) --i;
        else break;
    }
    // the look-back's floor may fall inside a character: a name starts at a character's first byte
    while (i < end && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) ++i;
    std::string sym(s.substr(i, end - i));
    if (sym.rfind("\\(", 0) == 0) sym.erase(0, 2);
    if (sym.empty() || sym.size() > 24 || std::isdigit(static_cast<unsigned char>(sym[0]))) return "";
    return sym;
}

}  // namespace

namespace {

// A list in a sentence, "they become 1.41, 0.54, 1.05 and 0.76": numbers separated by a comma (and "and"
// before the last) and nothing else, none a percentage (shares named one by one are prose_rows'), read as
// one row printed in brackets would be. Fewer than kMinProseList numbers stay prose numbers.
constexpr std::size_t kMinProseList = 3;

struct ProseList {
    PrintedArray array;
    std::size_t end = 0;  // where the list ends in the text
};

ProseList prose_list(std::string_view s, const NumberToken& first) {
    PrintedArray a;
    a.form = PrintedForm::bracket;
    a.rows = {{first.number}};
    std::size_t end = first.end;
    auto percent = [&](const NumberToken& t) { return t.end > t.begin && s[t.end - 1] == '%'; };
    if (percent(first)) return {a, first.end};
    for (;;) {
        std::size_t j = end;
        if (j >= s.size() || s[j] != ',') break;
        ++j;
        while (j < s.size() && s[j] == ' ') ++j;
        if (s.substr(j, 4) == "and ") j += 4;
        if (!may_start_number(s, j)) break;
        const auto t = read_number(s, j);
        if (!t || percent(*t)) break;
        a.rows[0].push_back(t->number);
        end = t->end;
    }
    // ", and 0.76" above, or " and 0.76" without the comma
    if (a.rows[0].size() >= 2 && s.substr(end, 5) == " and " && may_start_number(s, end + 5))
        if (const auto t = read_number(s, end + 5); t && !percent(*t)) {
            a.rows[0].push_back(t->number);
            end = t->end;
        }
    // integers only, or in parentheses: a shape, a tuple or positions ("(2, 10, 64)", "tokens 1, 2, 3"), not values
    std::size_t b = first.begin;
    while (b > 0 && s[b - 1] == ' ') --b;
    const bool fractional = std::any_of(a.rows[0].begin(), a.rows[0].end(), [](const PrintedNumber& n) { return n.decimals > 0; });
    if ((b > 0 && s[b - 1] == '(') || !fractional) a.rows[0].resize(1);
    a.shape = {a.rows[0].size()};
    return {a, end};
}

}  // namespace

void scan_prose(Scan& scan) {
    const std::string_view s = scan.s();
    for (std::size_t i = 0; i < s.size();) {
        if (!may_start_number(s, i) || scan.taken(i, i + 1)) {
            ++i;
            continue;
        }
        const auto t = read_number(s, i);
        if (!t) {
            ++i;
            continue;
        }
        if (ProseList list = prose_list(s, *t); list.array.rows[0].size() >= kMinProseList) {
            list.array.name = prose_symbol(s, t->begin);
            scan.add(t->begin, list.end, std::move(list.array));
            i = list.end;
            continue;
        }
        PrintedArray a;
        a.form = PrintedForm::prose;
        a.rows = {{t->number}};
        a.shape = {};
        a.name = prose_symbol(s, t->begin);
        scan.add(t->begin, t->end, std::move(a));
        i = t->end;
    }
}

namespace {

bool is_quote_open(std::string_view s, std::size_t i, std::size_t& len) {
    // " or “ (U+201C), or LaTeX's ``
    if (s[i] == '"') return len = 1, true;
    if (s.substr(i, 2) == "``") return len = 2, true;
    if (s.substr(i, 3) == "\xE2\x80\x9C") return len = 3, true;
    return false;
}

std::size_t quote_close(std::string_view s, std::size_t from, std::size_t limit) {
    for (std::size_t k = from; k < s.size() && k < limit; ++k) {
        if (s[k] == '"') return k;
        if (s.substr(k, 3) == "\xE2\x80\x9D") return k;
        if (s.substr(k, 2) == "''") return k;  // LaTeX's closing quote
        if (s[k] == '\n') return std::string_view::npos;
    }
    return std::string_view::npos;
}

// A string literal the code assigns to a name, at its opening quote `i`: NAME = "..." or NAME = '...'.
bool assigned_string(std::string_view s, std::size_t i) {
    if (s[i] != '\'' && s[i] != '"') return false;
    std::size_t k = i;
    while (k > 0 && s[k - 1] == ' ') --k;
    if (k < 2 || s[k - 1] != '=' || std::strchr("=!<>", s[k - 2])) return false;
    std::size_t n = k - 1;
    while (n > 0 && s[n - 1] == ' ') --n;
    std::size_t b = n;  // the name, a statement's first word (not an HTML attribute's, title="a b")
    while (b > 0 && (std::isalnum(static_cast<unsigned char>(s[b - 1])) || s[b - 1] == '_')) --b;
    if (b == n) return false;
    while (b > 0 && (s[b - 1] == ' ' || s[b - 1] == '\t')) --b;
    return b == 0 || s[b - 1] == '\n';
}

// A word of a token list: letters, digits and the marks a tokenizer keeps ("##ing", "Ġthe", "<s>").
bool plain_word(std::string_view w) {
    if (w.empty() || w.size() > 32) return false;
    for (unsigned char c : w)
        if (std::isspace(c) || c == '"') return false;
    return true;
}

// Past the separator of a list's words at s[k]: ", ", " and ", ", and "; k itself when there is none.
std::size_t after_separator(std::string_view s, std::size_t k) {
    std::size_t j = k;
    while (j < s.size() && (s[j] == ',' || s[j] == ' ')) ++j;
    if (s.substr(j, 4) == "and ") j += 4;
    while (j < s.size() && s[j] == ' ') ++j;
    return j;
}

// Quoted words one after another, each of one word, apart by commas or "and": "I", "like", "tea" or
// “the”, “cat” and “sat”; the words and where the run ends (npos: fewer than two).
std::size_t quoted_run(std::string_view s, std::size_t i, std::vector<std::string>& words) {
    constexpr std::size_t kMaxWords = 64;
    std::size_t k = i, end = std::string_view::npos;
    words.clear();
    while (k < s.size() && words.size() < kMaxWords) {
        std::size_t len = 0;
        if (!is_quote_open(s, k, len)) break;
        const std::size_t close = quote_close(s, k + len, k + len + 34);
        if (close == std::string_view::npos) break;
        const std::string_view w = s.substr(k + len, close - k - len);
        if (!plain_word(w) || w.find('\'') != std::string_view::npos) break;
        words.emplace_back(w);
        end = close + (s[close] == '"' ? 1 : 3);
        k = end;
        const std::size_t j = after_separator(s, k);
        if (j == k) break;
        k = j;
    }
    if (words.size() < 2) return std::string_view::npos;
    return end;
}

// The Markdown emphasis at s[i] ("**", "*", "__", "_", "`"): its marker's length, 0 for none. An underscore
// inside a word (d_k) is no emphasis.
std::size_t emphasis_at(std::string_view s, std::size_t i) {
    if (s[i] == '`') return 1;
    if (s[i] != '*' && s[i] != '_') return 0;
    if (s[i] == '_' && i > 0 && std::isalnum(static_cast<unsigned char>(s[i - 1]))) return 0;
    return i + 1 < s.size() && s[i + 1] == s[i] ? 2 : 1;
}

// Words an attention tutorial emphasises that name its parts, not its tokens ("**query**, **key** and **value**").
bool names_a_part(std::string_view w) {
    std::string l;
    for (char c : w) l += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (const char* x : {"query", "queries", "key", "keys", "value", "values", "softmax", "attention", "scores", "score",
                          "weights", "weight", "output", "outputs", "input", "inputs", "embedding", "embeddings", "head", "heads"})
        if (l == x) return true;
    return false;
}

// Emphasised words one after another, each of one word, apart by commas or "and", with one marker: **the**,
// **dog** and **ran**, *I*, *like*, *tea*, `the`, `cat`; the words and where the run ends (npos: fewer than
// two, or a word that names a part of attention).
std::size_t emphasis_run(std::string_view s, std::size_t i, std::vector<std::string>& words, std::size_t& scanned) {
    constexpr std::size_t kMaxWords = 64;
    const std::size_t m = emphasis_at(s, i);
    scanned = i + 1;  // how far a failed run read: no run starting before it can succeed (a later start reads the same words)
    if (m == 0) return std::string_view::npos;
    const std::string_view marker = s.substr(i, m);
    std::size_t k = i, end = std::string_view::npos;
    words.clear();
    while (k < s.size() && words.size() < kMaxWords && s.substr(k, m) == marker && (k + m >= s.size() || s[k + m] != marker[0])) {
        const std::size_t close = s.substr(k + m, 34).find(marker);
        if (close == std::string_view::npos) break;
        const std::string_view w = s.substr(k + m, close);
        scanned = k + m + close + m;
        if (!plain_word(w) || std::any_of(w.begin(), w.end(), [](char c) { return std::ispunct(static_cast<unsigned char>(c)) && c != '\'' && c != '-'; }) ||
            names_a_part(w))
            return std::string_view::npos;
        words.emplace_back(w);
        end = k + m + close + m;
        k = end;
        const std::size_t j = after_separator(s, k);
        if (j == k) break;
        k = j;
    }
    if (words.size() < 2) return std::string_view::npos;
    return end;
}

// An emphasised phrase the sentence before it calls the input ("The sentence is *my cat sleeps*", "input:
// **the ring fell**"): its words, and where it ends (npos: none such).
std::size_t emphasised_sentence(std::string_view s, std::size_t i, std::vector<std::string>& words) {
    constexpr std::size_t kMaxPhrase = 120, kLookBack = 24;
    const std::size_t m = emphasis_at(s, i);
    // a phrase's emphasis opens after a space (or a colon's): no look at every star of a run of text
    if (m == 0 || s[i] == '`' || i == 0 || (s[i - 1] != ' ' && s[i - 1] != ':')) return std::string_view::npos;
    std::string before;
    for (char c : s.substr(i > kLookBack ? i - kLookBack : 0, std::min(i, kLookBack)))
        before += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    bool called = false;
    for (const char* w : {"sentence", "input", "phrase", "text", "tokens", "sequence"}) called = called || before.find(w) != std::string::npos;
    if (!called) return std::string_view::npos;
    const std::string_view marker = s.substr(i, m);
    const std::size_t close = s.substr(i + m, kMaxPhrase).find(marker);
    if (close == std::string_view::npos) return std::string_view::npos;
    words.clear();
    const std::string_view body = s.substr(i + m, close);
    for (std::size_t a = 0; a < body.size();) {
        const std::size_t b = std::min(body.find(' ', a), body.size());
        std::string_view w = body.substr(a, b - a);
        while (w.size() > 1 && std::strchr(",.;:!?", w.back())) w.remove_suffix(1);
        if (!w.empty()) {
            if (std::any_of(w.begin(), w.end(), [](unsigned char c) { return !std::isalpha(c) && c != '\'' && c != '-' && c < 0x80; }))
                return std::string_view::npos;
            words.emplace_back(w);
        }
        a = b + 1;
    }
    if (words.size() < 2) return std::string_view::npos;
    return i + m + close + m;
}

}  // namespace

std::vector<PrintedTokens> scan_tokens(const ArticleText& text) {
    // Lists of quoted words, ["the", "ring", "fell"] (or with single quotes), and quoted sentences "the ring fell".
    constexpr std::size_t kMaxQuote = 200;
    const std::string_view s = text.text();
    std::vector<PrintedTokens> out;
    std::size_t emphasis_skip = 0;  // a failed run of emphasised words read up to here
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '[') {
            std::vector<std::string> words;
            std::size_t k = i + 1;
            bool ok = true;
            while (k < s.size() && k < i + 1 + 4 * kMaxQuote) {
                while (k < s.size() && (s[k] == ' ' || s[k] == ',')) ++k;
                if (k < s.size() && s[k] == ']') break;
                if (k >= s.size() || (s[k] != '"' && s[k] != '\'')) {
                    ok = false;
                    break;
                }
                const char q = s[k];
                const std::size_t in = s.substr(k + 1, 34).find(q);  // a word of at most 32 bytes
                const std::size_t close = in == std::string_view::npos ? in : k + 1 + in;
                if (close == std::string_view::npos) {
                    ok = false;
                    break;
                }
                const std::string_view w = s.substr(k + 1, close - k - 1);
                if (!plain_word(w)) {
                    ok = false;
                    break;
                }
                words.emplace_back(w);
                k = close + 1;
            }
            if (ok && k < s.size() && s[k] == ']' && words.size() >= 2) {
                out.push_back({std::move(words), false, text.place_of(i)});
                i = k;  // its words are read: not a run of quoted words again
            }
            continue;
        }
        if (std::vector<std::string> run; i >= emphasis_skip && emphasis_at(s, i) && (i == 0 || !emphasis_at(s, i - 1))) {
            std::size_t scanned = 0;
            if (const std::size_t end = emphasis_run(s, i, run, scanned); end != std::string_view::npos) {
                out.push_back({std::move(run), false, text.place_of(i)});
                i = end - 1;
                continue;
            }
            if (const std::size_t end = emphasised_sentence(s, i, run); end != std::string_view::npos) {
                out.push_back({std::move(run), true, text.place_of(i)});
                i = end - 1;
                continue;
            }
            emphasis_skip = scanned;  // its words read: no list starts among them
        }
        std::size_t len = 0;
        // a string the code assigns, sentence = 'owls hunt at night' (single quotes too), its words' trailing
        // commas and stops dropped as the code's .replace(',', '').split() would
        const bool assigned = assigned_string(s, i);
        if (assigned || is_quote_open(s, i, len)) {
            std::vector<std::string> run;
            if (!assigned)
                if (const std::size_t end = quoted_run(s, i, run); end != std::string_view::npos) {
                    out.push_back({std::move(run), false, text.place_of(i)});
                    i = end - 1;
                    continue;
                }
            if (assigned) len = 1;
            const std::size_t close = assigned ? std::min(s.find(s[i], i + 1), std::min(s.find('\n', i), i + 1 + kMaxQuote))
                                               : quote_close(s, i + len, i + len + kMaxQuote);
            if (close == std::string_view::npos || close >= s.size() || s[close] != (assigned ? s[i] : s[close])) continue;
            const std::string_view body = s.substr(i + len, close - i - len);
            std::vector<std::string> words;
            std::size_t a = 0;
            bool ok = true;
            while (a < body.size()) {
                while (a < body.size() && body[a] == ' ') ++a;
                std::size_t b = body.find(' ', a);
                if (b == std::string_view::npos) b = body.size();
                if (b > a) {
                    std::string_view w = body.substr(a, b - a);
                    while (assigned && w.size() > 1 && std::strchr(",.;:!?", w.back())) w.remove_suffix(1);
                    for (unsigned char c : w)
                        if (!std::isalpha(c) && c != '\'' && c != '-' && c < 0x80) ok = false;
                    words.emplace_back(w);
                }
                a = b;
            }
            if (ok && words.size() >= 2) out.push_back({std::move(words), true, text.place_of(i)});
            i = close;
        }
    }
    return out;
}

}  // namespace attntrace

namespace attntrace {

namespace {

// The config name a written name stands for: d_k, d_model or heads; "" for any other.
std::string setting_name(std::string_view w) {
    std::string n;
    for (char c : w)
        if (c != '_' && c != '{' && c != '}' && c != '\\') n += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (n == "dk" || n == "dhead" || n == "headdim" || n == "dq") return "d_k";
    if (n == "dmodel" || n == "dembed" || n == "embeddim" || n == "hiddensize") return "d_model";
    if (n == "h" || n == "heads" || n == "numheads" || n == "nheads" || n == "nhead") return "heads";
    if (n == "window" || n == "windowsize" || n == "windowlength") return "window";
    return "";
}

bool name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '{' || c == '}' || c == '\\'; }

// Code's tuple assignment, `d_in, d_k, d_v = 4, 3, 3`: `name_begin` the last name's first byte, `eq` the '='.
// True when the line is one (then its settings are read here, each name with the integer in its place, and
// the last name is not read alone as `d_v = 4`).
bool tuple_settings(const ArticleText& text, std::size_t name_begin, std::size_t eq, std::vector<PrintedSetting>& out) {
    constexpr std::size_t kMaxTupleLine = 160;  // a line of code, not a paragraph
    const std::string_view s = text.text();
    std::size_t k = name_begin;
    while (k > 0 && s[k - 1] == ' ') --k;
    if (k == 0 || s[k - 1] != ',') return false;
    // the line around the '=', looked for no further than a line of code (a long line is no tuple: each '='
    // of a megabyte line costs this bound, not the line)
    std::size_t line = eq;
    while (line > 0 && s[line - 1] != '\n' && eq - line <= kMaxTupleLine) --line;
    std::size_t end = eq;
    while (end < s.size() && s[end] != '\n' && end - line <= kMaxTupleLine) ++end;
    if (end - line > kMaxTupleLine) return false;
    auto items = [](std::string_view part) {
        std::vector<std::string_view> v;
        for (std::size_t a = 0; a <= part.size();) {
            std::size_t c = part.find(',', a);
            if (c == std::string_view::npos) c = part.size();
            std::string_view w = part.substr(a, c - a);
            while (!w.empty() && w.front() == ' ') w.remove_prefix(1);
            while (!w.empty() && (w.back() == ' ' || w.back() == '\r')) w.remove_suffix(1);
            v.push_back(w);
            a = c + 1;
        }
        return v;
    };
    const auto names = items(s.substr(line, eq - line)), values = items(s.substr(eq + 1, end - eq - 1));
    const auto identifier = [](std::string_view w) {
        return !w.empty() && std::all_of(w.begin(), w.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
    };
    if (names.size() != values.size() || !std::all_of(names.begin(), names.end(), identifier)) return false;  // prose: "For example, d_k = 64"
    for (std::size_t n = 0; n < names.size(); ++n) {
        const std::string name = setting_name(names[n]);
        const std::string_view v = values[n];
        if (name.empty() || v.empty() || v.size() > 7 || !std::all_of(v.begin(), v.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
            continue;
        const long x = std::stol(std::string(v));
        if (x > 0) out.push_back({name, x, text.place_of(static_cast<std::size_t>(names[n].data() - s.data()))});
    }
    return true;
}

}  // namespace

std::vector<PrintedSetting> scan_settings(const ArticleText& text) {
    constexpr long kMaxSetting = 1L << 20;  // a size a worked example states; larger is a count of something else
    const std::string_view s = text.text();
    std::vector<PrintedSetting> out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] != '=' && s[i] != ':') continue;
        // the name before: name characters, spaces between
        std::size_t e = i;
        while (e > 0 && s[e - 1] == ' ') --e;
        std::size_t b = e;
        while (b > 0 && e - b < 24 && name_char(s[b - 1])) --b;
        if (b == e || (b > 0 && std::isalnum(static_cast<unsigned char>(s[b - 1])))) continue;
        if (s[i] == '=' && tuple_settings(text, b, i, out)) continue;
        std::string name = setting_name(s.substr(b, e - b));
        // "Window size: 3": the word before "size" names it
        if (name.empty() && b >= 7 && setting_name(s.substr(b, e - b)).empty() && (s.substr(b, e - b) == "size" || s.substr(b, e - b) == "Size") &&
            s[b - 1] == ' ' && setting_name(s.substr(b - 7, 6)) == "window" && (b == 7 || !std::isalnum(static_cast<unsigned char>(s[b - 8]))))
            name = "window";
        if (name.empty()) continue;
        // the integer after, not the start of a longer number
        std::size_t k = i + 1;
        if (s[i] == '=' && k < s.size() && s[k] == '=') continue;  // "=="
        while (k < s.size() && s[k] == ' ') ++k;
        std::size_t d = k;
        long v = 0;
        while (d < s.size() && std::isdigit(static_cast<unsigned char>(s[d])) && d - k < 8) v = v * 10 + (s[d++] - '0');
        const bool decimal = d + 1 < s.size() && s[d] == '.' && std::isdigit(static_cast<unsigned char>(s[d + 1]));  // "6.4", not "16."
        if (d == k || decimal || (d < s.size() && std::isdigit(static_cast<unsigned char>(s[d]))) || v <= 0 || v > kMaxSetting) continue;
        out.push_back({name, v, text.place_of(b)});
    }
    return out;
}

}  // namespace attntrace

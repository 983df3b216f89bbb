#include "draft/prose_rows.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <optional>

namespace attntrace {

namespace {

// A word or a number of a sentence, in order; punctuation and quotes between them dropped, but for the end
// of a clause (';', or a '.' ending a sentence): an item of no word and no number.
struct Item {
    std::string word;                    // lowercased; "" for a number or a clause's end
    std::optional<PrintedNumber> number;
    bool ends_clause() const { return word.empty() && !number; }
};

bool word_byte(unsigned char c) { return std::isalnum(c) || c == '_' || c == '[' || c == ']' || c == '<' || c == '>'; }

std::vector<Item> items_of(const std::string& s) {
    std::vector<Item> out;
    for (std::size_t i = 0; i < s.size();) {
        const unsigned char c = static_cast<unsigned char>(s[i]);
        if (std::isdigit(c)) {
            std::size_t j = i;
            double v = 0;
            int decimals = 0;
            while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j])) && j - i < 12) v = v * 10 + (s[j++] - '0');
            if (j + 1 < s.size() && s[j] == '.' && std::isdigit(static_cast<unsigned char>(s[j + 1]))) {
                ++j;
                double scale = 0.1;
                while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j])) && decimals < 12) {
                    v += (s[j++] - '0') * scale;
                    scale /= 10;
                    ++decimals;
                }
            }
            const bool percent = j < s.size() && s[j] == '%';
            if (percent) ++j, v /= 100, decimals += 2;
            // a digit inside a word ("W1", "3rd") is no number
            if (j < s.size() && std::isalpha(static_cast<unsigned char>(s[j]))) {
                while (j < s.size() && word_byte(static_cast<unsigned char>(s[j]))) ++j;
                i = j;
                continue;
            }
            out.push_back({"", PrintedNumber{v, decimals}});
            i = j;
        } else if (word_byte(c)) {
            std::size_t j = i;
            std::string w;
            while (j < s.size() && (word_byte(static_cast<unsigned char>(s[j])) || s[j] == '\'')) w += static_cast<char>(std::tolower(static_cast<unsigned char>(s[j++])));
            out.push_back({w, std::nullopt});
            i = j;
        } else {
            if (c == ';' || (c == '.' && (i + 1 == s.size() || s[i + 1] == ' '))) out.push_back({"", std::nullopt});
            ++i;
        }
    }
    return out;
}

// A line worked as arithmetic ("tea · love = 0.4*1.0 + 1.8*0.2 = 0.76"): an equals sign and a product or a sum.
// Its numbers are factors and results, never shares of a row, whatever tokens it names.
bool is_computation(const std::string& s) {
    if (s.find('=') == std::string::npos) return false;
    for (const char* op : {"*", "+", "\xC3\x97", "\xC2\xB7", "\xE2\x8B\x85"})  // *, +, ×, ·, ⋅
        if (s.find(op) != std::string::npos) return true;
    return false;
}

// The example's tokens by their lowercased words; a word written twice among them names no one token.
class TokenIndex {
public:
    explicit TokenIndex(const std::vector<std::string>& tokens) {
        for (std::size_t t = 0; t < tokens.size(); ++t) {
            std::string w;
            for (char c : tokens[t]) w += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
            index_[w] = t;
            ++count_[w];
        }
    }
    std::optional<std::size_t> find(const std::string& word) const {
        const auto it = index_.find(word);
        if (it == index_.end() || count_.at(word) != 1) return std::nullopt;
        return it->second;
    }

private:
    std::map<std::string, std::size_t> index_;
    std::map<std::string, int> count_;
};

// Words between a token and its number that only say what the number is: "with weight 0.27", "with score 0.2".
constexpr std::size_t kMaxFillers = 3;
bool filler(const std::string& w) {
    for (const char* f : {"with", "a", "weight", "weights", "score", "scores", "logit", "of", "value", "is", "gets", "at"})
        if (w == f) return true;
    return false;
}

bool same(const PrintedNumber& a, const PrintedNumber& b) { return a.decimals == b.decimals && std::fabs(a.value - b.value) < 1e-12; }

}  // namespace

std::vector<ProseRow> prose_rows(const Article& art, const std::vector<std::string>& tokens, std::size_t from_line,
                                 std::size_t to_line, const std::vector<bool>& used) {
    // each token once: a word written twice among the tokens names no one key
    const TokenIndex index(tokens);
    auto token_of = [&](const std::string& w) { return index.find(w); };
    std::vector<ProseRow> out;
    // the prose numbers of each line, in order
    std::map<std::pair<std::size_t, int>, std::vector<std::size_t>> lines;
    for (std::size_t i = 0; i < art.arrays.size(); ++i) {
        const PrintedArray& a = art.arrays[i];
        if (a.form != PrintedForm::prose || used[i] || a.place.line < from_line || a.place.line >= to_line) continue;
        lines[{a.place.line, a.place.cell}].push_back(i);
    }
    for (const auto& [where, arrays] : lines) {
        const PrintedArray& first = art.arrays[arrays.front()];
        if (is_computation(first.quote)) continue;
        const std::vector<Item> items = items_of(first.quote);
        // a line of scores ("score", "logit", no "%"): its numbers need not be shares of one
        std::string lower;
        for (char c : first.quote) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        const bool scores = (lower.find("score") != std::string::npos || lower.find("logit") != std::string::npos) &&
                            lower.find('%') == std::string::npos && lower.find("weight") == std::string::npos;
        // the line's numbers as the prose scanner read them, matched in order
        std::vector<std::optional<std::size_t>> array_of(items.size());
        std::size_t next = 0;
        for (std::size_t k = 0; k < items.size() && next < arrays.size(); ++k)
            if (items[k].number && same(*items[k].number, art.arrays[arrays[next]].rows[0][0])) array_of[k] = arrays[next++];
        // each clause its own row ("the attends 60% to cat; cat attends 70% to itself")
        for (std::size_t begin = 0, end = 0; begin < items.size(); begin = end + 1) {
            end = begin;
            while (end < items.size() && !items[end].ends_clause()) ++end;
            ProseRow row;
            row.first = &first;
            std::optional<std::size_t> query;
            std::vector<std::pair<std::size_t, std::size_t>> pending;  // (item, key) with "itself" as the query, later
            bool any_number = false;
            constexpr std::size_t kItself = static_cast<std::size_t>(-1);
            // the number a token's own: right after it, or after words that only say what it is ("sat with weight
            // 0.27", "the with score 0.2"); its item, or `end`
            auto own_number = [&](std::size_t k) {
                for (std::size_t j = k + 1; j < end && j <= k + 1 + kMaxFillers; ++j) {
                    if (items[j].number) return j;
                    if (!filler(items[j].word)) break;
                }
                return end;
            };
            for (std::size_t k = begin; k < end; ++k) {
                if (!items[k].number) {
                    // the query: the last token named before the first number, unless that number is its own ("cat (30%)")
                    if (!any_number)
                        if (auto t = token_of(items[k].word); t && own_number(k) == end) query = t;
                    continue;
                }
                // "row 2", "head 1": an index the sentence names, no value of the row
                if (k > begin && items[k].number->decimals == 0 &&
                    (items[k - 1].word == "row" || items[k - 1].word == "column" || items[k - 1].word == "head" ||
                     items[k - 1].word == "position" || items[k - 1].word == "token" || items[k - 1].word == "layer"))
                    continue;
                any_number = true;
                if (!array_of[k]) continue;
                const PrintedNumber& n = *items[k].number;
                if (!scores && (n.value < 0 || n.value > 1)) continue;  // a weight: a share of the row
                std::optional<std::size_t> key;
                const auto key_word = [&](const std::string& w) -> std::optional<std::size_t> {
                    if (w == "itself") return kItself;
                    return token_of(w);
                };
                if (k + 2 < end && !items[k + 1].number && !items[k + 2].number &&
                    (items[k + 1].word == "to" || items[k + 1].word == "on" || items[k + 1].word == "for" || items[k + 1].word == "towards"))
                    key = key_word(items[k + 2].word);  // "51% to fell"
                if (!key && k > begin && !items[k - 1].number) key = key_word(items[k - 1].word);  // "cat (30%)", "cat: 0.30"
                for (std::size_t j = k; !key && j-- > begin && j + 1 + kMaxFillers >= k;) {  // "sat with weight 0.27"
                    if (items[j].number || (!filler(items[j].word) && !key_word(items[j].word))) break;
                    if (!filler(items[j].word)) key = key_word(items[j].word);
                }
                if (!key) continue;
                pending.push_back({k, *key});
            }
            if (!query || pending.size() < 1) continue;
            for (const auto& [k, key] : pending) {
                row.keys.push_back(key == kItself ? *query : key);
                row.numbers.push_back(*items[k].number);
                row.arrays.push_back(*array_of[k]);
            }
            // one number per key: a key named twice is no row
            std::vector<std::size_t> keys = row.keys;
            std::sort(keys.begin(), keys.end());
            if (std::adjacent_find(keys.begin(), keys.end()) != keys.end()) continue;
            row.query = *query;
            out.push_back(std::move(row));
        }
    }
    return out;
}

std::vector<ProsePair> prose_pairs(const Article& art, const std::vector<std::string>& tokens, std::size_t from_line,
                                   std::size_t to_line, const std::vector<bool>& used) {
    const TokenIndex index(tokens);
    // each line's prose numbers, in order
    std::map<std::pair<std::size_t, int>, std::vector<std::size_t>> lines;
    for (std::size_t i = 0; i < art.arrays.size(); ++i) {
        const PrintedArray& a = art.arrays[i];
        if (a.form != PrintedForm::prose || a.place.line < from_line || a.place.line >= to_line) continue;
        lines[{a.place.line, a.place.cell}].push_back(i);
    }
    std::vector<ProsePair> out;
    for (const auto& [where, arrays] : lines) {
        const std::string& quote = art.arrays[arrays.front()].quote;
        // a line may work several pairs, a clause each: "q1 · k1 = 2, q1 · k2 = 4; q1 · k3 = 4"
        std::vector<std::string> clauses(1);
        int depth = 0;  // "score(cat, sat) = 1.20": a comma inside brackets ends no clause
        for (char c : quote) {
            depth += c == '(' || c == '[' ? 1 : c == ')' || c == ']' ? -1 : 0;
            if ((c == ',' || c == ';') && depth <= 0) clauses.emplace_back();
            else clauses.back() += c;
        }
        // a clause's numbers after the first: the line's prose numbers, matched in order by value
        std::size_t next = 0;
        for (const std::string& clause : clauses) {
            const std::size_t eq = clause.rfind('=');
            if (eq == std::string::npos) continue;
            std::vector<std::size_t> named;
            std::vector<long> numbered;  // "q1 · k2", "q_1 \\cdot k_2": a query's and a key's numbers
            for (const Item& it : items_of(clause.substr(0, clause.find('=')))) {
                if (it.number) {
                    named.clear(), numbered.clear();
                    break;
                }
                // a token, or a query's or key's subscript of one: "q_tea", "k_we"
                std::optional<std::size_t> t = index.find(it.word);
                if (!t && it.word.size() >= 3 && it.word[1] == '_') t = index.find(it.word.substr(2));
                if (t) named.push_back(*t);
                const std::size_t digits = it.word.size() > 2 && it.word[1] == '_' ? 2 : 1;
                if (it.word.size() > digits && it.word.size() <= digits + 3 && (it.word[0] == 'q' || it.word[0] == 'k') &&
                    std::all_of(it.word.begin() + static_cast<std::ptrdiff_t>(digits), it.word.end(),
                                [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }) &&
                    (it.word[0] == 'q') == numbered.empty())
                    numbered.push_back(std::stol(it.word.substr(digits)));
            }
            std::vector<Item> tail = items_of(clause.substr(eq + 1));
            while (!tail.empty() && tail.back().ends_clause()) tail.pop_back();  // "= 4." ends a sentence
            if (tail.empty() || !tail.back().number) continue;
            while (next < arrays.size() && !same(*tail.back().number, art.arrays[arrays[next]].rows[0][0])) ++next;
            if (next == arrays.size()) break;
            const std::size_t i = arrays[next++];
            if (used[i]) continue;
            // the line's last number of the clause stands after its last equals sign: a result, not a factor
            if (tail.size() != 1) continue;
            if (named.size() == 2) {
                out.push_back({named[0], named[1], i});
            } else if (named.empty() && numbered.size() == 2) {
                // numbered from 1, as a worked example counts its tokens (q0 on the line: from 0)
                const long base = numbered[0] == 0 || numbered[1] == 0 ? 0 : 1;
                const long q = numbered[0] - base, k = numbered[1] - base;
                if (q >= 0 && k >= 0 && q < static_cast<long>(tokens.size()) && k < static_cast<long>(tokens.size()))
                    out.push_back({static_cast<std::size_t>(q), static_cast<std::size_t>(k), i});
            }
        }
    }
    return out;
}

}  // namespace attntrace
